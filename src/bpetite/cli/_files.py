"""Files a command writes, and the models it loads: checked early, written whole.

A model is an artifact's path, the name of a built-in vocabulary (``cl100k_base``:
:func:`bpetite.get_encoding`'s names) or an OpenAI model's name (``gpt-4o``:
:func:`bpetite.encoding_name_for_model`'s). A file of that name in the current directory
wins, as a local directory wins over a hub name in Hugging Face's ``from_pretrained``,
and a note says so; ``./gpt2`` always names a file.

Slow work must not end in "the file exists" or "that directory is missing", so every
output is checked before the work starts; one that is a file the command reads is
refused even with ``--force``, naming the option that reads it. Writes are atomic.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from bpetite import Tokenizer, encoding_name_for_model, get_encoding, list_encoding_names
from bpetite._internal import (
    MAX_ARTIFACT_BYTES,
    atomic_writer,
    check_destination,
    shown,
    write_atomically,
)
from bpetite.cli._delivered import expect_output
from bpetite.cli._errors import CliError
from bpetite.cli._inputs import Spool
from bpetite.cli._output import exists_message, note, write_result_from
from bpetite.cli._parser import positive_int
from bpetite.errors import NotARegularFileError


def add_model_argument(
    parser: argparse.ArgumentParser, *, required: bool = True, help: str | None = None
) -> None:
    """``--model PATH|NAME`` and the options of loading a file, for every command that loads one."""
    parser.add_argument("--model", required=required, metavar="PATH|NAME", help=help or MODEL_HELP)
    parser.add_argument(
        "--trust-custom-pattern",
        action="store_true",
        help="load a model whose split pattern is a custom regex (it runs on every text "
        "encoded): only for a model from a source you trust",
    )
    parser.add_argument(
        "--max-model-bytes",
        type=positive_int,
        default=MAX_ARTIFACT_BYTES,
        metavar="N",
        help=f"load a model file of up to N bytes (default {MAX_ARTIFACT_BYTES:,}, which "
        "every artifact bpetite writes keeps to); parsing takes about 30 bytes of memory "
        "per byte of file",
    )


def model_from_args(args: argparse.Namespace) -> Tokenizer:
    """The model that ``--model``, ``--trust-custom-pattern`` and ``--max-model-bytes`` name."""
    return load_model(
        args.model, trust_custom_pattern=args.trust_custom_pattern, max_bytes=args.max_model_bytes
    )


def library_model(path: str, tokenizer: Tokenizer) -> Tokenizer | str:
    """What to hand a library call for `path`, loaded as `tokenizer`: the path, so that what
    the call writes names the file, unless the library's defaults cannot load it (a
    built-in's name, a custom pattern, a file over the default size limit)."""
    if builtin_model(path) or tokenizer.pattern_name == "custom":
        return tokenizer
    return path if Path(path).stat().st_size <= MAX_ARTIFACT_BYTES else tokenizer


def add_result_output_arguments(
    parser: argparse.ArgumentParser, result: str, also: str = ""
) -> None:
    """``--output PATH`` and ``--force``, for a command whose `result` goes to stdout."""
    parser.add_argument(
        "--output",
        metavar="PATH",
        help=f"write {result} to PATH (atomically: whole or not at all) instead of stdout{also}",
    )
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")


def check_result_output(args: argparse.Namespace) -> None:
    """Refuse a bad ``--output`` before any work: one that exists, or is the model or input."""
    if args.output is not None:
        inputs = [("--model", args.model), ("--input", args.input or "-")]  # "-" is no file
        check_output_path(args.output, force=args.force, inputs=inputs, stdout=True)


#: ``--model``'s help, for every command that takes one.
MODEL_HELP = (
    "tokenizer artifact, or the name of a built-in vocabulary: "
    f"{', '.join(list_encoding_names())} (tiktoken's, shipped with bpetite), or of an "
    "OpenAI model that uses one (gpt-4o, gpt-3.5-turbo-0301, text-davinci-003...); a file "
    "of that name in the current directory wins"
)


def builtin_model(value: str) -> str | None:
    """The built-in vocabulary ``--model value`` names, or None for a file.

    A vocabulary's name, or an OpenAI model's as tiktoken maps it (``gpt-4o-2024-05-13``
    by its prefix), is a built-in unless a file so named exists (not a directory).
    """
    return None if Path(value).is_file() else _vocabulary_named(value)


def _vocabulary_named(value: str) -> str | None:
    """The built-in vocabulary `value` names, whatever the files: a value that looks like
    a path (a separator, or ``.json`` at the end) is never a model's name."""
    if value in list_encoding_names():
        return value
    if os.sep in value or "/" in value or value.endswith(".json"):
        return None
    try:
        return encoding_name_for_model(value)
    except KeyError:
        return None


def load_model(
    path: str, *, trust_custom_pattern: bool = False, max_bytes: int = MAX_ARTIFACT_BYTES
) -> Tokenizer:
    """Load the built-in vocabulary or validate the artifact `path` names; defects are one line.

    A custom split pattern is a regex that runs on every text encoded, so a model that
    holds one loads only with `trust_custom_pattern` (``--trust-custom-pattern``). A file
    over `max_bytes` is refused before it is read (``--max-model-bytes``).
    """
    name = builtin_model(path)
    if name is not None:
        return get_encoding(name)
    quoted = shown(path)
    if _vocabulary_named(path) is not None:
        note(
            f"bpetite: --model {path} is the file '{quoted}' in the current directory, not "
            "the built-in vocabulary of that name"
        )
    try:
        return Tokenizer.load(path, trust_custom_pattern=trust_custom_pattern, max_bytes=max_bytes)
    except FileNotFoundError:
        hint = ""
        if os.sep not in path and "/" not in path:
            hint = f" (the built-in vocabularies are {', '.join(list_encoding_names())})"
        raise CliError(f"model file '{quoted}' does not exist{hint}") from None
    except IsADirectoryError:
        raise CliError(f"model '{quoted}' is a directory, not a tokenizer artifact") from None
    except PermissionError:
        raise CliError(f"model file '{quoted}' cannot be read: permission denied") from None
    except OSError as error:
        raise CliError(f"model file '{quoted}' cannot be read: {error.strerror or error}") from None
    except (KeyError, ValueError) as error:  # the loader's documented failures
        detail = str(error.args[0]) if error.args else type(error).__name__
        # The loader starts its messages with the path; say it once.
        detail = detail.removeprefix(f"{path}: ")
        detail = detail.replace("pass a larger max_bytes", "pass a larger --max-model-bytes")
        if not trust_custom_pattern and "trust_custom_pattern" in detail:
            raise CliError(
                f"model '{quoted}' uses a custom split pattern, a regex that runs on every "
                f"text encoded; pass --trust-custom-pattern if you trust where it came from"
            ) from None
        raise CliError(f"model '{quoted}' is not a valid bpetite artifact: {detail}") from None


def check_output_path(
    path: str,
    *,
    force: bool,
    option: str = "--output",
    inputs: Iterable[str | Path | tuple[str, str | Path]] = (),
    stdout: bool = False,
) -> None:
    """Refuse an output path that cannot be written, before any slow work starts.

    `option` names the output (``the manifest of --output`` for a file beside it). `inputs`
    are the files the command reads, each a path or ``(option, path)``: an output that is
    one of them (by any name: a link counts) is refused whatever `force` says; so is a
    FIFO, a device or a link to nothing, which the writer would replace, not write to
    (with `stdout`, the refusal suggests stdout). The save checks again, atomically.
    """
    if not path:  # Path("") is the current directory
        raise CliError(f"{option} '' is empty; give the path of a file")
    destination = Path(path)
    quoted = shown(path)
    if destination.is_dir():
        raise CliError(f"{option} '{quoted}' is a directory; give the path of a file")
    if path.endswith(os.sep) or (os.altsep is not None and path.endswith(os.altsep)):
        raise CliError(f"{option} '{quoted}' names a directory; give a file name")
    _refuse_non_regular(path, option=option, stdout=stdout)
    expect_output(option, path)
    refuse_overwriting_inputs(path, inputs, option=option)
    if not force and (destination.exists() or destination.is_symlink()):
        raise CliError(exists_message(option, path))
    parent = destination.parent
    if not parent.is_dir():
        problem = "is not a directory" if parent.exists() else "does not exist"
        raise CliError(
            f"cannot write {option} '{quoted}': directory '{shown(str(parent))}' {problem}"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(
            f"cannot write {option} '{quoted}': directory '{shown(str(parent))}' is not writable"
        )


def _refuse_non_regular(path: str, *, option: str, stdout: bool) -> None:
    """Refuse what the writer would not replace: a FIFO, a device, a socket, a link to one
    or to nothing (a link to a regular file is fine: the write goes through it)."""
    try:
        check_destination(Path(path), overwrite=True)
    except NotARegularFileError as error:
        hint = "; leave out --output to write to stdout, and redirect it" if stdout else ""
        raise CliError(f"{option} '{shown(path)}': {error.strerror}{hint}") from None
    except OSError:
        pass  # a missing parent, a directory...: the checks after this say it in CLI words


def refuse_overwriting_inputs(
    path: str, inputs: Iterable[str | Path | tuple[str, str | Path]], *, option: str = "--output"
) -> None:
    """Refuse `path` if it is one of `inputs` (by any name), naming the option that reads it."""
    try:
        target = Path(path).stat()
    except OSError:
        return  # nothing there yet: it cannot be an input
    for entry in inputs:
        reader, source = entry if isinstance(entry, tuple) else (None, entry)
        if str(source) == "-":
            continue
        try:
            same = os.path.samestat(target, Path(source).stat())
        except OSError:
            continue
        if same:
            given = f"given to {reader} " if reader else ""
            raise CliError(
                f"{option} '{shown(path)}' is the input {given}'{shown(str(source))}'; writing "
                f"it would destroy the input, even with --force: choose another path"
            )


def save_model(tokenizer: Tokenizer, path: str, *, force: bool, option: str = "--output") -> None:
    """Save atomically: an interrupted or failed save leaves no file and no temp file."""
    try:
        tokenizer.save(path, overwrite=force)
    except FileExistsError:
        raise CliError(exists_message(option, path)) from None
    except ValueError as error:  # a tokenizer the artifact schema cannot hold
        raise CliError(f"cannot save {option} '{shown(path)}': {error}") from None
    except OSError as error:
        raise CliError(
            f"cannot write {option} '{shown(path)}': {error.strerror or error}"
        ) from None


def write_file(path: str, data: bytes, *, force: bool, option: str) -> None:
    """Write `data` to `path` atomically, with the same one-line failures as a model."""
    try:
        write_atomically(path, data, overwrite=force)
    except FileExistsError:
        raise CliError(exists_message(option, path)) from None
    except OSError as error:
        raise CliError(
            f"cannot write {option} '{shown(path)}': {error.strerror or error}"
        ) from None


@contextlib.contextmanager
def result_output(
    path: str | None, *, force: bool, option: str = "--output"
) -> Iterator[IO[bytes]]:
    """Where a command writes its result: `path`, or stdout when `path` is None.

    Either way the result is delivered only once it is whole: for `path` it goes to a
    temp file beside it, renamed into place when the block ends without error; for
    stdout to a private :class:`Spool` (memory, then an anonymous temp file) copied to
    stdout after the block. A failure, a signal or a full temp folder leaves stdout
    empty and no file. Check `path` with ``check_output_path`` first.
    """
    if path is None:
        with Spool("the result") as spool:
            yield spool
            write_result_from(spool)
        return
    try:
        with atomic_writer(path, overwrite=force) as handle:
            yield handle
    except FileExistsError:
        raise CliError(exists_message(option, path)) from None
    except OSError as error:  # a full disk, a directory gone meanwhile
        raise CliError(
            f"cannot write {option} '{shown(path)}': {error.strerror or error}"
        ) from None
