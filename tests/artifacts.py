"""What the artifact tests share: the worked example as a document, and strict rejection checks."""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bpetite import ArtifactError, Tokenizer, reference
from bpetite.core._artifact import dumps_artifact, parse_artifact
from bpetite.core._atomic import write_atomically
from bpetite.core._constants import END_OF_TEXT_TOKEN
from bpetite.errors import MissingKeyError

EOT = END_OF_TEXT_TOKEN
EOT_BYTES = list(EOT.encode("utf-8"))
SOURCE = "art.json"

#: A corpus with enough repetition for a few hundred merges and ties between them.
GATE_CORPUS = "the cat sat on the mat; the bat ate the rat.\nThe end, the end!  " * 5

State = tuple[dict[int, bytes], list[tuple[int, int]], dict[str, int]]


def save(
    path: str | Path,
    vocab: dict[int, bytes],
    merges: Sequence[tuple[int, int]],
    special_tokens: dict[str, int],
    *,
    overwrite: bool = False,
) -> None:
    """Save a bare state as ``Tokenizer.save`` saves a tokenizer: the canonical bytes,
    then the atomic writer; a state no tokenizer could hold is refused the same way."""
    write_atomically(path, dumps_artifact(vocab, merges, special_tokens), overwrite=overwrite)


def trained_state(corpus: str, vocab_size: int) -> State:
    merges = reference.train(corpus, vocab_size)
    return reference.vocab(merges), merges, {EOT: 256 + len(merges)}


def canonical(document: object) -> bytes:
    """An independent serializer for hand-built documents: the spec's json.dumps call."""
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")


def valid_document() -> dict[str, Any]:
    """The worked example "ab ab ab" at 258 as a fresh, mutable JSON document.

    merges == [[97, 98], [32, 256]]: the second merge uses a merged id, so
    merge-on-merge checks have something to bite on.
    """
    document: dict[str, Any] = json.loads(dumps_artifact(*trained_state("ab ab ab", 258)))
    return document


#: The spec's builtin for each defect, and the family class the loader raises for it.
FAMILY: dict[type[Exception], type[Exception]] = {
    ValueError: ArtifactError,
    KeyError: MissingKeyError,
}


def assert_rejected(data: bytes, exc_type: type[Exception], fragment: str) -> None:
    """The family class for the spec's `exc_type` exactly (not a UnicodeDecodeError)."""
    with pytest.raises(exc_type) as excinfo:
        parse_artifact(data, source=SOURCE)
    assert type(excinfo.value) is FAMILY[exc_type]
    message = str(excinfo.value)
    assert fragment in message
    assert SOURCE in message
    # Tokenizer.loads makes the same checks, in memory: the same error, named <bytes>.
    with pytest.raises(exc_type) as in_memory:
        Tokenizer.loads(data)
    assert type(in_memory.value) is FAMILY[exc_type]
    assert str(in_memory.value) == message.replace(SOURCE, "<bytes>", 1)


def dir_listing(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())
