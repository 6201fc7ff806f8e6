"""A Jinja chat template that fails, compiling or rendering: one typed error, never a crash.

A template is code, and whatever it raises (``1/0``, a macro that calls itself, a range
or a repetition too big for the sandbox) must reach the caller as ParameterError,
chained from the template's own exception, as a ``raise_exception`` does. The oracle is
Python itself: each case's expected cause is the exception type Python (or jinja2's
sandbox) raises for that expression.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from bpetite import Tokenizer
from bpetite.chat import _jinja as jinja_module
from bpetite.chat._jinja import check_chat_template
from bpetite.errors import ParameterError

MESSAGES = [{"role": "user", "content": "hello"}]

#: A template that is valid Jinja but fails as it renders: what it raises, and what the
#: error's message says.
FAILING = {
    "division": ("{{ 1/0 }}", ZeroDivisionError, "ZeroDivisionError: division by zero"),
    "range": (
        "{% for i in range(100000000) %}x{% endfor %}",
        OverflowError,
        "OverflowError: Range too big",
    ),
    "recursion": (
        "{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}",
        RecursionError,
        "RecursionError: maximum recursion depth exceeded",
    ),
    # 100 GB at once: refused by the repetition bound before any memory is asked for.
    "repetition": ('{{ "x" * 100000000000 }}', OverflowError, "OverflowError: Repetition too big"),
    "reversed repetition": ("{{ 100001 * [0] }}", OverflowError, "Repetition too big"),
    "type": ("{{ 'a' + 1 }}", TypeError, "TypeError: can only concatenate str"),
}


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train("hello world", 260)


@pytest.mark.parametrize("case", sorted(FAILING))
def test_a_failing_template_raises_parameter_error_from_its_exception(
    tokenizer: Tokenizer, case: str
) -> None:
    source, cause, message = FAILING[case]
    with pytest.raises(ParameterError, match=r"^the chat template failed: ") as raised:
        tokenizer.apply_chat_template(MESSAGES, chat_template=source, tokenize=False)
    assert message in str(raised.value)
    assert type(raised.value.__cause__) is cause


def test_raise_exception_keeps_the_templates_own_message(tokenizer: Tokenizer) -> None:
    """The template's own words, without a type name: its author wrote them for a user."""
    with pytest.raises(ParameterError) as raised:
        tokenizer.apply_chat_template(
            MESSAGES, chat_template="{{ raise_exception('no tools') }}", tokenize=False
        )
    assert str(raised.value) == "the chat template failed: no tools"


def test_a_memory_error_while_rendering_is_a_parameter_error(
    tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A MemoryError the repetition bound does not foresee (a filter's) is reported too."""

    def exhausted(*args: Any, **kwargs: Any) -> str:
        raise MemoryError

    monkeypatch.setitem(jinja_module._environment().filters, "tojson", exhausted)
    with pytest.raises(ParameterError) as raised:
        tokenizer.apply_chat_template(
            MESSAGES, chat_template="{{ messages | tojson }}", tokenize=False
        )
    assert str(raised.value) == "the chat template failed: MemoryError"
    assert type(raised.value.__cause__) is MemoryError


def test_the_repetition_bound_is_jinja2s_max_range(tokenizer: Tokenizer) -> None:
    """100000 items (jinja2.sandbox.MAX_RANGE) renders; one more is refused."""
    longest = tokenizer.apply_chat_template(
        MESSAGES, chat_template="{{ '-' * 100000 }}", tokenize=False
    )
    assert longest == "-" * 100000
    with pytest.raises(ParameterError, match=r"Repetition too big: 1 items \* 100001"):
        tokenizer.apply_chat_template(MESSAGES, chat_template="{{ '-' * 100001 }}", tokenize=False)


def test_small_repetitions_render_as_transformers_renders_them(tokenizer: Tokenizer) -> None:
    """The bound intercepts every '*': numbers, sequences either side, and nothing changes."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer as HfTokenizer

    from bpetite.interop import export_hf

    fast: Any = transformers.PreTrainedTokenizerFast
    theirs = fast(tokenizer_object=HfTokenizer.from_str(export_hf(tokenizer)))
    source = "{{ 'ab' * 3 }}|{{ 2 * [1] }}|{{ 3 * 2.5 }}|{{ 'x' * -1 }}|{{ true * 'y' }}"
    expected = theirs.apply_chat_template(MESSAGES, chat_template=source, tokenize=False)
    assert expected == "ababab|[1, 1]|7.5||y"
    assert tokenizer.apply_chat_template(MESSAGES, chat_template=source, tokenize=False) == expected


@pytest.mark.parametrize(
    ("source", "cause"),
    [
        ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", RecursionError),
        ("{% for a in [1] %}" * 200 + "x" + "{% endfor %}" * 200, SyntaxError),
    ],
    ids=["parentheses", "loops"],
)
def test_a_template_too_deep_to_compile_is_a_parameter_error(
    tokenizer: Tokenizer, source: str, cause: type[Exception]
) -> None:
    with pytest.raises(ParameterError, match=r"^the chat template nests too deeply to compile: "):
        tokenizer.apply_chat_template(MESSAGES, chat_template=source, tokenize=False)
    with pytest.raises(ParameterError) as raised:
        check_chat_template(source)
    assert isinstance(raised.value.__cause__, cause)
    assert "line" not in str(raised.value)  # a SyntaxError's line is the generated Python's


def test_check_chat_template_refuses_what_rendering_refuses(tokenizer: Tokenizer) -> None:
    """The check ``export --chat-template`` makes: chat's error, word for word."""
    unfinished = "{% for m in messages %}{{ m.content "
    with pytest.raises(ParameterError) as rendering:
        tokenizer.apply_chat_template(MESSAGES, chat_template=unfinished, tokenize=False)
    with pytest.raises(ParameterError) as checking:
        check_chat_template(unfinished)
    assert str(checking.value) == str(rendering.value)
    assert str(checking.value).startswith("the chat template is not valid Jinja: unexpected end")
    assert check_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}") is True
    # A template that fails only as it renders is valid: the check compiles, it runs nothing.
    assert check_chat_template("{{ 1/0 }}") is True


def test_check_chat_template_without_jinja2_checks_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Storing a template needs no jinja2: without it the check says it did not check."""
    monkeypatch.setitem(sys.modules, "jinja2", None)
    jinja_module._compiled.cache_clear()
    try:
        assert check_chat_template("{% for %}") is False
    finally:
        jinja_module._compiled.cache_clear()


def test_the_library_names_its_own_remedy_for_missing_specials(tokenizer: Tokenizer) -> None:
    """The library's words, for a library user (``bpetite chat`` puts its own in their place)."""
    with pytest.raises(ParameterError) as raised:
        tokenizer.apply_chat_template(MESSAGES, chat_template="chatml")
    assert str(raised.value).endswith(
        "add them with tokenizer.with_special_tokens(...), or pass tokenize=False for the text"
    )


def test_a_tool_given_as_a_function_is_refused_not_rendered_as_a_name(
    tokenizer: Tokenizer,
) -> None:
    """transformers makes a function's JSON schema from its docstring; bpetite does not,
    and a template would otherwise read the tool as "<function>". A dict renders as
    transformers renders it."""

    def get_weather(city: str) -> str:
        """Get the weather.

        Args:
            city: The city name.
        """
        return city

    source = "{% for t in tools %}{{ t | tojson }}|{% endfor %}{{ messages[0].content }}"
    with pytest.raises(ParameterError, match="tool 1 is a Python function \\('get_weather'\\)"):
        tokenizer.apply_chat_template(
            MESSAGES, chat_template=source, tools=[{"name": "a"}, get_weather], tokenize=False
        )
    transformers = pytest.importorskip("transformers")
    schema = transformers.utils.get_json_schema(get_weather)
    from tokenizers import Tokenizer as HfTokenizer

    from bpetite.interop import export_hf

    fast: Any = transformers.PreTrainedTokenizerFast
    theirs = fast(tokenizer_object=HfTokenizer.from_str(export_hf(tokenizer)))
    expected = theirs.apply_chat_template(
        MESSAGES, chat_template=source, tools=[get_weather], tokenize=False
    )
    ours = tokenizer.apply_chat_template(
        MESSAGES, chat_template=source, tools=[schema], tokenize=False
    )
    assert ours == expected and '"name": "get_weather"' in ours


@pytest.mark.parametrize(
    ("template", "messages"),
    [
        ('{{ "\\ud800" }}{% for m in messages %}{{ m.content }}{% endfor %}', MESSAGES),
        ("chatml", [{"role": "user", "content": "a\ud800"}]),
        ("harmony", [{"role": "user", "content": "a\ud800"}]),
    ],
)
def test_text_with_a_lone_surrogate_to_encode_is_a_parameter_error(
    tokenizer: Tokenizer, template: str, messages: list[dict[str, str]]
) -> None:
    """Not the encoder's UnicodeEncodeError about a text the caller never saw: the
    rendered text's surrogate and its position; the text itself is returned as rendered."""
    specials = tokenizer.with_special_tokens(
        ["<|im_start|>", "<|im_end|>", "<|start|>", "<|message|>", "<|end|>"]
    )
    rendered = specials.apply_chat_template(messages, chat_template=template, tokenize=False)
    position = rendered.index("\ud800")
    with pytest.raises(
        ParameterError, match=rf"holds a lone surrogate '\\ud800' at position {position}, "
    ):
        specials.apply_chat_template(messages, chat_template=template)


def test_template_variables_may_have_the_renderers_parameter_names(tokenizer: Tokenizer) -> None:
    """transformers passes a template any keyword: bpetite's own parameter names too."""
    rendered = tokenizer.apply_chat_template(
        MESSAGES,
        chat_template="{{ tokenizer }}{{ source }}{{ conversation }}",
        tokenize=False,
        tokenizer="a",
        source="b",
        conversation="c",
    )
    assert rendered == "abc"


def test_a_template_variable_named_self_is_refused(tokenizer: Tokenizer) -> None:
    """Jinja keeps ``self`` for the template (and transformers' render(**kwargs) cannot
    take it): a clear ParameterError, not a TypeError from deep inside jinja2."""
    with pytest.raises(ParameterError, match="cannot be named 'self'"):
        tokenizer.apply_chat_template(
            MESSAGES, chat_template="{{ self }}", tokenize=False, self="x"
        )


@pytest.mark.parametrize(
    "option", [{"continue_final_message": True}, {"truncation": True, "max_length": 3}]
)
def test_transformers_own_options_are_refused_not_passed_to_the_template(
    tokenizer: Tokenizer, option: dict[str, Any]
) -> None:
    """transformers acts on these itself (continue the last message, cut the ids); taken
    as template variables they would be silently ignored, so they are refused."""
    for template in ("{{ messages[0].content }}", "chatml"):
        with pytest.raises(ParameterError, match="transformers' options of apply_chat_template"):
            tokenizer.apply_chat_template(MESSAGES, chat_template=template, **option)
