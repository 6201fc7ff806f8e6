"""Loading GPT-2's, `cl100k_base`'s and `o200k_base`'s vocabularies: bpetite against tiktoken.

bpetite: ``Tokenizer.load`` of the artifact ``bpetite import`` writes for the committed
rank file, every check of docs/schema.md included. tiktoken: what it does before its
first encode, ``load_tiktoken_bpe`` on the same file and building its ``Encoding``.
Then each again, followed by ``encode_ordinary`` of TinyShakespeare: bpetite builds
its encoder on the first encode and proves lazily which tokens encode to themselves,
so that is where any cost moved out of loading shows; those ids must be tiktoken's.
Interleaved, median (min–max); a ratio is bpetite's time over tiktoken's, below 1
faster.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import harness, peers
from benchmarks.harness import spread
from bpetite import Tokenizer

TABLE = (
    "vocabulary | >artifact | >`.tiktoken` | bpetite load | tiktoken load | >ratio "
    "| bpetite load + encode | tiktoken load + encode | >ratio"
)
VOCABULARIES = {
    "gpt2": "GPT-2 (r50k_base)",
    "cl100k_base": "cl100k_base",
    "o200k_base": "o200k_base",
}
CASES = ("bpetite load", "tiktoken load", "bpetite load + encode", "tiktoken load + encode")


def run(run: harness.Run) -> harness.Section:
    rounds = 1 if run.quick else 7
    section = harness.Section(f"Loading OpenAI's vocabularies ({rounds} round(s))", __doc__)
    rows = []
    for name, label in VOCABULARIES.items():
        harness.log(f"openai load: {name}, {rounds} round(s)")
        tokenizer = peers.openai(name, run.cache)[0]
        ranks = harness.data(f"{name}.tiktoken", run.cache)
        artifact = run.scratch / f"{name}.json"
        tokenizer.save(artifact)
        loaders = {
            "bpetite": partial(_bpetite, artifact),
            "tiktoken": partial(_tiktoken, ranks, tokenizer),
        }
        cases = {f"{who} load": partial(load, None) for who, load in loaders.items()}
        cases |= {f"{who} load + encode": partial(load, run.text) for who, load in loaders.items()}
        timings = harness.measure(cases, rounds)
        ids = [timings[f"{who} load + encode"].results[0] for who in loaders]
        section.check(f"{name}: bpetite's ids after loading equal tiktoken's", ids[0] == ids[1])
        stats = [timings[case].stat for case in CASES]
        section.record({f"{name} {case}": stat for case, stat in zip(CASES, stats, strict=True)})
        sizes = [f"{path.stat().st_size / 1e6:.1f} MB" for path in (artifact, ranks)]
        ratios = [f"{stats[i].median / stats[i + 1].median:.2f}" for i in (0, 2)]
        rows.append(
            [label, *sizes, *map(spread, stats[:2]), ratios[0], *map(spread, stats[2:]), ratios[1]]
        )
        goal = name == "o200k_base"
        shown = "GPT-2" if name == "gpt2" else f"`{name}`"
        section.ratio(
            f"load {shown}, fully validated: bpetite time / tiktoken's",
            stats[0],
            stats[1],
            "<= 1" if goal else "",
            how="tiktoken: load_tiktoken_bpe + Encoding"
            if goal
            else "the load table has load + first encode too",
            source="speed target" if goal else "context",
        )
    section.add(harness.table(TABLE, rows))
    return section


def _bpetite(artifact: Path, text: str | None) -> Any:
    tokenizer = Tokenizer.load(artifact)
    return tokenizer if text is None else tokenizer.encode_ordinary(text)


def _tiktoken(path: Path, tokenizer: Tokenizer, text: str | None) -> Any:
    """tiktoken's own load of the rank file, with the pattern and specials bpetite checked."""
    from tiktoken.load import load_tiktoken_bpe

    encoding = peers.tiktoken_of(tokenizer, load_tiktoken_bpe(str(path)))
    return encoding if text is None else encoding.encode_ordinary(text)
