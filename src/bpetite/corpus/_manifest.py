"""A dataset's manifest: ``<output>.json`` beside each array, saying how to read it.

It records the dtype and byte order, the token and document counts, each document's
offset and source, the separator, the model's hash and the options that shaped the
content. Keys are sorted and the text is ASCII, so equal datasets have equal
manifests, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from bpetite.core._tokenizer import Tokenizer

#: The manifest's format name and version.
MANIFEST_FORMAT: Final = "bpetite-dataset"
MANIFEST_VERSION: Final = 1


def manifest_path(path: Path) -> Path:
    """The manifest of the array at `path`: the same name with ``.json`` added."""
    return path.with_name(path.name + ".json")


def resolve_model(model: Tokenizer | str | os.PathLike[str]) -> tuple[Tokenizer, dict[str, Any]]:
    """The tokenizer and what the manifest says about it: name, sha256, size, pattern.

    The hash is that of the artifact's file: the one read, or for a tokenizer given
    as an object, the one ``save`` would write.
    """
    if isinstance(model, Tokenizer):
        tokenizer = model
        name = None
        sha256 = hashlib.sha256(tokenizer.dumps()).hexdigest()
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        data = path.read_bytes()
        tokenizer = Tokenizer.load(path)
        name = path.name
        sha256 = hashlib.sha256(data).hexdigest()
    else:
        raise TypeError(f"model must be a Tokenizer or an artifact's path, got {model!r}")
    return tokenizer, {
        "name": name,
        "sha256": sha256,
        "n_vocab": tokenizer.n_vocab,
        "pattern": tokenizer.pattern_name,
    }


def dumps_manifest(
    split: str,
    *,
    dtype: str,
    tokens: int,
    offsets: Sequence[int],
    sources: Sequence[str],
    model_info: dict[str, Any],
    separator: str | None,
    separator_id: int | None,
    options: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> bytes:
    """The manifest's bytes for the array of `split` ("train" or "val").

    `extra` adds keys: the BOS token, the layout (``bin``, or ``llmc`` with its
    header's size in bytes).
    """
    manifest = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "split": split,
        "dtype": dtype,
        "byteorder": "little",
        "tokens": tokens,
        "documents": len(offsets),
        "document_offsets": list(offsets),
        "document_sources": list(sources),
        "separator": None if separator is None else {"text": separator, "id": separator_id},
        "model": model_info,
        "options": options,
        **(extra or {}),
    }
    return (json.dumps(manifest, sort_keys=True, separators=(",", ":")) + "\n").encode("ascii")
