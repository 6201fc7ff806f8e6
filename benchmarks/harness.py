"""The one benchmark harness: how every section times, checks and reports.

Timing: :func:`measure` runs the cases of a table in interleaved rounds, each case once
per round, each call after a full collection (the collector stays on during the call:
a user's call pays for its own garbage). A figure is the median of the rounds with its
min-max; a ratio between two cases is taken within the run, as the ratio of the medians
and as the median of the per-round ratios (a slow stretch of a shared machine slows
both sides of a round and cancels out). A case that must own its process (its peak
memory, a command's whole run) calls :func:`call_in_child` or :func:`run_child`: the
round times the child from spawn to exit, and the child times its own call the same way.

Checking: a section records each correctness check (ids or merges equal to a peer's or
to :mod:`bpetite.reference`'s) with :meth:`Section.check`; one failed check makes the
run exit 1, whatever the timings. A timing is never checked: a missed target is a row.

Reporting: each section returns a :class:`Section` (its tables, checks, target rows and
figures); :func:`main` writes them to ``results.json`` and ``results.md``, and
``--write-docs`` regenerates the generated part of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import gzip
import importlib
import json
import math
import operator
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCS_PATH = REPO_ROOT / "docs" / "benchmarks.md"
#: Every package whose version the report names: bpetite and its peers.
PACKAGES = ("bpetite", "tiktoken", "tokenizers", "rustbpe", "bpeasy", "puretiktoken", "bpe-openai")
#: How often a child's process tree is sampled for its memory.
SAMPLE_SECONDS = 0.02


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# Timing ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stat:
    """Repeated samples of one quantity (seconds unless said otherwise)."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def percentile(self, percent: float) -> float:
        """Nearest rank: of 100 samples p99 is the second largest, so no single stray
        sample (a collection, a neighbour on the machine) decides it alone."""
        ordered = sorted(self.samples)
        return ordered[max(1, math.ceil(percent / 100 * len(ordered))) - 1]


@dataclass(frozen=True, slots=True)
class Timing:
    """One case's durations, and what its calls returned (as :func:`measure` kept them)."""

    stat: Stat
    results: list[Any]


def measure(
    cases: Mapping[str, Callable[[], Any]],
    rounds: int,
    *,
    setup: Callable[[], object] | None = None,
    steady: bool = False,
    keep: Literal["first", "all", "none"] = "first",
    alternate: bool = False,
) -> dict[str, Timing]:
    """Time every case once per round, the cases interleaved; `setup` runs untimed first.

    `alternate` runs every other round in the reverse order, so that each case runs
    first as often as last (a machine that warms up or slows down during a round
    favours neither side).

    `steady` leaves out the collection before each call: a call of a few microseconds
    after a full collection runs with cold caches, and back-to-back calls (a warm
    encoder's steady state) are what a user sees. What a call returns is kept for the
    checks: the first round's, every round's, or none (a result too large to keep while
    the next case runs); a result not kept is freed outside the timing.
    """
    samples: dict[str, list[float]] = {name: [] for name in cases}
    results: dict[str, list[Any]] = {name: [] for name in cases}
    for index in range(rounds):
        if setup is not None:
            setup()
        order = list(cases.items())
        for name, call in reversed(order) if alternate and index % 2 else order:
            if not steady:
                gc.collect()
            started = time.perf_counter()
            result = call()
            samples[name].append(time.perf_counter() - started)
            if keep == "all" or (keep == "first" and index == 0):
                results[name].append(result)
            del result
    return {name: Timing(Stat(tuple(samples[name])), results[name]) for name in cases}


@dataclass(frozen=True, slots=True)
class Child:
    """A finished child process: its JSON report and what the parent saw of it."""

    report: dict[str, Any]
    cpu_seconds: float
    #: The child's own peak resident set: the ``VmHWM`` it reported or was last seen with
    #: (``ru_maxrss`` would count the parent's size, inherited through fork), off Linux
    #: ``ru_maxrss``.
    peak_rss: int
    #: The sampled peak of the process tree's proportional set size (Linux): pages a
    #: forked worker shares with its parent count once. None unless sampled
    #: (``sample_tree``).
    tree_pss: int | None


def run_child(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    sample_tree: bool = False,
) -> Child:
    """Run `command`, whose last line of output is a JSON report, watching its memory.

    The child's own high-water mark is read every ``SAMPLE_SECONDS`` (a counter in
    ``/proc``, cheap). With `sample_tree`, so is the proportional set size of its whole
    process tree, which the kernel finds by walking every process's page tables: on a
    tree of a few hundred megabytes that took a third of a CPU here, a CPU the child's
    own processes then lacked on a 2-core machine. So a run that is timed does not
    sample its tree; a section that reports both runs the tree's memory apart.

    The child is reaped with ``os.wait4``, so the CPU time is its own (and its reaped
    workers'); output goes to files, so a chatty child never blocks on a full pipe.
    Raises RuntimeError with the tail of its stderr if it exits non-zero.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        environment = {**os.environ, **(env or {})}
        process = subprocess.Popen(command, stdout=out, stderr=err, env=environment, cwd=cwd)
        pss, hwm, stop = [0], [0], threading.Event()

        def sample() -> None:  # Popen returns once the child has exec'd: its own memory
            while not stop.wait(SAMPLE_SECONDS):
                if sample_tree:
                    pss[0] = max(pss[0], tree_pss(process.pid) or 0)
                hwm[0] = max(hwm[0], _proc_bytes(f"/proc/{process.pid}/status", "VmHWM") or 0)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stop.set()
        sampler.join()
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            tail = "\n".join(err.read().decode("utf-8", "replace").strip().splitlines()[-15:])
            raise RuntimeError(f"{shlex.join(command)} exited {process.returncode}:\n{tail}")
        lines = out.read().decode("utf-8").strip().splitlines()
    report: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    own = (
        report.pop("peak_rss", None)
        or hwm[0]
        or usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    )
    return Child(report, usage.ru_utime + usage.ru_stime, own, pss[0] or None)


def call_in_child(
    function: Callable[..., dict[str, Any]],
    *,
    env: Mapping[str, str] | None = None,
    sample_tree: bool = False,
    **args: Any,
) -> Child:
    """Call a module-level benchmark `function` with JSON `args` in a fresh interpreter
    (:func:`run_child`, which samples the process tree's memory with `sample_tree`)."""
    spec = {"module": function.__module__, "name": function.__qualname__, "args": args}
    command = [sys.executable, "-m", "benchmarks", "--child", json.dumps(spec)]
    environment = {"PYTHONPATH": str(REPO_ROOT), **(env or {})}
    return run_child(command, env=environment, sample_tree=sample_tree)


def _proc_bytes(path: str, name: str) -> int | None:
    """A ``Name:  123 kB`` field of a ``/proc`` file, in bytes; None where unreadable."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return next(
        (int(line.split()[1]) * 1024 for line in lines if line.startswith(f"{name}:")), None
    )


def tree_pss(pid: int) -> int | None:
    """The proportional set size of `pid` and all its descendants now, in bytes."""
    total, stack = None, [pid]
    while stack:
        current = stack.pop()
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text("utf-8")
        except OSError:
            continue
        total = (total or 0) + (_proc_bytes(f"/proc/{current}/smaps_rollup", "Pss") or 0)
        stack += [int(child) for child in children.split()]
    return total


# Checks and targets ---------------------------------------------------------------------

_OPS = {"<": operator.lt, "<=": operator.le, ">=": operator.ge}
#: A section's target row: measure, the two cases of the ratio, target, how, from.
TargetRow = tuple[str, str, str, str, str, str]


@dataclass(frozen=True, slots=True)
class Target:
    """A row of the targets table: a measure, its value in this run, and its bound.

    `target` is ``"<op> <bound>"`` (``">= 0.6"``), or empty for a row given as context;
    `source` cites where the bound comes from (the spec, a target of the project).
    """

    measure: str
    value: float | None
    paired: float | None
    target: str
    how: str
    source: str

    @property
    def met(self) -> bool | None:
        if self.value is None or not self.target:
            return None
        op, bound = self.target.split()
        return bool(_OPS[op](self.value, float(bound)))


@dataclass(slots=True)
class Section:
    """One section's report: its markdown, its checks, its target rows, its JSON figures."""

    title: str
    #: The section module's docstring: its paragraphs after the first line are the caption.
    doc: str | None = None
    parts: list[str] = field(default_factory=list)
    checks: dict[str, bool] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    #: Every sample of every figure, by the section's name for it: results.json keeps them.
    samples: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def add(self, *parts: str) -> None:
        self.parts += parts

    def record(self, stats: Mapping[str, Stat | None]) -> None:
        self.samples |= {name: stat.samples for name, stat in stats.items() if stat is not None}

    def check(self, name: str, ok: bool) -> None:
        """Record a correctness check (several calls of one name must all pass)."""
        self.checks[name] = self.checks.get(name, True) and ok

    def ratio(
        self,
        measure: str,
        top: Stat | None,
        bottom: Stat | None,
        target: str = "",
        *,
        how: str = "",
        source: str = "context",
    ) -> None:
        """A target row ``top / bottom``: of the medians, and paired round by round."""
        value = paired = None
        if top is not None and bottom is not None:
            value = paired = top.median / bottom.median
            if len(top.samples) == len(bottom.samples) > 1:
                pairs = zip(top.samples, bottom.samples, strict=True)
                paired = statistics.median(a / b for a, b in pairs)
        if all(row.measure != measure for row in self.targets):  # a quick run may merge two
            self.targets.append(Target(measure, value, paired, target, how, source))

    def ratios(self, rows: Sequence[TargetRow], stats: Mapping[str, Stat], **names: object) -> None:
        """:meth:`ratio` for each row of a section's table of targets, its texts formatted
        with `names`; a row whose cases this run did not measure keeps its place, empty."""
        for measure, top, bottom, target, how, source in rows:
            measure, top, bottom, how = (
                text.format(**names) for text in (measure, top, bottom, how)
            )
            self.ratio(measure, stats.get(top), stats.get(bottom), target, how=how, source=source)

    def value(self, measure: str, value: float, target: str, *, how: str = "", source: str) -> None:
        """A target row on one figure of the run (a time, a size) rather than a ratio."""
        self.targets.append(Target(measure, value, value, target, how, source))

    @property
    def failures(self) -> list[str]:
        return [f"{self.title}: {name}" for name, ok in self.checks.items() if not ok]

    def markdown(self) -> str:
        """The title, the caption (the docstring's ``code`` as markdown), the parts, the checks."""
        caption = [" ".join(paragraph.split()) for paragraph in (self.doc or "").split("\n\n")[1:]]
        parts = [f"## {self.title}", *(p.replace("``", "`") for p in caption), *self.parts]
        checks = ", ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in self.checks.items())
        return "\n\n".join([*parts, *([f"Checks: {checks}."] if checks else [])])


# Markdown -------------------------------------------------------------------------------


def seconds(value: float) -> str:
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.3g} ms" if value < 0.1 else f"{value * 1e3:.0f} ms"
    return f"{value:.3g} s" if value < 100 else f"{value:.0f} s"


def spread(stat: Stat | None) -> str:
    """``median (min–max)``, or the one value and "(1 run)"; "–" when not measured."""
    if stat is None:
        return "–"
    if len(stat.samples) == 1:
        return f"{seconds(stat.median)} (1 run)"
    return f"{seconds(stat.median)} ({seconds(min(stat.samples))}–{seconds(max(stat.samples))})"


def megabytes(value: float | None) -> str:
    return "–" if value is None else f"{value / 1e6:.0f} MB"


def table(header: str, rows: Sequence[Sequence[object]]) -> str:
    """A markdown table under ``"name | >name | ..."``; a ``>`` right-aligns its column."""
    columns = header.split(" | ")
    names = [name.removeprefix(">") for name in columns]
    rules = ["---:" if name.startswith(">") else "---" for name in columns]
    lines = [names, rules, *([str(cell) for cell in row] for row in rows)]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


# The run --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Run:
    """What every section is given: the mode, TinyShakespeare, and where to put files."""

    quick: bool
    text: str
    text_path: Path
    scratch: Path
    #: ``$XDG_CACHE_HOME/bpetite-bench``: unpacked data and built corpora, never in the repo.
    cache: Path
    big_corpus_mb: float


#: The committed data file of each name that is not simply ``tests/data/<name>.gz``:
#: GPT-2's rank file is tiktoken's ``r50k_base.tiktoken``.
RENAMED_DATA = {"gpt2.tiktoken": "r50k_base.tiktoken"}


def data(name: str, cache: Path) -> Path:
    """``tests/data/<name>.gz``, unpacked to a stable path."""
    path = cache / "data" / name
    source = REPO_ROOT / "tests" / "data" / f"{RENAMED_DATA.get(name, name)}.gz"
    content = gzip.decompress(source.read_bytes())
    if not path.is_file() or path.read_bytes() != content:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return path


Measure = Callable[[Run], Section]


def main(
    argv: Sequence[str],
    sections: Mapping[str, Measure],
    profile: Callable[[str, Path], None],
    full_only: Sequence[str] = (),
) -> int:
    """The command: run the sections, write the reports, exit 1 if any check failed.

    A section of `full_only` (minutes of work on a gigabyte) is left out of ``--quick``
    unless ``--only`` names it.
    """
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmark bpetite against the naive reference and its peers in one run "
        "on this machine; writes results.json and results.md; exits 1 if a result is wrong.",
    )
    add, names = parser.add_argument, list(sections)
    add("--quick", action="store_true", help="a short run of every section (CI runs it)")
    add("--output", type=Path, default=REPO_ROOT / "benchmarks" / "results", metavar="DIR")
    add("--corpus", type=Path, metavar="PATH", help="TinyShakespeare (default: tests/data/'s)")
    add("--big-corpus-mb", type=float, metavar="MB", help="default 150 (5 with --quick)")
    add("--only", nargs="+", choices=names, metavar="SECTION", help=", ".join(names))
    add("--skip", nargs="+", choices=names, default=[], metavar="SECTION")
    add("--write-docs", action="store_true", help="then regenerate docs/benchmarks.md's figures")
    add("--profile", action="store_true", help="profile the hot paths instead, into --output")
    add("--child", metavar="JSON", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # a measured child: call the function, report, and peak memory last
        spec = json.loads(args.child)
        report = getattr(importlib.import_module(spec["module"]), spec["name"])(**spec["args"])
        print(json.dumps({**report, "peak_rss": _proc_bytes("/proc/self/status", "VmHWM")}))
        return 0
    if args.corpus is not None and not args.corpus.is_file():
        print(
            f"benchmarks: error: TinyShakespeare not found: no file {args.corpus}", file=sys.stderr
        )
        return 1
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bpetite-bench"
    output: Path = args.output
    output.mkdir(parents=True, exist_ok=True)
    path = args.corpus or data("tinyshakespeare.txt", cache)
    text = path.read_bytes().decode("utf-8")
    if args.profile:
        profile(text, output)
        return 0
    with tempfile.TemporaryDirectory(prefix="bpetite-bench-") as scratch:
        big_mb = args.big_corpus_mb or (5 if args.quick else 150)
        run = Run(args.quick, text, path, Path(scratch), cache, big_mb)
        started, facts = time.perf_counter(), machine()
        chosen = [
            name
            for name in sections
            if name in (args.only or sections)
            and name not in args.skip
            and not (args.quick and name in full_only and not args.only)
        ]
        reports: dict[str, Section] = {}
        failures: list[str] = []
        for name in chosen:
            log(f"section {name}")
            try:
                reports[name] = sections[name](run)
            except Exception as error:  # a crashed section fails the run; the others report
                traceback.print_exc()
                failures.append(f"{name}: {type(error).__name__}: {error}")
    mode = "quick" if args.quick else "full"
    skipped = ", ".join(name for name in sections if name not in chosen)
    facts |= {
        "Load average (1/5/15 min)": f"{facts.pop('load')} at the start, {_load()} at the end",
        "Command": f"`uv run --group bench python -m benchmarks {shlex.join(argv)}` "
        f"({mode} run{f'; skipped: {skipped}' if skipped else ''})",
        "Total time": f"{time.perf_counter() - started:.0f} s",
    }
    failures += [failure for report in reports.values() for failure in report.failures]
    markdown = render(mode, facts, list(reports.values()), failures)
    results = {
        "mode": mode,
        "machine": facts,
        "targets": [
            {**dataclasses.asdict(row), "met": row.met}
            for report in reports.values()
            for row in report.targets
        ],
        "sections": {
            name: {"title": r.title, "checks": r.checks, "samples": r.samples}
            for name, r in reports.items()
        },
        "failures": failures,
    }
    (output / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (output / "results.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    log(f"wrote {output / 'results.json'} and {output / 'results.md'}")
    if args.write_docs:
        write_docs(markdown)
        log(f"wrote {DOCS_PATH}")
    for failure in failures:
        print(f"CHECK FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


def render(
    mode: str, facts: Mapping[str, str], reports: Sequence[Section], failures: Sequence[str]
) -> str:
    """The whole run as markdown: the machine, every target row, then each section."""
    verdicts = {True: "yes", False: "**no**", None: ""}
    rows = [
        [
            row.measure,
            row.target.replace(">=", "≥").replace("<=", "≤"),
            "–" if row.value is None else f"{row.value:.3g}",
            "–" if row.paired is None else f"{row.paired:.3g}",
            verdicts[row.met],
            row.how,
            row.source,
        ]
        for report in reports
        for row in report.targets
    ]
    parts = [
        f"# bpetite benchmark results ({mode} run)",
        "## The machine and the run\n\n" + table(" | ", list(facts.items())),
        "## The targets, same run\n\n*Value* is the ratio of the two medians, *paired* the "
        "median of the ratios of each round (the two sides ran back to back). *From* cites "
        "where the target comes from; a row without a target is context.\n\n"
        + table("measure | target | >value | >paired | met | how | from", rows),
        *(report.markdown() for report in reports),
    ]
    if failures:
        parts.append("## Failed checks\n\n" + "\n".join(f"- {failure}" for failure in failures))
    return "\n\n".join(parts) + "\n"


def machine() -> dict[str, str]:
    """The facts a reader needs to compare these figures with their own, and the load now."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, cwd=REPO_ROOT
        ).stdout.strip()

    def version(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "(not installed)"

    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text(encoding="utf-8").splitlines() if cpuinfo.is_file() else []
    models = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    dirty = " (uncommitted changes under src/)" if git("status", "--porcelain", "--", "src") else ""
    date = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return {
        "CPU": models[0] if models else platform.processor() or "unknown",
        "Cores": f"{os.cpu_count()} logical CPUs, {len(os.sched_getaffinity(0))} available"
        if hasattr(os, "sched_getaffinity")
        else f"{os.cpu_count()} logical CPUs",
        "Memory": f"{memory:.0f} GiB",
        "Python": f"{platform.python_implementation()} {platform.python_version()} "
        f"on {platform.platform()}",
        "Packages": ", ".join(f"{package} {version(package)}" for package in PACKAGES),
        "Commit": f"`{git('rev-parse', '--short', 'HEAD')}`{dirty}, {date}",
        "load": _load(),
    }


def _load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


# docs/benchmarks.md ---------------------------------------------------------------------

BEGIN = (
    "<!-- generated by `uv run --group bench python -m benchmarks --write-docs`; "
    "edits between here and the end marker are overwritten -->"
)
END = "<!-- end of generated figures; notes below this line are kept -->"


def write_docs(markdown: str, path: Path = DOCS_PATH) -> None:
    """Regenerate the figures in `path` from a run's markdown, between BEGIN and END.

    What comes before BEGIN (the title, how to run the suite) and after END (notes on
    the figures) is written by hand and kept; a page without the markers gets them.
    """
    old = path.read_text(encoding="utf-8") if path.is_file() else "# Benchmarks\n"
    head, rest = old.split(BEGIN, 1) if BEGIN in old else (old, END)
    notes = rest.split(END, 1)[1] if END in rest else "\n"
    body = markdown.split("\n\n", 1)[1].strip()  # without the results' title
    path.write_text(f"{head.rstrip()}\n\n{BEGIN}\n\n{body}\n\n{END}{notes}", encoding="utf-8")
