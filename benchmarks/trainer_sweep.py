"""The merge loop's growth on hostile inputs, and its speed against rustbpe, with checks.

    uv run --group bench python benchmarks/trainer_sweep.py            # sweep + rustbpe
    uv run --group bench python benchmarks/trainer_sweep.py --quick    # smaller, one repeat
    uv run --group bench python benchmarks/trainer_sweep.py --no-rustbpe

The sweep trains on inputs that defeat a trainer which rescans chunks: one chunk of a
single repeated byte, of a repeated ``ab`` or ``abc``, one huge word of random letters,
and many distinct short words, at sizes that double. It prints a markdown table (time,
and the ratio to the previous size) and fails when a ratio reaches ``MAX_RATIO``:
doubling the input must not come near quadrupling the time. Before timing, every kind
is checked against the naive trainer of ``tests/reference.py`` at a small size, and
every timed run must give the same merges as the first run of its input.

The rustbpe comparison trains TinyShakespeare (the tests' committed copy, or ``--corpus``)
with the GPT-2 pattern in both, interleaved, ``--repeats`` times, and reports
medians with min-max; rustbpe also trains on bpetite's counted chunks, fed whole, which
times mostly its merge loop. rustbpe returns token bytes by id, not pairs, so the check
is that the token bytes at every rank are identical. rustbpe counts with all cores
(rayon); bpetite's figure is ``count_chunks`` (one core) plus ``train_merges``.

Exit status: 0 when every check passes, 1 when a result differs or a ratio is too high.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

#: Doubling the input may at most multiply the time by this (4 would be quadratic).
MAX_RATIO = 3.5
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

ChunkCounts = dict[bytes, int]


def _repeated(unit: bytes) -> Callable[[int], ChunkCounts]:
    return lambda size: {unit * (size // len(unit)): 1}


def _random_word(size: int) -> ChunkCounts:
    rng = random.Random(size)
    return {bytes(rng.choices(b"abcd", k=size)): 1}


def _many_words(size: int) -> ChunkCounts:
    """Distinct-ish short words of random letters, Zipf-like counts, about `size` bytes."""
    rng = random.Random(size)
    counts: ChunkCounts = {}
    total = 0
    while total < size:
        word = bytes(rng.choices(b"etaoinshrdlu", k=rng.randint(2, 12)))
        counts[word] = counts.get(word, 0) + rng.choice((1, 1, 1, 2, 3, 10))
        total += len(word)
    return counts


KINDS: dict[str, Callable[[int], ChunkCounts]] = {
    "one run of `a`": _repeated(b"a"),
    "`ab` repeated": _repeated(b"ab"),
    "`abc` repeated": _repeated(b"abc"),
    "one random word (abcd)": _random_word,
    "many short words": _many_words,
}


def _median_and_spread(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples):.3f} ({min(samples):.3f}-{max(samples):.3f})"


def check_against_naive(vocab_size: int, size: int) -> list[str]:
    """Every kind at a small size against the naive trainer; returns the failures."""
    from bpetite.core._trainer import train_merges
    from tests.reference import naive_train_chunks

    failures = []
    for name, make in KINDS.items():
        counts = make(size)
        if train_merges(counts, vocab_size) != naive_train_chunks(counts, vocab_size):
            failures.append(f"{name} at {size} bytes differs from the naive trainer")
    return failures


def sweep(sizes: Sequence[int], vocab_size: int, repeats: int) -> tuple[list[str], list[str]]:
    """Time every kind at every size, interleaved; return (table lines, failures)."""
    from bpetite.core._trainer import train_merges

    inputs = {(name, size): make(size) for name, make in KINDS.items() for size in sizes}
    times: dict[tuple[str, int], list[float]] = {key: [] for key in inputs}
    first: dict[tuple[str, int], list[tuple[int, int]]] = {}
    failures: list[str] = []
    for _ in range(repeats):
        for key, counts in inputs.items():
            started = time.perf_counter()
            merges = train_merges(counts, vocab_size)
            times[key].append(time.perf_counter() - started)
            if first.setdefault(key, merges) != merges:
                failures.append(f"{key[0]} at {key[1]} bytes: merges differ between runs")
    lines = [
        f"| input (vocab {vocab_size}) | bytes | seconds, median (min-max) | x previous size |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name in KINDS:
        for index, size in enumerate(sizes):
            median = statistics.median(times[name, size])
            ratio = ""
            if index:
                growth = median / statistics.median(times[name, sizes[index - 1]])
                ratio = f"{growth:.2f}"
                if growth >= MAX_RATIO:
                    failures.append(
                        f"{name}: {sizes[index - 1]:,} -> {size:,} bytes took x{growth:.2f} "
                        f"(limit x{MAX_RATIO} per doubling)"
                    )
            lines.append(
                f"| {name} | {size:,} | {_median_and_spread(times[name, size])} | {ratio} |"
            )
    return lines, failures


def _token_bytes(merges: Sequence[tuple[int, int]]) -> list[bytes]:
    vocab = [bytes([byte]) for byte in range(256)]
    for left, right in merges:
        vocab.append(vocab[left] + vocab[right])
    return vocab


def compare_rustbpe(corpus: str, vocab_size: int, repeats: int) -> tuple[list[str], list[str]]:
    """Train the corpus in rustbpe and bpetite, interleaved; return (table lines, failures).

    rustbpe is timed twice: on the text with the GPT-2 pattern (its whole training), and
    on the chunks bpetite counted, each occurrence fed as one string with a pattern that
    keeps it whole, which leaves mostly its merge loop (plus hashing the fed strings).
    """
    import rustbpe

    from bpetite.core._pretokenizer import count_chunks
    from bpetite.core._trainer import train_merges

    def train_rust(texts: Iterator[str], pattern: str) -> list[bytes]:
        tokenizer = rustbpe.Tokenizer()
        tokenizer.train_from_iterator(texts, vocab_size, pattern=pattern)
        return [bytes(token) for token, _ in sorted(tokenizer.get_mergeable_ranks(), key=_rank)]

    names = ("rust", "rust_chunks", "count", "merge")
    times: dict[str, list[float]] = {name: [] for name in names}
    failures: list[str] = []
    chunks = count_chunks([corpus])
    occurrences = [chunk.decode("utf-8") for chunk, n in chunks.items() for _ in range(n)]
    for _ in range(repeats):
        started = time.perf_counter()
        theirs = train_rust(iter([corpus]), GPT2_PATTERN)
        times["rust"].append(time.perf_counter() - started)
        started = time.perf_counter()
        theirs_from_chunks = train_rust(iter(occurrences), r"(?s).+")
        times["rust_chunks"].append(time.perf_counter() - started)
        started = time.perf_counter()
        counts = count_chunks([corpus])
        counted = time.perf_counter()
        merges = train_merges(counts, vocab_size)
        times["merge"].append(time.perf_counter() - counted)
        times["count"].append(counted - started)
        ours = _token_bytes(merges)
        if ours != theirs or ours != theirs_from_chunks:
            failures.append(f"rustbpe's tokens differ from bpetite's at vocab {vocab_size}")
    totals = [c + m for c, m in zip(times["count"], times["merge"], strict=True)]
    rust = statistics.median(times["rust"])
    rows = [
        ("rustbpe 0.1.0, text (count + merge)", times["rust"]),
        ("rustbpe 0.1.0, fed the counted chunks", times["rust_chunks"]),
        ("bpetite count + merge", totals),
        ("bpetite count (`count_chunks`)", times["count"]),
        ("bpetite merge (`train_merges`)", times["merge"]),
    ]
    lines = [
        f"| TinyShakespeare, vocab {vocab_size}, {repeats} runs | seconds, median (min-max) "
        "| x rustbpe on text |",
        "| --- | ---: | ---: |",
    ]
    for name, samples in rows:
        ratio = statistics.median(samples) / rust
        lines.append(f"| {name} | {_median_and_spread(samples)} | {ratio:.2f} |")
    return lines, failures


def _corpus(path: Path | None) -> str:
    """The file `path` names, else the TinyShakespeare committed with the tests."""
    if path is not None:
        return path.read_bytes().decode("utf-8")
    from tests.datafiles import shakespeare_text

    return shakespeare_text()


def _rank(item: tuple[Sequence[int], int]) -> int:
    return item[1]


def _sizes(start: int, count: int) -> Iterator[int]:
    for power in range(count):
        yield start << power


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    parser.add_argument("--vocab-size", type=int, default=512, help="the sweep's vocabulary")
    parser.add_argument(
        "--corpus", type=Path, help="text for the rustbpe run (default: TinyShakespeare)"
    )
    parser.add_argument("--rust-vocab-size", type=int, default=32000)
    parser.add_argument("--no-rustbpe", action="store_true", help="skip the rustbpe run")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    sizes = list(_sizes(32_000 if args.quick else 125_000, 3 if args.quick else 4))

    failures = check_against_naive(300, 3_000)
    lines, more = sweep(sizes, args.vocab_size, repeats)
    failures += more
    print("\n".join(lines))
    if not args.no_rustbpe:
        try:
            import rustbpe  # noqa: F401
        except ImportError:
            failures.append("rustbpe is not installed: `uv sync --group bench`, or --no-rustbpe")
        else:
            lines, more = compare_rustbpe(_corpus(args.corpus), args.rust_vocab_size, repeats)
            failures += more
            print()
            print("\n".join(lines))
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    # Run as a script: put the repository root on the path for `benchmarks` and `tests`.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main(sys.argv[1:]))
