"""The public Tokenizer: a merge list plus the vocabulary and encoder derived from it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bpetite import _persistence
from bpetite._constants import BASE_VOCAB_SIZE, END_OF_TEXT_TOKEN
from bpetite._decoder import decode as _decode
from bpetite._encoder import Encoder
from bpetite._pretokenizer import count_chunks, require_utf8
from bpetite._progress import ProgressCallback
from bpetite._trainer import train_merges


class Tokenizer:
    """A trained byte-level BPE tokenizer.

    Build one with :meth:`train` or :meth:`load`. The merge list is the whole state:
    ids 0..255 are the bytes, merge ``r`` makes id ``256 + r``, and ``<|endoftext|>``
    takes the next id.
    """

    __slots__ = ("_encoder", "_merges", "_special_tokens", "_vocab")

    def __init__(self, merges: Sequence[tuple[int, int]]) -> None:
        """Build from a merge list; prefer :meth:`train` or :meth:`load`.

        Merge ``r`` may only join ids below its own id ``256 + r``, which is what makes
        the vocabulary well defined; anything else raises ValueError.
        """
        self._merges: tuple[tuple[int, int], ...] = _checked_merges(merges)
        vocab = [bytes([byte]) for byte in range(BASE_VOCAB_SIZE)]
        for left, right in self._merges:
            vocab.append(vocab[left] + vocab[right])
        special_id = len(vocab)
        vocab.append(END_OF_TEXT_TOKEN.encode("utf-8"))
        self._vocab: dict[int, bytes] = dict(enumerate(vocab))
        self._special_tokens: dict[str, int] = {END_OF_TEXT_TOKEN: special_id}
        self._encoder = Encoder(self._merges, vocab, special_id)

    @classmethod
    def train(cls, corpus: str, vocab_size: int) -> Tokenizer:
        """Learn up to ``vocab_size - 256`` merges from `corpus` (fewer if it runs out of pairs).

        ``<|endoftext|>`` inside the corpus is ordinary text; the special token is
        reserved after training at the first id past the mergeable vocabulary.
        """
        return cls._train(corpus, vocab_size)

    def encode(self, text: str) -> list[int]:
        """Return the ids of `text`; exact ``<|endoftext|>`` literals map to the special id."""
        return self._encoder.encode(text)

    def decode(self, token_ids: Sequence[int]) -> str:
        """Return the text of `token_ids` (strict UTF-8); unknown ids raise KeyError."""
        return _decode(token_ids, self._vocab)

    def save(self, path: str, overwrite: bool = False) -> None:
        """Write the versioned JSON artifact atomically; an existing file needs `overwrite`."""
        _persistence.save(
            path, self._vocab, self._merges, self._special_tokens, overwrite=overwrite
        )

    @classmethod
    def load(cls, path: str) -> Tokenizer:
        """Read and fully validate an artifact written by any schema-v1 implementation."""
        _, merges, _ = _persistence.load(path)
        return cls(merges)

    # Private helpers used by the CLI and the other bpetite modules.

    @classmethod
    def _train(
        cls, corpus: str, vocab_size: int, progress: ProgressCallback | None = None
    ) -> Tokenizer:
        if not isinstance(corpus, str):
            raise TypeError(f"corpus must be a str, got {type(corpus).__name__}")
        require_utf8(corpus, "corpus")
        return cls._from_chunk_counts(count_chunks([corpus]), vocab_size, progress)

    @classmethod
    def _from_chunk_counts(
        cls,
        chunk_counts: Mapping[bytes, int],
        vocab_size: int,
        progress: ProgressCallback | None = None,
    ) -> Tokenizer:
        return cls(train_merges(chunk_counts, vocab_size, progress))

    def __repr__(self) -> str:
        return f"<Tokenizer mergeable_vocab_size={BASE_VOCAB_SIZE + len(self._merges)}>"


def _checked_merges(merges: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    checked = []
    for rank, merge in enumerate(merges):
        new_id = BASE_VOCAB_SIZE + rank
        if len(merge) != 2 or not all(type(part) is int and 0 <= part < new_id for part in merge):
            raise ValueError(f"merges[{rank}] must be two token ids below {new_id}, got {merge!r}")
        checked.append((merge[0], merge[1]))
    return tuple(checked)
