"""Dataset encoding: ``bpetite.write_dataset`` against tiktoken's ``encode_ordinary_batch``.

The code corpus of ``big_corpus`` (one document per file) is encoded with GPT-2's
vocabulary, imported from the committed ``gpt2.tiktoken``: by bpetite into a nanoGPT
``train.bin`` with two worker processes, and by tiktoken with two threads, interleaved
round by round. The ``.bin`` is read back and compared with tiktoken's ids, document by
document (each followed by ``<|endoftext|>``); a difference fails the run.

Run on its own: ``uv run --group bench python benchmarks/dataset_encode.py --size-mb 20``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _peers, big_corpus

WORKERS = 2
SEPARATOR = "<|endoftext|>"


def run(size_mb: float, rounds: int) -> dict[str, Any]:
    """Time both encoders on the corpus; check the ids; return samples and failures."""
    import tiktoken

    from bpetite import write_dataset
    from bpetite.interop import import_vocabulary

    corpus = big_corpus.build_corpus(size_mb, big_corpus.default_cache())
    texts = [path.read_bytes().decode("utf-8") for path in corpus.files]
    data = _peers.committed_ranks_file("gpt2")
    times: dict[str, list[float]] = {"bpetite": [], "tiktoken": []}
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        ranks_path = Path(folder, "gpt2.tiktoken")
        ranks_path.write_bytes(data)
        tokenizer = import_vocabulary([ranks_path]).tokenizer
        encoding = tiktoken.Encoding(
            "gpt2",
            pat_str=tokenizer.pattern,
            mergeable_ranks=_peers.parse_ranks(data),
            special_tokens=dict(tokenizer.special_tokens),
        )
        output = Path(folder, "train.bin")
        theirs: list[array[int]] = []
        for _ in range(rounds):
            started = time.perf_counter()
            batch = encoding.encode_ordinary_batch(texts, num_threads=WORKERS)
            times["tiktoken"].append(time.perf_counter() - started)
            # Kept for the check as arrays (untimed): 71 million ids as lists of int
            # objects are 2.5 GB of heap that bpetite's forked workers would inherit.
            theirs = [array("H", ids) for ids in batch]
            del batch
            started = time.perf_counter()
            write_dataset(corpus.files, output, tokenizer, workers=WORKERS, overwrite=True)
            times["bpetite"].append(time.perf_counter() - started)
        failures += _compare(output, theirs, tokenizer.special_tokens[SEPARATOR], corpus.files)
        tokens = sum(map(len, theirs))
    return {
        "corpus": corpus.to_json(),
        "rounds": rounds,
        "workers": WORKERS,
        "tokens": tokens,
        "seconds": {name: _stat(samples) for name, samples in times.items()},
        "failures": failures,
    }


def _compare(
    output: Path, theirs: list[array[int]], separator: int, files: Sequence[Path]
) -> list[str]:
    """Every document's ids in the ``.bin`` against tiktoken's, then the separator."""
    ours = array("H")
    ours.frombytes(output.read_bytes())
    if sys.byteorder == "big":  # pragma: no cover - the file is little-endian
        ours.byteswap()
    position = 0
    for path, ids in zip(files, theirs, strict=True):
        end = position + len(ids)
        if ours[position:end] != ids or ours[end : end + 1] != array("H", [separator]):
            return [f"dataset: the ids of {path.name} differ from tiktoken's"]
        position = end + 1
    if position != len(ours):
        return [f"dataset: {len(ours) - position} ids after the last document"]
    return []


def _stat(samples: list[float]) -> dict[str, Any]:
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "samples": samples,
    }


def render(results: dict[str, Any]) -> str:
    corpus = results["corpus"]
    mb = corpus["bytes"] / 1e6
    ours, theirs = results["seconds"]["bpetite"], results["seconds"]["tiktoken"]
    lines = [
        "## Encoding a dataset (GPT-2's vocabulary, 2 workers)",
        "",
        f"{corpus['files']:,} `.py` files, {corpus['bytes']:,} bytes, "
        f"{results['tokens']:,} tokens; {results['rounds']} round(s), interleaved. "
        "bpetite: `write_dataset(files, 'train.bin', gpt2, workers=2)` (processes); "
        "tiktoken: `encode_ordinary_batch(texts, num_threads=2)` on texts already in "
        "memory. The `.bin` is checked against tiktoken's ids, document by document.",
        "",
        "| encoder | time, median (min–max) | MB/s |",
        "| --- | --- | ---: |",
    ]
    for name, stat in (("bpetite dataset, 2 workers", ours), ("tiktoken, 2 threads", theirs)):
        lines.append(
            f"| {name} | {stat['median']:.2f} s ({stat['min']:.2f}–{stat['max']:.2f} s) "
            f"| {mb / stat['median']:.1f} |"
        )
    lines += ["", f"bpetite at {theirs['median'] / ours['median']:.2f} of tiktoken's speed."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size-mb", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    results = run(args.size_mb, args.rounds)
    print(render(results))
    for failure in results["failures"]:
        print(f"CHECK FAILED: {failure}", file=sys.stderr)
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
