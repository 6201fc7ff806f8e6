"""Training a large code corpus: bpetite (1 and 2 workers), rustbpe, bpeasy and HF.

The corpus is every UTF-8 ``.py`` file of the running Python's standard library and
site-packages, walked in sorted order up to ``--big-corpus-mb`` megabytes and copied
into the benchmark cache, so one installation always gives the same corpus. Each
training runs in a fresh process, the trainers interleaved round by round; median
(min–max). bpetite is ``train_files`` on the directory, each peer reads one document
per file. *Peak RSS* is the trainer process's own high-water mark; *tree PSS* the
sampled peak of its whole process tree (workers included, pages they share with the
parent counted once), taken in one more run of each trainer after the timed rounds:
sampling a tree costs a CPU much of the time, which a timed run on two cores would
lose (``harness.run_child``). bpetite's merges must be the same with 1 and 2 workers,
and rustbpe's (same tie-break) identical to them.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from benchmarks import harness, peers
from benchmarks.harness import megabytes, spread

TABLE = "trainer | >merges | trainer time | count | merge | >peak RSS | >tree PSS"
VOCAB = 32000
# fmt: off
TARGETS: list[harness.TargetRow] = [
    ("train a {mb} code corpus, vocab 32000, 1 worker: bpetite time / rustbpe's",
     "bpetite, 1 worker", "rustbpe", "", "each in a fresh process", "context"),
    ("train a {mb} code corpus, vocab 32000, 2 workers: bpetite time / rustbpe's",
     "bpetite, 2 workers", "rustbpe", "<= 1", "each in a fresh process", "speed target"),
    ("train a {mb} code corpus, 2 workers: bpetite peak RSS / rustbpe's", "bpetite, 2 workers tree",
     "rustbpe tree", "<= 1", "whole process tree's proportional set size (counting workers "
     "included), sampled in a run of its own", "speed target"),
    ("merge phase of a {mb} code corpus, vocab 32000: bpetite 2 workers / 1 worker",
     "bpetite, 2 workers merge", "bpetite, 1 worker merge", "<= 0.65",
     "the merge loop's phase time (merge_ms) of each run", "speed target"),
]
# fmt: on
#: Each row: the trainer ``peers.train_in_child`` runs, and bpetite's worker count.
CONFIGURATIONS = {
    "bpetite, 1 worker": ("files", 1),
    "bpetite, 2 workers": ("files", 2),
    "rustbpe": ("rustbpe", 1),
    "bpeasy": ("bpeasy", 1),
    "HF tokenizers": ("hf", 1),
}


@dataclass(frozen=True, slots=True)
class Corpus:
    """A built corpus: the directory of its files, how much it holds, and its digest."""

    directory: Path
    files: tuple[Path, ...]
    bytes: int
    sha256: str


def source_roots() -> list[Path]:
    """The installation's directories of Python code, each once, none inside another."""
    paths = sysconfig.get_paths()
    roots: list[Path] = []
    for candidate in (paths["stdlib"], paths["purelib"], paths["platlib"]):
        root = Path(candidate).resolve()
        if root.is_dir() and not any(root.is_relative_to(other) for other in roots):
            roots = [*(other for other in roots if not other.is_relative_to(root)), root]
    return roots


def select_sources(limit_bytes: int) -> Iterator[tuple[str, bytes]]:
    """(relative name, content) of each UTF-8 ``.py`` file in sorted order, up to the limit.

    The walk stops at the first file that would take the total past `limit_bytes`, so a
    smaller limit gives a prefix of a larger one's corpus. Links are not followed.
    """
    total = 0
    for index, root in enumerate(source_roots()):
        for directory, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = Path(directory, name)
                if not name.endswith(".py") or not stat.S_ISREG(path.lstat().st_mode):
                    continue
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
    """The first `size_mb` MB of the installation's Python code, copied under `cache`.

    The copy lives in ``<cache>/python-<size>mb-<digest>/files`` beside a manifest
    written last; a copy with the same digest is reused. ValueError if `cache` is inside
    the repository: corpora are never committed.
    """
    cache = cache.resolve()
    if cache.is_relative_to(harness.REPO_ROOT):
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


def run(run: harness.Run) -> harness.Section:
    corpus = build_corpus(run.big_corpus_mb, run.cache)
    rounds = 1 if run.quick else 3
    harness.log(
        f"big corpus: {len(corpus.files):,} files, {corpus.bytes:,} bytes, {rounds} round(s)"
    )
    jobs = {
        label: partial(
            harness.call_in_child,
            peers.train_in_child,
            trainer=trainer,
            vocab_size=VOCAB,
            paths=[str(corpus.directory)],
            workers=workers,
        )
        for label, (trainer, workers) in CONFIGURATIONS.items()
        if trainer == "files" or peers.installed(peers.TRAINERS[trainer].package)
    }
    trained = peers.train_rounds(jobs, rounds)
    mb = f"{corpus.bytes / 1e6:.0f} MB"
    title = f"Training a {mb} code corpus (vocab {VOCAB}, `gpt2` pattern, {rounds} round(s))"
    section = harness.Section(title, __doc__)
    section.add(
        f"{len(corpus.files):,} files, {corpus.bytes:,} bytes, sha256 `{corpus.sha256[:16]}…`."
    )
    rows = [
        [
            label,
            f"{len(ran.merges):,}",
            spread(ran.seconds),
            spread(ran.phases.get("count")),
            spread(ran.phases.get("merge")),
            megabytes(ran.peak_rss),
            megabytes(ran.tree_pss.median if ran.tree_pss else None),
        ]
        for label, ran in trained.items()
    ]
    section.add(harness.table(TABLE, rows))
    lines = ["Merges against bpetite's with 1 worker:", ""]
    for label, ran in trained.items():
        if label == "bpetite, 1 worker":
            continue
        comparison = peers.compare_merges(trained["bpetite, 1 worker"].merges, ran.merges)
        trainer = CONFIGURATIONS[label][0]
        if trainer == "files" or peers.TRAINERS[trainer].same_tie_break:
            section.check(
                f"{label}: merges equal bpetite's with 1 worker", comparison == "identical"
            )
            lines.append(f"- {label} (must be identical): {comparison}.")
        else:
            lines.append(f"- {label} (other tie-break, reported only): {comparison}.")
    section.add("\n".join(lines))
    times = {label: ran.seconds for label, ran in trained.items()}
    trees = {f"{label} tree": ran.tree_pss for label, ran in trained.items() if ran.tree_pss}
    merging = {
        f"{label} merge": ran.phases["merge"]
        for label, ran in trained.items()
        if "merge" in ran.phases
    }
    section.ratios(TARGETS, times | trees | merging, mb=mb)
    section.record(times | trees | merging)
    return section
