"""Corpora larger than memory: files read in blocks, chunk counts, and counts files.

The building blocks under :func:`bpetite.train_files` and the CLI, public for callers
who run their own pipeline: stream a file's text in blocks (:func:`read_blocks`,
:func:`decode_blocks`), cut a stream into exactly the chunks the whole text has
(:func:`count_pieces`, :func:`encode_pieces`), count files and Parquet shards in parallel
(:func:`count_files`, :func:`is_parquet`), and save or load the counts (:func:`save_counts`,
:func:`load_counts`; docs/scaling.md describes the format). Block boundaries never
change a chunk, for every preset pattern; docs/scaling.md gives the argument.
:func:`bpetite.write_dataset` returns a :class:`Dataset`, one :class:`DatasetSplit` per split.

>>> from bpetite.corpus import count_pieces
>>> count_pieces(["the ca", "t sat"])[" cat"]
1
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bpetite.corpus._counting import count_expanded, count_files, expand_inputs
    from bpetite.corpus._counts_file import load_counts, save_counts
    from bpetite.corpus._dataset import Dataset, DatasetSplit
    from bpetite.corpus._parquet import is_parquet
    from bpetite.corpus._streaming import (
        DEFAULT_BLOCK_SIZE,
        check_specials,
        count_pieces,
        decode_blocks,
        encode_pieces,
        read_blocks,
    )

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "Dataset",
    "DatasetSplit",
    "check_specials",
    "count_expanded",
    "count_files",
    "count_pieces",
    "decode_blocks",
    "encode_pieces",
    "expand_inputs",
    "is_parquet",
    "load_counts",
    "read_blocks",
    "save_counts",
]

#: The module of this package each name lives in. It is imported on first use (PEP 562),
#: so a caller of one part (the counts files, say) does not load the rest (the workers,
#: Parquet, the datasets, `regex`), and ``bpetite.train_files`` loads what training needs.
_HOMES = {
    "DEFAULT_BLOCK_SIZE": "bpetite.corpus._streaming",
    "Dataset": "bpetite.corpus._dataset",
    "DatasetSplit": "bpetite.corpus._dataset",
    "check_specials": "bpetite.corpus._streaming",
    "count_expanded": "bpetite.corpus._counting",
    "count_files": "bpetite.corpus._counting",
    "count_pieces": "bpetite.corpus._streaming",
    "decode_blocks": "bpetite.corpus._streaming",
    "encode_pieces": "bpetite.corpus._streaming",
    "expand_inputs": "bpetite.corpus._counting",
    "is_parquet": "bpetite.corpus._parquet",
    "load_counts": "bpetite.corpus._counts_file",
    "read_blocks": "bpetite.corpus._streaming",
    "save_counts": "bpetite.corpus._counts_file",
}

if not TYPE_CHECKING:  # the type checker sees the imports above

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'bpetite.corpus' has no attribute {name!r}")
        value = getattr(import_module(home), name)
        globals()[name] = value  # found once: the next use is a plain lookup
        return value


def __dir__() -> list[str]:
    return sorted(__all__)
