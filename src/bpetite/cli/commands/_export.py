"""``bpetite export``: write a model for Hugging Face (a directory or a tokenizer.json) or tiktoken.

``--format hf`` with an ``--output`` ending in ``.json`` writes that one
``tokenizer.json``, as ``tokenizers.Tokenizer.from_file`` reads it; any other
``--output`` is a directory that ``transformers.AutoTokenizer.from_pretrained`` loads,
where ``--bos``, ``--eos`` and ``--pad`` give roles to special tokens and
``--chat-template`` stores a chat template. stdout gets the few lines of Python that
load what was written, with its path as given (for tiktoken they also carry the regex
and the special tokens, which the file cannot hold); stderr gets a one-line note. A
vocabulary the format cannot represent exactly is refused.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import add_model_argument, check_output_path, model_from_args
from bpetite.cli._inputs import read_input_text
from bpetite.cli._output import exists_message, note, write_result, writing_output
from bpetite.cli._parser import add_command
from bpetite.errors import ParameterError

if TYPE_CHECKING:
    from bpetite import Tokenizer
    from bpetite.cli._parser import Subparsers

#: The options that only a directory export has room for, and the role each one sets.
ROLE_OPTIONS = {"--bos": "bos_token", "--eos": "eos_token", "--pad": "pad_token"}


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "export",
        summary="write a model for Hugging Face transformers or tokenizers, or tiktoken",
        description=(
            "Export a bpetite model for Hugging Face (--format hf) or tiktoken (--format "
            "tiktoken). With a preset pattern (gpt2, cl100k, o200k), every format encodes "
            "every text to exactly bpetite's ids, up to the regex engines' Unicode versions "
            "(docs/interop.md); a custom pattern is run by the peer's own regex engine, and "
            "refused if it holds a construct known to split otherwise there. For hf, "
            "an --output ending in .json is one tokenizer.json (tokenizers' "
            "Tokenizer.from_file); any other --output is a directory for transformers' "
            "AutoTokenizer.from_pretrained (tokenizer.json, tokenizer_config.json, "
            "special_tokens_map.json; created if missing, or beside a model's other "
            "files), where --bos, --eos and --pad name the special tokens that begin, end "
            "and pad a sequence and --chat-template stores a chat template. stdout gets "
            "Python code that loads the result; for tiktoken it also holds the regex and "
            "the special tokens. Refuses a vocabulary the format cannot represent (for "
            "example two tokens with the same bytes)."
        ),
        examples=[
            "bpetite export --model tokenizer.json --format hf --output hf-tokenizer/ "
            "--eos '<|endoftext|>' --pad '<|endoftext|>'",
            "bpetite export --model cl100k_base --format hf --output cl100k/ "
            "--bos '<|endoftext|>' --eos '<|endoftext|>' --chat-template chat.jinja",
            "bpetite export --model tokenizer.json --format hf --output hf-tokenizer.json",
            "bpetite export --model tokenizer.json --format tiktoken --output tok.tiktoken "
            "> load_tok.py",
        ],
    )
    add_model_argument(parser)
    parser.add_argument(
        "--format", required=True, choices=("hf", "tiktoken"), help="the format to write"
    )
    parser.add_argument(
        "--output",
        required=True,
        metavar="PATH",
        help="the file to write; for hf, a directory unless PATH ends in .json",
    )
    for option, role in ROLE_OPTIONS.items():
        parser.add_argument(
            option,
            metavar="TOKEN",
            help=f"hf directory: the special token that is the model's {role} (its text, "
            "for example '<|endoftext|>')",
        )
    parser.add_argument(
        "--chat-template",
        metavar="FILE",
        help="hf directory: a Jinja chat template (UTF-8) to store in tokenizer_config.json, "
        "for apply_chat_template",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace existing output files of the same names"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so `bpetite --help` and the other commands do not load it.
    from bpetite.interop import InteropError

    directory = args.format == "hf" and not args.output.endswith(".json")
    given = [option for option in (*ROLE_OPTIONS, "--chat-template") if _value(args, option)]
    if given and not directory:
        where = "a .tiktoken file" if args.format == "tiktoken" else "a single tokenizer.json"
        raise CliError(
            f"{given[0]} is for an hf directory export (--format hf, an --output that does "
            f"not end in .json): {where} has no place for it"
        )
    if directory:
        _check_output_directory(args.output, force=args.force, inputs=[args.model])
    else:
        check_output_path(args.output, force=args.force, inputs=[args.model])
    template = None
    if args.chat_template is not None:
        template = read_input_text(args.chat_template, "--chat-template")
    tokenizer = model_from_args(args)
    try:
        with writing_output("--output", args.output):  # a full disk
            code, what = _write(args, tokenizer, template, directory=directory)
    except InteropError as error:
        message = _for_the_command_line(str(error), tokenizer)
        raise CliError(f"cannot export '{shown(args.model)}' as {args.format}: {message}") from None
    except FileExistsError as error:
        raise CliError(exists_message("--output", error.filename or args.output)) from None
    write_result(code.encode("utf-8"))
    note(f"bpetite: wrote {what} '{shown(args.output)}'")
    return 0


def _for_the_command_line(message: str, tokenizer: Tokenizer) -> str:
    """`message` with the library's remedy of dropping a special token put in CLI terms."""
    for text in tokenizer.special_tokens:
        remedy = f"tokenizer.with_special_tokens(drop=[{text!r}])"
        if remedy in message:
            message = message.replace(remedy, f"bpetite specials --drop {shlex.quote(text)}")
    return message


def _write(
    args: argparse.Namespace, tokenizer: Tokenizer, template: str | None, *, directory: bool
) -> tuple[str, str]:
    if directory:
        return _write_directory(args, tokenizer, template)
    if args.format == "hf":
        return _write_tokenizer_json(args, tokenizer)
    return _write_tiktoken(args, tokenizer)


def _value(args: argparse.Namespace, option: str) -> str | None:
    value: str | None = getattr(args, option.removeprefix("--").replace("-", "_"))
    return value


def _write_directory(
    args: argparse.Namespace, tokenizer: Tokenizer, template: str | None
) -> tuple[str, str]:
    from bpetite.interop import write_hf_pretrained

    roles = {role: _value(args, option) for option, role in ROLE_OPTIONS.items()}
    try:
        write_hf_pretrained(
            tokenizer,
            args.output,
            **roles,
            chat_template=template,
            overwrite=args.force,
        )
    except ParameterError as error:  # a role that names no special token: name the option
        message = str(error)
        for option, role in ROLE_OPTIONS.items():
            message = (
                message.replace(f"{role} ", f"{option} ", 1)
                if message.startswith(role)
                else message
            )
        if message.startswith("the chat template"):
            message = f"--chat-template '{shown(args.chat_template)}': {message}"
        raise CliError(message) from None
    code = (
        "from transformers import AutoTokenizer\n\n"
        f"tokenizer = AutoTokenizer.from_pretrained({args.output!r})\n"
    )
    return code, "the Hugging Face tokenizer directory"


def _write_tokenizer_json(args: argparse.Namespace, tokenizer: Tokenizer) -> tuple[str, str]:
    from bpetite.interop import write_hf

    write_hf(tokenizer, args.output, overwrite=args.force)
    code = f"from tokenizers import Tokenizer\n\ntokenizer = Tokenizer.from_file({args.output!r})\n"
    return code, "the Hugging Face tokenizer.json"


def _write_tiktoken(args: argparse.Namespace, tokenizer: Tokenizer) -> tuple[str, str]:
    from bpetite.interop import write_tiktoken

    export = write_tiktoken(tokenizer, args.output, overwrite=args.force)
    return export.python_code(args.output), "the .tiktoken file"


def _check_output_directory(path: str, *, force: bool, inputs: list[str]) -> None:
    """Refuse a directory output that cannot take the export, before the model is loaded."""
    from bpetite.interop import HF_FILES

    folder = Path(path)
    quoted = shown(path)
    if folder.exists() and not folder.is_dir():
        raise CliError(
            f"--output '{quoted}' is a file; an hf export writes a directory (or a path "
            "ending in .json for a single tokenizer.json)"
        )
    if not folder.exists():
        parent = folder.parent
        if not parent.is_dir():
            problem = "is not a directory" if parent.exists() else "does not exist"
            raise CliError(
                f"cannot create --output '{quoted}': directory '{shown(str(parent))}' {problem}"
            )
        return
    for name in HF_FILES:
        check_output_path(str(folder / name), force=force, inputs=inputs)
