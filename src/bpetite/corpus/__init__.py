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
