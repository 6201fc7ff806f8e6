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
