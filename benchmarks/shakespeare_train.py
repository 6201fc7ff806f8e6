"""Training TinyShakespeare: bpetite against the naive reference and HF, each in a fresh process.

Rows: ``Tokenizer.train``; HF ``tokenizers`` (its thread pool, and one thread); the
naive ``bpetite.reference.train``; the ``bpetite train`` command; and in a second table
``bpetite.train_files``. Each training runs in its own fresh process, the trainings
interleaved round by round; median (min–max). *Trainer time* is the training call alone
on the corpus already in memory as a ``str`` (for ``cli``, the command's own
``elapsed_ms``); *process wall* the whole child process from spawn to exit (interpreter,
imports, reading the corpus, training, and for ``cli`` saving the artifact); *peak RSS*
that process's high-water mark; *CPU / wall* above 1 means several threads or workers
worked.

The naive trainer's, the command's and the one-file run's merges must be
``Tokenizer.train``'s; the corpus cut into files gives the merges of training on its
pieces' chunk counts (no chunk spans two files). HF breaks ties its own way: its first
difference is reported.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import harness, peers
from benchmarks.harness import Child, megabytes, spread
from bpetite import Tokenizer, count_chunks

# fmt: off
TARGETS: list[harness.TargetRow] = [
    ("Training {naive}: naive time / bpetite time", "naive {naive}", "bpetite {naive}", ">= 10",
     "trainer times, same corpus string", "training target"),
    ("Training {big}: bpetite time / naive {naive} time", "bpetite {big}", "naive {naive}", "< 0.5",
     "", "training target"),
    ("Training 512: bpetite time / HF tokenizers time", "bpetite 512", "hf 512", "",
     "HF with its default thread pool", "benchmark target"),
    ("Training {big}: bpetite time / HF tokenizers time", "bpetite {big}", "hf {big}", "<= 1.5",
     "HF with its default thread pool", "benchmark target"),
    ("Training {big}: bpetite time / HF tokenizers on 1 thread", "bpetite {big}",
     "hf, 1 thread {big}", "", "", "context"),
    ("Training {big}: train_files, 1 file, 1 worker / `Tokenizer.train` (time)",
     "train_files, 1 file, 1 worker {big}", "bpetite {big}", "", "reading the files included",
     "scaling target"),
    ("Training {big}: train_files, {files} files, 1 worker / `Tokenizer.train` (time)",
     "train_files, {files} files, 1 worker {big}", "bpetite {big}", "",
     "reading the files included", "scaling target"),
    ("Training {big}: train_files, {files} files, 2 workers / `Tokenizer.train` (time)",
     "train_files, {files} files, 2 workers {big}", "bpetite {big}", "",
     "reading the files included", "scaling target"),
]
# fmt: on
SAME = "Tokenizer.train's"
PIECES = "training on the pieces' chunk counts"
TABLE = (
    "implementation | >vocab | >merges | trainer time | process wall | >peak RSS | >CPU / wall "
    "| phases (medians)"
)


@dataclass(frozen=True, slots=True)
class Job:
    """A row: the training a child runs, and whose merges it must equal (if anyone's)."""

    label: str
    vocab: int
    call: Callable[[], Child]
    must_equal: str = ""  # SAME (Tokenizer.train's at this size), PIECES, or "" for none

    @property
    def name(self) -> str:
        return f"{self.label} {self.vocab}"


def run(run: harness.Run) -> harness.Section:
    big = 512 if run.quick else 32000
    naive = 280 if run.quick else 512  # the naive trainer takes seconds at 512
    pieces = _cut(run, 4 if run.quick else 8)

    def job(label: str, vocab: int, trainer: str, must_equal: str = "", **more: Any) -> Job:
        more.setdefault("paths", [str(run.text_path)])
        child = partial(harness.call_in_child, peers.train_in_child, trainer=trainer, **more)
        return Job(label, vocab, partial(child, vocab_size=vocab), must_equal)

    both = sorted({512, big})
    jobs = [job("bpetite", vocab, "bpetite") for vocab in sorted({512, naive, big})]
    jobs += [job("hf", vocab, "hf") for vocab in both]
    if not run.quick:
        jobs.append(job("hf, 1 thread", big, "hf", env={"RAYON_NUM_THREADS": "1"}))
    jobs += [Job("cli", vocab, partial(_cli, run, vocab), SAME) for vocab in both]
    cut = f"train_files, {len(pieces)} files"
    files = [
        job("train_files, 1 file, 1 worker", big, "files", SAME),
        job(f"{cut}, 1 worker", big, "files", PIECES, paths=pieces),
        job(f"{cut}, 2 workers", big, "files", PIECES, paths=pieces, workers=2),
    ]
    rounds = 2 if run.quick else 5
    harness.log(f"training: {len(jobs + files)} trainings x {rounds} rounds, fresh processes")
    timings = harness.measure({job.name: job.call for job in jobs + files}, rounds, keep="all")
    harness.log(f"training: the naive trainer at vocab {naive}, once")
    jobs.append(job("naive", naive, "naive", SAME))
    timings |= harness.measure({jobs[-1].name: jobs[-1].call}, 1, keep="all")

    trained = {name: peers.Trained.of(timing) for name, timing in timings.items()}
    for vocab in both:  # the command's merges are in its artifact
        cli = Tokenizer.load(run.scratch / f"cli-{vocab}.json").merges
        trained[f"cli {vocab}"] = replace(trained[f"cli {vocab}"], merges=peers.byte_pairs(cli))
    texts = [Path(path).read_bytes().decode("utf-8") for path in pieces]
    by_pieces = peers.byte_pairs(Tokenizer.train_from_counts(count_chunks(texts), big).merges)

    section = harness.Section(f"Training TinyShakespeare ({rounds} rounds)", __doc__)
    tables: dict[str, list[list[str]]] = {"jobs": [], "files": []}
    reported = []
    for group, rows in (("jobs", jobs), ("files", files)):
        for row in rows:
            ran = trained[row.name]
            figures = [spread(ran.seconds), spread(ran.wall), megabytes(ran.peak_rss)]
            cells = [row.label, str(row.vocab), f"{len(ran.merges):,}", *figures]
            tables[group].append([*cells, f"{ran.cpu_per_wall:.2f}", ran.describe_phases()])
            same = trained[f"bpetite {row.vocab}"].merges
            comparison = peers.compare_merges(
                by_pieces if row.must_equal == PIECES else same, ran.merges
            )
            if row.must_equal:
                section.check(
                    f"{row.name}: merges equal {row.must_equal}", comparison == "identical"
                )
            elif row.label != "bpetite":
                reported.append(f"- `{row.name}`: {comparison} (ties broken its own way).")
    section.add(harness.table(TABLE, tables["jobs"]))
    section.add(
        "Merges against `Tokenizer.train`'s at the same vocabulary size:\n\n" + "\n".join(reported)
    )
    section.add(
        f"### Multi-file training\n\n`bpetite.train_files` on the corpus as one file, and cut "
        f"at line ends into {len(pieces)} files; the trainer time includes reading the files. "
        "With 2 workers the peak RSS is the parent's, and CPU / wall counts both.\n\n"
        + harness.table(TABLE, tables["files"])
    )
    stats = {name: ran.seconds for name, ran in trained.items()}
    section.record(stats | {f"{name} process wall": ran.wall for name, ran in trained.items()})
    section.ratios(TARGETS, stats, naive=naive, big=big, files=len(pieces))
    peak = trained[f"bpetite {big}"].peak_rss
    how = "whole child process: interpreter, imports, corpus and training"
    section.value(
        f"Training {big}: bpetite peak RSS (MB)",
        peak / 1e6,
        "< 300",
        how=how,
        source="training target",
    )
    section.value(
        "Training 512: bpetite trainer time (s)",
        stats["bpetite 512"].median,
        "<= 60",
        source="spec",
    )
    wall = trained["cli 512"].wall.median
    section.value(
        "Training 512: `bpetite train` whole-command wall time (s)", wall, "<= 60", source="spec"
    )
    return section


def _cli(run: harness.Run, vocab: int) -> Child:
    """``bpetite train`` as a user runs it; its summary line gives its own time and phases."""
    output = run.scratch / f"cli-{vocab}.json"
    options = ["--input", run.text_path, "--vocab-size", vocab, "--output", output, "--force"]
    command = [sys.executable, "-m", "bpetite", "train", *map(str, options)]
    child = harness.run_child(command, cwd=run.scratch)
    summary = child.report
    summary["seconds"] = summary["elapsed_ms"] / 1000
    summary["phases"] = {"count": summary["count_ms"] / 1000, "merge": summary["merge_ms"] / 1000}
    return child


def _cut(run: harness.Run, parts: int) -> list[str]:
    """TinyShakespeare as `parts` files cut at line ends, roughly equal in size."""
    lines = run.text.splitlines(keepends=True)
    per_part = -(-len(lines) // parts)
    paths = []
    for index in range(parts):
        path = run.scratch / f"part-{index:02d}.txt"
        path.write_bytes("".join(lines[index * per_part : (index + 1) * per_part]).encode("utf-8"))
        paths.append(str(path))
    return paths
