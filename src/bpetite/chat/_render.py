"""apply_chat_template: a conversation in a chat format, as text or ids.

Hugging Face's meaning throughout: the result is the rendered text, or (``tokenize``)
its ids with every special token the text holds read as its id and nothing added
around it (``transformers`` encodes with ``add_special_tokens=False``). A key whose
value is None is dropped from each message first, as ``transformers`` drops it, and an
empty conversation is refused, as there.

The one exception is harmony, whose ids are ``openai-harmony``'s: each part of a
message (role, channel, content...) is encoded on its own as ordinary text, between the
format's special tokens, so a message's text can never become a special token.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from bpetite.chat._harmony import HARMONY, harmony_parts
from bpetite.chat._jinja import render_jinja
from bpetite.chat._messages import checked_messages, required_text
from bpetite.errors import ParameterError

if TYPE_CHECKING:
    from bpetite import Tokenizer

#: The built-in formats, by the name ``chat_template=`` takes.
FORMATS: Final = ("chatml", "harmony")

#: The Jinja text of the ``"chatml"`` format: Hugging Face's documented ChatML template.
#: ``chat_template="chatml"`` renders as this template does in ``transformers``.
CHATML_TEMPLATE: Final = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
_CHATML_SPECIALS: Final = ("<|im_start|>", "<|im_end|>")

#: The tokenizer whose default format is harmony (gpt-oss's vocabulary).
_HARMONY_DEFAULT_FOR: Final = "o200k_harmony"


#: transformers' own keywords of ``apply_chat_template``, which it handles and never
#: passes to the template: refused here rather than read as template variables.
_TRANSFORMERS_OPTIONS: Final = frozenset(
    {
        "continue_final_message",
        "truncation",
        "max_length",
        "padding",
        "return_dict",
        "return_tensors",
        "return_assistant_tokens_mask",
        "tokenizer_kwargs",
    }
)


def apply_chat_template(
    tokenizer: Tokenizer,
    /,
    messages: Sequence[Mapping[str, Any]],
    *,
    chat_template: str | None = None,
    add_generation_prompt: bool = False,
    tokenize: bool = True,
    **template_vars: Any,
) -> list[int] | str:
    """Render `messages` in a chat format and return the text, or its ids.

    `chat_template` is ``"harmony"``, ``"chatml"`` or a Jinja template's text; None is
    ``"harmony"`` for ``o200k_harmony`` and refused for any other tokenizer, which has
    no format of its own. `add_generation_prompt` ends with the opening of an
    assistant turn, for a model to complete. `template_vars` are passed to a Jinja
    template as ``transformers`` passes its keyword arguments (``bos_token``,
    ``tools``, ``documents``...), under any name but the parameters' own; the built-in
    formats take none.

    A template that fails (``raise_exception``, a syntax error, ``1/0``, a macro that
    calls itself forever) raises ParameterError with the template's message, chained from
    the template's exception; a missing jinja2, ImportError. Text to encode that holds a
    lone surrogate (a template's ``"\\ud800"``, a message's) raises ParameterError naming
    its position in the rendered text; with ``tokenize=False`` the text is returned as
    rendered.
    """
    conversation = checked_messages(messages)
    for flag, name in ((add_generation_prompt, "add_generation_prompt"), (tokenize, "tokenize")):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if chat_template is None:
        if tokenizer.name != _HARMONY_DEFAULT_FOR:
            raise ParameterError(
                f"this tokenizer ({tokenizer.name or 'unnamed'}) has no chat format of its "
                f"own: pass chat_template= one of {', '.join(map(repr, FORMATS))} or a "
                "Jinja template"
            )
        chat_template = HARMONY
    if not isinstance(chat_template, str):
        raise TypeError(
            f"chat_template must be a format name or a Jinja template (str), "
            f"got {type(chat_template).__name__}"
        )
    options = sorted(_TRANSFORMERS_OPTIONS.intersection(template_vars))
    if options:
        raise ParameterError(
            f"{', '.join(options)}: transformers' options of apply_chat_template, which "
            "bpetite's does not take (it returns the whole rendering, as ids or text); "
            "they never reach a template there, so they are not passed to one here"
        )
    if chat_template in FORMATS and template_vars:
        raise ParameterError(
            f"the {chat_template!r} format takes no template variables, got "
            f"{', '.join(sorted(template_vars))}"
        )
    if chat_template == HARMONY:
        parts = harmony_parts(conversation, add_generation_prompt=add_generation_prompt)
        if not tokenize:
            return "".join(text for text, _ in parts)
        check_rendered_text("".join(text for text, _ in parts))
        specials = _required_specials(
            tokenizer, {text for text, special in parts if special}, HARMONY
        )
        ids: list[int] = []
        for text, special in parts:
            if special:
                ids.append(specials[text])
            else:
                ids += tokenizer.encode_ordinary(text)
        return ids
    if chat_template == "chatml":
        rendered = _chatml(conversation, add_generation_prompt)
        if tokenize:
            _required_specials(tokenizer, set(_CHATML_SPECIALS), "chatml")
    else:
        rendered = render_jinja(
            chat_template,
            conversation,
            add_generation_prompt=add_generation_prompt,
            **template_vars,
        )
    if not tokenize:
        return rendered
    check_rendered_text(rendered)
    return tokenizer.encode(rendered, allowed_special="all", disallowed_special=())


def check_rendered_text(rendered: str) -> None:
    """Refuse rendered text holding a lone surrogate, which no encoding can write."""
    if rendered.isascii():
        return
    try:
        rendered.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ParameterError(
            f"the rendered text holds a lone surrogate {rendered[error.start]!r} at position "
            f"{error.start}, which is not valid Unicode and cannot be encoded"
        ) from None


def _chatml(conversation: list[dict[str, Any]], add_generation_prompt: bool) -> str:
    """What :data:`CHATML_TEMPLATE` renders (the tests check it against transformers)."""
    rendered = []
    for index, message in enumerate(conversation):
        role = required_text(message, index, "role")
        content = required_text(message, index, "content")
        rendered.append(f"<|im_start|>{role}\n{content}<|im_end|>\n")
    if add_generation_prompt:
        rendered.append("<|im_start|>assistant\n")
    return "".join(rendered)


def _required_specials(tokenizer: Tokenizer, texts: set[str], format_name: str) -> dict[str, int]:
    """Each of `texts`' id among the tokenizer's special tokens, or an error naming the
    missing ones: encoded as ordinary text they would mean nothing to a model."""
    specials = tokenizer.special_tokens
    missing = sorted(texts - set(specials))
    if missing:
        raise ParameterError(
            f"the {format_name!r} format needs the special tokens {', '.join(missing)}, which "
            "this tokenizer lacks; add them with tokenizer.with_special_tokens(...), or pass "
            "tokenize=False for the text"
        )
    return {text: specials[text] for text in texts}
