"""``bpetite compare-tiktoken``: bpetite's ids beside tiktoken's, for reference only.

The ids are not expected to match (a tokenizer trained on another corpus learns other
merges); the comparison shows how the two split the same text. tiktoken is an
optional extra and is only imported here. tiktoken downloads an encoding's files on
first use, but the bpetite CLI never touches the network: for every encoding bpetite
ships (``bpetite.list_encoding_names()``: ``gpt2``, ``r50k_base``, ``p50k_base``,
``p50k_edit``, ``cl100k_base``, ``o200k_base``, ``o200k_harmony``) tiktoken is given the
rank file written from bpetite's own tokens, which must have tiktoken's sha256 for the
file, and builds the encoding itself with its own pattern and special tokens; any other
encoding must already be in tiktoken's cache, and a missing file is an error that says
how to get it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import bpetite
from bpetite import Tokenizer
from bpetite._internal import BUILTIN_VOCABULARIES, rank_file, shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import add_model_argument, model_from_args
from bpetite.cli._inputs import check_argument_text
from bpetite.cli._output import is_terminal, stderr_console, write_json
from bpetite.cli._parser import add_command
from bpetite.visualize import make_piece

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers

INSTALL_HINT = "install it with `uv sync --extra tiktoken` or `pip install 'bpetite[tiktoken]'`"


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "compare-tiktoken",
        summary="show bpetite's ids beside tiktoken's (reference only)",
        description=(
            "Encode the same text with a bpetite tokenizer and with a tiktoken encoding, "
            "and print both id lists and counts as JSON (plus a side-by-side table on a "
            "terminal). Id parity is not a goal. Needs the optional tiktoken package; "
            f"{_names(BUILTIN_VOCABULARIES)} are built by tiktoken from rank files written "
            "from bpetite's built-in vocabularies, byte for byte the files tiktoken "
            "downloads; any other encoding must already be in tiktoken's cache "
            "(TIKTOKEN_CACHE_DIR): bpetite never downloads anything."
        ),
        examples=[
            'bpetite compare-tiktoken --model tokenizer.json --text "Hello world"',
            'bpetite compare-tiktoken --model tokenizer.json --text "Hi" --encoding r50k_base',
        ],
    )
    add_model_argument(parser)
    parser.add_argument("--text", required=True, metavar="TEXT", help="the text to encode")
    parser.add_argument(
        "--encoding", default="gpt2", metavar="NAME", help="tiktoken encoding (default: gpt2)"
    )
    parser.set_defaults(handler=run)


def _names(names: Iterable[str]) -> str:
    """``a, b and c``."""
    *first, last = names
    return f"{', '.join(first)} and {last}" if first else last


def run(args: argparse.Namespace) -> int:
    tokenizer = model_from_args(args)
    text = check_argument_text(args.text, "--text")
    encoding = load_encoding(args.encoding)
    ours = tokenizer.encode(text)
    # Like bpetite, treat only the model's own special tokens as special and every
    # other special-looking string as plain text (tiktoken would refuse it by default).
    specials = set(tokenizer.special_tokens) & set(encoding.special_tokens_set)
    theirs: list[int] = encoding.encode(text, allowed_special=specials, disallowed_special=())

    if is_terminal(sys.stderr):
        _show_table(tokenizer, ours, encoding, theirs)
    write_json(
        {
            "text_bytes": len(text.encode("utf-8")),
            "bpetite": {"count": len(ours), "ids": ours},
            "tiktoken": {"encoding": args.encoding, "count": len(theirs), "ids": theirs},
        }
    )
    return 0


class _DownloadRefused(Exception):
    """tiktoken asked for a file that is not in its cache."""


def load_encoding(name: str) -> Any:
    """Return ``tiktoken.get_encoding(name)`` from tiktoken's cache, never the network."""
    try:
        import tiktoken
        import tiktoken.load
    except ImportError:
        raise CliError(
            f"compare-tiktoken needs the optional tiktoken package, which is not installed: "
            f"{INSTALL_HINT}"
        ) from None
    names = tiktoken.list_encoding_names()
    if name not in names:
        raise CliError(
            f"tiktoken has no encoding '{shown(name)}'; choose one of: {', '.join(names)}"
        )
    if name in bpetite.list_encoding_names():
        return _from_builtin(tiktoken, name)
    try:
        with _cache_only(tiktoken.load):
            return tiktoken.get_encoding(name)
    except _DownloadRefused as refused:
        raise CliError(
            f"tiktoken has no valid cached copy of {refused.args[0]} for encoding '{name}', and "
            f"bpetite never downloads: fetch it once with "
            f"`python -c \"import tiktoken; tiktoken.get_encoding('{name}')\"` or point "
            f"TIKTOKEN_CACHE_DIR at a directory that holds tiktoken's cached files"
        ) from None
    except Exception as error:  # an optional library's own failures (bad cache file, ...)
        raise CliError(f"tiktoken could not load encoding '{name}': {error}") from None


def _from_builtin(tiktoken: Any, name: str) -> Any:
    """tiktoken's own encoding `name`, its rank file written from bpetite's built-in.

    tiktoken's constructor for the name (``tiktoken_ext.openai_public``) supplies the
    pattern and the special tokens; only its file loader is swapped, for one that
    returns the ranks of the file written from bpetite's built-in (which has tiktoken's
    sha256 for it) when tiktoken asks for a file of that sha256. tiktoken reads ``gpt2`` from
    GPT-2's ``encoder.json`` and ``vocab.bpe``, which give the same tokens the same ids
    as ``r50k_base.tiktoken``, the file bpetite's ``gpt2`` is made from.
    """
    import tiktoken_ext.openai_public as openai_public

    sha256 = BUILTIN_VOCABULARIES[name].rank_file_sha256
    _, ranks = rank_file(name)  # raises unless the file is tiktoken's, byte for byte

    def load_tiktoken_bpe(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash != sha256:
            raise _DownloadRefused(path)
        return ranks

    def data_gym_to_mergeable_bpe_ranks(*args: Any, **kwargs: Any) -> dict[bytes, int]:
        return ranks

    swapped = {
        "load_tiktoken_bpe": load_tiktoken_bpe,
        "data_gym_to_mergeable_bpe_ranks": data_gym_to_mergeable_bpe_ranks,
    }
    originals = {key: getattr(openai_public, key) for key in swapped}
    try:
        for key, function in swapped.items():
            setattr(openai_public, key, function)
        constructor = openai_public.ENCODING_CONSTRUCTORS[name]
        return tiktoken.Encoding(**constructor())
    except _DownloadRefused as refused:  # pragma: no cover - tiktoken changed its files
        raise CliError(
            f"tiktoken's encoding '{name}' asks for {refused.args[0]}, not the rank file of "
            f"bpetite's {name}"
        ) from None
    finally:
        for key, function in originals.items():
            setattr(openai_public, key, function)


@contextmanager
def _cache_only(load_module: Any) -> Iterator[None]:
    """Make tiktoken read cached and local files only, refusing any URL.

    tiktoken fetches through ``tiktoken.load.read_file`` only after its cache missed,
    so swapping that one function turns "download" into a clear error instead of a
    network call (or minutes of waiting on a machine without network).
    """
    original = load_module.read_file

    def read_local_file(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise _DownloadRefused(blobpath)
        data: bytes = original(blobpath)
        return data

    load_module.read_file = read_local_file
    try:
        yield
    finally:
        load_module.read_file = original


def _show_table(tokenizer: Tokenizer, ours: list[int], encoding: Any, theirs: list[int]) -> None:
    """Both tokenizations side by side, one token per row, on the terminal.

    Tokens are drawn as ``bpetite show`` draws them: ``·`` for a space, hex for part of
    a character, and never a raw control character that the terminal would obey.
    """
    from rich.table import Table
    from rich.text import Text

    special_ids = set(tokenizer.special_tokens.values())
    table = Table(title="bpetite vs tiktoken (ids are not expected to match)")
    table.add_column("#", justify="right", style="dim")
    table.add_column("bpetite id", justify="right")
    table.add_column("bpetite token")
    table.add_column(f"{encoding.name} id", justify="right")
    table.add_column(f"{encoding.name} token")
    for row in range(max(len(ours), len(theirs))):
        cells: list[str | Text] = [str(row)]
        if row < len(ours):
            data = tokenizer.vocab[ours[row]]
            piece = make_piece(ours[row], data, special=ours[row] in special_ids)
            cells += [str(ours[row]), Text(piece.label)]
        else:
            cells += ["", ""]
        if row < len(theirs):
            piece = make_piece(theirs[row], encoding.decode_single_token_bytes(theirs[row]))
            cells += [str(theirs[row]), Text(piece.label)]
        else:
            cells += ["", ""]
        table.add_row(*cells)
    table.add_section()
    table.add_row("", "tokens", str(len(ours)), "tokens", str(len(theirs)))
    stderr_console().print(table)
