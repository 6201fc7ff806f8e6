"""Training TinyShakespeare against the Rust trainers, with GPT-2's and cl100k's patterns.

In one process, on the corpus already in memory as one document, the trainers
interleaved round by round; median (min–max). bpetite is ``count_chunks`` (one
process) then ``Tokenizer.train_from_counts``; rustbpe and HF count on every core.
rustbpe breaks ties like bpetite, so its merges must be identical; bpeasy's and HF's
are compared and the first difference reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial

from benchmarks import harness, peers
from benchmarks.harness import Stat, spread
from bpetite import PRESETS, Tokenizer, count_chunks

TABLE = (
    "pattern | trainer | >merges | time | >x bpetite | bpetite count | bpetite merge "
    "| merges vs bpetite"
)
PATTERNS = ("gpt2", "cl100k")


def run(run: harness.Run) -> harness.Section:
    vocab = 2000 if run.quick else 32000
    rounds = 1 if run.quick else 5
    trainers = {
        name: trainer
        for name, trainer in peers.TRAINERS.items()
        if peers.installed(trainer.package)
    }
    counts: dict[str, Counter[bytes]] = {}
    cases: dict[str, Callable[[], object]] = {}
    for pattern in PATTERNS:
        cases[f"{pattern} count"] = partial(_count, counts, run.text, pattern)
        cases[f"{pattern} merge"] = partial(_merge, counts, vocab, pattern)
        for name, trainer in trainers.items():
            cases[f"{pattern} {name}"] = partial(trainer.train, [run.text], vocab, PRESETS[pattern])
    harness.log(f"peer training: vocab {vocab}, {rounds} round(s)")
    timings = harness.measure(cases, rounds)
    title = f"Training TinyShakespeare against the Rust trainers (vocab {vocab}, {rounds} round(s))"
    section = harness.Section(title, __doc__)
    section.record({name: timing.stat for name, timing in timings.items()})
    rows = []
    for pattern in PATTERNS:
        count, merge = timings[f"{pattern} count"], timings[f"{pattern} merge"]
        ours = Stat(tuple(map(sum, zip(count.stat.samples, merge.stat.samples, strict=True))))
        pairs = peers.byte_pairs(merge.results[0].merges)
        rows.append(
            [
                f"`{pattern}`",
                "bpetite",
                f"{len(pairs):,}",
                spread(ours),
                "1.00",
                spread(count.stat),
                spread(merge.stat),
                "",
            ]
        )
        for name, trainer in trainers.items():
            theirs = timings[f"{pattern} {name}"]
            merges = trainer.merges(theirs.results[0])
            comparison = peers.compare_merges(pairs, merges)
            if trainer.same_tie_break:
                section.check(
                    f"`{pattern}`: {trainer.label}'s merges equal bpetite's",
                    comparison == "identical",
                )
            ratio = f"{theirs.stat.median / ours.median:.2f}"
            rows.append(
                [
                    f"`{pattern}`",
                    trainer.label,
                    f"{len(merges):,}",
                    spread(theirs.stat),
                    ratio,
                    "",
                    "",
                    comparison,
                ]
            )
        section.ratio(
            f"train TinyShakespeare, vocab {vocab}, `{pattern}`: bpetite time / rustbpe's",
            ours,
            timings[f"{pattern} rustbpe"].stat if "rustbpe" in trainers else None,
            "<= 1.5",
            how="rustbpe counts on every core; bpetite in one process",
            source="speed target",
        )
    section.add(harness.table(TABLE, rows))
    return section


def _count(counts: dict[str, Counter[bytes]], text: str, pattern: str) -> Counter[bytes]:
    counts[pattern] = count_chunks([text], pattern=pattern)
    return counts[pattern]


def _merge(counts: dict[str, Counter[bytes]], vocab: int, pattern: str) -> Tokenizer:
    return Tokenizer.train_from_counts(counts[pattern], vocab, pattern=pattern)
