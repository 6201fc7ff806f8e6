"""Split text into the chunks that BPE merges never cross.

The pattern is compiled once at import; every stage uses :func:`pretokenize` or the
compiled :data:`PRETOKENIZER` so training and encoding see identical boundaries.
"""

from collections import Counter
from collections.abc import Iterable

import regex

from bpetite._constants import PRETOKENIZER_PATTERN

PRETOKENIZER: regex.Pattern[str] = regex.compile(PRETOKENIZER_PATTERN)


def pretokenize(text: str) -> list[bytes]:
    """Return the UTF-8 chunks of `text` in source order; joined, they are `text` again.

    >>> pretokenize("Hello world!!")
    [b'Hello', b' world', b'!!']
    """
    return [chunk.encode("utf-8") for chunk in PRETOKENIZER.findall(text)]


def count_chunks(texts: Iterable[str]) -> Counter[bytes]:
    """Count the distinct chunks of several texts; chunks never span two texts.

    Counting the `str` chunks first and encoding each distinct one once is much faster
    than encoding every occurrence: a corpus repeats its words many times.
    """
    str_counts: Counter[str] = Counter()
    for text in texts:
        str_counts.update(PRETOKENIZER.findall(text))
    return Counter({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})


def require_utf8(text: str, what: str) -> None:
    """Raise a clear UnicodeEncodeError if `text` holds a lone surrogate, naming its position.

    Such a `str` is not valid Unicode; encoding it would fail half-way through with a
    message about a codec, or (with errors="surrogatepass") give bytes that are not UTF-8.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise UnicodeEncodeError(
            "utf-8",
            text,
            error.start,
            error.end,
            f"{what} has a lone surrogate {text[error.start]!r} at position {error.start}, "
            "which is not valid Unicode and cannot be encoded as UTF-8",
        ) from None
