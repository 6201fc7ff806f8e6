"""bpetite's error family: every error it raises on purpose, one class per case.

Each class is a :class:`BpetiteError` and also the builtin the specification names for
its case, so ``except ValueError`` or ``except KeyError`` written against the spec keeps
working while ``except BpetiteError`` catches exactly bpetite's own failures. The two
most caught, :class:`BpetiteError` and :class:`ArtifactError` (``Tokenizer.load`` of a
corrupt file), are also ``bpetite.BpetiteError`` and ``bpetite.ArtifactError``.

>>> from bpetite import Tokenizer
>>> from bpetite.errors import ParameterError
>>> try:
...     Tokenizer.train("abc", vocab_size=100)
... except ParameterError as error:
...     print(error)
vocab_size must be at least 256 (one token per byte), got 100
"""

from bpetite.core._errors import (
    ArtifactError,
    BpetiteError,
    CountsFileError,
    DisallowedSpecialError,
    InteropError,
    InvalidUtf8Error,
    MissingKeyError,
    NotARegularFileError,
    NotATokenError,
    OutputDirectoryMissingError,
    OutputExistsError,
    OutputIsADirectoryError,
    OutputParentNotADirectoryError,
    ParameterError,
    PatternError,
    TokenIdTypeError,
    UnknownModelError,
    UnknownTokenError,
    WorkerError,
)

__all__ = [
    "ArtifactError",
    "BpetiteError",
    "CountsFileError",
    "DisallowedSpecialError",
    "InteropError",
    "InvalidUtf8Error",
    "MissingKeyError",
    "NotARegularFileError",
    "NotATokenError",
    "OutputDirectoryMissingError",
    "OutputExistsError",
    "OutputIsADirectoryError",
    "OutputParentNotADirectoryError",
    "ParameterError",
    "PatternError",
    "TokenIdTypeError",
    "UnknownModelError",
    "UnknownTokenError",
    "WorkerError",
]
