"""Jinja chat templates and ChatML against ``transformers``' own ``apply_chat_template``.

The oracle is transformers itself: a ``PreTrainedTokenizerFast`` over bpetite's Hugging
Face export (so both sides have the same ids), rendering each template with its own
Jinja environment. The text and the ids must be equal, for templates that use what that
environment adds (``raise_exception``, ``tojson`` with options, loop controls,
``namespace``, ``{% generation %}``, trim_blocks and lstrip_blocks), with and without a
generation prompt.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer
from bpetite.chat import CHATML_TEMPLATE
from bpetite.chat import _jinja as jinja_module
from bpetite.errors import ParameterError
from bpetite.interop import export_hf
from tests.strategies import MULTILINGUAL, tricky_text

#: Hypothesis examples per property; raise it from the environment for a deeper run.
EXAMPLES = int(os.environ.get("BPETITE_CHAT_EXAMPLES", "60"))

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<s>", "</s>"]
ROLES: dict[str, Any] = {"bos_token": "<s>", "eos_token": "</s>"}

#: Llama 2's chat template (meta-llama/Llama-2-7b-chat-hf), raise_exception included.
LLAMA2 = (
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% set system_message = messages[0]['content'] %}{% else %}"
    "{% set loop_messages = messages %}{% set system_message = false %}{% endif %}"
    "{% for message in loop_messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}"
    "{% if loop.index0 == 0 and system_message != false %}"
    "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}"
    "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}"
    "{% endif %}{% endfor %}"
)

#: Written on several lines, indented: trim_blocks and lstrip_blocks decide its spaces.
#: It stops at the first "stop" message ({% break %}), skips empty ones ({% continue %}),
#: counts with a namespace, and dumps each message and the tools with tojson's options.
CONTROLS = """\
{% set ns = namespace(count=0) %}
{% for message in messages %}
    {% if message['content'] == 'stop' %}
        {% break %}
    {% endif %}
    {% if not message['content'] %}
        {% continue %}
    {% endif %}
    {% set ns.count = ns.count + 1 %}
    <|im_start|>{{ message['role'] }} #{{ ns.count }}
    {% generation %}{{ message['content'] }}{% endgeneration %}
    {{ message | tojson(sort_keys=True) }}<|im_end|>
{% endfor %}
{% if tools is not none %}{{ tools | tojson(indent=2) }}{% endif %}
{% if documents is none %}(no documents){% endif %}
{% if add_generation_prompt %}
    <|im_start|>assistant
{% endif %}"""

#: Reads a message's reasoning under the name gpt-oss templates use.
THINKING = (
    "{% for message in messages %}{{ message.role }}:"
    "{% if message.thinking is defined %}[{{ message.thinking }}]{% endif %}"
    "{{ message.content }}|{% endfor %}"
)

TEMPLATES = {"chatml": CHATML_TEMPLATE, "llama2": LLAMA2, "controls": CONTROLS}

CONVERSATIONS = {
    "user": [{"role": "user", "content": "Naïve café? 🤔"}],
    "system-user-assistant": [
        {"role": "system", "content": "Be brief.\n"},
        {"role": "user", "content": "  Hello <|im_end|> there  "},
        {"role": "assistant", "content": "Hi! 日本語"},
        {"role": "user", "content": MULTILINGUAL[:200]},
    ],
    "controls": [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": 'quote " and \\ and </script>'},
        {"role": "user", "content": "stop"},
        {"role": "user", "content": "never seen"},
    ],
}


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    yield


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    corpus = MULTILINGUAL * 3 + " ".join(
        message["content"] for messages in CONVERSATIONS.values() for message in messages
    )
    return Tokenizer.train(corpus, 500, pattern="cl100k", special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def transformers_tokenizer(tokenizer: Tokenizer) -> Any:
    """transformers' fast tokenizer over bpetite's export, with bos and eos roles."""
    import transformers
    from tokenizers import Tokenizer as HfTokenizer

    fast: Any = transformers.PreTrainedTokenizerFast  # untyped: its results are Any here
    return fast(tokenizer_object=HfTokenizer.from_str(export_hf(tokenizer)), **ROLES)


def transformers_render(hf: Any, messages: Any, template: str, **options: Any) -> tuple[str, Any]:
    text = hf.apply_chat_template(messages, chat_template=template, tokenize=False, **options)
    encoded = hf.apply_chat_template(messages, chat_template=template, tokenize=True, **options)
    ids = encoded["input_ids"] if hasattr(encoded, "keys") else encoded
    return text, list(ids)


@pytest.mark.parametrize("generation_prompt", [False, True])
@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_the_text_and_ids_are_transformers(
    tokenizer: Tokenizer,
    transformers_tokenizer: Any,
    template: str,
    conversation: str,
    generation_prompt: bool,
) -> None:
    messages = CONVERSATIONS[conversation]
    source = TEMPLATES[template]
    if template == "llama2" and conversation == "controls":
        # Two user messages in a row: both refuse, with the template's message.
        with pytest.raises(Exception, match="roles must alternate") as theirs:
            transformers_render(transformers_tokenizer, messages, source)
        assert type(theirs.value).__name__ == "TemplateError"
        with pytest.raises(ParameterError, match="roles must alternate"):
            tokenizer.apply_chat_template(messages, chat_template=source, **ROLES)
        return
    expected_text, expected_ids = transformers_render(
        transformers_tokenizer, messages, source, add_generation_prompt=generation_prompt
    )
    options: dict[str, Any] = {"add_generation_prompt": generation_prompt, **ROLES}
    text = tokenizer.apply_chat_template(messages, chat_template=source, tokenize=False, **options)
    assert text == expected_text
    assert tokenizer.apply_chat_template(messages, chat_template=source, **options) == expected_ids
    if template == "chatml":  # the built-in format renders as its template does
        assert (
            tokenizer.apply_chat_template(
                messages, chat_template="chatml", add_generation_prompt=generation_prompt
            )
            == expected_ids
        )
        assert (
            tokenizer.apply_chat_template(
                messages,
                chat_template="chatml",
                tokenize=False,
                add_generation_prompt=generation_prompt,
            )
            == expected_text
        )


def test_tools_documents_and_none_values_are_transformers(
    tokenizer: Tokenizer, transformers_tokenizer: Any
) -> None:
    """None values are dropped; tools reach the template as data, tojson's indent kept."""
    messages = [{"role": "user", "content": "weather?", "name": None}]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    expected = transformers_tokenizer.apply_chat_template(
        messages, chat_template=CONTROLS, tools=tools, tokenize=False
    )
    assert '"name": "get_weather"' in expected and "\n  " in expected  # indent=2
    assert (
        tokenizer.apply_chat_template(messages, chat_template=CONTROLS, tools=tools, tokenize=False)
        == expected
    )


def test_reasoning_is_passed_under_each_name(
    tokenizer: Tokenizer, transformers_tokenizer: Any
) -> None:
    for key in ("reasoning_content", "thinking", "reasoning"):
        messages = [{"role": "assistant", "content": "42", key: "add them"}]
        expected = transformers_tokenizer.apply_chat_template(
            messages, chat_template=THINKING, tokenize=False
        )
        assert expected == "assistant:[add them]42|"
        assert (
            tokenizer.apply_chat_template(messages, chat_template=THINKING, tokenize=False)
            == expected
        )


@given(
    contents=st.lists(tricky_text, min_size=1, max_size=4),
    generation_prompt=st.booleans(),
    template=st.sampled_from(sorted(TEMPLATES)),
)
@settings(max_examples=EXAMPLES, deadline=None)
def test_any_text_renders_as_transformers_renders_it(
    tokenizer: Tokenizer,
    transformers_tokenizer: Any,
    contents: list[str],
    generation_prompt: bool,
    template: str,
) -> None:
    roles = ["user", "assistant"]
    messages = [
        {"role": roles[index % 2], "content": content} for index, content in enumerate(contents)
    ]
    try:
        expected = transformers_render(
            transformers_tokenizer,
            messages,
            TEMPLATES[template],
            add_generation_prompt=generation_prompt,
        )
    except Exception as error:  # llama2 refuses a conversation that does not alternate
        assert type(error).__name__ == "TemplateError"
        return
    options: dict[str, Any] = {"add_generation_prompt": generation_prompt, **ROLES}
    source = TEMPLATES[template]
    assert (
        tokenizer.apply_chat_template(messages, chat_template=source, tokenize=False, **options)
        == expected[0]
    )
    assert tokenizer.apply_chat_template(messages, chat_template=source, **options) == expected[1]


def test_the_sandbox_refuses_what_transformers_refuses(tokenizer: Tokenizer) -> None:
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(ParameterError, match="underscore-prefixed attributes"):
        tokenizer.apply_chat_template(
            messages, chat_template="{% set ns = namespace(_x=1) %}", tokenize=False
        )
    with pytest.raises(ParameterError, match="chat template failed"):
        tokenizer.apply_chat_template(
            messages, chat_template="{{ messages.__class__.__mro__ }}", tokenize=False
        )
    with pytest.raises(ParameterError, match="not valid Jinja"):
        tokenizer.apply_chat_template(messages, chat_template="{% for %}", tokenize=False)


def test_bad_conversations_are_named(tokenizer: Tokenizer) -> None:
    with pytest.raises(ParameterError, match="conversation is empty"):
        tokenizer.apply_chat_template([], chat_template="chatml")
    with pytest.raises(TypeError, match="message 1 must be a mapping"):
        not_a_message: Any = "b"
        tokenizer.apply_chat_template(
            [{"role": "user", "content": "a"}, not_a_message], chat_template="chatml"
        )
    with pytest.raises(ParameterError, match="message 0 has no 'content'"):
        tokenizer.apply_chat_template([{"role": "user"}], chat_template="chatml")
    with pytest.raises(ParameterError, match="message 0's 'content' must be text"):
        tokenizer.apply_chat_template([{"role": "user", "content": [1]}], chat_template="chatml")
    with pytest.raises(ParameterError, match="has no chat format of its own"):
        tokenizer.apply_chat_template([{"role": "user", "content": "a"}])
    with pytest.raises(ParameterError, match="takes no template variables"):
        tokenizer.apply_chat_template(
            [{"role": "user", "content": "a"}], chat_template="chatml", bos_token="<s>"
        )


def test_chatml_needs_its_special_tokens_to_encode() -> None:
    plain = Tokenizer.train("hello world", 260)
    messages = [{"role": "user", "content": "hello"}]
    with pytest.raises(ParameterError, match=r"<\|im_end\|>, <\|im_start\|>"):
        plain.apply_chat_template(messages, chat_template="chatml")
    text = plain.apply_chat_template(messages, chat_template="chatml", tokenize=False)
    assert text == "<|im_start|>user\nhello<|im_end|>\n"


def test_without_jinja2_a_template_says_what_to_install(
    tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)
    jinja_module._compiled.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"bpetite\[chat\]"):
            tokenizer.apply_chat_template(
                [{"role": "user", "content": "a"}], chat_template="{{ 1 }}", tokenize=False
            )
        # The built-in formats need no jinja2.
        assert (
            tokenizer.apply_chat_template(
                [{"role": "user", "content": "a"}], chat_template="chatml", tokenize=False
            )
            == "<|im_start|>user\na<|im_end|>\n"
        )
    finally:
        jinja_module._compiled.cache_clear()


def test_importing_bpetite_chat_does_not_import_jinja2() -> None:
    code = (
        "import sys, bpetite, bpetite.chat\n"
        "from bpetite import Tokenizer\n"
        "t = Tokenizer.train('ab', 257, special_tokens=['<|im_start|>', '<|im_end|>'])\n"
        "t.apply_chat_template([{'role': 'user', 'content': 'ab'}], chat_template='chatml')\n"
        "print('jinja2' in sys.modules)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output == "False\n"
