"""The merge loop on inputs built to make it quadratic: its time as the input doubles.

Each input defeats a trainer that rescans its chunks: one chunk of a repeated byte, of
a repeated ``ab`` or ``abc``, one huge word of random letters, many distinct short
words. Each is trained from its chunk counts (``Tokenizer.train_from_counts``) at
doubling sizes, the inputs interleaved round by round. Doubling may at most multiply
the time by 3.5 (4 would be quadratic), a target, never a failure. Every kind is
first checked against ``bpetite.reference.train_counts`` at a small size.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial

from benchmarks import harness
from benchmarks.harness import spread
from bpetite import Tokenizer, reference

VOCAB = 512
#: Doubling the input may at most multiply the time by this (4 would be quadratic).
MAX_GROWTH = 3.5
Counts = dict[bytes, int]


def _repeated(unit: bytes, size: int) -> Counts:
    return {unit * (size // len(unit)): 1}


def _random_word(size: int) -> Counts:
    return {bytes(random.Random(size).choices(b"abcd", k=size)): 1}


def _many_words(size: int) -> Counts:
    """Distinct-ish short words of random letters, Zipf-like counts, about `size` bytes."""
    rng = random.Random(size)
    counts: Counts = {}
    total = 0
    while total < size:
        word = bytes(rng.choices(b"etaoinshrdlu", k=rng.randint(2, 12)))
        counts[word] = counts.get(word, 0) + rng.choice((1, 1, 1, 2, 3, 10))
        total += len(word)
    return counts


KINDS: dict[str, Callable[[int], Counts]] = {
    "one run of `a`": partial(_repeated, b"a"),
    "`ab` repeated": partial(_repeated, b"ab"),
    "`abc` repeated": partial(_repeated, b"abc"),
    "one random word (abcd)": _random_word,
    "many short words": _many_words,
}


def run(run: harness.Run) -> harness.Section:
    rounds = 1 if run.quick else 3
    title = f"The merge loop on inputs built to make it quadratic ({rounds} round(s))"
    section = harness.Section(title, __doc__)
    for kind, make in KINDS.items():
        counts = make(3_000)
        ours = list(Tokenizer.train_from_counts(counts, 300).merges)
        theirs = reference.train_counts(counts, 300)
        section.check(f"{kind}: merges equal the reference's", ours == theirs)
    sizes = [(32_000 if run.quick else 125_000) << power for power in range(3 if run.quick else 4)]
    harness.log(f"trainer sweep: {len(KINDS)} inputs at {sizes} bytes, {rounds} round(s)")
    cases = {
        f"{kind} {size}": partial(Tokenizer.train_from_counts, make(size), VOCAB)
        for kind, make in KINDS.items()
        for size in sizes
    }
    timings = harness.measure(cases, rounds, keep="all")
    section.record({name: timing.stat for name, timing in timings.items()})
    rows = []
    worst = 0.0
    for kind in KINDS:
        previous: float | None = None
        for size in sizes:
            timing = timings[f"{kind} {size}"]
            same = all(result.merges == timing.results[0].merges for result in timing.results)
            section.check("every run of an input learns the same merges", same)
            growth = None if previous is None else timing.stat.median / previous
            worst = max(worst, growth or 0)
            rows.append(
                [kind, f"{size:,}", spread(timing.stat), "" if growth is None else f"{growth:.2f}"]
            )
            previous = timing.stat.median
    header = f"input (vocab {VOCAB}) | >bytes | >time, median (min–max) | >x previous size"
    section.add(harness.table(header, rows))
    section.value(
        "Merge loop on hostile inputs: the largest time ratio per doubling",
        worst,
        f"< {MAX_GROWTH}",
        how="4 would be quadratic",
        source="docs/reliability.md",
    )
    return section
