"""What the library computes, to be compared between a run with `regex` and one without.

``tests/core/test_without_regex.py`` calls :func:`results` in the test process, where
`regex` is installed, and runs :data:`CHILD` in a fresh interpreter where
``import regex`` fails, as in Pyodide: every id, merge and count must be the same.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import bpetite
from bpetite.core import _regex
from bpetite.corpus import encode_pieces
from tests import datafiles
from tests.strategies import MULTILINGUAL

#: The child's command: block `regex` (an import of a module mapped to None raises
#: ImportError) before anything imports it, then print :func:`results` as JSON.
CHILD = (
    "import sys; sys.modules['regex'] = None; "
    "from tests.without_regex import main; main(sys.argv[1])"
)


def mixed_text(ascii_text: str, every: int = 40) -> str:
    """`ascii_text` with a line of MULTILINGUAL after every `every` lines: mostly ASCII."""
    others = MULTILINGUAL.splitlines(keepends=True)
    lines = ascii_text.splitlines(keepends=True)
    for k in range(len(lines) // every, 0, -1):
        lines.insert(k * every, others[k % len(others)])
    return "".join(lines)


def results(directory: Path) -> dict[str, Any]:
    """Encodings, decodings, trainings and counts of mixed-script texts, by name."""
    shakespeare = datafiles.shakespeare_text()
    mixed = mixed_text(shakespeare[:100_000])
    texts = {
        "multilingual": MULTILINGUAL,
        "mixed": mixed,
        "ascii": shakespeare[:50_000],
        "specials": "a<|endoftext|>b " + MULTILINGUAL + "<|endoftext|>",
    }
    found: dict[str, Any] = {"engine": "regex" if _regex.have_regex() else "re"}
    for name in ("gpt2", "cl100k_base"):
        encoding = bpetite.get_encoding(name)
        for label, text in texts.items():
            ids = encoding.encode(text, allowed_special="all")
            found[f"{name} encode {label}"] = ids
            found[f"{name} decodes {label}"] = encoding.decode(ids) == text
        pieces = [mixed[start : start + 997] for start in range(0, len(mixed), 997)]
        found[f"{name} encode_pieces mixed"] = [
            token for batch in encode_pieces(encoding, pieces) for token in batch
        ]
    corpus = shakespeare[:30_000] + MULTILINGUAL * 4
    for pattern in bpetite.PRESETS:
        trained = bpetite.Tokenizer.train(corpus, vocab_size=512, pattern=pattern)
        found[f"{pattern} train"] = [list(pair) for pair in trained.merges]
        found[f"{pattern} trained encode mixed"] = trained.encode(mixed)
        counts = bpetite.count_chunks([MULTILINGUAL], pattern=pattern)
        found[f"{pattern} count_chunks"] = sorted([chunk.hex(), n] for chunk, n in counts.items())
    path = directory / "mixed.txt"
    path.write_text(mixed, encoding="utf-8")
    from_files = bpetite.train_files(
        path, vocab_size=400, pattern="o200k", workers=1, block_size=4096
    )
    found["o200k train_files"] = [list(pair) for pair in from_files.merges]
    return found


def main(directory: str) -> None:
    """Print :func:`results` as JSON, with the engine that computed them."""
    json.dump(results(Path(directory)), sys.stdout)
