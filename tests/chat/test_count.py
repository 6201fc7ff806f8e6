"""count_chat_tokens against the openai-cookbook's rule computed with tiktoken, offline.

The oracle is the cookbook's ``num_tokens_from_messages`` written out plainly with
tiktoken's own encodings (built from the rank files, never downloaded), encoding each
value as ordinary text; and tiktoken's model table for which encoding a model uses.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import encoding_name_for_model, get_encoding
from bpetite.chat import count_chat_tokens
from bpetite.errors import ParameterError
from tests import datafiles
from tests.strategies import MULTILINGUAL, texts

#: Hypothesis examples per property; raise it from the environment for a deeper run.
EXAMPLES = int(os.environ.get("BPETITE_CHAT_EXAMPLES", "100"))


def cookbook_count(messages: list[dict[str, str]], encoding: Any) -> int:
    """The cookbook's rule: 3 per message, each value's tokens, 1 per name, 3 to prime."""
    total = 0
    for message in messages:
        total += 3
        for key, value in message.items():
            total += len(encoding.encode_ordinary(value))
            if key == "name":
                total += 1
    return total + 3


MESSAGES = [
    {"role": "system", "content": "You are a helpful, pattern-following assistant."},
    {"role": "system", "name": "example_user", "content": "New synergies will help."},
    {"role": "user", "content": MULTILINGUAL},
    {"role": "assistant", "content": "<|endoftext|> is text in a message"},
]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_the_cookbooks_count(encoding: str) -> None:
    expected = cookbook_count(MESSAGES, datafiles.tiktoken_encoding(encoding))
    assert count_chat_tokens(MESSAGES, encoding) == expected
    assert count_chat_tokens(MESSAGES, get_encoding(encoding)) == expected


def test_the_cookbooks_example() -> None:
    """The cookbook's first example conversation: 129 prompt tokens for gpt-4-0613
    (and for gpt-3.5-turbo-0613), as its notebook prints and the API reported."""
    example = [
        {
            "role": "system",
            "content": "You are a helpful, pattern-following assistant that translates "
            "corporate jargon into plain English.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "New synergies will help drive top-line growth.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Things working well together will increase revenue.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "Let's circle back when we have more bandwidth to touch base on "
            "opportunities for increased leverage.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Let's talk later when we're less busy about how to do better.",
        },
        {
            "role": "user",
            "content": "This late pivot means we don't have time to boil the ocean for the "
            "client deliverable.",
        },
    ]
    assert count_chat_tokens(example, "gpt-4-0613") == 129
    assert count_chat_tokens(example, "gpt-3.5-turbo-0613") == 129


@given(
    messages=st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["system", "user", "assistant"]), "content": texts},
            optional={"name": st.sampled_from(["bob", "example_user"])},
        ),
        min_size=1,
        max_size=4,
    )
)
@settings(max_examples=EXAMPLES, deadline=None)
def test_any_conversation(messages: list[dict[str, str]]) -> None:
    expected = cookbook_count(messages, datafiles.tiktoken_encoding("o200k_base"))
    assert count_chat_tokens(messages, "gpt-4o") == expected


MODELS = [
    "gpt-4o",
    "gpt-4o-2024-08-06",
    "gpt-4o-mini",
    "chatgpt-4o-latest",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.5-preview",
    "gpt-5",
    "gpt-5-mini",
    "o1",
    "o1-mini",
    "o3",
    "o3-mini",
    "o4-mini",
    "o4-mini-2025-04-16",
    "gpt-4",
    "gpt-4-0613",
    "gpt-4-turbo",
    "gpt-3.5-turbo",
    "gpt-3.5-turbo-0125",
    "gpt-35-turbo",
    "ft:gpt-4o-2024-08-06:org::id",
    "ft:gpt-3.5-turbo-0613:org::id",
]


@pytest.mark.parametrize("model", MODELS)
def test_a_models_encoding_is_tiktokens(model: str) -> None:
    from tiktoken.model import encoding_name_for_model as tiktokens

    assert encoding_name_for_model(model) == tiktokens(model)


def test_bad_input_is_named() -> None:
    with pytest.raises(ParameterError, match="unknown model 'llama'"):
        count_chat_tokens([{"role": "user", "content": "hi"}], "llama")
    with pytest.raises(ParameterError, match="message 0's 'content' must be text"):
        count_chat_tokens([{"role": "user", "content": ["hi"]}], "gpt-4o")  # type: ignore[dict-item]
    with pytest.raises(ParameterError, match="conversation is empty"):
        count_chat_tokens([], "gpt-4o")
