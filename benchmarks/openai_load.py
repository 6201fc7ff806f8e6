"""Loading GPT-2's, `cl100k_base`'s and `o200k_base`'s vocabularies: bpetite against tiktoken.

| vocabulary | artifact | `.tiktoken` | bpetite load | tiktoken load | ratio | … load + encode … |

bpetite: ``Tokenizer.load`` of the artifact ``bpetite import`` writes for the committed
rank file, every check of docs/schema.md included. tiktoken: what it does before its
first encode, ``load_tiktoken_bpe`` on the same file and building its ``Encoding``. Then
each again followed by ``encode_ordinary`` of TinyShakespeare: bpetite proves lazily
which tokens encode to themselves, so that is where any cost moved out of loading
shows. The ids of that encode must be tiktoken's.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import harness, peers
from bpetite import Tokenizer

VOCABULARIES = {
    "gpt2": "GPT-2 (r50k_base)",
    "cl100k_base": "cl100k_base",
    "o200k_base": "o200k_base",
}


def run(run: harness.Run) -> harness.Section:
    rounds = 1 if run.quick else 7
    section = harness.Section("Loading OpenAI's vocabularies")
    section.add(
        f"Median of {rounds} round(s), interleaved, (min–max). bpetite: `Tokenizer.load` of "
        "the artifact `bpetite import` writes, every check of docs/schema.md included; "
        "tiktoken: `load_tiktoken_bpe` on the `.tiktoken` file and building its `Encoding`. "
        "Then the same plus `encode_ordinary` of TinyShakespeare "
        f"({len(run.text.encode('utf-8')):,} bytes). A ratio is bpetite's median time over "
        "tiktoken's: below 1 is faster."
    )
    rows = []
    for name, label in VOCABULARIES.items():
        harness.log(f"openai load: {name}, {rounds} round(s)")
        tokenizer = peers.openai(name, run.cache)[0]
        ranks_path = harness.data_path(f"{name}.tiktoken", run.cache)
        artifact = run.scratch / f"{name}.json"
        tokenizer.save(artifact)
        cases = {
            "bpetite load": partial(_bpetite, artifact, None),
            "tiktoken load": partial(_tiktoken, ranks_path, tokenizer, None),
            "bpetite load + encode": partial(_bpetite, artifact, run.text),
            "tiktoken load + encode": partial(_tiktoken, ranks_path, tokenizer, run.text),
        }
        measured = harness.measure(cases, rounds)
        ids = [measured[f"{who} load + encode"].results[0] for who in ("bpetite", "tiktoken")]
        section.check(f"{name}: bpetite's ids after loading equal tiktoken's", ids[0] == ids[1])
        timings = {case: timing.stat for case, timing in measured.items()}
        load = timings["bpetite load"].median / timings["tiktoken load"].median
        both = timings["bpetite load + encode"].median / timings["tiktoken load + encode"].median
        rows.append(
            [
                label,
                f"{artifact.stat().st_size / 1e6:.1f} MB",
                f"{ranks_path.stat().st_size / 1e6:.1f} MB",
                harness.spread(timings["bpetite load"]),
                harness.spread(timings["tiktoken load"]),
                f"{load:.2f}",
                harness.spread(timings["bpetite load + encode"]),
                harness.spread(timings["tiktoken load + encode"]),
                f"{both:.2f}",
            ]
        )
        targeted = name == "o200k_base"
        section.ratio(
            f"load {'GPT-2' if name == 'gpt2' else f'`{name}`'}, fully validated: "
            "bpetite time / tiktoken's",
            timings["bpetite load"],
            timings["tiktoken load"],
            "<= 1" if targeted else "",
            how="tiktoken: load_tiktoken_bpe + Encoding"
            if targeted
            else "the load table has load + first encode too",
            source="speed target" if targeted else "context",
        )
    header = [
        "vocabulary",
        ">artifact",
        ">`.tiktoken`",
        "bpetite load",
        "tiktoken load",
        ">ratio",
        "bpetite load + encode",
        "tiktoken load + encode",
        ">ratio",
    ]
    section.add(harness.table(header, rows))
    return section


def _bpetite(artifact: Path, text: str | None) -> Any:
    tokenizer = Tokenizer.load(artifact)
    return tokenizer if text is None else tokenizer.encode_ordinary(text)


def _tiktoken(path: Path, tokenizer: Tokenizer, text: str | None) -> Any:
    """tiktoken's own load of the rank file, with the pattern and specials bpetite checked."""
    from tiktoken.load import load_tiktoken_bpe

    encoding = peers.tiktoken_of(tokenizer, load_tiktoken_bpe(str(path)))
    return encoding if text is None else encoding.encode_ordinary(text)
