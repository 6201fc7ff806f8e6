"""Explanations: every decision BPE makes on a text or a corpus, to read, print or step through.

An :class:`Explanation` holds the steps of :mod:`bpetite.reference` (``trace_encode``'s
:class:`~bpetite.reference.EncodeStep` or ``trace_train``'s
:class:`~bpetite.reference.TrainStep`), so what it shows is the definition itself, and
the tests prove it equal to the fast encoder and trainer. On top of the steps it keeps
what a reader wants to see at once: a table of the merges in the order they apply (one
:class:`MergeRow` each), and the text as a tree of merges, which the page
(:mod:`bpetite.visualize._explain_page`) re-colours at each step. In a notebook an
explanation shows itself as that page (``_repr_html_``).

It sits above the core, which holds the model only: :meth:`bpetite.Tokenizer.explain`
reaches :func:`explain_encode` by name when called (the import rules test lists it).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Final, Literal

from bpetite.core._atomic import write_atomically
from bpetite.core._constants import BASE_VOCAB_SIZE, BYTE_TOKENS, PRETOKENIZER_PATTERN
from bpetite.core._errors import ParameterError
from bpetite.visualize._explain_page import Kind, MergeRow, PageNode, render_fragment, render_page
from bpetite.visualize._html import plural, token_label

if TYPE_CHECKING:
    # The reference is imported where it is used, so ``import bpetite`` does not load it.
    from bpetite.core._patterns import SplitPattern
    from bpetite.reference import EncodeStep, ModelLike, Pair, TrainStep

#: The largest corpus :func:`explain_train` accepts, in UTF-8 bytes: its trace keeps
#: every merge's runners-up, which is a learner's tool for small corpora, not a trainer.
MAX_TRAIN_BYTES: Final = 1 << 20

#: The largest vocabulary :func:`explain_train` learns: 3,840 merges, a table a person
#: can still step through (and a page that stays under a megabyte).
MAX_TRAIN_VOCAB: Final = 4096

#: How much of a training corpus the page re-colours at every step (its first chunks up
#: to this many bytes): enough to watch words form, small enough to open instantly.
SAMPLE_BYTES: Final = 1500

#: How much of an encoded text the page draws (its first chunks up to this many bytes);
#: the table, the chart and the printed steps always cover the whole text.
PAGE_TEXT_BYTES: Final = 20_000


@dataclass(frozen=True, slots=True)
class Explanation:
    """Every step of one encode or one training run, from :mod:`bpetite.reference`.

    `steps` are the reference's steps; `rows` the merges in the order they apply;
    `ids` the encode's result (empty for training); `text` the text encoded, or for
    training the sample the page re-colours; `total_bytes` and `start_tokens` the size
    of the text (or corpus) in bytes and in tokens before any merge. ``str()`` gives the
    steps as plain text; :meth:`to_html` the page to step through.
    """

    kind: Kind
    steps: tuple[EncodeStep, ...] | tuple[TrainStep, ...]
    rows: tuple[MergeRow, ...]
    ids: tuple[int, ...]
    text: str
    total_bytes: int
    start_tokens: int
    pattern: str = PRETOKENIZER_PATTERN
    title: str = ""

    def __str__(self) -> str:
        from bpetite.reference import render_trace

        lines = [self.summary()]
        if self.steps:
            lines.append(render_trace(self.steps))
        if self.kind == "encode":
            lines.append(f"ids: {list(self.ids)}")
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: what was explained, its size, and what the merges did to it."""
        after = self.rows[-1].tokens_after if self.rows else self.start_tokens
        what = "text" if self.kind == "encode" else "corpus"
        return (
            f"{self.kind}: {plural(len(self.rows), 'merge')} on a {what} of "
            f"{plural(self.total_bytes, 'byte')}, {self.start_tokens} tokens before, "
            f"{after} after"
        )

    def to_html(self) -> str:
        """The page to step through: one self-contained HTML document, no script.

        A radio button per step (keyboard: the arrow keys step), the text re-coloured
        at each step, the merge table beside it and a chart of tokens per byte against
        the vocabulary size. The content-security policy is ``show --html``'s.
        """
        return render_page(**self._page_parts())

    def _repr_html_(self) -> str:
        """Jupyter's hook: the page's body, one ``<div>`` with its own scoped styles."""
        return render_fragment(**self._page_parts())

    def _page_parts(self) -> dict[str, Any]:
        chunks = self._page_chunks()
        return {
            "kind": self.kind,
            "title": self.title,
            "rows": self.rows,
            "chunks": chunks,
            "total_bytes": self.total_bytes,
            "start_tokens": self.start_tokens,
            "shown_bytes": sum(len(node.data) for chunk in chunks for node in chunk),
        }

    def save_html(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write :meth:`to_html` to `path` atomically (no partial file, ever)."""
        write_atomically(path, self.to_html().encode("utf-8"), overwrite=overwrite)

    def _page_chunks(self) -> list[list[PageNode]]:
        """The text as trees: per chunk, its tokens after the last step, each a tree of merges."""
        from bpetite.reference import EncodeStep

        if self.kind == "train":
            row_of = {row.pair: row for row in self.rows}
            return [_merge_tree(chunk.encode("utf-8"), row_of) for chunk in _sample_chunks(self)]
        step_of_rank = {row.rank: row.step for row in self.rows}
        budget = PAGE_TEXT_BYTES
        chunks: list[list[PageNode]] = []
        nodes: list[PageNode] = []
        for step in self.steps:
            assert isinstance(step, EncodeStep)  # an encode keeps EncodeSteps
            if step.rank is None:  # a new chunk (or a special token) starts
                if len(step.chunk) > budget:
                    break
                budget -= len(step.chunk)
                nodes = [
                    PageNode(i, data, 0, special=step.special)
                    for i, data in zip(step.tokens, step.pieces, strict=True)
                ]
                chunks.append(nodes)
            else:
                assert step.pair is not None and step.new_id is not None
                nodes[:] = _merge_nodes(nodes, step.pair, step.new_id, step_of_rank[step.rank])
        return chunks


def explain_encode(
    tokenizer: ModelLike,
    text: str,
    *,
    allowed_special: Literal["all"] | Collection[str] = "all",
    title: str = "",
) -> Explanation:
    """Every step of encoding `text`: per chunk, its bytes, then each merge in rank order.

    `tokenizer` is anything :mod:`bpetite.reference` reads (a :class:`~bpetite.Tokenizer`
    or a :class:`~bpetite.reference.Model`). The ids are the last tokens of each chunk,
    which are ``tokenizer.encode(text, allowed_special=...)``'s.
    """
    from bpetite.reference import trace_encode

    if not isinstance(text, str):
        raise TypeError(f"explain() takes a str, got {type(text).__name__}")
    specials = dict(tokenizer.special_tokens or {})
    if allowed_special != "all":
        unknown = sorted(set(allowed_special) - set(specials))
        if unknown:
            raise ParameterError(
                f"allowed_special names {unknown[0]!r}, which is not a special token of this "
                f"tokenizer (its special tokens: {sorted(specials)})"
            )
    steps = trace_encode(tokenizer, text, allowed_special=allowed_special)
    # A merge joins two tokens the step before it shows, so the steps hold every part's
    # bytes: no table of the whole vocabulary (200,000 tokens for o200k_base) is built.
    table = {
        token: piece
        for step in steps
        for token, piece in zip(step.tokens, step.pieces, strict=True)
    }
    ids: list[int] = []
    applied: dict[int, int] = {}  # rank -> how many times it merged a pair of the text
    made: dict[int, int] = {}  # rank -> the id it makes
    start_tokens = 0
    before = 0
    for index, step in enumerate(steps):
        if step.rank is None:
            start_tokens += len(step.tokens)
        else:
            assert step.new_id is not None  # a merge's step
            applied[step.rank] = applied.get(step.rank, 0) + before - len(step.tokens)
            made[step.rank] = step.new_id
        before = len(step.tokens)
        if index + 1 == len(steps) or steps[index + 1].rank is None:
            ids += step.tokens  # the chunk's last step holds its ids
    rows: list[MergeRow] = []
    tokens = start_tokens
    for number, rank in enumerate(sorted(applied), start=1):
        pair = tokenizer.merges[rank]
        tokens -= applied[rank]
        parts = (table[pair[0]], table[pair[1]])
        token = parts[0] + parts[1]
        rows.append(MergeRow(number, rank, pair, made[rank], parts, token, applied[rank], tokens))
    return Explanation(
        kind="encode",
        steps=tuple(steps),
        rows=tuple(rows),
        ids=tuple(ids),
        text=text,
        total_bytes=len(text.encode("utf-8")),
        start_tokens=start_tokens,
        pattern=tokenizer.pattern,
        title=title,
    )


def explain_train(
    text: str,
    vocab_size: int,
    *,
    pattern: str | SplitPattern = "gpt2",
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
    title: str = "",
) -> Explanation:
    """Every merge training makes on `text`: its count, runners-up, tie-break, new token.

    `pattern` is what :meth:`bpetite.Tokenizer.train` takes: a preset's name, a regex, or
    a :class:`~bpetite.SplitPattern`; one that leaves text unmatched raises PatternError.

    For small corpora: at most :data:`MAX_TRAIN_BYTES` bytes of text and a
    `vocab_size` of at most :data:`MAX_TRAIN_VOCAB`; beyond that it raises
    :class:`~bpetite.ParameterError` (train with :meth:`bpetite.Tokenizer.train`). The
    merges are ``Tokenizer.train(text, vocab_size, ...)``'s, and the page re-colours the
    corpus's first chunks, up to :data:`SAMPLE_BYTES` bytes.
    """
    from bpetite.core._patterns import resolve_pattern
    from bpetite.core._pretokenizer import count_chunks
    from bpetite.visualize._trace import trace_train_counts

    if not isinstance(text, str):
        raise TypeError(f"explain_train() takes a str, got {type(text).__name__}")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an integer, got {vocab_size!r}")
    if not BASE_VOCAB_SIZE <= vocab_size <= MAX_TRAIN_VOCAB:
        raise ParameterError(
            f"vocab_size must be between {BASE_VOCAB_SIZE} and {MAX_TRAIN_VOCAB} to explain "
            f"a training run, got {vocab_size}: train larger vocabularies with "
            "Tokenizer.train (bpetite train)"
        )
    size = len(text.encode("utf-8"))
    if size > MAX_TRAIN_BYTES:
        raise ParameterError(
            f"the corpus has {size:,} bytes; explaining a training run takes at most "
            f"{MAX_TRAIN_BYTES:,} (1 MiB): explain a sample of it, or train with "
            "Tokenizer.train (bpetite train)"
        )
    # reference.trace_train's steps, from the trace that recounts only what a merge touches
    split = resolve_pattern(pattern)  # a preset by its name, as train takes it
    chunk_counts = count_chunks([text], pattern=split)  # train's own split and checks
    steps = trace_train_counts(
        chunk_counts, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    tokens: dict[int, bytes] = dict(enumerate(BYTE_TOKENS))
    rows: list[MergeRow] = []
    for step in steps:
        tokens[step.new_id] = step.token
        parts = (tokens[step.pair[0]], tokens[step.pair[1]])
        rows.append(
            MergeRow(
                step.rank + 1,
                step.rank,
                step.pair,
                step.new_id,
                parts,
                step.token,
                step.count,
                step.total_tokens,
                _note(step, tokens),
            )
        )
    return Explanation(
        kind="train",
        steps=tuple(steps),
        rows=tuple(rows),
        ids=(),
        text=_sample(text, split.source),
        total_bytes=size,
        start_tokens=size,
        pattern=split.source,
        title=title,
    )


def _note(step: TrainStep, tokens: Mapping[int, bytes]) -> str:
    """How the winner beat the rest: the tie-break, or the next pairs and their counts.

    ``tie at 1 with c+a (99, 97): (97, 98) is the smaller pair``, or
    ``next: t+h 20,530; h+e 16,351; ·+a 12,001``.
    """

    def named(pair: Pair) -> str:
        return f"{token_label(tokens[pair[0]])}+{token_label(tokens[pair[1]])}"

    if step.tied:
        others = ", ".join(f"{named(pair)} {pair}" for pair in step.tied[:3])
        more = f" and {len(step.tied) - 3:,} more" if len(step.tied) > 3 else ""
        return f"tie at {step.count:,} with {others}{more}: {step.pair} is the smaller pair"
    if step.runners_up:
        return "next: " + "; ".join(f"{named(pair)} {n:,}" for pair, n in step.runners_up)
    return "the only pair left"


def _sample(text: str, pattern: str) -> str:
    """The corpus's first chunks, up to SAMPLE_BYTES bytes (at least one chunk if any)."""
    from bpetite.reference import split

    head = _prefix(text, SAMPLE_BYTES * 2)
    chunks = split(head, pattern)
    if head != text and len(chunks) > 1:
        chunks.pop()  # the last chunk of a cut text may be cut too
    kept: list[str] = []
    size = 0
    for chunk in chunks:
        size += len(chunk.encode("utf-8"))
        if size > SAMPLE_BYTES and kept:
            break
        kept.append(chunk)
    return "".join(kept)


def _sample_chunks(explanation: Explanation) -> list[str]:
    from bpetite.reference import split

    return split(explanation.text, explanation.pattern)


def _prefix(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-8 bytes."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def _merge_tree(chunk: bytes, row_of: dict[Pair, MergeRow]) -> list[PageNode]:
    """A chunk's tokens after every merge, each a tree: the encode loop, keeping who merged."""
    nodes = [PageNode(byte, bytes([byte]), 0) for byte in chunk]
    while True:
        found = [
            row_of[pair] for a, b in pairwise(nodes) if (pair := (a.token_id, b.token_id)) in row_of
        ]
        if not found:
            return nodes
        row = min(found, key=lambda row: row.step)
        nodes = _merge_nodes(nodes, row.pair, row.new_id, row.step)


def _merge_nodes(nodes: Sequence[PageNode], pair: Pair, new_id: int, step: int) -> list[PageNode]:
    """``reference.merge`` on nodes: each occurrence of `pair`, left to right, becomes one node."""
    result: list[PageNode] = []
    i = 0
    while i < len(nodes):
        if i + 1 < len(nodes) and (nodes[i].token_id, nodes[i + 1].token_id) == pair:
            left, right = nodes[i], nodes[i + 1]
            result.append(PageNode(new_id, left.data + right.data, step, (left, right)))
            i += 2
        else:
            result.append(nodes[i])
            i += 1
    return result
