"""Split text into the chunks that BPE merges never cross.

The chunks must equal ``bpetite.reference.split``'s; the split itself is
:meth:`SplitPattern.split` (see ``_patterns``).

Every stage receives the same :class:`SplitPattern` (training, encoding, streaming,
counting), so they see identical boundaries; :data:`PRETOKENIZER` is the default
(GPT-2's) pattern compiled once, for code that knows it needs that one.
"""

from collections import Counter
from collections.abc import Iterable

from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._regex import Pattern

#: The spec's GPT-2 pattern, compiled once; the default everywhere.
PRETOKENIZER: Pattern = resolve_pattern("gpt2").compiled


def pretokenize(text: str, *, pattern: str | SplitPattern = "gpt2") -> list[bytes]:
    """Return the UTF-8 chunks of `text` in source order; joined, they are `text` again.

    >>> pretokenize("Hello world!!")
    [b'Hello', b' world', b'!!']
    >>> pretokenize("x.\\n/y", pattern="o200k")
    [b'x', b'.\\n/', b'y']
    """
    return [chunk.encode("utf-8") for chunk in resolve_pattern(pattern).split(text)]


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
