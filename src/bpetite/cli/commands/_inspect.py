"""``bpetite inspect``: vocabulary statistics as JSON, and as tables on a terminal."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bpetite.cli._files import add_model_argument, model_from_args
from bpetite.cli._inputs import read_input_text
from bpetite.cli._output import is_terminal, stderr_console, write_json
from bpetite.cli._parser import add_command, non_negative_int
from bpetite.visualize import corpus_stats, token_label, vocabulary_stats

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "inspect",
        summary="vocabulary statistics of a tokenizer",
        description=(
            "Print statistics of a tokenizer's vocabulary as one line of JSON on stdout: "
            "mergeable size, special tokens, the token length histogram in bytes, the "
            "longest tokens, the first and last merges. With --corpus, also how the "
            "tokenizer encodes that text: tokens per byte, the share of the vocabulary "
            "used, the most frequent tokens. Tokens appear as {id, length, text, hex}; "
            "text is null for a token that is only part of a UTF-8 character. When stderr "
            "is a terminal, the same numbers are drawn there as tables."
        ),
        examples=[
            "bpetite inspect --model tokenizer.json",
            "bpetite inspect --model tokenizer.json --corpus data/tinyshakespeare.txt --top 20",
            "bpetite inspect --model tokenizer.json | jq .token_length_histogram",
        ],
    )
    add_model_argument(parser)
    parser.add_argument(
        "--corpus", metavar="PATH", help="a UTF-8 text to measure the tokenizer on; '-' for stdin"
    )
    parser.add_argument(
        "--top",
        type=non_negative_int,
        default=10,
        metavar="N",
        help="how many longest tokens, first/last merges and frequent tokens (default 10)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    tokenizer = model_from_args(args)
    stats = vocabulary_stats(
        tokenizer.vocab, tokenizer.merges, tokenizer.special_tokens, top=args.top
    )
    if args.corpus is not None:
        text = read_input_text(args.corpus, option="--corpus")
        stats["corpus"] = {
            "source": args.corpus,
            **corpus_stats(
                tokenizer.encode(text),
                tokenizer.vocab,
                tokenizer.special_tokens,
                top=args.top,
            ),
        }
    write_json(stats)
    if is_terminal(sys.stderr):
        console = stderr_console()
        for table in stats_tables(stats):
            console.print(table)
    return 0


def token_display(token: Mapping[str, Any]) -> str:
    """A token dict from the statistics as a person reads it: ``·the`` or ``⟨f0 9f⟩``."""
    return token_label(bytes.fromhex(token["hex"]))


def stats_tables(stats: Mapping[str, Any]) -> list[RenderableType]:
    """The statistics as rich tables. Token texts go in as Text, never as markup."""
    from rich.table import Table

    overview = Table(title="vocabulary", show_header=False)
    overview.add_row("mergeable vocab size", str(stats["mergeable_vocab_size"]))
    overview.add_row("merges", str(stats["merges"]))
    for name, token_id in stats["special_tokens"].items():
        overview.add_row(_plain(f"special token {name}"), str(token_id))
    tables: list[RenderableType] = [overview]

    histogram = Table(title="token length (bytes)")
    histogram.add_column("length", justify="right")
    histogram.add_column("tokens", justify="right")
    histogram.add_column("")
    widest = max((row["tokens"] for row in stats["token_length_histogram"]), default=1)
    for row in stats["token_length_histogram"]:
        bar = "█" * max(1, round(30 * row["tokens"] / widest))
        histogram.add_row(str(row["length"]), str(row["tokens"]), bar)
    tables.append(histogram)

    tables.append(_token_table("longest tokens", stats["longest_tokens"]))
    for key, title in (("first_merges", "first merges"), ("last_merges", "last merges")):
        merges = Table(title=title)
        for column in ("rank", "id", "pair", "token"):
            merges.add_column(column, justify="left" if column == "token" else "right")
        for merge in stats[key]:
            left, right = merge["pair"]
            token = merge["token"]
            merges.add_row(
                str(merge["rank"]),
                str(token["id"]),
                f"{left} + {right}",
                _plain(token_display(token)),
            )
        tables.append(merges)

    corpus = stats.get("corpus")
    if corpus is not None:
        summary = Table(title="corpus", show_header=False)
        summary.add_row("source", _plain(corpus["source"]))
        summary.add_row("bytes", str(corpus["bytes"]))
        summary.add_row("tokens", str(corpus["tokens"]))
        summary.add_row("tokens per byte", _ratio(corpus["tokens_per_byte"]))
        summary.add_row("bytes per token", _ratio(corpus["bytes_per_token"]))
        summary.add_row("distinct tokens used", str(corpus["distinct_tokens_used"]))
        share = corpus["vocabulary_used_share"]
        summary.add_row("vocabulary used", "n/a" if share is None else f"{share:.1%}")
        summary.add_row("special tokens seen", str(corpus["special_tokens_seen"]))
        tables.append(summary)
        frequent = _token_table("most frequent tokens", corpus["most_frequent_tokens"])
        tables.append(frequent)
    return tables


def _token_table(title: str, tokens: list[dict[str, Any]]) -> RenderableType:
    from rich.table import Table

    with_counts = bool(tokens) and "count" in tokens[0]
    table = Table(title=title)
    table.add_column("id", justify="right")
    table.add_column("bytes", justify="right")
    if with_counts:
        table.add_column("count", justify="right")
        table.add_column("share", justify="right")
    table.add_column("token")
    for token in tokens:
        cells: list[RenderableType] = [str(token["id"]), str(token["length"])]
        if with_counts:
            cells += [str(token["count"]), f"{token['share']:.2%}"]
        cells.append(_plain(token_display(token)))
        table.add_row(*cells)
    return table


def _plain(text: str) -> Text:
    """Text that rich shows literally: a token ``[bold]`` must not become markup."""
    from rich.text import Text

    return Text(text)


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
