"""bpetite: a deterministic byte-level BPE tokenizer in pure Python.

This is the public API. Read :mod:`bpetite.reference` first: the whole algorithm, naive
and short; everything here computes exactly what it does, faster.

>>> from bpetite import Tokenizer
>>> tokenizer = Tokenizer.train("ab ab ab", vocab_size=258)
>>> tokenizer.encode("ab<|endoftext|>ab")
[256, 258, 256]
"""

from bpetite.core._builtin import get_encoding, list_encoding_names
from bpetite.core._decoder import StreamDecoder
from bpetite.core._errors import (
    ArtifactError,
    BpetiteError,
    CountsFileError,
    DisallowedSpecialError,
    InteropError,
    InvalidUtf8Error,
    MissingKeyError,
    NotATokenError,
    OutputExistsError,
    ParameterError,
    PatternError,
    UnknownTokenError,
    WorkerError,
)
from bpetite.core._patterns import PRESETS, SplitPattern
from bpetite.core._pretokenizer import count_chunks
from bpetite.core._progress import Progress, ProgressCallback
from bpetite.core._tokenizer import Tokenizer
from bpetite.corpus._dataset import Dataset, DatasetSplit, write_dataset
from bpetite.corpus._train_files import train_counts, train_files
from bpetite.visualize._eval import CompressionReport, TextResult, evaluate_compression


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bpetite")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


__version__ = _package_version()
del _package_version  # dir(bpetite) shows the public names only

__all__ = [
    "PRESETS",
    "ArtifactError",
    "BpetiteError",
    "CompressionReport",
    "CountsFileError",
    "Dataset",
    "DatasetSplit",
    "DisallowedSpecialError",
    "InteropError",
    "InvalidUtf8Error",
    "MissingKeyError",
    "NotATokenError",
    "OutputExistsError",
    "ParameterError",
    "PatternError",
    "Progress",
    "ProgressCallback",
    "SplitPattern",
    "StreamDecoder",
    "TextResult",
    "Tokenizer",
    "UnknownTokenError",
    "WorkerError",
    "__version__",
    "count_chunks",
    "evaluate_compression",
    "get_encoding",
    "list_encoding_names",
    "train_counts",
    "train_files",
    "write_dataset",
]
