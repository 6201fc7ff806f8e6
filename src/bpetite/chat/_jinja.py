"""Jinja chat templates, rendered as ``transformers`` renders them.

The environment is ``transformers``' (``utils/chat_template_utils.py``,
``_cached_compile_jinja_template``): jinja2's ``ImmutableSandboxedEnvironment`` (a
template from the Hub is untrusted code) with ``trim_blocks`` and ``lstrip_blocks``, the
``loopcontrols`` extension (``{% break %}``, ``{% continue %}``) and the
``{% generation %}`` tag, a ``tojson`` filter that is ``json.dumps`` (no HTML escaping,
with ``indent``, ``separators`` and ``sort_keys``), and the globals ``raise_exception``,
``strftime_now``, ``dict`` and ``namespace`` (without underscore attributes). The data
is theirs too: the variables ``messages``, ``tools``, ``documents`` and
``add_generation_prompt``, every value rebuilt from plain JSON types
(``_plain_template_data``), and a message's reasoning under each name templates read it
by (``_alias_reasoning_fields``). jinja2 is imported on the first template rendered.

One bound is ours: a repetition (``"x" * n``) longer than jinja2's ``MAX_RANGE`` is
refused as jinja2 refuses such a ``range()``, where transformers would try to allocate
it. Whatever a template raises, while compiling or rendering, is a ParameterError
chained from it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, Final

from bpetite.errors import ParameterError

#: The oldest jinja2 accepted: older ones have known sandbox escapes (transformers' floor).
MIN_JINJA2: Final = (3, 1, 6)
#: The names a message's reasoning is passed under; templates read the first.
REASONING_FIELDS: Final = ("reasoning_content", "thinking", "reasoning")


def render_jinja(
    source: str,
    conversation: list[dict[str, Any]],
    /,
    *,
    add_generation_prompt: bool,
    **variables: Any,
) -> str:
    """Render the Jinja template `source` for `conversation`, as ``transformers`` does.

    The two are positional only, so a template variable may have either name.
    """
    if "self" in variables:
        raise ParameterError("a template variable cannot be named 'self': Jinja keeps it")
    template = _compiled(source)
    import jinja2

    tools = _plain(_tool_schemas(variables.pop("tools", None)))
    documents = _plain(variables.pop("documents", None))
    messages = _aliased_reasoning(_plain(conversation))
    others = _plain(variables)
    try:
        rendered: str = template.render(
            messages=messages,
            tools=tools,
            documents=documents,
            add_generation_prompt=add_generation_prompt,
            **others,
        )
    except jinja2.TemplateError as error:  # raise_exception, the sandbox: the message says it
        raise ParameterError(f"the chat template failed: {error}") from error
    except Exception as error:
        # The template is code: 1/0, 'a' + 1, a macro calling itself, "x" * 10**11...
        # Whatever it raises is its failure; the stack is unwound by the time it is caught
        # here, so a RecursionError is caught whole, with room left to report it.
        raise ParameterError(f"the chat template failed: {_described(error)}") from error
    return rendered


def check_chat_template(source: str) -> bool:
    """Raise ParameterError if `source` is not a template :func:`render_jinja` can compile.

    The check ``chat --template`` makes before rendering, with its error and message,
    for a template stored to be rendered later (``export --chat-template``). Returns
    True when checked; False, checking nothing, where jinja2 (>= :data:`MIN_JINJA2`) is
    not installed: storing a template needs no jinja2, only rendering one does.
    """
    try:
        _compiled(source)
    except ImportError:
        return False
    return True


def _described(error: BaseException) -> str:
    """``ZeroDivisionError: division by zero``: the type says what the message alone may not."""
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


@lru_cache(maxsize=16)
def _compiled(source: str) -> Any:
    """The template compiled in transformers' environment (kept: templates are reused)."""
    try:
        import jinja2
    except ImportError:
        raise ImportError(
            "a Jinja chat template needs jinja2: pip install 'bpetite[chat]' (or jinja2)"
        ) from None
    version = tuple(int(part) for part in jinja2.__version__.split(".")[:3] if part.isdigit())
    if version < MIN_JINJA2:
        raise ImportError(
            f"a Jinja chat template needs jinja2>={'.'.join(map(str, MIN_JINJA2))} (older "
            f"versions have sandbox escapes), found {jinja2.__version__}"
        )
    try:
        return _environment().from_string(source)
    except jinja2.TemplateError as error:
        raise ParameterError(f"the chat template is not valid Jinja: {error}") from error
    except (RecursionError, SyntaxError) as error:
        # Valid Jinja nested deeper than jinja2's parser (RecursionError) or Python's
        # compiler (too many levels of indentation, of nested blocks) can follow; the line
        # a SyntaxError names is in the generated Python, not the template: left out.
        reason = error.msg if isinstance(error, SyntaxError) else str(error)
        raise ParameterError(
            f"the chat template nests too deeply to compile: {type(error).__name__}: {reason}"
        ) from error
    except MemoryError as error:
        raise ParameterError("the chat template is too large to compile: MemoryError") from error


@lru_cache(maxsize=1)
def _environment() -> Any:
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment

    class ChatSandbox(ImmutableSandboxedEnvironment):
        """transformers' sandbox, with a repetition (``"x" * n``, ``[x] * n``) bounded as
        jinja2 bounds ``range()``: by MAX_RANGE items.

        Unbounded, ``"x" * 10**10`` asks for gigabytes at once, which may take the machine's
        memory rather than fail; no chat template repeats anything that many times.
        """

        intercepted_binops = frozenset({"*"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "*":
                for sequence, times in ((left, right), (right, left)):
                    if (
                        isinstance(sequence, (str, list, tuple))
                        and isinstance(times, int)
                        and len(sequence) * times > MAX_RANGE
                    ):
                        raise OverflowError(
                            f"Repetition too big: {len(sequence)} items * {times}. The sandbox "
                            f"blocks repetitions longer than MAX_RANGE ({MAX_RANGE})."
                        )
            return super().call_binop(context, operator, left, right)

    class GenerationTag(jinja2.ext.Extension):
        """``{% generation %}...{% endgeneration %}``: its body, as rendered text.

        transformers marks the assistant's text with it (for a mask of its tokens); the
        text is the body's either way.
        """

        tags = {"generation"}  # noqa: RUF012 - jinja2's own declaration

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_body")
            return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> Any:
            return caller()

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            value,
            ensure_ascii=ensure_ascii,
            indent=indent,
            separators=separators,
            sort_keys=sort_keys,
        )

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    class TemplateDict:
        """``dict(...)`` and ``dict.fromkeys(...)``, and no other attribute of the type."""

        def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict(*args, **kwargs)

        def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        """jinja2's namespace, refusing underscore attributes (CPython's internals)."""

        def __init__(*args: Any, **kwargs: Any) -> None:
            self, rest = args[0], args[1:]  # jinja2's signature trick: namespace(self=...)
            attributes = dict(*rest, **kwargs)
            for name in attributes:
                TemplateNamespace.check_name(name)
            jinja2.utils.Namespace.__init__(self, attributes)

        def __setitem__(self, name: str, value: Any) -> None:
            TemplateNamespace.check_name(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def check_name(name: object) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(
                    "Chat templates cannot store underscore-prefixed attributes on a "
                    f"namespace, but got {name!r}. Please rename the attribute."
                )

    environment = ChatSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTag, jinja2.ext.loopcontrols],
    )
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = strftime_now
    environment.globals["dict"] = TemplateDict()
    environment.globals["namespace"] = TemplateNamespace
    return environment


def _tool_schemas(tools: Any) -> Any:
    """`tools`, refusing a Python function among them: transformers turns one into its
    JSON schema (``get_json_schema``, from its signature and docstring), which bpetite
    does not; rendered as it is, it would be ``"<function>"``."""
    if isinstance(tools, (list, tuple)):
        for index, tool in enumerate(tools):
            if callable(tool) and not isinstance(tool, (Mapping, type)):
                raise ParameterError(
                    f"tool {index} is a Python function ({getattr(tool, '__name__', tool)!r}): "
                    "give its JSON schema instead, as a dict (transformers.utils."
                    "get_json_schema makes one from a function)"
                )
    return tools


def _plain(value: Any) -> Any:
    """`value` rebuilt from plain JSON types, anything else an inert ``"<TypeName>"``.

    transformers' ``_plain_template_data``: a template sees no object whose methods the
    sandbox does not know (some write files).
    """
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):  # a subclass (an enum) may carry methods
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if type(value).__module__ == "numpy" and callable(getattr(value, "item", None)):
        return _plain(value.item())  # a numpy scalar (np.bool_(False) must stay false)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)
        }
    if callable(getattr(value, "model_dump", None)):  # a pydantic model
        return _plain(value.model_dump())
    return f"<{type(value).__name__}>"


def _aliased_reasoning(messages: list[Any]) -> list[Any]:
    """Each message's reasoning also under ``thinking`` and ``reasoning_content``.

    transformers' ``_alias_reasoning_fields``: the standard name is ``reasoning_content``,
    gpt-oss templates read ``thinking``, and callers use any of the three.
    """
    aliased = []
    for message in messages:
        if isinstance(message, dict):
            reasoning = next(
                (message[key] for key in REASONING_FIELDS if message.get(key) is not None), None
            )
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        aliased.append(message)
    return aliased
