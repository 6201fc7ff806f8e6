"""One validation of a model's fields, for the constructor and the loader alike.

The constructor raises ParameterError for a field no model may hold; a file holding the
same field must fail ``Tokenizer.load`` with ArtifactError naming the file and the
field, never with the constructor's ParameterError. The rules themselves come from the
specification and docs/schema.md (a merged token has two bytes or more, so
``max_token_bytes`` is at least 2; a pair that occurs has count 1, so
``min_frequency`` is at least 1; a byte order lists each byte once; a special token's
id follows the mergeable vocabulary; merge ``r`` joins ids below ``256 + r``).
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bpetite import Tokenizer
from bpetite.errors import ArtifactError, ParameterError

#: A small model with something in every v2 field: a training record, a byte order
#: that is not the identity, and two special tokens.
MERGES = [(97, 98), (256, 99), (32, 257)]
SIZE = 256 + len(MERGES)
REVERSED = list(range(255, -1, -1))


def _model_document() -> dict[str, Any]:
    """The compact v2 document of the small model, as bpetite writes it."""
    tokenizer = Tokenizer(
        [
            (255 - left if left < 256 else left, 255 - right if right < 256 else right)
            for left, right in MERGES
        ],
        pattern="cl100k",
        special_tokens=["<|endoftext|>", "<|u|>"],
        byte_order=REVERSED,
        training={"max_token_bytes": 4, "min_frequency": 2},
    )
    document: dict[str, Any] = json.loads(tokenizer.dumps())
    # The document is what docs/schema.md describes, so the mutations below are edits
    # of the fields it names.
    assert document["training"] == {"max_token_bytes": 4, "min_frequency": 2}
    assert document["id_layout"] == {"byte_order": REVERSED}
    assert document["special_tokens"] == {"<|endoftext|>": SIZE, "<|u|>": SIZE + 1}
    assert len(document["merges_flat"]) == 2 * len(MERGES)
    return document


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.write_bytes(json.dumps(document, sort_keys=True, separators=(",", ":")).encode())
    return path


def _set(field: str, key: str, value: object) -> Callable[[dict[str, Any]], None]:
    def mutate(document: dict[str, Any]) -> None:
        document[field][key] = value

    return mutate


def _set_flat(index: int, value: int) -> Callable[[dict[str, Any]], None]:
    def mutate(document: dict[str, Any]) -> None:
        document["merges_flat"][index] = value

    return mutate


def _constructor_arguments(document: dict[str, Any]) -> dict[str, Any]:
    """The constructor's arguments for the model a document describes."""
    flat = document["merges_flat"]
    return {
        "merges": list(zip(flat[0::2], flat[1::2], strict=True)),
        "pattern": document["pattern_name"],
        "special_tokens": document["special_tokens"],
        "byte_order": document["id_layout"]["byte_order"],
        "training": document["training"],
    }


#: (what is wrong, the edit that makes it so, the words naming the field in the file)
INVALID_FIELDS = [
    pytest.param(_set("training", "max_token_bytes", 1), "max_token_bytes", id="max_token_bytes=1"),
    pytest.param(_set("training", "max_token_bytes", 0), "max_token_bytes", id="max_token_bytes=0"),
    pytest.param(_set("training", "min_frequency", 0), "min_frequency", id="min_frequency=0"),
    pytest.param(_set("id_layout", "byte_order", [0] * 256), "byte_order", id="byte_order-repeats"),
    pytest.param(
        _set("special_tokens", "<|u|>", SIZE - 1), "special_tokens", id="special-in-merges"
    ),
    pytest.param(
        _set("special_tokens", "<|u|>", SIZE), "special_tokens", id="special-shares-an-id"
    ),
    pytest.param(_set_flat(2, 258), "merges", id="merge-uses-its-own-id"),
]


@pytest.mark.parametrize(("mutate", "field"), INVALID_FIELDS)
def test_a_field_the_constructor_refuses_fails_load_naming_the_file_and_the_field(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], field: str
) -> None:
    document = _model_document()
    mutate(document)
    path = _write(tmp_path / "model.json", document)
    with pytest.raises(ArtifactError) as loaded:
        Tokenizer.load(path)
    assert not isinstance(loaded.value, ParameterError)
    message = str(loaded.value)
    assert message.startswith(f"{path}: ")
    assert field in message
    arguments = _constructor_arguments(document)
    with pytest.raises(ParameterError):
        Tokenizer(arguments.pop("merges"), **arguments)


def test_the_unmutated_model_loads_and_constructs(tmp_path: Path) -> None:
    """The valid document the tests above edit: both paths accept it, as the same model."""
    document = _model_document()
    loaded = Tokenizer.load(_write(tmp_path / "model.json", document))
    arguments = _constructor_arguments(document)
    built = Tokenizer(arguments.pop("merges"), **arguments)
    assert loaded == built
    assert loaded.training == built.training == {"max_token_bytes": 4, "min_frequency": 2}


@pytest.mark.parametrize("option", ["max_token_bytes", "min_frequency"])
@pytest.mark.parametrize("value", [-1, 0, 1, 2, 3])
def test_load_and_the_constructor_agree_on_every_training_value(
    tmp_path: Path, option: str, value: int
) -> None:
    """One rule: a recorded option loads exactly when the constructor takes it."""
    least = {"max_token_bytes": 2, "min_frequency": 1}[option]  # docs/schema.md
    document = _model_document()
    document["training"][option] = value
    path = _write(tmp_path / "model.json", document)
    arguments = _constructor_arguments(document)
    merges = arguments.pop("merges")
    if value >= least:
        assert Tokenizer.load(path).training[option] == value
        assert Tokenizer(merges, **arguments).training[option] == value
    else:
        with pytest.raises(ArtifactError, match=option):
            Tokenizer.load(path)
        with pytest.raises(ParameterError, match=option):
            Tokenizer(merges, **arguments)
