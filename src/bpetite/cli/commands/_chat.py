"""``bpetite chat``: a JSON conversation rendered in a chat format, its ids, or its count.

The conversation is a JSON array of messages (objects with ``role`` and ``content``), or
an object holding one under ``messages`` (an OpenAI request's body). ``--template`` is
``chatml``, ``harmony`` or a Jinja template file, rendered as
:meth:`Tokenizer.apply_chat_template` renders it; left out, the model's own format is
used (``o200k_harmony``'s is harmony; other models have none). The result is the ids (one JSON
array), the rendered text (``--text``, exactly, nothing added) or the number of ids
(``--count``). ``--openai-estimate`` needs no template: it prints OpenAI's published
estimate of the conversation's prompt tokens (:func:`bpetite.chat.count_chat_tokens`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bpetite._internal import loads_json, shown
from bpetite.chat import FORMATS, count_chat_tokens
from bpetite.cli._errors import CliError
from bpetite.cli._files import (
    add_model_argument,
    add_result_output_arguments,
    check_output_path,
    model_from_args,
    result_output,
)
from bpetite.cli._formats import decode_utf8, describe_input
from bpetite.cli._inputs import check_argument_text, open_failure, read_input_bytes
from bpetite.cli._output import note
from bpetite.cli._parser import add_command
from bpetite.errors import ParameterError

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "chat",
        summary="render a JSON conversation in a chat format, encode or count it",
        description=(
            "Read a conversation (a JSON array of {role, content} messages, or an object "
            "with one under 'messages') and render it with --template: 'chatml', "
            "'harmony' (OpenAI's gpt-oss format) or a Jinja template file, rendered as "
            "Hugging Face transformers renders it (needs jinja2: pip install "
            "'bpetite[chat]'). Prints the ids as one JSON array, the text with --text, or "
            "their number with --count. --openai-estimate prints instead OpenAI's "
            "published estimate of the conversation's prompt tokens in its chat API, "
            "with --model's encoding."
        ),
        examples=[
            "bpetite chat --model tokenizer.json --messages conv.json --template chatml",
            "bpetite chat --model tokenizer.json --messages conv.json --template llama.jinja "
            "--var bos_token='<s>' --add-generation-prompt --text",
            "cat request.json | bpetite chat --model o200k_base --messages - --openai-estimate",
        ],
    )
    add_model_argument(parser)
    parser.add_argument(
        "--messages",
        required=True,
        metavar="PATH",
        help="the conversation, a JSON file; '-' for stdin",
    )
    parser.add_argument(
        "--template",
        metavar="NAME|PATH",
        help=(
            f"a built-in format ({', '.join(FORMATS)}) or a Jinja template file; "
            "default: the model's own format (o200k_harmony: harmony)"
        ),
    )
    parser.add_argument(
        "--add-generation-prompt",
        action="store_true",
        help="end with the opening of an assistant turn, for a model to complete",
    )
    parser.add_argument(
        "--var",
        action=_Variable,
        default={},
        metavar="NAME=VALUE",
        help="a text variable for a Jinja template (bos_token, eos_token...); repeatable, "
        "one NAME each",
    )
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--text", action="store_true", help="print the rendered text instead")
    form.add_argument("--count", action="store_true", help="print the number of ids instead")
    form.add_argument(
        "--openai-estimate",
        action="store_true",
        help="print OpenAI's estimate of the prompt tokens (3 per message, each value's "
        "tokens, 1 per name, 3 for the reply) instead; takes no template",
    )
    add_result_output_arguments(parser, "the result")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.openai_estimate and args.template is not None:
        raise CliError(
            "give --template to render the conversation, or --openai-estimate to count it "
            "by OpenAI's rule (not both)"
        )
    variables = {
        name: check_argument_text(value, f"--var {name}") for name, value in args.var.items()
    }
    template_file = args.template is not None and args.template not in FORMATS
    if args.output is not None:
        inputs = [args.model, args.messages] + ([args.template] if template_file else [])
        check_output_path(args.output, force=args.force, inputs=inputs)
    template = _template(args.template) if template_file else args.template
    if variables and not template_file:
        raise CliError("--var is for a Jinja template file (the built-in formats take none)")
    tokenizer = model_from_args(args)
    messages = _conversation(args.messages)
    if args.openai_estimate:
        result: Any = count_chat_tokens(messages, tokenizer)
    else:
        try:
            rendered = tokenizer.apply_chat_template(
                messages,
                chat_template=template,
                add_generation_prompt=args.add_generation_prompt,
                tokenize=not args.text,
                **variables,
            )
        except ImportError as error:
            raise CliError(str(error)) from None
        except ParameterError as error:
            if template is not None or _NO_FORMAT not in str(error):
                raise CliError(_for_the_command_line(str(error))) from None
            # the model has no chat format of its own (only o200k_harmony has one)
            raise CliError(
                f"the model '{shown(args.model)}' has no chat format of its own: give "
                f"--template ({', '.join(FORMATS)} or a Jinja template file), or "
                "--openai-estimate to count it by OpenAI's rule"
            ) from None
        result = len(rendered) if args.count else rendered
    if isinstance(result, str):
        data = _rendered_text(result)
    elif isinstance(result, int):
        data = f"{result}\n".encode("ascii")
    else:
        data = ("[" + ",".join(map(str, result)) + "]\n").encode("ascii")
    with result_output(args.output, force=args.force) as target:
        target.write(data)
    if args.output is not None:
        note(f"bpetite: wrote the result to '{shown(args.output)}'")
    return 0


#: What the library says of a tokenizer with no chat format of its own, given none.
_NO_FORMAT: Final = "has no chat format of its own"

#: How the library tells its caller to get a format's missing special tokens, and how the
#: command line does it: a model edited with ``bpetite specials``, or the text alone.
_LIBRARY_REMEDY = (
    "add them with tokenizer.with_special_tokens(...), or pass tokenize=False for the text"
)
_COMMAND_LINE_REMEDY = (
    "add them with 'bpetite specials --add TEXT' (one --add each), or give --text to print "
    "the rendered text"
)


def _for_the_command_line(message: str) -> str:
    """`message` with the library's remedy for missing special tokens put in CLI terms."""
    return message.replace(_LIBRARY_REMEDY, _COMMAND_LINE_REMEDY)


#: The names bpetite chat passes apply_chat_template itself, and what it passes there.
_PASSED: Final = {
    "messages": "the conversation of --messages",
    "chat_template": "--template",
    "add_generation_prompt": "--add-generation-prompt",
    "tokenize": "--text",
}


class _Variable(argparse.Action):
    """``--var NAME=VALUE`` into a dict; a name given twice, or one the command passes
    itself (:data:`_PASSED`), is a usage error."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        name, equals, value = str(values).partition("=")
        if not equals or not name.isidentifier():
            parser.error(f"--var takes NAME=VALUE, got '{shown(str(values))}'")
        if name == "self":
            parser.error("--var cannot set 'self': Jinja keeps that name for the template")
        if name in _PASSED:
            parser.error(f"--var cannot set '{name}': bpetite chat passes it ({_PASSED[name]})")
        variables: dict[str, str] = getattr(namespace, self.dest)
        if name in variables:
            parser.error(f"--var names '{name}' twice")
        setattr(namespace, self.dest, {**variables, name: value})


def _rendered_text(text: str) -> bytes:
    """`text` in UTF-8; a lone surrogate in it (a template's ``"\\ud800"``) is a failure,
    in the library's words."""
    from bpetite._internal import check_rendered_text  # here: the chat tier loads on use

    try:
        check_rendered_text(text)
    except ParameterError as error:
        raise CliError(str(error)) from None
    return text.encode("utf-8")


def _template(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise open_failure(error, path, "--template") from None
    return decode_utf8(data, path)


def _conversation(path: str) -> list[Any]:
    """The messages of the JSON document at `path`: a list, or an object's ``messages``."""
    where = describe_input(path)
    document = loads_json(read_input_bytes(path, "--messages"), source=where, error=ParameterError)
    if isinstance(document, dict) and "messages" in document:
        document = document["messages"]
    if not isinstance(document, list) or not document:
        raise CliError(
            f"--messages {where} must hold a non-empty JSON array of messages, or an object "
            "with one under 'messages'"
        )
    for index, message in enumerate(document):
        if not isinstance(message, dict):
            raise CliError(
                f"--messages {where}: message {index} must be a JSON object with 'role' and "
                f"'content', got {type(message).__name__}"
            )
        surrogate = _lone_surrogate(message)
        if surrogate is not None:
            raise CliError(
                f"--messages {where}: message {index} holds {surrogate}, which is not valid "
                "Unicode (JSON's \\u escapes can write half of a surrogate pair)"
            )
    return document


def _lone_surrogate(value: object) -> str | None:
    """Where in `value` (a JSON value: its strings, keys included) a lone surrogate is."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            return f"a lone surrogate {value[error.start]!r} at position {error.start} of a string"
        return None
    if isinstance(value, dict):
        items: list[object] = [*value, *value.values()]
    else:
        items = value if isinstance(value, list) else []
    for item in items:
        found = _lone_surrogate(item)
        if found is not None:
            return found
    return None
