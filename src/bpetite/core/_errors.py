"""bpetite's one error family, and how its messages show a value.

Every error bpetite raises on purpose is a :class:`BpetiteError`, and each subclass
also inherits the builtin the specification names for its case, so ``except
ValueError`` or ``except KeyError`` written against the spec keeps working while
``except BpetiteError`` catches exactly bpetite's own failures. A message quotes paths
and values whole (:func:`shown`); only a pathological one is elided, saying how much.
"""

from __future__ import annotations

import errno
import os


class BpetiteError(Exception):
    """The base of every error bpetite raises on purpose.

    ``str(error)`` is the message itself, also for the ``KeyError`` subclasses, whose
    builtin ``str`` would wrap it in quotes.
    """

    def __str__(self) -> str:
        if len(self.args) == 1:
            return str(self.args[0])
        return super().__str__()


class ArtifactError(BpetiteError, ValueError):
    """An artifact (or another bpetite JSON document) is corrupt or hand-edited."""


class MissingKeyError(ArtifactError, KeyError):
    """A required key is missing from an artifact: the spec's ``KeyError`` case."""


class CountsFileError(ArtifactError):
    """A chunk-counts file is malformed."""


class UnknownTokenError(BpetiteError, KeyError):
    """A token id is not in the vocabulary (``decode``, ``token_bytes``)."""


class TokenIdTypeError(UnknownTokenError, TypeError):
    """A token id that is not an integer (a float, a string, a bool).

    A ``TypeError``, as tiktoken and Python raise for a value of the wrong type, and an
    :class:`UnknownTokenError` (a ``KeyError``), as the specification's decoder raises
    for any value that is not an id of the vocabulary.
    """


class NotATokenError(BpetiteError, KeyError):
    """Bytes or text that are not exactly one token (``encode_single_token``)."""


class UnknownModelError(BpetiteError, KeyError):
    """A model name no built-in vocabulary is known for (``encoding_for_model``): a
    ``KeyError``, as tiktoken raises."""


class _RefusedOutput(BpetiteError, OSError):
    """A destination refused before anything is written. `filename` is the path as
    given; `strerror` says what is wrong there, so a caller can put its own words
    ("cannot write --output ...") before it."""

    #: The errno of the builtin OSError subclass each refusal also is.
    code = errno.EINVAL

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        super().__init__(self.code, problem, path)

    def __str__(self) -> str:
        return f"cannot write '{self.filename}': {self.strerror}"

    def __reduce__(self) -> tuple[type[_RefusedOutput], tuple[object, object]]:
        return (type(self), (self.filename, self.strerror))


class NotARegularFileError(_RefusedOutput):
    """A destination is something other than a regular file (a FIFO, a device, a socket,
    a link to nothing): publishing there would replace that node, so it is refused."""


class OutputIsADirectoryError(_RefusedOutput, IsADirectoryError):
    """A destination is a directory, or a path ending in a separator (which names one)."""

    code = errno.EISDIR


class OutputDirectoryMissingError(_RefusedOutput, FileNotFoundError):
    """A destination's directory does not exist (bpetite creates no directories)."""

    code = errno.ENOENT


class OutputParentNotADirectoryError(_RefusedOutput, NotADirectoryError):
    """A destination's parent exists but is not a directory (a file)."""

    code = errno.ENOTDIR


class InvalidUtf8Error(BpetiteError, ValueError):
    """A file's bytes are not UTF-8; names the file and the offset of the first bad byte."""

    def __init__(self, source: str, offset: int, byte: int, reason: str) -> None:
        super().__init__(
            f"{source}: invalid UTF-8 at byte offset {offset} (byte 0x{byte:02x}: {reason})"
        )
        self.source = source
        self.offset = offset
        self.byte = byte
        self.reason = reason

    def __reduce__(self) -> tuple[type[InvalidUtf8Error], tuple[str, int, int, str]]:
        # Worker processes send this error to the parent: rebuild it from its fields.
        return (type(self), (self.source, self.offset, self.byte, self.reason))


class InteropError(BpetiteError, ValueError):
    """A foreign vocabulary cannot be imported, or a model cannot be exported, exactly."""


class OutputExistsError(BpetiteError, FileExistsError):
    """A destination file exists and replacing it was not allowed."""


class WorkerError(BpetiteError, RuntimeError):
    """A worker process died (killed, out of memory) before it finished its work."""


class PatternError(BpetiteError, ValueError):
    """A split pattern cannot be used: unknown preset, invalid, or one that drops text."""


class DisallowedSpecialError(BpetiteError, ValueError):
    """The text holds a special token that the encode call did not allow."""


class ParameterError(BpetiteError, ValueError):
    """An argument has the right type but a value bpetite cannot use (``vocab_size=100``)."""


# The classes are public as ``bpetite.errors.X``; tracebacks should say so.
for _error in (
    BpetiteError,
    ArtifactError,
    MissingKeyError,
    CountsFileError,
    UnknownTokenError,
    TokenIdTypeError,
    NotATokenError,
    UnknownModelError,
    InvalidUtf8Error,
    InteropError,
    OutputExistsError,
    OutputIsADirectoryError,
    OutputDirectoryMissingError,
    OutputParentNotADirectoryError,
    NotARegularFileError,
    WorkerError,
    PatternError,
    DisallowedSpecialError,
    ParameterError,
):
    _error.__module__ = "bpetite.errors"


#: A value a message quotes is shown whole up to this many characters: PATH_MAX, the
#: longest path the operating system takes, so every real path and name fits. Only a
#: pathological value (megabytes of text, a huge structure) is longer.
SHOWN_CHARS = 4096
#: What a longer value keeps of its start and of its end around the elision.
_ELIDED_HEAD, _ELIDED_TAIL = 160, 80


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` whole up to `limit` characters; else its start and end and how much is left out.

    ``shown("x" * 10_000)`` -> ``"xxx…[9760 characters elided]…xxx"`` (160 + 80 kept).
    """
    if len(text) <= limit:
        return text
    head = min(_ELIDED_HEAD, limit * 2 // 3)
    tail = min(_ELIDED_TAIL, limit // 3)
    left_out = len(text) - head - tail
    return f"{text[:head]}…[{left_out} characters elided]…{text[len(text) - tail :]}"
