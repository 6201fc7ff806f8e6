"""Train a large multi-file code corpus with bpetite (1 and 2 workers), rustbpe, bpeasy and HF.

    uv run --group bench python benchmarks/big_corpus.py                 # 150 MB, 3 rounds
    uv run --group bench python benchmarks/big_corpus.py --size-mb 20    # a quick run

The corpus is every UTF-8 ``.py`` file of the running Python's standard library and
site-packages, walked in sorted order, up to ``--size-mb`` megabytes, copied into a
cache directory outside the repository (reused while its manifest matches), so one
installation always gives the same corpus; its sha256 is in the report.

Every training runs in a fresh child process, the trainers interleaved round by round.
Each report gives the trainer's own time, for bpetite its counting and merge phases
(from its progress events), and two peak-memory figures: the trainer process's own
(its ``VmHWM``, the high-water mark of its resident set since it started), and the
whole process tree's, sampled every 20 ms as the sum of each process's proportional
set size (``Pss``: pages shared between bpetite's counting workers and their parent
count once). ``ru_maxrss`` is not used: after ``fork`` it keeps the parent's size.

Checks: bpetite learns the same merges with 1 and 2 workers, and rustbpe, which
breaks ties like bpetite, learns exactly bpetite's merges; bpeasy's and HF's are
compared and the first difference reported. The exit status is 1 when a check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

THIS_FILE = Path(__file__).resolve()
REPO_ROOT = THIS_FILE.parent.parent
if __name__ == "__main__":
    # Run as a script: put the repository root on the path for `benchmarks` and `tests`.
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks import _peers  # noqa: E402
from benchmarks._timing import Stat, finished_output, last_json_line, own_peak_rss  # noqa: E402
from benchmarks.make_python_corpus import python_files, source_roots  # noqa: E402
from bpetite import PRESETS  # noqa: E402

DEFAULT_SIZE_MB = 150
DEFAULT_VOCAB = 32000
#: The split pattern every trainer uses: bpetite's default preset.
PATTERN_NAME = "gpt2"
SAMPLE_SECONDS = 0.02

#: The trainings of one round: a label, the trainer, and bpetite's worker count.
CONFIGURATIONS: tuple[tuple[str, str, int], ...] = (
    ("bpetite, 1 worker", "bpetite", 1),
    ("bpetite, 2 workers", "bpetite", 2),
    ("rustbpe", "rustbpe", 0),
    ("bpeasy", "bpeasy", 0),
    ("HF tokenizers", "hf", 0),
)


# The corpus ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Corpus:
    """A built corpus: the directory of its files, how much it holds, and its digest."""

    directory: Path
    files: tuple[Path, ...]
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": str(self.directory),
            "files": len(self.files),
            "bytes": self.bytes,
            "sha256": self.sha256,
        }


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/bpetite-bench`` (``~/.cache/bpetite-bench`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bpetite-bench"


def select_sources(limit_bytes: int) -> Iterator[tuple[str, bytes]]:
    """(relative name, content) of each UTF-8 ``.py`` file in order, until `limit_bytes`.

    The walk stops at the first file that would take the total past the limit, so a
    smaller limit gives a prefix of a larger one's corpus.
    """
    total = 0
    for index, root in enumerate(source_roots([])):
        for path in python_files(root):
            data = path.read_bytes()
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if total + len(data) > limit_bytes:
                return
            total += len(data)
            yield f"{index}-{root.name}/{path.relative_to(root)}", data


def build_corpus(size_mb: float, cache: Path) -> Corpus:
    """Copy the first `size_mb` MB of the installation's Python code under `cache`.

    The copy lives in ``<cache>/python-<size>mb-<digest>/files`` beside a manifest
    written last; an existing copy with the same digest is reused. `cache` must be
    outside the repository: corpora are never committed.
    """
    cache = cache.resolve()
    if cache == REPO_ROOT or cache.is_relative_to(REPO_ROOT):
        raise ValueError(f"{cache} is inside the repository; corpora are never committed")
    sources = list(select_sources(int(size_mb * 1_000_000)))
    digest = hashlib.sha256()
    for name, data in sources:
        digest.update(name.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
    sha = digest.hexdigest()
    directory = cache / f"python-{size_mb:g}mb-{sha[:12]}"
    files = tuple(directory / "files" / name for name, _ in sources)
    total = sum(len(data) for _, data in sources)
    manifest = directory / "manifest.json"
    if not manifest.is_file():
        for path, (_, data) in zip(files, sources, strict=True):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        summary = {"files": len(files), "bytes": total, "sha256": sha}
        manifest.write_text(json.dumps(summary) + "\n", encoding="utf-8")
    return Corpus(directory / "files", files, total, sha)


# In the child --------------------------------------------------------------------------


def _read_texts(paths: Sequence[str]) -> Iterator[str]:
    """Each file's text, read only when the trainer asks for it (one document each)."""
    for path in paths:
        yield Path(path).read_bytes().decode("utf-8")


def run_job(spec: dict[str, Any]) -> dict[str, Any]:
    """One training, as `spec` says; returns its JSON-ready report."""
    trainer = spec["trainer"]
    vocab_size = int(spec["vocab_size"])
    pattern = PRESETS[PATTERN_NAME]
    manifest = [line for line in Path(spec["file_list"]).read_text("utf-8").splitlines() if line]
    rss_before = high_water_mark()
    report: dict[str, Any]
    if trainer == "bpetite":
        report = _train_bpetite(spec["directory"], vocab_size, int(spec["workers"]))
    else:
        trained = _peers.TRAINERS[trainer](_read_texts(manifest), vocab_size, pattern)
        report = {"seconds": trained.seconds, "pairs": trained.pairs}
    pairs = report.pop("pairs")
    if spec.get("merges_out"):
        encoded = [[left.hex(), right.hex()] for left, right in pairs]
        Path(spec["merges_out"]).write_text(json.dumps(encoded), encoding="utf-8")
    return {
        **report,
        "merges": len(pairs),
        "rss_before_bytes": rss_before,
        "own_peak_rss_bytes": high_water_mark(),
    }


def _train_bpetite(directory: str, vocab_size: int, workers: int) -> dict[str, Any]:
    """``bpetite.train_files`` on the directory; progress events split its phases."""
    from bpetite import Progress, train_files

    marks: dict[tuple[str, str], float] = {}

    def progress(event: Progress) -> None:
        if event.stage != "update":
            marks[event.task, event.stage] = time.perf_counter()

    started = time.perf_counter()
    tokenizer = train_files([directory], vocab_size, workers=workers, progress=progress)
    finished = time.perf_counter()
    phases: dict[str, float] = {}
    if ("merge", "start") in marks and ("merge", "done") in marks:
        phases = {
            "count": marks["merge", "start"] - started,
            "merge": marks["merge", "done"] - marks["merge", "start"],
            "build": finished - marks["merge", "done"],
        }
    return {
        "seconds": finished - started,
        "phases": phases,
        "pairs": _peers.bpetite_pairs(tokenizer),
    }


# In the parent -------------------------------------------------------------------------


def _proc_field(path: str, field: str) -> int | None:
    """A ``Name:   123 kB`` field of a ``/proc`` file, in bytes (None if unreadable)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return None


def high_water_mark() -> int:
    """This process's peak resident set since it started (``VmHWM``; ru_maxrss off Linux).

    Unlike ``ru_maxrss``, the high-water mark starts afresh at ``exec``, so a child
    started from a large parent does not inherit the parent's size.
    """
    return _proc_field("/proc/self/status", "VmHWM") or own_peak_rss()


@dataclass(frozen=True, slots=True)
class Measured:
    """One child run: its report, wall time, and the sampled peak of its process tree."""

    report: dict[str, Any]
    wall_seconds: float
    tree_peak_bytes: int | None


def tree_memory(pid: int) -> int | None:
    """The memory of `pid` and all its descendants now, in bytes (None off Linux).

    Each process counts its proportional set size (``Pss`` in ``smaps_rollup``), so
    pages a forked worker shares with its parent count once; ``VmRSS`` where the
    kernel has no ``smaps_rollup``.
    """
    total = 0
    stack = [pid]
    seen_any = False
    while stack:
        current = stack.pop()
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text("utf-8")
        except OSError:
            continue
        size = _proc_field(f"/proc/{current}/smaps_rollup", "Pss")
        if size is None:
            size = _proc_field(f"/proc/{current}/status", "VmRSS")
        if size is not None:
            seen_any = True
            total += size
        stack.extend(int(child) for child in children.split())
    return total if seen_any else None


def run_sampled(command: Sequence[str], *, env: dict[str, str] | None = None) -> Measured:
    """Run `command` (which prints one JSON line last) while sampling its tree's memory.

    The tree figure adds up the processes alive at the same moment, every
    SAMPLE_SECONDS, so it can miss a peak shorter than that.
    """
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        started = time.perf_counter()
        process = subprocess.Popen(
            list(command), stdout=out_file, stderr=err_file, env={**os.environ, **(env or {})}
        )
        tree_peak: int | None = None
        while True:
            pid, status = os.waitpid(process.pid, os.WNOHANG)
            if pid:
                break
            sample = tree_memory(process.pid)
            if sample is not None:
                tree_peak = max(tree_peak or 0, sample)
            time.sleep(SAMPLE_SECONDS)
        wall = time.perf_counter() - started
        stdout = finished_output(command, status, out_file, err_file)
    return Measured(last_json_line(command, stdout), wall, tree_peak)


def log(message: str) -> None:
    print(f"[big-corpus] {message}", file=sys.stderr, flush=True)


def run(
    *,
    size_mb: float = DEFAULT_SIZE_MB,
    vocab_size: int = DEFAULT_VOCAB,
    rounds: int = 3,
    cache: Path | None = None,
    trainers: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Build the corpus, run every configuration `rounds` times, check the merges.

    Returns a JSON-ready dict: the corpus, one row per configuration (medians with
    min and max), the merge checks, and ``failures`` (empty when every check passed).
    """
    corpus = build_corpus(size_mb, cache or default_cache())
    log(f"corpus: {len(corpus.files):,} files, {corpus.bytes:,} bytes in {corpus.directory}")
    wanted = set(trainers) if trainers else None
    configurations = [
        config
        for config in CONFIGURATIONS
        if (wanted is None or config[1] in wanted)
        and _peers.installed(_peers.TRAINER_PACKAGES[config[1]])
    ]
    skipped = [
        label
        for label, trainer, _ in CONFIGURATIONS
        if (wanted is None or trainer in wanted)
        and not _peers.installed(_peers.TRAINER_PACKAGES[trainer])
    ]
    runs: dict[str, list[Measured]] = {label: [] for label, _, _ in configurations}
    with tempfile.TemporaryDirectory(prefix="bpetite-big-corpus-") as scratch:
        file_list = Path(scratch) / "files.txt"
        file_list.write_text("".join(f"{path}\n" for path in corpus.files), encoding="utf-8")
        merges_files: dict[str, Path] = {}
        for round_index in range(rounds):
            for index, (label, trainer, workers) in enumerate(configurations):
                spec: dict[str, Any] = {
                    "trainer": trainer,
                    "workers": workers,
                    "vocab_size": vocab_size,
                    "directory": str(corpus.directory),
                    "file_list": str(file_list),
                }
                if round_index == 0:
                    merges_files[label] = Path(scratch) / f"merges-{index}.json"
                    spec["merges_out"] = str(merges_files[label])
                log(f"{label} (round {round_index + 1}/{rounds})")
                command = [sys.executable, str(THIS_FILE), "--child", json.dumps(spec)]
                runs[label].append(run_sampled(command, env={"PYTHONPATH": str(REPO_ROOT)}))
        merges = {label: _read_pairs(path) for label, path in merges_files.items()}
    checks, failures = check_merges(merges, configurations)
    return {
        "corpus": corpus.to_json(),
        "vocab_size": vocab_size,
        "pattern": PATTERN_NAME,
        "rounds": rounds,
        "rows": [_summary(label, runs[label]) for label, _, _ in configurations],
        "checks": checks,
        "skipped": skipped,
        "failures": failures,
    }


def _read_pairs(path: Path) -> list[_peers.BytePair]:
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return [(bytes.fromhex(left), bytes.fromhex(right)) for left, right in loaded]


def check_merges(
    merges: dict[str, list[_peers.BytePair]], configurations: Sequence[tuple[str, str, int]]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Each configuration's merges against bpetite's with 1 worker.

    bpetite with other worker counts and the trainers that share its tie-break must
    match exactly (a failure otherwise); the rest are reported only.
    """
    checks: dict[str, dict[str, Any]] = {}
    failures: list[str] = []
    reference_label = next(
        (label for label, trainer, _ in configurations if trainer == "bpetite"), None
    )
    if reference_label is None:
        return checks, failures
    reference = merges[reference_label]
    for label, trainer, _ in configurations:
        if label == reference_label:
            continue
        comparison = _peers.compare_merges(reference, merges[label])
        required = trainer in _peers.SAME_TIE_BREAK
        checks[label] = {**comparison.to_json(), "required": required}
        if required and not comparison.identical:
            failures.append(f"{label}'s merges differ from bpetite's: {comparison.describe()}")
    return checks, failures


def _summary(label: str, runs: list[Measured]) -> dict[str, Any]:
    def stat(values: Sequence[float]) -> dict[str, Any]:
        return Stat(tuple(values)).to_json()

    row: dict[str, Any] = {
        "configuration": label,
        "merges": runs[0].report["merges"],
        "trainer_seconds": stat([run.report["seconds"] for run in runs]),
        "process_wall_seconds": stat([run.wall_seconds for run in runs]),
        "peak_rss_bytes": stat([float(run.report["own_peak_rss_bytes"]) for run in runs]),
        "rss_before_bytes": statistics.median(run.report["rss_before_bytes"] for run in runs),
    }
    trees = [run.tree_peak_bytes for run in runs]
    if all(tree is not None for tree in trees):
        row["tree_peak_bytes"] = stat([float(tree or 0) for tree in trees])
    phases = runs[0].report.get("phases") or {}
    if phases:
        row["phases_seconds"] = {
            phase: stat([run.report["phases"][phase] for run in runs]) for phase in phases
        }
    return row


# Report --------------------------------------------------------------------------------


def render(result: dict[str, Any]) -> str:
    """The result as a markdown section: the table, the merge checks, the corpus."""
    from benchmarks._report import megabytes, seconds, spread

    corpus = result["corpus"]
    lines = [
        f"## Training a {corpus['bytes'] / 1e6:.0f} MB code corpus "
        f"(vocab {result['vocab_size']}, `{result['pattern']}` pattern)",
        "",
        f"{corpus['files']:,} `.py` files of this Python installation ({corpus['bytes']:,} "
        f"bytes, sha256 `{corpus['sha256'][:16]}…`); each training in a fresh process, "
        f"{result['rounds']} round(s), the trainers interleaved. Median (min–max). "
        "*Peak RSS* is the trainer process's own high-water mark; *tree PSS* the sampled peak "
        "of the "
        "whole process tree (parent and counting workers together, shared pages once).",
        "",
        "| trainer | merges | trainer time | count | merge | peak RSS | tree PSS |",
        "| --- | ---: | --- | --- | --- | ---: | ---: |",
    ]
    for row in result["rows"]:
        phases = row.get("phases_seconds", {})
        count = spread(phases["count"]) if "count" in phases else "–"
        merge = spread(phases["merge"]) if "merge" in phases else "–"
        tree = row.get("tree_peak_bytes")
        lines.append(
            f"| {row['configuration']} | {row['merges']:,} | {spread(row['trainer_seconds'])} "
            f"| {count} | {merge} | {megabytes(row['peak_rss_bytes']['median'])} "
            f"| {megabytes(tree['median']) if tree else '–'} |"
        )
    rows = {row["configuration"]: row for row in result["rows"]}
    rust = rows.get("rustbpe")
    if rust:
        lines.append("")
        for label in ("bpetite, 1 worker", "bpetite, 2 workers"):
            if label in rows:
                ratio = rows[label]["trainer_seconds"]["median"] / rust["trainer_seconds"]["median"]
                lines.append(
                    f"- {label}: {ratio:.2f}x rustbpe's time "
                    f"({seconds(rows[label]['trainer_seconds']['median'])} against "
                    f"{seconds(rust['trainer_seconds']['median'])})."
                )
    lines += ["", "Merges against bpetite's with 1 worker:", ""]
    for label, check in result["checks"].items():
        if check["identical"]:
            verdict = "identical"
        else:
            verdict = (
                f"first difference at merge {check['first_difference']:,} (bpetite "
                f"{' + '.join(check['ours_at'] or ['end'])}, {label} "
                f"{' + '.join(check['theirs_at'] or ['end'])})"
            )
        need = "must be identical" if check["required"] else "other tie-break, reported only"
        lines.append(f"- {label} ({need}): {verdict}.")
    for label in result["skipped"]:
        lines.append(f"- {label}: not installed, skipped.")
    for failure in result["failures"]:
        lines.append(f"- CHECK FAILED: {failure}")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/big_corpus.py", description=__doc__.split("\n")[0] if __doc__ else None
    )
    parser.add_argument("--size-mb", type=float, default=DEFAULT_SIZE_MB, help="corpus size")
    parser.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each trainer")
    parser.add_argument(
        "--cache", type=Path, help="where the corpus is built (default: ~/.cache/bpetite-bench)"
    )
    parser.add_argument(
        "--trainers",
        nargs="+",
        choices=sorted(_peers.TRAINERS),
        help="only these trainers (default: all installed)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the result here")
    parser.add_argument("--child", metavar="JSON", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_job(json.loads(args.child))))
        return 0
    if args.size_mb <= 0 or args.rounds < 1:
        parser.error("--size-mb must be positive and --rounds at least 1")
    result = run(
        size_mb=args.size_mb,
        vocab_size=args.vocab_size,
        rounds=args.rounds,
        cache=args.cache,
        trainers=args.trainers,
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(render(result))
    for failure in result["failures"]:
        print(f"CHECK FAILED: {failure}", file=sys.stderr)
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
