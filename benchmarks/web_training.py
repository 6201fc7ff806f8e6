"""Training the gigabyte corpus at nanochat's size: bpetite on 2 workers beside rustbpe.

The corpus is ``benchmarks/web_corpus.py``'s (the machine's UTF-8 text files, then
generated web-like text in several scripts, to 1 GB), built once into the benchmark
cache. Vocabulary 65,536 with the ``cl100k`` pattern, nanochat's setting. bpetite is
``train_files`` on the corpus's text files with 2 workers; rustbpe reads the same files
as its documents and counts on every core. Each training runs in a fresh process;
the rounds alternate the order (bpetite first, then rustbpe first), and the target is
on the times summed over the rounds. *Tree PSS* is the sampled peak of the whole
process tree's proportional set size (workers included, pages shared with the parent
counted once), taken in one more run of each trainer after the timed rounds, since
sampling a tree costs a CPU much of the time (``harness.run_child``); *peak RSS* the
training process's own high-water mark, from that run too. rustbpe breaks
ties like bpetite: its merges must be identical. Not part of ``--quick`` (it takes
several minutes); ``--only gigabyte --quick`` runs it on 20 MB.
"""

from __future__ import annotations

from functools import partial

from benchmarks import harness, peers, web_corpus
from benchmarks.harness import megabytes, spread

VOCAB = 65536
PATTERN = "cl100k"
TABLE = "trainer | >merges | trainer time | process wall | count | merge | >peak RSS | >tree PSS"
CONFIGURATIONS = {"bpetite, 2 workers": ("files", 2), "rustbpe": ("rustbpe", 1)}
# fmt: off
TARGETS: list[harness.TargetRow] = [
    ("train the {size} web corpus, vocab 65,536, `cl100k`, 2 workers: bpetite time / rustbpe's",
     "bpetite, 2 workers", "rustbpe", "<= 0.8", "trainer times, summed over rounds in both orders",
     "speed target"),
    ("train the {size} web corpus, 2 workers: bpetite tree PSS / rustbpe's",
     "bpetite, 2 workers tree", "rustbpe tree", "<= 1",
     "whole process tree's proportional set size, sampled in a run of its own", "speed target"),
]
# fmt: on


def run(run: harness.Run) -> harness.Section:
    size = 20_000_000 if run.quick else 1_000_000_000
    rounds = 1 if run.quick else 2
    directory = run.cache / f"web-{size // 1_000_000}mb-seed0"
    harness.log(f"web corpus: building or reusing {directory}")
    manifest = web_corpus.build(directory, size, seed=0)
    text = str(directory / "text")
    jobs = {
        label: partial(
            harness.call_in_child,
            peers.train_in_child,
            trainer=trainer,
            vocab_size=VOCAB,
            paths=[text],
            workers=workers,
            pattern=PATTERN,
        )
        for label, (trainer, workers) in CONFIGURATIONS.items()
        if trainer == "files" or peers.installed(peers.TRAINERS[trainer].package)
    }
    harness.log(f"web corpus: {manifest['bytes']:,} bytes, {rounds} round(s) in both orders")
    trained = peers.train_rounds(jobs, rounds, alternate=True)
    shown = f"{int(manifest['bytes']) / 1e9:.2f} GB"  # type: ignore[call-overload]
    title = f"Training the {shown} web corpus (vocab {VOCAB:,}, `{PATTERN}`, {rounds} round(s))"
    section = harness.Section(title, __doc__)
    parts = manifest["documents"]
    section.add(
        f"{shown}: {parts['machine']['files']:,} of the machine's files "  # type: ignore[index]
        f"({parts['machine']['bytes']:,} bytes) and {parts['generated']['files']:,} "  # type: ignore[index]
        f"generated documents ({parts['generated']['bytes']:,} bytes); "  # type: ignore[index]
        f"{manifest['shards']} Parquet shards; sha256 `{str(manifest['sha256'])[:16]}…`."
    )
    rows = [
        [
            label,
            f"{len(ran.merges):,}",
            spread(ran.seconds),
            spread(ran.wall),
            spread(ran.phases.get("count")),
            spread(ran.phases.get("merge")),
            megabytes(ran.peak_rss),
            megabytes(ran.tree_pss.median if ran.tree_pss else None),
        ]
        for label, ran in trained.items()
    ]
    section.add(harness.table(TABLE, rows))
    if "rustbpe" in trained:
        comparison = peers.compare_merges(
            trained["bpetite, 2 workers"].merges, trained["rustbpe"].merges
        )
        section.check("rustbpe's merges equal bpetite's", comparison == "identical")
        section.add(f"rustbpe's merges against bpetite's: {comparison}.")
    times = {label: ran.seconds for label, ran in trained.items()}
    trees = {f"{label} tree": ran.tree_pss for label, ran in trained.items() if ran.tree_pss}
    section.ratios(TARGETS, times | trees, size=shown)
    section.record(times | trees)
    return section
