"""The harmony format against ``openai-harmony``'s own renderer, offline.

openai-harmony reads ``o200k_base.tiktoken`` from the directory ``TIKTOKEN_ENCODINGS_BASE``
names (the ``openai_dir`` fixture's). Its ``render_conversation`` (and, with a
generation prompt, ``render_conversation_for_completion`` for the assistant) gives the
ids; its ``decode`` the text. bpetite's tokenizer is ``o200k_base`` with harmony's
special tokens at their ids, as ``o200k_harmony`` has them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer, get_encoding
from bpetite.errors import ParameterError
from tests.strategies import tricky_text

#: Hypothesis examples per property; raise it from the environment for a deeper run.
EXAMPLES = int(os.environ.get("BPETITE_CHAT_EXAMPLES", "150"))

#: harmony's special tokens in o200k_harmony (tiktoken's and openai-harmony's table).
HARMONY_SPECIALS = {
    "<|startoftext|>": 199998,
    "<|endoftext|>": 199999,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|call|>": 200012,
    "<|endofprompt|>": 200018,
}

CONVERSATIONS: dict[str, list[dict[str, str]]] = {
    "plain": [
        {"role": "system", "content": "You are ChatGPT."},
        {"role": "developer", "content": "Answer in French."},
        {"role": "user", "content": "Naïve café? 🤔 <|end|> is text here"},
    ],
    "answered, analysis dropped": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "channel": "analysis", "content": "Add them."},
        {"role": "assistant", "channel": "final", "content": "4"},
    ],
    "analysis kept while the last assistant message is not final": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "channel": "analysis", "content": "Add them."},
        {"role": "assistant", "channel": "final", "content": "4"},
        {"role": "user", "content": "and 3+3?"},
        {"role": "assistant", "channel": "analysis", "content": "Add again."},
    ],
    "a tool call and its answer": [
        {"role": "user", "content": "Weather in Paris?", "name": "ana"},
        {
            "role": "assistant",
            "channel": "commentary",
            "recipient": "functions.get_weather",
            "content_type": "<|constrain|>json",
            "content": '{"city": "Paris"}',
        },
        {
            "role": "tool",
            "name": "functions.get_weather",
            "recipient": "assistant",
            "channel": "commentary",
            "content": '{"temp": 21}',
        },
        {"role": "assistant", "channel": "final", "content": "21 °C."},
    ],
    "odd headers": [
        {"role": "assistant", "recipient": "all", "content": "to everyone"},
        {"role": "assistant", "recipient": "browser.search", "content_type": "code", "content": ""},
        {"role": "user", "content_type": "<|constrain|>", "content": "x"},
    ],
}


@pytest.fixture(scope="module")
def harmony(openai_dir: Path) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_ENCODINGS_BASE", str(openai_dir))
        from openai_harmony import HarmonyEncodingName, load_harmony_encoding

        return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    base = get_encoding("o200k_base").with_special_tokens(HARMONY_SPECIALS)
    # Named as the built-in will be, whose default chat format is harmony.
    return Tokenizer(
        base.merges,
        pattern=base.split_pattern,
        special_tokens=dict(base.special_tokens),
        byte_order=base.byte_order,
        name="o200k_harmony",
    )


def rendered_by_harmony(harmony: Any, messages: list[dict[str, str]], prompt: bool) -> list[int]:
    from openai_harmony import Conversation, Message, Role

    conversation = Conversation.from_messages([Message.from_dict(dict(m)) for m in messages])
    if prompt:
        ids = harmony.render_conversation_for_completion(conversation, Role.ASSISTANT)
    else:
        ids = harmony.render_conversation(conversation)
    return list(ids)


@pytest.mark.parametrize("prompt", [False, True])
@pytest.mark.parametrize("name", sorted(CONVERSATIONS))
def test_the_ids_and_text_are_openai_harmonys(
    harmony: Any, tokenizer: Tokenizer, name: str, prompt: bool
) -> None:
    messages = CONVERSATIONS[name]
    expected = rendered_by_harmony(harmony, messages, prompt)
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=prompt)
    assert ids == expected
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=prompt, tokenize=False)
    assert text == harmony.decode(expected)
    assert ids == tokenizer.apply_chat_template(
        messages, chat_template="harmony", add_generation_prompt=prompt
    )


def test_the_answered_turns_analysis_is_dropped(tokenizer: Tokenizer) -> None:
    text = tokenizer.apply_chat_template(
        CONVERSATIONS["answered, analysis dropped"], tokenize=False
    )
    assert text == (
        "<|start|>user<|message|>2+2?<|end|><|start|>assistant<|channel|>final<|message|>4<|end|>"
    )


_ROLE = st.sampled_from(["system", "developer", "user", "assistant"])
_CHANNEL = st.sampled_from([None, "analysis", "commentary", "final"])
_OPTIONAL = st.one_of(st.none(), st.sampled_from(["all", "functions.f", "x y"]))


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, str]]:
    messages = []
    for _ in range(draw(st.integers(1, 5))):
        message = {"role": draw(_ROLE), "content": draw(tricky_text)}
        fields = {
            "channel": draw(_CHANNEL),
            "recipient": draw(_OPTIONAL),
            "name": draw(st.one_of(st.none(), st.sampled_from(["bob", "é 1"]))),
            "content_type": draw(st.sampled_from([None, "json", "<|constrain|>json"])),
        }
        message.update({key: value for key, value in fields.items() if value is not None})
        messages.append(message)
    return messages


@given(messages=conversations(), prompt=st.booleans())
@settings(max_examples=EXAMPLES, deadline=None)
def test_any_text_conversation_is_rendered_as_openai_harmony_renders_it(
    harmony: Any, tokenizer: Tokenizer, messages: list[dict[str, str]], prompt: bool
) -> None:
    expected = rendered_by_harmony(harmony, messages, prompt)
    assert tokenizer.apply_chat_template(messages, add_generation_prompt=prompt) == expected


def test_bad_harmony_messages_are_named(tokenizer: Tokenizer) -> None:
    with pytest.raises(ParameterError, match="not a harmony role"):
        tokenizer.apply_chat_template([{"role": "bot", "content": "x"}])
    with pytest.raises(ParameterError, match="tool's and needs a 'name'"):
        tokenizer.apply_chat_template([{"role": "tool", "content": "x"}])
    with pytest.raises(ParameterError, match="'channel' must be text"):
        tokenizer.apply_chat_template([{"role": "user", "content": "x", "channel": 1}])


def test_a_tokenizer_without_harmonys_specials_renders_text_only() -> None:
    base = get_encoding("o200k_base")
    messages = [{"role": "user", "content": "hi"}]
    assert base.apply_chat_template(messages, chat_template="harmony", tokenize=False) == (
        "<|start|>user<|message|>hi<|end|>"
    )
    with pytest.raises(ParameterError, match=r"<\|end\|>, <\|message\|>, <\|start\|>"):
        base.apply_chat_template(messages, chat_template="harmony")
