"""bpetite: a deterministic byte-level BPE tokenizer in pure Python.

>>> from bpetite import Tokenizer
>>> tokenizer = Tokenizer.train("ab ab ab", vocab_size=258)
>>> tokenizer.encode("ab<|endoftext|>ab")
[256, 258, 256]
"""

from importlib.metadata import PackageNotFoundError, version

from bpetite._atomic import write_atomically
from bpetite._dask import dask_client, dask_count_files
from bpetite._dataset import Dataset, DatasetSplit, write_dataset
from bpetite._errors import (
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
from bpetite._eval import CompressionReport, TextResult, evaluate_compression
from bpetite._json import loads_json, parse_json_ids
from bpetite._patterns import PRESETS, SplitPattern, resolve_pattern
from bpetite._pretokenizer import count_chunks
from bpetite._progress import Progress, ProgressCallback
from bpetite._tokenizer import Tokenizer
from bpetite._train_files import train_counts, train_files

try:
    __version__ = version("bpetite")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

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
    "TextResult",
    "Tokenizer",
    "UnknownTokenError",
    "WorkerError",
    "__version__",
    "count_chunks",
    "dask_client",
    "dask_count_files",
    "evaluate_compression",
    "loads_json",
    "parse_json_ids",
    "resolve_pattern",
    "train_counts",
    "train_files",
    "write_atomically",
    "write_dataset",
]
