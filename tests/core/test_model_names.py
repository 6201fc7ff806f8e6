"""encoding_for_model and encoding_name_for_model: tiktoken's model table, name for name.

The oracle is the installed tiktoken: its tables (``tiktoken.model``), in order, and its
own ``encoding_name_for_model`` on every exact name, every prefix (with and without a
suffix), fine-tuned names and names neither knows.
"""

from __future__ import annotations

import pytest
import tiktoken.model
from hypothesis import given
from hypothesis import strategies as st

import bpetite
from bpetite import encoding_for_model, encoding_name_for_model, get_encoding
from bpetite.core._model_names import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING


def _theirs(name: str) -> str | None:
    try:
        return tiktoken.model.encoding_name_for_model(name)
    except KeyError:
        return None


def _ours(name: str) -> str | None:
    try:
        return encoding_name_for_model(name)
    except KeyError:
        return None


def test_the_tables_are_tiktokens_in_its_order() -> None:
    assert list(MODEL_TO_ENCODING.items()) == list(tiktoken.model.MODEL_TO_ENCODING.items())
    assert list(MODEL_PREFIX_TO_ENCODING.items()) == list(
        tiktoken.model.MODEL_PREFIX_TO_ENCODING.items()
    )


def test_every_name_of_the_tables_is_a_built_in_vocabulary() -> None:
    names = set(MODEL_TO_ENCODING.values()) | set(MODEL_PREFIX_TO_ENCODING.values())
    assert names <= set(bpetite.list_encoding_names())


#: Exact names, every prefix alone and with a release suffix, fine-tuned models, and
#: names that only look close: where the order of the prefixes decides
#: (``gpt-4o-`` before ``gpt-4-``, ``ft:gpt-4o`` before ``ft:gpt-4``).
NAMES = [
    *tiktoken.model.MODEL_TO_ENCODING,
    *tiktoken.model.MODEL_PREFIX_TO_ENCODING,
    *(f"{prefix}2024-05-13" for prefix in tiktoken.model.MODEL_PREFIX_TO_ENCODING),
    "gpt-4o-mini",
    "gpt-4o-2024-08-06",
    "gpt-4-0314",
    "gpt-4-32k",
    "gpt-3.5-turbo-0301",
    "gpt-5-mini",
    "gpt-oss-120b",
    "ft:gpt-4o-mini-2024-07-18:org::9abc",
    "ft:gpt-4-0613:org::id",
    "ft:gpt-3.5-turbo-0125:my-org:custom:id",
    "ft:davinci-002:org::id",
    "chatgpt-4o-latest",
    "o1-mini",
    "o3-mini",
    "o4-mini-2025-04-16",
    "GPT-4",
    "gpt-4o ",
    "gpt4",
    "claude-3",
    "",
    "ft:",
    "text-davinci-004",
]


@pytest.mark.parametrize("name", NAMES)
def test_each_name_maps_as_tiktoken_maps_it(name: str) -> None:
    assert _ours(name) == _theirs(name)


@given(st.text(alphabet="gpt-o0123456789.:ftab", max_size=16))
def test_any_name_maps_as_tiktoken_maps_it(name: str) -> None:
    assert _ours(name) == _theirs(name)


def test_an_unknown_name_raises_keyerror_with_tiktokens_advice() -> None:
    with pytest.raises(KeyError) as raised:
        encoding_name_for_model("claude-3")
    message = str(raised.value)
    assert "Could not automatically map claude-3 to a tokeniser" in message
    assert "`bpetite.get_encoding`" in message
    with pytest.raises(KeyError):
        encoding_for_model("claude-3")
    with pytest.raises(TypeError, match="model_name must be a str, got bytes"):
        encoding_name_for_model(b"gpt-4")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt2", "gpt2"),
        ("text-davinci-003", "p50k_base"),
        ("text-davinci-edit-001", "p50k_edit"),
        ("gpt-3.5-turbo-0301", "cl100k_base"),
        ("gpt-4o", "o200k_base"),
        ("gpt-oss-120b", "o200k_harmony"),
    ],
)
def test_encoding_for_model_is_the_built_in(model: str, encoding: str) -> None:
    tokenizer = encoding_for_model(model)
    assert tokenizer is get_encoding(encoding)
    assert tokenizer.name == encoding == tiktoken.model.encoding_name_for_model(model)
