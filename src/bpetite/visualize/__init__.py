r"""Seeing tokens: display pieces, the plain and HTML renderings, vocabulary statistics.

What ``bpetite show`` and ``bpetite inspect`` draw, as functions of a tokenizer's ids
and vocabulary, with no terminal library: a token becomes a :class:`TokenPiece` (its
id, bytes, and a visible label, hex for part of a character), rendered as ``|``-joined
plain text or a self-contained HTML page; and BPE at work, step by step: an
:class:`Explanation` of an encode (:meth:`bpetite.Tokenizer.explain`) or of a training
run (:func:`explain_train`), printed or stepped through as a page; and the
:class:`CompressionReport` (one :class:`TextResult` per text) that
:func:`bpetite.evaluate_compression` returns. docs/visualize.md shows them.

>>> from bpetite import Tokenizer
>>> from bpetite.visualize import render_plain, token_pieces
>>> tokenizer = Tokenizer.train("ab ab ab", vocab_size=258)
>>> ids = tokenizer.encode("ab ab")
>>> render_plain(token_pieces(ids, tokenizer.vocab, set(tokenizer.special_tokens.values())))
'ab|·ab\n'
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bpetite.visualize._eval import CompressionReport, TextResult
    from bpetite.visualize._explain import (
        MAX_TRAIN_BYTES,
        MAX_TRAIN_VOCAB,
        Explanation,
        explain_encode,
        explain_train,
    )
    from bpetite.visualize._explain_page import MergeRow
    from bpetite.visualize._html import (
        PALETTE,
        PARTIAL_BACKGROUNDS,
        SPECIAL_BACKGROUNDS,
        TokenPiece,
        make_piece,
        partial_label,
        render_html,
        render_snippet,
        summarize,
        token_pieces,
        visible,
    )
    from bpetite.visualize._render import corpus_stats, render_plain, vocabulary_stats

__all__ = [
    "MAX_TRAIN_BYTES",
    "MAX_TRAIN_VOCAB",
    "PALETTE",
    "PARTIAL_BACKGROUNDS",
    "SPECIAL_BACKGROUNDS",
    "CompressionReport",
    "Explanation",
    "MergeRow",
    "TextResult",
    "TokenPiece",
    "corpus_stats",
    "explain_encode",
    "explain_train",
    "make_piece",
    "partial_label",
    "render_html",
    "render_plain",
    "render_snippet",
    "summarize",
    "token_pieces",
    "visible",
    "vocabulary_stats",
]

#: The module of this package each name lives in, imported on first use (PEP 562): a
#: notebook's tokenizer view loads the pieces and the page, not the explanations' pages.
_HOMES = {
    "MAX_TRAIN_BYTES": "bpetite.visualize._explain",
    "MAX_TRAIN_VOCAB": "bpetite.visualize._explain",
    "PALETTE": "bpetite.visualize._html",
    "PARTIAL_BACKGROUNDS": "bpetite.visualize._html",
    "SPECIAL_BACKGROUNDS": "bpetite.visualize._html",
    "CompressionReport": "bpetite.visualize._eval",
    "Explanation": "bpetite.visualize._explain",
    "MergeRow": "bpetite.visualize._explain_page",
    "TextResult": "bpetite.visualize._eval",
    "TokenPiece": "bpetite.visualize._html",
    "corpus_stats": "bpetite.visualize._render",
    "explain_encode": "bpetite.visualize._explain",
    "explain_train": "bpetite.visualize._explain",
    "make_piece": "bpetite.visualize._html",
    "partial_label": "bpetite.visualize._html",
    "render_html": "bpetite.visualize._html",
    "render_plain": "bpetite.visualize._render",
    "render_snippet": "bpetite.visualize._html",
    "summarize": "bpetite.visualize._html",
    "token_pieces": "bpetite.visualize._html",
    "visible": "bpetite.visualize._html",
    "vocabulary_stats": "bpetite.visualize._render",
}

if not TYPE_CHECKING:  # the type checker sees the imports above

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'bpetite.visualize' has no attribute {name!r}")
        value = getattr(import_module(home), name)
        globals()[name] = value  # found once: the next use is a plain lookup
        return value


def __dir__() -> list[str]:
    return sorted(__all__)
