"""Train from files far larger than memory, or from counts made elsewhere.

Training only ever needs the distinct chunks and how often each occurs, so it splits
in two: counting (streamed, parallel, shareable as a counts file) and the merge loop
(the one :meth:`Tokenizer.train_from_counts` and ``Tokenizer.train`` use, here with
its words spread over the workers where the corpus is large enough to gain from it:
:mod:`bpetite.corpus._merge_workers`; or, on a Dask cluster, both on the cluster's
workers: :mod:`bpetite.corpus._dask_merge`). The result is the same tokenizer, byte
for byte, as ``Tokenizer.train`` on each file's text with no chunk spanning two files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

from bpetite.core._budget import Budget
from bpetite.core._constants import BASE_VOCAB_SIZE
from bpetite.core._errors import ParameterError
from bpetite.core._ids import skipped_ids
from bpetite.core._model import LearnedIndexedMerges, LearnedMerges, Merges, check_special_tokens
from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._progress import ProgressCallback
from bpetite.core._tokenizer import DEFAULT_SPECIAL_TOKENS, Tokenizer
from bpetite.core._trainer import check_limit, check_vocab_size
from bpetite.corpus._counting import CountParts, count_in_parts, expand_inputs
from bpetite.corpus._counts_file import load_and_merge
from bpetite.corpus._delimited import check_delimiter
from bpetite.corpus._merge_workers import train_merges_in_workers
from bpetite.corpus._parquet import DEFAULT_TEXT_COLUMN, check_text_column
from bpetite.corpus._streaming import DEFAULT_BLOCK_SIZE
from bpetite.corpus._workers import check_workers

if TYPE_CHECKING:
    from bpetite.corpus._dask import CountsOnDask


def train_files(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    vocab_size: int,
    *,
    pattern: str | SplitPattern = "gpt2",
    special_tokens: Sequence[str] | Mapping[str, int] = DEFAULT_SPECIAL_TOKENS,
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
    text_column: str = DEFAULT_TEXT_COLUMN,
    max_chars: int | None = None,
    doc_cap: int | None = None,
    doc_delimiter: str | None = None,
    dask: Any = None,
) -> Tokenizer:
    """Learn a tokenizer from UTF-8 files, Parquet files and directories.

    `pattern`, `special_tokens`, `max_token_bytes` and `min_frequency` are
    :meth:`Tokenizer.train`'s, checked before any file is read. A UTF-8 file is one
    document; a Parquet file (known by its content, whatever its name) gives one
    document per row of its `text_column`, read a row group at a time (pyarrow is the
    extra ``bpetite[parquet]``). `doc_delimiter` cuts every UTF-8 file into documents
    at each occurrence of that text, as :func:`count_files` does (its text is not
    learned from, and no token spans two documents). `doc_cap` and `max_chars` are
    nanochat's budget, as
    in :meth:`Tokenizer.train_from_iterator`, over the documents in input order: the
    same cut for any `workers`. A directory means
    every regular file under it (symbolic links inside it are skipped). Files are
    streamed in blocks of `block_size` bytes and counted by `workers` processes
    (default: one per CPU), which then share the merge loop if the distinct chunks are
    many enough to gain from it; neither changes the result. With a custom pattern, which
    no block boundary is proven safe for, each file is read whole instead (memory
    grows with the largest file). Invalid UTF-8 raises a ValueError naming the file
    and the offset of the first bad byte.
    On Python's spawn or forkserver start methods (macOS, Python 3.14+), a script that
    uses several workers needs the usual ``if __name__ == "__main__":`` guard.

    `dask`, a ``distributed.Client``, counts and merges on its cluster instead of local
    processes: a counting task per batch of files (every path must name the same file on every
    worker), then, from 16 MiB of distinct chunks, the words in one share per worker
    and only futures and pair counts in this process (below that, the counts are
    gathered here and merged in this process: :mod:`bpetite.corpus._dask_merge`); the
    tokenizer is the same. `max_chars` and `doc_cap` cannot be used with it.

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("ab ab", encoding="utf-8")
    >>> train_files([folder], 257, workers=1).encode("ab")
    [256]
    """
    split = _check_options(
        vocab_size,
        split_pattern=pattern,
        special_tokens=special_tokens,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
    )
    Budget(max_chars=max_chars, doc_cap=doc_cap)  # checked before any file is read
    check_text_column(text_column)
    check_delimiter(doc_delimiter)
    workers = check_workers(workers)
    if dask is not None:
        if isinstance(paths, (list, tuple)) and not paths:  # as count_files refuses it
            raise ParameterError("no input paths were given")
        if max_chars is not None or doc_cap is not None:
            raise ParameterError(
                "max_chars and doc_cap cannot be used with dask: the budget follows "
                "the documents in input order, and a cluster counts its files at once"
            )
        from bpetite.corpus._dask import dask_count_parts

        counts: MutableMapping[bytes, int] | CountParts = {}  # all stay on the cluster
        remote = dask_count_parts(
            paths,
            dask,
            pattern=split,
            block_size=block_size,
            progress=progress,
            text_column=text_column,
            doc_delimiter=doc_delimiter,
        )
    else:
        remote = None
        # Kept in the workers' parts where they dealt them: the merge loop's shares add
        # them up, a part each, and this process never holds every count.
        counts = count_in_parts(
            expand_inputs(paths),
            pattern=split,
            workers=workers,
            block_size=block_size,
            progress=progress,
            text_column=text_column,
            max_chars=max_chars,
            doc_cap=doc_cap,
            doc_delimiter=doc_delimiter,
        )
    return train_counted(
        counts,
        vocab_size,
        pattern=split,
        special_tokens=special_tokens,
        workers=workers,
        progress=progress,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
        remote=remote,
    )


def train_counted(
    counts: MutableMapping[bytes, int] | CountParts,
    vocab_size: int,
    *,
    pattern: SplitPattern,
    special_tokens: Sequence[str] | Mapping[str, int],
    workers: int | None,
    progress: ProgressCallback | None = None,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
    remote: CountsOnDask | None = None,
) -> Tokenizer:
    """:meth:`Tokenizer.train_from_counts` on counts that bpetite counted or loaded itself,
    with the merge loop spread over up to `workers` processes (default: one per CPU).

    How many it uses follows from the counts alone
    (:func:`~bpetite.corpus._merge_workers.merge_workers`: one process for a small
    corpus), and never changes the tokenizer. With `remote`, counts held on a Dask
    cluster are added to `counts` and the words are on its workers, one share each, or
    in this process if they are few
    (:func:`~bpetite.corpus._dask_merge.dask_train_merges`; `workers` is not used). The
    options were checked by the caller; `counts` are trusted to map bytes to
    non-negative ints, and taken: they are emptied once the merge loop has laid out its
    words, so that the table is not kept (nor handed to the workers) while it runs.
    Counts the workers left in parts (:class:`~bpetite.corpus._counting.CountParts`)
    are added up by the merge loop's shares, a part each, never whole in this process.
    """
    workers = check_workers(workers)
    if remote is not None:
        from bpetite.corpus._dask_merge import dask_train_merges

        if isinstance(counts, CountParts):  # counted here: the cluster takes them whole
            counts = counts.joined()
        merges = dask_train_merges(
            remote,
            counts,
            vocab_size,
            progress,
            max_token_bytes=max_token_bytes,
            min_frequency=min_frequency,
        )
    else:
        merges = train_merges_in_workers(
            counts,
            vocab_size,
            progress,
            workers=workers,
            max_token_bytes=max_token_bytes,
            min_frequency=min_frequency,
        )
    training = {
        name: value
        for name, value in (("max_token_bytes", max_token_bytes), ("min_frequency", min_frequency))
        if value is not None
    }
    # What Tokenizer.train_from_counts builds from the same merges: every token whole,
    # read as indices, so that a special token's id among the learned ones is skipped.
    count = BASE_VOCAB_SIZE + len(merges)
    learned: Merges = LearnedMerges(merges)
    if skipped_ids(count, check_special_tokens(special_tokens, count).values()):
        learned = LearnedIndexedMerges(merges)
    return Tokenizer(learned, pattern=pattern, special_tokens=special_tokens, training=training)


def train_counts(
    count_paths: Iterable[str | os.PathLike[str]],
    vocab_size: int,
    *,
    pattern: str | SplitPattern = "gpt2",
    special_tokens: Sequence[str] | Mapping[str, int] = DEFAULT_SPECIAL_TOKENS,
    workers: int | None = None,
    progress: ProgressCallback | None = None,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
) -> Tokenizer:
    """Learn a tokenizer from counts files (``bpetite count``), summing their counts.

    Equal, byte for byte, to :func:`train_files` on all the inputs that were counted.
    The merge loop runs in up to `workers` processes (default: one per CPU), as
    :func:`train_files`'s does, when the distinct chunks are many enough to gain from it.
    Every file must have been counted with `pattern` (a counts file records its
    pattern); one counted with another raises CountsFileError naming both.
    """
    split = _check_options(
        vocab_size,
        split_pattern=pattern,
        special_tokens=special_tokens,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
    )
    workers = check_workers(workers)
    return train_counted(
        load_and_merge(count_paths, pattern=split),
        vocab_size,
        pattern=split,
        special_tokens=special_tokens,
        workers=workers,
        progress=progress,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
    )


def _check_options(
    vocab_size: int,
    *,
    split_pattern: str | SplitPattern,
    special_tokens: Sequence[str] | Mapping[str, int],
    max_token_bytes: int | None,
    min_frequency: int | None,
) -> SplitPattern:
    """Raise for a bad option now, not after counting a corpus; return the pattern.

    The checks are the trainer's and the Tokenizer's own (a tokenizer without merges
    takes the same special tokens), so the messages are the ones training would give.
    """
    check_vocab_size(vocab_size)
    check_limit("max_token_bytes", max_token_bytes, 2, "every merged token has two bytes or more")
    check_limit("min_frequency", min_frequency, 1, "a pair that occurs has count 1")
    split = resolve_pattern(split_pattern)
    Tokenizer((), pattern=split, special_tokens=special_tokens)
    return split
