"""Training data on the command line: ``--input`` paths and ``--counts`` files, counted.

``count`` and ``train`` read ``--input`` (files, Parquet shards, directories, ``-``,
pipes); ``train`` also sums ``--counts`` files. Regular files are counted in parallel
by the library; a stream (``-``, a pipe, ``<(cmd)``) is counted here as it is read, or,
under a budget that needs input order, first copied to a file (:mod:`._reading`).
"""

from __future__ import annotations

import argparse
import stat
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bpetite import (
    PRESETS,
    ProgressCallback,
    SplitPattern,
    Tokenizer,
)
from bpetite._internal import shown
from bpetite.cli._cluster import cluster
from bpetite.cli._errors import CliError
from bpetite.cli._formats import STDIN, refuse_named_binary_files
from bpetite.cli._inputs import check_argument_text, open_failure
from bpetite.cli._parser import positive_int
from bpetite.cli._progress import PhaseProgress, counting_progress
from bpetite.cli._reading import (
    Reading,
    count_stream,
    document_count,
    library_errors,
    spool_streams,
)
from bpetite.corpus import (
    count_expanded,
    expand_inputs,
    load_counts,
)


def add_workers_argument(parser: argparse.ArgumentParser) -> None:
    """``--workers N``, default one per CPU."""
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="processes that count in parallel (default: one per CPU); the result is the same",
    )


def add_pattern_arguments(parser: argparse.ArgumentParser) -> None:
    """``--pattern NAME`` or ``--pattern-regex REGEX``: how text is cut into chunks."""
    split = parser.add_mutually_exclusive_group()
    split.add_argument(
        "--pattern",
        choices=tuple(PRESETS),
        help="the split pattern: gpt2 (the default, GPT-2's), cl100k (GPT-4's), o200k (GPT-4o's)",
    )
    split.add_argument("--pattern-regex", metavar="REGEX", help="a custom split pattern")


def split_pattern(
    preset: str | None, regex: str | None, specials: Sequence[str] = ()
) -> SplitPattern:
    """The pattern as the library resolves it; a bad regex (or special token) fails here,
    before any input is read."""
    if regex is not None:
        check_argument_text(regex, "--pattern-regex")
    # An empty tokenizer checks the pattern and the special tokens the library's way.
    pattern = regex if regex is not None else preset or "gpt2"  # "" is a regex, refused there
    probe = Tokenizer((), pattern=pattern, special_tokens=tuple(specials))
    return probe.split_pattern


@dataclass(frozen=True, slots=True)
class Sources:
    """What ``--input`` names: regular files (counted in parallel) and streams (``-``, pipes).

    `ordered` holds both in input order: a file as its Path, a stream by its name.
    """

    files: tuple[Path, ...]
    streams: tuple[str, ...]
    ordered: tuple[Path | str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        """Every input by name, for the check that no output overwrites one."""
        return (*map(str, self.files), *self.streams)


@dataclass(frozen=True, slots=True)
class Counted:
    """The chunk counts of some inputs, with what a summary reports about them."""

    counts: Counter[bytes]
    documents: int | None
    corpus_bytes: int


def gather_inputs(inputs: Sequence[str]) -> Sources:
    """Check and expand `inputs` before any counting: a bad path fails with one line."""
    if sum(path == STDIN for path in inputs) > 1:
        raise CliError("--input '-' (standard input) can be given only once")
    files: list[Path] = []
    streams: list[str] = []
    ordered: list[Path | str] = []
    for path in inputs:
        if path == STDIN or _is_stream(path):
            streams.append(path)
            ordered.append(path)
        else:
            expanded = _expand(path)
            files += expanded
            ordered += expanded
    refuse_named_binary_files(files)  # a token file or UTF-16 can decode as UTF-8
    return Sources(tuple(files), tuple(streams), tuple(ordered))


def count_sources(
    sources: Sources,
    workers: int | None,
    *,
    pattern: SplitPattern | None = None,
    stream: TextIO | None = None,
    dask: str | None = None,
    reading: Reading | None = None,
    names: dict[str, str] | None = None,
) -> Counted:
    """Count the chunks of `sources` cut with `pattern` (the spec's when None); `names`
    gives the input each spooled copy holds, for messages."""
    split: SplitPattern | str = "gpt2" if pattern is None else pattern
    reading = Reading() if reading is None else reading
    if not reading.whole_inputs and sources.streams:
        if dask is not None:
            what = "--max-chars and --doc-cap need" if reading.budgeted else "--doc-delimiter needs"
            raise CliError(f"{what} files, not streams, with --dask")
        with tempfile.TemporaryDirectory(prefix="bpetite-") as folder:
            files, names = spool_streams(sources.ordered, Path(folder))
            spooled = Sources(tuple(files), (), tuple(files))
            return count_sources(
                spooled, workers, pattern=pattern, stream=stream, reading=reading, names=names
            )
    counts: Counter[bytes] = Counter()
    corpus_bytes = 0
    for name in sources.streams:
        # A stream has no size to show progress against and can be read only once,
        # from here; it is counted as it is read.
        size, more = count_stream(name, split)
        counts = _add(counts, more)
        corpus_bytes += size
    if sources.files:
        if dask is not None and reading.budgeted:
            raise CliError("--max-chars and --doc-cap cannot be used with --dask")
        with PhaseProgress("count", "bytes", stream=stream) as phase, library_errors(names):
            if dask is None:
                file_counts = count_expanded(
                    list(sources.files),
                    pattern=split,
                    workers=workers,
                    progress=counting_progress(phase),
                    text_column=reading.text_column,
                    max_chars=reading.max_chars,
                    doc_cap=reading.doc_cap,
                    doc_delimiter=reading.doc_delimiter,
                )
            else:
                file_counts = _count_on_dask(
                    list(sources.files),
                    dask,
                    workers,
                    split,
                    counting_progress(phase),
                    reading,
                )
        counts = _add(counts, file_counts)
        corpus_bytes += phase.total
    documents = document_count(sources.files, len(sources.streams), reading)
    return Counted(counts, documents, corpus_bytes)


def _count_on_dask(
    files: list[Path],
    address: str,
    workers: int | None,
    pattern: SplitPattern | str,
    progress: ProgressCallback,
    reading: Reading,
) -> Counter[bytes]:
    from bpetite._internal import dask_count_files

    with cluster(address, workers) as client:
        return dask_count_files(
            files,
            client,
            pattern=pattern,
            progress=progress,
            text_column=reading.text_column,
            doc_delimiter=reading.doc_delimiter,
        )


def load_count_files(
    paths: Sequence[str], pattern: SplitPattern | str = "gpt2", *, of_model: bool = False
) -> Counted:
    """Load and sum ``--counts`` files, which must have been cut with `pattern` (the
    model's, if `of_model`); every defect becomes one line naming the file."""
    total: Counter[bytes] = Counter()
    for path in paths:
        quoted = shown(path)
        try:
            counts = load_counts(path, pattern=pattern)
        except FileNotFoundError:
            raise CliError(f"--counts file '{quoted}' does not exist") from None
        except IsADirectoryError:
            raise CliError(f"--counts '{quoted}' is a directory, not a counts file") from None
        except PermissionError:
            raise CliError(f"--counts file '{quoted}' cannot be read: permission denied") from None
        except OSError as error:
            raise open_failure(error, path, "--counts") from None
        except (KeyError, ValueError) as error:  # the counts reader's documented failures
            recorded = getattr(error, "recorded_pattern", None)  # valid, but another pattern
            if isinstance(recorded, str):
                raise _other_pattern(quoted, recorded, pattern, of_model=of_model) from None
            detail = str(error.args[0]) if error.args else type(error).__name__
            detail = detail.removeprefix(f"{path}: ")
            raise CliError(f"--counts '{quoted}' is not a valid counts file: {detail}") from None
        total = _add(total, counts)
    return Counted(total, 0, 0)


def _other_pattern(
    quoted: str, recorded: str, pattern: SplitPattern | str, *, of_model: bool
) -> CliError:
    """A counts file cut with another pattern: which, and what to pass (or count again with)."""
    theirs, flag = _pattern_words(recorded)
    said = f"--counts '{quoted}' was counted with {theirs}"
    if not of_model:
        return CliError(f"{said}: pass {flag} to train on it")
    ours, flag = _pattern_words(pattern.source if isinstance(pattern, SplitPattern) else pattern)
    return CliError(f"{said}, but the model uses {ours}: count with it (bpetite count {flag})")


def _pattern_words(source: str) -> tuple[str, str]:
    """How to name the pattern `source` (a preset's name or a regex), and its flag."""
    name = next((name for name, preset in PRESETS.items() if source in (name, preset)), None)
    if name is not None:
        return f"the '{name}' pattern", f"--pattern {name}"
    return f"the custom pattern '{shown(source)}'", "--pattern-regex with that regex"


def _is_stream(path: str) -> bool:
    """True for an existing input that is neither a regular file nor a directory."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return False  # expand_inputs says what is wrong with it
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _add(total: Counter[bytes], more: Counter[bytes]) -> Counter[bytes]:
    """`total` plus `more`, reusing `more` when `total` is empty (the usual case)."""
    if not total:
        return more
    total.update(more)
    return total


def _expand(path: str) -> list[Path]:
    try:
        return expand_inputs([path])
    except FileNotFoundError as error:
        raise CliError(f"--input '{shown(str(error.filename or path))}' does not exist") from None
    except PermissionError as error:
        raise CliError(
            f"--input '{shown(str(error.filename or path))}' cannot be read: permission denied"
        ) from None
    except OSError as error:
        raise open_failure(error, path, "--input") from None
    except ValueError as error:  # a directory with no files
        raise CliError(f"--input {shown(str(error))}") from None
