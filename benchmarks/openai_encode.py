"""Encoding TinyShakespeare with `cl100k_base` and `o200k_base`: bpetite, tiktoken and two more.

| encoder | cold | warm | cold MB/s | warm MB/s | speed cold | speed warm |

The encoders are tiktoken, bpetite (the committed rank file imported by
``bpetite.interop``), puretiktoken (pure Python) and bpe-openai (Rust, GitHub's
linear-time ``bpe`` crate), all through ``encode_ordinary`` on the same pieces of the
text, cut at line ends (bpe-openai refuses a call of 1M characters). Each round builds
every encoder afresh (untimed) and encodes the pieces twice: cold, then warm. Every
encoder's ids must be tiktoken's, piece by piece.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks import harness, peers
from bpetite import Tokenizer

ENCODINGS = ("cl100k_base", "o200k_base")
LABELS = {
    "tiktoken": "tiktoken",
    "bpetite": "bpetite",
    "puretiktoken": "puretiktoken (pure Python)",
    "bpe-openai": "bpe-openai (Rust, linear-time `bpe` crate)",
}
Encode = Callable[[str], list[int]]


def run(run: harness.Run) -> harness.Section:
    text = peers.pieces(run.text)[0] if run.quick else run.text
    pieces = peers.pieces(text)
    size = len(text.encode("utf-8"))
    rounds = 1 if run.quick else 5
    section = harness.Section("Encoding with OpenAI's vocabularies")
    section.add(
        f"TinyShakespeare ({size:,} bytes) in {len(pieces)} pieces cut at line ends, "
        f"`encode_ordinary`, {rounds} round(s); each round builds every encoder afresh "
        "(untimed) and encodes the pieces twice, cold then warm. Median (min–max); *speed* "
        "is relative to tiktoken's, same state, same round."
    )
    encoders = [name for name in LABELS if peers.installed(name)]
    for encoding in ENCODINGS:
        harness.log(f"openai encode: {encoding}, {rounds} round(s)")
        fresh: dict[str, Encode] = {}
        build = partial(_build, fresh, encoders, encoding, run.cache)
        cases = {
            f"{name} {state}": partial(_encode_all, fresh, name, pieces)
            for name in encoders
            for state in ("cold", "warm")
        }
        timings = harness.measure(cases, rounds, setup=build)
        expected = timings["tiktoken cold"].results[0]
        rows = []
        for name in encoders:
            cold, warm = timings[f"{name} cold"], timings[f"{name} warm"]
            ok = cold.results[0] == expected and warm.results[0] == expected
            section.check(f"`{encoding}`: {name} ids equal tiktoken's", ok)
            theirs = timings["tiktoken cold"].stat.median, timings["tiktoken warm"].stat.median
            rows.append(
                [
                    LABELS[name],
                    harness.spread(cold.stat),
                    harness.spread(warm.stat),
                    f"{size / cold.stat.median / 1e6:.1f}",
                    f"{size / warm.stat.median / 1e6:.1f}",
                    f"{theirs[0] / cold.stat.median:.2f}",
                    f"{theirs[1] / warm.stat.median:.2f}",
                ]
            )
            for state in ("warm", "cold"):
                if name == "tiktoken" or (encoding == "o200k_base" and name != "bpetite"):
                    continue
                targeted = (name, encoding, state) == ("bpetite", "cl100k_base", "warm")
                section.ratio(
                    f"encode TinyShakespeare, `{encoding}`, {state}: {name} speed / tiktoken's",
                    timings[f"tiktoken {state}"].stat,
                    timings[f"{name} {state}"].stat,
                    ">= 1" if targeted else "",
                    how="same pieces, ids equal" if targeted else "",
                    source="speed target" if targeted else "context",
                )
        tokens = sum(map(len, expected))
        header = [
            "encoder",
            "cold",
            "warm",
            ">cold MB/s",
            ">warm MB/s",
            ">speed cold",
            ">speed warm",
        ]
        section.add(f"### `{encoding}` ({tokens:,} tokens)\n\n" + harness.table(header, rows))
    return section


def _build(fresh: dict[str, Encode], names: list[str], encoding: str, cache: Path) -> None:
    """A new encoder of `encoding` for each name, into `fresh` (untimed, before a round).

    bpetite's is a new tokenizer of the imported definition: an empty chunk cache, as
    after ``Tokenizer.load``.
    """
    tokenizer, ranks = peers.openai(encoding, cache)
    for name in names:
        if name == "tiktoken":
            fresh[name] = peers.tiktoken_of(tokenizer, ranks).encode_ordinary
        elif name == "bpetite":
            fresh[name] = Tokenizer(
                tokenizer.merges,
                pattern=tokenizer.split_pattern,
                special_tokens=dict(tokenizer.special_tokens),
                byte_order=tokenizer.byte_order,
            ).encode_ordinary
        else:
            fresh[name] = peers.bundled_encoder(name, encoding, cache)


def _encode_all(fresh: dict[str, Encode], name: str, pieces: list[str]) -> list[list[int]]:
    encode = fresh[name]
    return [encode(piece) for piece in pieces]
