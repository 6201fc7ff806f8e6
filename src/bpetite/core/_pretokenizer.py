"""Count the chunks of texts (what training learns from), each checked as valid Unicode.

The chunks must equal ``bpetite.reference.split``'s; the split itself is
:meth:`SplitPattern.split` (see ``_patterns``), which every stage receives (training,
encoding, streaming, counting), so they see identical boundaries.
"""

from collections import Counter
from collections.abc import Iterable

from bpetite.core._patterns import SplitPattern, resolve_pattern


def count_chunks(texts: Iterable[str], *, pattern: str | SplitPattern = "gpt2") -> Counter[bytes]:
    """Count the chunks of several texts, each its own document: no chunk spans two.

    The result is what :meth:`Tokenizer.train_from_counts` learns from; counts of
    several batches add up (``Counter`` addition) to the counts of all of them.

    >>> count_chunks(["ab ab", "ab"])
    Counter({b'ab': 2, b' ab': 1})
    """
    if isinstance(texts, str):
        raise TypeError("count_chunks() takes an iterable of texts, not one str: write [text]")
    split = resolve_pattern(pattern).split
    # Counting the `str` chunks first and encoding each distinct one once is much
    # faster than encoding every occurrence: a corpus repeats its words many times.
    str_counts: Counter[str] = Counter()
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"count_chunks() takes texts (str), got {type(text).__name__}")
        require_utf8(text, "text")
        str_counts.update(split(text))
    return Counter({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})


def require_utf8(text: str, what: str) -> None:
    """Raise a clear UnicodeEncodeError if `text` holds a lone surrogate, naming its position.

    Such a `str` is not valid Unicode; encoding it would fail half-way through with a
    message about a codec, or (with errors="surrogatepass") give bytes that are not UTF-8.
    ASCII text cannot hold one, and ``str.isascii`` is a flag lookup: no copy is made.
    """
    if text.isascii():
        return
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
