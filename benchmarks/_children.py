"""Jobs that run in a fresh child process, one training per process.

A fresh process per training makes the peak RSS that training's own (plus the
interpreter, its imports and the corpus string, reported separately as
``rss_before_bytes``) and keeps one run's garbage and caches out of the next.
The parent starts ``run.py --child '<json spec>'``; the child prints one JSON line.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks._timing import own_peak_rss


def run_job(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the job `spec` describes and return its JSON-ready report."""
    job = spec["job"]
    paths = [Path(path) for path in spec["corpus"]]
    vocab_size = int(spec["vocab_size"])
    # The multi-file trainer reads its files itself; the others get the text as a str.
    corpus = "" if job == "files" else paths[0].read_bytes().decode("utf-8")
    rss_before = own_peak_rss()
    if job == "bpetite":
        report = _train_bpetite(corpus, vocab_size, spec.get("save"))
    elif job == "naive":
        report = _train_naive(corpus, vocab_size, spec.get("merges_out"))
    elif job == "hf":
        report = _train_hf(corpus, vocab_size, spec.get("merges_out"))
    elif job == "files":
        report = _train_files(paths, vocab_size, int(spec["workers"]), spec.get("merges_out"))
    else:
        raise ValueError(f"unknown child job {job!r}")
    return {**report, "rss_before_bytes": rss_before, "own_peak_rss_bytes": own_peak_rss()}


def _train_bpetite(corpus: str, vocab_size: int, save: str | None) -> dict[str, Any]:
    """Time ``Tokenizer.train``; the progress events split it into its phases.

    The trainer reports "start" once the corpus is pre-tokenized and counted and
    "done" when the merge loop ends, so the phases cost nothing extra to measure.
    """
    from bpetite import Progress, Tokenizer

    marks: dict[str, float] = {}

    def progress(event: Progress) -> None:
        if event.stage != "update":
            marks[event.stage] = time.perf_counter()

    started = time.perf_counter()
    tokenizer = Tokenizer.train(corpus, vocab_size, progress=progress)
    finished = time.perf_counter()
    if save:
        tokenizer.save(save, overwrite=True)
    phases: dict[str, float] = {}
    if "start" in marks and "done" in marks:
        phases = {
            "pretokenize_count": marks["start"] - started,
            "merge_loop": marks["done"] - marks["start"],
            "build_tokenizer": finished - marks["done"],
        }
    return {"seconds": finished - started, "merges": len(tokenizer.merges), "phases": phases}


def _train_naive(corpus: str, vocab_size: int, merges_out: str | None) -> dict[str, Any]:
    """Time the specification's recount-everything trainer from ``tests/reference.py``."""
    from tests.reference import naive_train

    started = time.perf_counter()
    merges = naive_train(corpus, vocab_size)
    seconds = time.perf_counter() - started
    if merges_out:
        Path(merges_out).write_text(json.dumps(merges), encoding="utf-8")
    return {"seconds": seconds, "merges": len(merges)}


def _train_hf(corpus: str, vocab_size: int, merges_out: str | None) -> dict[str, Any]:
    import os

    from benchmarks._rust import hf_train

    seconds, merges = hf_train(corpus, vocab_size)
    if merges_out:
        encoded = [[left.hex(), right.hex()] for left, right in merges]
        Path(merges_out).write_text(json.dumps(encoded), encoding="utf-8")
    return {
        "seconds": seconds,
        "merges": len(merges),
        "rayon_num_threads": os.environ.get("RAYON_NUM_THREADS"),
    }


def _train_files(
    paths: list[Path], vocab_size: int, workers: int, merges_out: str | None
) -> dict[str, Any]:
    """Time ``bpetite.train_files``; its first merge-loop report splits counting from merging."""
    from bpetite import Progress, train_files

    marks: dict[str, float] = {}

    def progress(event: Progress) -> None:
        if event.task == "merge" and event.stage != "update":
            marks[event.stage] = time.perf_counter()

    started = time.perf_counter()
    tokenizer = train_files(
        [str(path) for path in paths], vocab_size, workers=workers, progress=progress
    )
    finished = time.perf_counter()
    if merges_out:
        Path(merges_out).write_text(json.dumps(tokenizer.merges), encoding="utf-8")
    phases: dict[str, float] = {}
    if "start" in marks and "done" in marks:
        phases = {
            "count_files": marks["start"] - started,
            "merge_loop": marks["done"] - marks["start"],
            "build_tokenizer": finished - marks["done"],
        }
    return {
        "seconds": finished - started,
        "merges": len(tokenizer.merges),
        "workers": workers,
        "phases": phases,
    }
