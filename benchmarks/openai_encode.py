"""Encoding TinyShakespeare with `cl100k_base` and `o200k_base`: bpetite, tiktoken and two more.

The encoders: tiktoken; bpetite (the committed rank file imported by
``bpetite.interop``); puretiktoken (tiktoken in pure Python); bpe-openai (Rust, GitHub's
linear-time ``bpe`` crate). All run ``encode_ordinary`` on the same pieces of the text,
cut at line ends (bpe-openai refuses a call of 1M characters). Each round builds every
encoder afresh (untimed) and encodes the pieces twice: cold, then warm. Median
(min–max); *speed* is relative to tiktoken's, same state, same round. Every encoder's
ids must be tiktoken's, piece by piece.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks import harness, peers
from benchmarks.harness import spread

TABLE = "encoder | cold | warm | >cold MB/s | >warm MB/s | >speed cold | >speed warm"
LABELS = {
    "tiktoken": "tiktoken",
    "bpetite": "bpetite",
    "puretiktoken": "puretiktoken (pure Python)",
    "bpe-openai": "bpe-openai (Rust, linear-time `bpe` crate)",
}
#: Each encoding, and the encoders whose speed against tiktoken's is a target row.
ROWS = {"cl100k_base": ("bpetite", "puretiktoken", "bpe-openai"), "o200k_base": ("bpetite",)}
Encode = Callable[[str], list[int]]


def run(run: harness.Run) -> harness.Section:
    text = peers.pieces(run.text)[0] if run.quick else run.text
    pieces = peers.pieces(text)
    size = len(text.encode("utf-8"))
    rounds = 1 if run.quick else 5
    section = harness.Section(f"Encoding with OpenAI's vocabularies ({rounds} round(s))", __doc__)
    section.add(f"TinyShakespeare: {size:,} bytes in {len(pieces)} piece(s).")
    encoders = [name for name in LABELS if peers.installed(name)]
    for encoding, targeted in ROWS.items():
        harness.log(f"openai encode: {encoding}, {rounds} round(s)")
        fresh: dict[str, Encode] = {}
        cases = {
            f"{name} {state}": partial(_encode_all, fresh, name, pieces)
            for name in encoders
            for state in ("cold", "warm")
        }
        build = partial(_build, fresh, encoders, encoding, run.cache)
        timings = harness.measure(cases, rounds, setup=build)
        expected = timings["tiktoken cold"].results[0]
        stats = {name: timing.stat for name, timing in timings.items()}
        section.record({f"{encoding} {name}": stat for name, stat in stats.items()})
        rows = []
        for name in encoders:
            if name != "tiktoken":
                ids = [timings[f"{name} {state}"].results[0] for state in ("cold", "warm")]
                section.check(f"`{encoding}`: {name}'s ids equal tiktoken's", ids == [expected] * 2)
            cold, warm = stats[f"{name} cold"], stats[f"{name} warm"]
            speeds = [
                stats[f"tiktoken {s}"].median / stats[f"{name} {s}"].median
                for s in ("cold", "warm")
            ]
            speeds_text = [f"{size / cold.median / 1e6:.1f}", f"{size / warm.median / 1e6:.1f}"]
            speeds_text += [f"{speed:.2f}" for speed in speeds]
            rows.append([LABELS[name], spread(cold), spread(warm), *speeds_text])
        for name in targeted:
            for state in ("warm", "cold"):
                goal = (name, encoding, state) == ("bpetite", "cl100k_base", "warm")
                section.ratio(
                    f"encode TinyShakespeare, `{encoding}`, {state}: {name} speed / tiktoken's",
                    stats[f"tiktoken {state}"],
                    stats[f"{name} {state}"],
                    ">= 1" if goal else "",
                    how="same pieces, ids equal" if goal else "",
                    source="speed target" if goal else "context",
                )
        tokens = sum(map(len, expected))
        section.add(f"### `{encoding}` ({tokens:,} tokens)\n\n" + harness.table(TABLE, rows))
    return section


def _build(fresh: dict[str, Encode], names: list[str], encoding: str, cache: Path) -> None:
    """A new encoder of `encoding` for each name, into `fresh` (untimed, before a round).

    bpetite's is a new tokenizer of the imported definition, its chunk cache empty, as
    after ``Tokenizer.load``.
    """
    tokenizer, ranks = peers.openai(encoding, cache)
    for name in names:
        if name == "tiktoken":
            fresh[name] = peers.tiktoken_of(tokenizer, ranks).encode_ordinary
        elif name == "bpetite":  # a tokenizer copies as its definition: a new cache
            fresh[name] = peers.with_tables(copy.copy(tokenizer)).encode_ordinary
        else:
            fresh[name] = peers.bundled_encoder(name, encoding, cache)


def _encode_all(fresh: dict[str, Encode], name: str, pieces: list[str]) -> list[list[int]]:
    encode = fresh[name]
    return [encode(piece) for piece in pieces]
