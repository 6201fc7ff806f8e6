"""bpetite: a deterministic byte-level BPE tokenizer in pure Python.

This is the public API. Read :mod:`bpetite.reference` first: the whole algorithm, naive
and short; everything here computes exactly what it does, faster. The error family is
:mod:`bpetite.errors`; corpora larger than memory are :mod:`bpetite.corpus`, pictures
and reports :mod:`bpetite.visualize`, other formats :mod:`bpetite.interop`.

``import bpetite`` loads the model and nothing else: the corpus functions, the
compression report and ``__version__`` load when first used.

>>> from bpetite import Tokenizer
>>> tokenizer = Tokenizer.train("ab ab ab", vocab_size=258)
>>> tokenizer.encode("ab<|endoftext|>ab")
[256, 258, 256]
"""

from typing import TYPE_CHECKING

from bpetite.core._builtin import get_encoding, list_encoding_names
from bpetite.core._decoder import StreamDecoder
from bpetite.core._errors import ArtifactError, BpetiteError
from bpetite.core._patterns import PRESETS, SplitPattern
from bpetite.core._pretokenizer import count_chunks
from bpetite.core._progress import Progress, ProgressCallback
from bpetite.core._tokenizer import Tokenizer

if TYPE_CHECKING:
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
    "evaluate_compression",
    "get_encoding",
    "list_encoding_names",
    "train_counts",
    "train_files",
    "write_dataset",
]

#: The errors that were on this face before :mod:`bpetite.errors` became their home, with
#: ``Dataset`` and ``DatasetSplit`` (now :mod:`bpetite.corpus`'s) and ``CompressionReport``
#: and ``TextResult`` (:mod:`bpetite.visualize`'s): still reachable here, no longer listed.
_MOVED_ERRORS = frozenset(
    {
        "CountsFileError",
        "DisallowedSpecialError",
        "InteropError",
        "InvalidUtf8Error",
        "MissingKeyError",
        "NotATokenError",
        "OutputExistsError",
        "ParameterError",
        "PatternError",
        "UnknownTokenError",
        "WorkerError",
    }
)

if not TYPE_CHECKING:  # the type checker sees the imports above, and no other name

    def __getattr__(name: str) -> object:
        """Load a name on first use (PEP 562): Python calls this only for a missing name."""
        value = _package_version() if name == "__version__" else getattr(_home(name), name)
        globals()[name] = value  # found once: the next use is a plain lookup
        return value

    def _home(name: str) -> object:
        """The module that defines or gathers `name`, imported now."""
        if name in ("train_files", "train_counts"):
            from bpetite.corpus import _train_files as home
        elif name == "write_dataset":
            from bpetite.corpus import _dataset as home
        elif name == "evaluate_compression":
            from bpetite.visualize import _eval as home
        elif name in _MOVED_ERRORS:
            from bpetite import errors as home
        elif name in ("Dataset", "DatasetSplit"):
            from bpetite import corpus as home
        elif name in ("CompressionReport", "TextResult"):
            from bpetite import visualize as home
        else:
            raise AttributeError(f"module 'bpetite' has no attribute {name!r}")
        return home


def __dir__() -> list[str]:
    """The public face only, loaded or not."""
    return sorted(__all__)


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bpetite")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"
