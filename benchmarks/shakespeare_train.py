"""Training TinyShakespeare: bpetite against the naive reference and HF, each in a fresh process.

| implementation | vocab | merges | trainer time | process wall | peak RSS | CPU / wall | phases |

Rows: ``Tokenizer.train``; HF ``tokenizers`` (its thread pool, and one thread); the
naive ``bpetite.reference.train``; the ``bpetite train`` command; and, in a second
table, ``bpetite.train_files`` on the corpus as one file and cut into several. Checks:
the naive trainer's, the command's and the one-file run's merges are
``Tokenizer.train``'s; the cut corpus gives the merges of training on its pieces' chunk
counts (no chunk spans two files). HF breaks ties its own way, so its first difference
is reported, never required away.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

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
HEADER = [
    "implementation",
    ">vocab",
    ">merges",
    "trainer time",
    "process wall",
    ">peak RSS",
    ">CPU / wall",
    "phases (medians)",
]  # fmt: skip


def run(run: harness.Run) -> harness.Section:
    big = 512 if run.quick else 32000
    naive = 280 if run.quick else 512  # the naive trainer takes seconds at 512
    pieces = _cut(run, 4 if run.quick else 8)
    train = partial(harness.call_in_child, peers.train_in_child, paths=[str(run.text_path)])
    # Each job: its row's implementation and vocab, the call, whose merges it must equal.
    jobs = [("bpetite", vocab, partial(train, trainer="bpetite", vocab_size=vocab), "")
            for vocab in sorted({512, naive, big})]  # fmt: skip
    jobs += [("hf", vocab, partial(train, trainer="hf", vocab_size=vocab), "")
             for vocab in sorted({512, big})]  # fmt: skip
    if not run.quick:
        one_thread = partial(train, trainer="hf", vocab_size=big, env={"RAYON_NUM_THREADS": "1"})
        jobs.append(("hf, 1 thread", big, one_thread, ""))
    jobs += [("cli", vocab, partial(_cli, run, vocab), "bpetite") for vocab in sorted({512, big})]
    files = [
        ("train_files, 1 file, 1 worker", big, partial(train, trainer="files", vocab_size=big),
         "bpetite"),
        (f"train_files, {len(pieces)} files, 1 worker", big,
         partial(train, trainer="files", vocab_size=big, paths=pieces), "pieces"),
        (f"train_files, {len(pieces)} files, 2 workers", big,
         partial(train, trainer="files", vocab_size=big, paths=pieces, workers=2), "pieces"),
    ]  # fmt: skip
    rounds = 2 if run.quick else 5
    harness.log(f"training: {len(jobs + files)} trainings x {rounds} rounds, fresh processes")
    cases = {f"{label} {vocab}": call for label, vocab, call, _ in jobs + files}
    timings = harness.measure(cases, rounds, keep="all")
    harness.log(f"training: the naive trainer at vocab {naive}, once")
    naive_job = ("naive", naive, partial(train, trainer="naive", vocab_size=naive), "bpetite")
    timings |= harness.measure({f"naive {naive}": naive_job[2]}, 1, keep="all")
    jobs.append(naive_job)

    trained = {name: peers.Trained.of(timing) for name, timing in timings.items()}
    for vocab in sorted({512, big}):  # the command's merges are in its artifact
        cli = Tokenizer.load(run.scratch / f"cli-{vocab}.json").merges
        trained[f"cli {vocab}"] = replace(trained[f"cli {vocab}"], merges=peers.byte_pairs(cli))
    texts = [Path(path).read_text(encoding="utf-8") for path in pieces]
    by_pieces = Tokenizer.train_from_counts(count_chunks(texts), big).merges

    section = harness.Section("Training TinyShakespeare")
    section.add(
        "Each training runs in its own fresh process, the trainings interleaved round by "
        "round. *Trainer time* is the training call alone on the corpus already in memory "
        "as a `str` (for `cli`, the command's own `elapsed_ms`); *process wall* is the whole "
        "child process from spawn to exit (interpreter start, imports, reading the corpus, "
        "training, and for `cli` saving the artifact); *peak RSS* is that process's "
        "high-water mark; *CPU / wall* above 1 means several threads or workers worked. "
        "Median of the runs, (min–max) across them."
    )
    tables: dict[str, list[list[str]]] = {"jobs": [], "files": []}
    reported = []
    for group, rows in (("jobs", jobs), ("files", files)):
        for label, vocab, _, must_equal in rows:
            name = f"{label} {vocab}"
            ran = trained[name]
            tables[group].append(
                [label, str(vocab), f"{len(ran.merges):,}", spread(ran.seconds), spread(ran.wall),
                 megabytes(ran.peak_rss), f"{ran.cpu_per_wall:.2f}", ran.describe_phases()]
            )  # fmt: skip
            if must_equal == "pieces":
                expected = peers.byte_pairs(by_pieces)
            else:
                expected = trained[f"bpetite {vocab}"].merges
            comparison = peers.compare_merges(expected, ran.merges)
            if must_equal:
                section.check(f"{name}: merges equal {must_equal}'s", comparison.identical)
            elif label != "bpetite":
                reported.append(f"- `{name}`: {comparison} (ties broken its own way).")
    section.add(harness.table(HEADER, tables["jobs"]))
    section.add(
        "Merges against `Tokenizer.train`'s at the same vocabulary size:\n\n" + "\n".join(reported)
    )
    section.add(
        f"### Multi-file training\n\n`bpetite.train_files` on the corpus as one file, and cut "
        f"at line ends into {len(pieces)} files; the trainer time includes reading the files. "
        "With several workers the peak RSS is the parent's and CPU / wall counts them all.\n\n"
        + harness.table(HEADER, tables["files"])
    )
    stats = {name: ran.seconds for name, ran in trained.items()}
    section.ratios(TARGETS, stats, naive=naive, big=big, files=len(pieces))
    peak = trained[f"bpetite {big}"].peak_rss
    section.value(f"Training {big}: bpetite peak RSS (MB)", peak / 1e6, "< 300",
                  how="whole child process: interpreter, imports, corpus and training",
                  source="training target")  # fmt: skip
    section.value("Training 512: bpetite trainer time (s)", stats["bpetite 512"].median, "<= 60",
                  source="spec")  # fmt: skip
    section.value("Training 512: `bpetite train` whole-command wall time (s)",
                  trained["cli 512"].wall.median, "<= 60", source="spec")  # fmt: skip
    return section


def _cli(run: harness.Run, vocab: int) -> Child:
    """``bpetite train`` as a user runs it; its summary line gives its own time and phases."""
    output = run.scratch / f"cli-{vocab}.json"
    command = [sys.executable, "-m", "bpetite", "train", "--input", str(run.text_path),
               "--vocab-size", str(vocab), "--output", str(output), "--force"]  # fmt: skip
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
        path.write_text("".join(lines[index * per_part : (index + 1) * per_part]), encoding="utf-8")
        paths.append(str(path))
    return paths
