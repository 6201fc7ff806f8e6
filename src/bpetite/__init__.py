"""bpetite: a deterministic byte-level BPE tokenizer in pure Python.

This is the public API. Read :mod:`bpetite.reference` first: the whole algorithm, naive
and short; everything here computes exactly what it does, faster. The error family is
:mod:`bpetite.errors`; corpora larger than memory are :mod:`bpetite.corpus`, pictures
and reports :mod:`bpetite.visualize`, other formats :mod:`bpetite.interop`.

``import bpetite`` loads nothing but this file: each name loads its module when first
used (the model with ``Tokenizer``, the built-in vocabularies with ``get_encoding``, the
corpus tier with its functions), so a script pays only for what it uses, and the
command line has its signal handlers in place before any of bpetite's modules load.

>>> from bpetite import Tokenizer
>>> tokenizer = Tokenizer.train("ab ab ab", vocab_size=258)
>>> tokenizer.encode("ab<|endoftext|>ab")
[256, 258, 256]
"""

from importlib import import_module

#: typing's own flag, spelled out so that this file imports nothing at all: type
#: checkers treat the name as true, Python as false.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from bpetite.core._builtin import get_encoding, list_encoding_names
    from bpetite.core._decoder import StreamDecoder
    from bpetite.core._errors import ArtifactError, BpetiteError
    from bpetite.core._model_names import encoding_for_model, encoding_name_for_model
    from bpetite.core._patterns import PRESETS, SplitPattern
    from bpetite.core._pretokenizer import count_chunks
    from bpetite.core._progress import Progress, ProgressCallback
    from bpetite.core._tokenizer import Tokenizer
    from bpetite.corpus._dataset import write_dataset
    from bpetite.corpus._train_files import train_counts, train_files
    from bpetite.visualize._eval import evaluate_compression

    __version__: str

__all__ = [
    "PRESETS",
    "ArtifactError",
    "BpetiteError",
    "Progress",
    "ProgressCallback",
    "SplitPattern",
    "StreamDecoder",
    "Tokenizer",
    "__version__",
    "count_chunks",
    "encoding_for_model",
    "encoding_name_for_model",
    "evaluate_compression",
    "get_encoding",
    "list_encoding_names",
    "train_counts",
    "train_files",
    "write_dataset",
]

#: Where each name lives, loaded on first use (PEP 562): the model, the built-in
#: vocabularies (their tables and checksums), the corpus functions and the compression
#: report, then the names that left this face for their tier's public module (the
#: errors, the dataset and report types), still reachable here, not listed.
_HOMES = {
    "Tokenizer": "bpetite.core._tokenizer",
    "StreamDecoder": "bpetite.core._decoder",
    "SplitPattern": "bpetite.core._patterns",
    "PRESETS": "bpetite.core._patterns",
    "count_chunks": "bpetite.core._pretokenizer",
    "Progress": "bpetite.core._progress",
    "ProgressCallback": "bpetite.core._progress",
    "BpetiteError": "bpetite.core._errors",
    "ArtifactError": "bpetite.core._errors",
    "get_encoding": "bpetite.core._builtin",
    "list_encoding_names": "bpetite.core._builtin",
    "encoding_for_model": "bpetite.core._model_names",
    "encoding_name_for_model": "bpetite.core._model_names",
    "train_files": "bpetite.corpus._train_files",
    "train_counts": "bpetite.corpus._train_files",
    "write_dataset": "bpetite.corpus._dataset",
    "evaluate_compression": "bpetite.visualize._eval",
    "CountsFileError": "bpetite.errors",
    "DisallowedSpecialError": "bpetite.errors",
    "InteropError": "bpetite.errors",
    "InvalidUtf8Error": "bpetite.errors",
    "MissingKeyError": "bpetite.errors",
    "NotATokenError": "bpetite.errors",
    "NotARegularFileError": "bpetite.errors",
    "OutputExistsError": "bpetite.errors",
    "ParameterError": "bpetite.errors",
    "PatternError": "bpetite.errors",
    "UnknownTokenError": "bpetite.errors",
    "TokenIdTypeError": "bpetite.errors",
    "WorkerError": "bpetite.errors",
    "Dataset": "bpetite.corpus",
    "DatasetSplit": "bpetite.corpus",
    "CompressionReport": "bpetite.visualize",
    "TextResult": "bpetite.visualize",
}

if not TYPE_CHECKING:  # the type checker sees the imports above, and no other name

    def __getattr__(name: str) -> object:
        """Load a name on first use: Python calls this only for a name not yet here."""
        if name == "__version__":
            value = _package_version()
        elif name in _HOMES:
            value = getattr(import_module(_HOMES[name]), name)
        else:
            raise AttributeError(f"module 'bpetite' has no attribute {name!r}")
        globals()[name] = value  # found once: the next use is a plain lookup
        return value


def __dir__() -> list[str]:
    """The public face only, loaded or not."""
    return sorted(__all__)


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bpetite")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"
