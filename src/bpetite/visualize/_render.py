"""Token ids made visible: the plain-text rendering and vocabulary statistics.

Everything here is pure and UI-free (no ``rich``, no I/O) so the same pieces feed the
terminal renderer in ``bpetite.cli.commands._show``, the standalone HTML page and the tests.
The display pieces and the HTML page are :mod:`bpetite.visualize._html`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bpetite.core._constants import BASE_VOCAB_SIZE
from bpetite.core._errors import ParameterError
from bpetite.visualize._html import TokenPiece, hex_bytes, token_text

# --------------------------------------------------------------------------- plain text


def escape_plain(label: str) -> str:
    """Escape the separator and the escape character: ``a|b\\c -> a\\|b\\\\c``."""
    return label.replace("\\", "\\\\").replace("|", "\\|")


def render_plain(pieces: Sequence[TokenPiece], *, show_ids: bool = False) -> str:
    """Tokens separated by ``|``, for pipes and files where colours are not available.

    ``Hello|·world|!`` (with `show_ids`: ``Hello[15496]|·world[995]|![0]``). A ``|`` or
    ``\\`` inside a token is escaped with ``\\``, so the output can be split back into
    tokens unambiguously; real line breaks follow the ``↵`` of newline tokens and are
    layout only. The result always ends with a newline.
    """
    out: list[str] = []
    last = len(pieces) - 1
    for index, piece in enumerate(pieces):
        out.append(escape_plain(piece.label))
        if show_ids:
            out.append(f"[{piece.token_id}]")
        if index != last:
            out.append("|")
        out.append("\n" * piece.line_breaks)
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


# --------------------------------------------------------------------------- statistics


def describe_token(token_id: int, data: bytes) -> dict[str, Any]:
    """``{"id": 300, "length": 4, "text": " the", "hex": "20 74 68 65"}``.

    `text` is the exact decoded string, or None when the token is part of a character.
    """
    return {"id": token_id, "length": len(data), "text": token_text(data), "hex": hex_bytes(data)}


def vocabulary_stats(
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[int, int]],
    special_tokens: Mapping[str, int],
    *,
    top: int = 10,
) -> dict[str, Any]:
    """Statistics of a tokenizer's vocabulary as a JSON-ready dict.

    The histogram covers the mergeable tokens (the 256 bytes and every merge, not the
    special token) and lists only lengths that occur, so a pathological vocabulary with
    one 100,000-byte token stays small. Longest tokens tie-break on the lower id, the
    earlier merge.
    """
    if top < 0:
        raise ParameterError(f"top must be at least 0, got {top}")
    special_ids = set(special_tokens.values())
    mergeable = {i: data for i, data in vocab.items() if i not in special_ids}
    lengths = Counter(len(data) for data in mergeable.values())
    longest = sorted(mergeable.items(), key=lambda item: (-len(item[1]), item[0]))[:top]
    ranked = list(enumerate(merges))
    ids = sorted(mergeable)  # by index: merge r makes ids[256 + r] (a special may sit among)
    return {
        "mergeable_vocab_size": len(mergeable),
        "merges": len(merges),
        "special_tokens": dict(special_tokens),
        "token_length_histogram": [
            {"length": length, "tokens": lengths[length]} for length in sorted(lengths)
        ],
        "longest_tokens": [describe_token(i, data) for i, data in longest],
        "first_merges": [_describe_merge(rank, pair, vocab, ids) for rank, pair in ranked[:top]],
        "last_merges": [
            _describe_merge(rank, pair, vocab, ids)
            for rank, pair in ranked[max(len(ranked) - top, 0) :]
        ],
    }


def _describe_merge(
    rank: int, pair: tuple[int, int], vocab: Mapping[int, bytes], ids: Sequence[int]
) -> dict[str, Any]:
    """``{"rank": 0, "pair": [97, 98], "token": {"id": 256, "text": "ab", ...}}``."""
    token_id = ids[BASE_VOCAB_SIZE + rank]
    return {"rank": rank, "pair": list(pair), "token": describe_token(token_id, vocab[token_id])}


def corpus_stats(
    token_ids: Sequence[int],
    vocab: Mapping[int, bytes],
    special_tokens: Mapping[str, int],
    *,
    top: int = 10,
) -> dict[str, Any]:
    """How a tokenizer spends its vocabulary on one encoded corpus, as a JSON-ready dict.

    ``vocabulary_used_share`` counts distinct mergeable ids that occur at least once,
    over the mergeable vocabulary: merged tokens that only ever serve as stepping stones
    to longer ones (and bytes that never occur in UTF-8, like 0xff) are the unused rest.
    """
    if top < 0:
        raise ParameterError(f"top must be at least 0, got {top}")
    special_ids = set(special_tokens.values())
    mergeable_size = sum(1 for i in vocab if i not in special_ids)
    counts = Counter(token_ids)
    total_bytes = sum(len(vocab[i]) * n for i, n in counts.items())
    tokens = len(token_ids)
    used = sum(1 for i in counts if i not in special_ids)
    frequent = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
    return {
        "bytes": total_bytes,
        "tokens": tokens,
        "tokens_per_byte": tokens / total_bytes if total_bytes else None,
        "bytes_per_token": total_bytes / tokens if tokens else None,
        "distinct_tokens_used": used,
        "vocabulary_used_share": used / mergeable_size if mergeable_size else None,
        "special_tokens_seen": sum(counts[i] for i in special_ids),
        "most_frequent_tokens": [
            {**describe_token(i, vocab[i]), "count": n, "share": n / tokens} for i, n in frequent
        ],
    }
