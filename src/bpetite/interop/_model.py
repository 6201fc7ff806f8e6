"""What every format shares: the import result, the exactness checks, error reporting.

Every format here is byte-level BPE, so a vocabulary is 256 single bytes plus tokens
made by merges in rank order; bpetite's own layout (byte ``b`` is id ``b``, merge ``r``
makes id ``256 + r``, ``<|endoftext|>`` comes next) is fixed, and a source whose ids
differ is mapped through :attr:`ImportResult.source_ids`. Anything bpetite cannot
reproduce exactly raises :class:`InteropError` instead of being approximated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import regex

from bpetite import InteropError, ParameterError, PatternError, Tokenizer

#: Byte-level BPE: ids 0..255 are the single bytes.
BASE_VOCAB_SIZE: Final = 256
#: The special token every format here may carry, and bpetite's default one.
END_OF_TEXT_TOKEN: Final = "<|endoftext|>"

ImportFormat = Literal["vocab+merges", "tokenizer.json", "tiktoken"]
IdLayout = Literal["identical", "bytes permuted", "renumbered"]

#: Every substring of a chunk of bpetite's pre-tokenizer, and nothing that spans two
#: chunks: an optional space then one class of letters, numbers or other symbols, a
#: whitespace run, or a piece of a contraction such as ``'l`` (of ``'ll``). Hand-derived
#: from ``PRETOKENIZER_PATTERN``; the tests check it against the pre-tokenizer.
_FITS_IN_A_CHUNK: Final = regex.compile(
    r"(?: ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+|'(?:[sdmt]|ll?|ve?|re?))"
)


def show_token(token: bytes) -> str:
    """A token for an error message: its text in JSON quotes, or its bytes in hex."""
    try:
        return json.dumps(token.decode("utf-8"), ensure_ascii=False)
    except UnicodeDecodeError:
        return f"<bytes {token.hex(' ')}>"


@dataclass(frozen=True, slots=True)
class ImportResult:
    """A bpetite tokenizer built from another format, and how its ids relate to the source's.

    bpetite's ids follow its own layout, so they can differ from the source's:
    ``source_ids[i]`` is the id the source gives bpetite's token ``i``. For GPT-2 only
    the single bytes differ (see :func:`gpt2_byte_permutation`). A source without
    ``<|endoftext|>`` (a ``.tiktoken`` file lists none) gets it at the first id after
    its largest, which for GPT-2 is tiktoken's 50256.
    """

    tokenizer: Tokenizer
    format: ImportFormat
    source_ids: tuple[int, ...]
    _bpetite_ids: dict[int, int] = field(init=False, repr=False, compare=False)

    @property
    def id_layout(self) -> IdLayout:
        """``identical``, ``bytes permuted`` (only ids 0..255 differ: GPT-2) or ``renumbered``."""
        source_ids = self.source_ids
        if any(source_ids[i] != i for i in range(BASE_VOCAB_SIZE, len(source_ids))):
            return "renumbered"
        if source_ids[:BASE_VOCAB_SIZE] == tuple(range(BASE_VOCAB_SIZE)):
            return "identical"
        return "bytes permuted"

    def __post_init__(self) -> None:
        # Built once: a GPT-2 import maps 50,257 ids, too many to rebuild per call.
        reverse = {source: index for index, source in enumerate(self.source_ids)}
        object.__setattr__(self, "_bpetite_ids", reverse)

    def to_source_ids(self, ids: Iterable[int]) -> list[int]:
        """bpetite ids -> the source's ids for the same tokens (KeyError for an unknown id)."""
        table = self.source_ids
        size = len(table)
        result = []
        for i in ids:
            if type(i) is not int or not 0 <= i < size:
                raise KeyError(f"{i!r} is not one of bpetite's ids")
            result.append(table[i])
        return result

    def from_source_ids(self, ids: Iterable[int]) -> list[int]:
        """The source's ids -> bpetite's ids (KeyError for an id bpetite does not know)."""
        mine = self._bpetite_ids
        try:
            return [mine[i] for i in ids]
        except KeyError as error:
            raise KeyError(f"{error.args[0]!r} is not one of the source's ids") from None


def check_distinct_bytes(tokenizer: Tokenizer, target: str) -> None:
    """Refuse two tokens with the same bytes: `target` maps bytes (or their text) to one id."""
    seen: dict[bytes, int] = {}
    for token_id, token in tokenizer.vocab.items():
        first = seen.setdefault(token, token_id)
        if first != token_id:
            raise InteropError(
                f"tokens {first} and {token_id} have the same bytes {show_token(token)}; "
                f"{target} gives every distinct token text one id, so it cannot hold both"
            )


def first_token_not_encoding_to_itself(tokenizer: Tokenizer) -> tuple[int, list[int]] | None:
    """The first merged token whose bytes bpetite does not encode as that token, and their ids.

    Trained vocabularies never have one: a merge is learned from a chunk the earlier
    merges had built into exactly its two halves, and encoding replays those merges.
    """
    encode_chunk = tokenizer.encode_chunk
    vocab = tokenizer.vocab
    for token_id in range(BASE_VOCAB_SIZE, tokenizer.mergeable_vocab_size):
        ids = encode_chunk(vocab[token_id])
        if ids != [token_id]:
            return token_id, ids
    return None


def first_token_outside_chunks(tokens: Iterable[bytes]) -> bytes | None:
    """The first token no text can produce because bpetite's pre-tokenizer splits it.

    A merge never crosses a chunk boundary, so a token such as ``".\\n"`` or
    ``"(self"`` (tiktoken's cl100k_base has both) marks a vocabulary made for another
    pattern. Only tokens that are whole UTF-8 text are judged; a token holding part of
    a character is left alone.
    """
    fits = _FITS_IN_A_CHUNK.fullmatch
    for token in tokens:
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not fits(text):
            return token
    return None


def build_import(
    source_format: ImportFormat,
    byte_ids: Sequence[int],
    merges: Sequence[tuple[bytes, bytes, int]],
    specials: Mapping[str, int],
    spell: Callable[[bytes], str],
    *,
    pattern: str = "gpt2",
    pattern_known: bool,
) -> ImportResult:
    """Build bpetite's tokenizer from a byte-level BPE vocabulary, or explain why not.

    `byte_ids[b]` is the source's id for byte ``b``; `merges` lists, in rank order, the
    left and right halves of each merged token and the source's id for it;
    `specials` maps each special token to the source's id for it; a source without any
    gets ``<|endoftext|>`` at the first id after its largest. bpetite gives the specials
    the ids after its merges, in the source's id order. `pattern` is the split pattern's
    preset name. `spell` writes
    a token the way the source file does, for error messages. Unless the source has
    been checked to split text with bpetite's pattern (`pattern_known`), a token no
    text could produce under that pattern is taken as proof it was made for another.
    """
    token_ids = {bytes((byte,)): byte for byte in range(BASE_VOCAB_SIZE)}
    pairs: list[tuple[int, int]] = []
    for rank, (left, right, _) in enumerate(merges):
        halves = []
        for half in (left, right):
            half_id = token_ids.get(half)
            if half_id is None:
                raise InteropError(
                    f"merge {rank} ({spell(left)} + {spell(right)}) uses {spell(half)}, which "
                    "is neither a byte nor made by an earlier merge; bpetite needs every "
                    "merge to build on earlier tokens"
                )
            halves.append(half_id)
        new_id = BASE_VOCAB_SIZE + rank
        previous = token_ids.setdefault(left + right, new_id)
        if previous != new_id:
            raise InteropError(
                f"merge {rank} ({spell(left)} + {spell(right)}) makes {spell(left + right)}, "
                f"which bpetite's token {previous} already is; a token reachable by two "
                "merges cannot be represented"
            )
        pairs.append((halves[0], halves[1]))

    outside = None
    if not pattern_known:
        outside = first_token_outside_chunks(left + right for left, right, _ in merges)
    if outside is not None:
        raise InteropError(
            f"token {spell(outside)} spans two chunks of bpetite's pre-tokenizer (GPT-2's "
            "pattern), so no text could produce it: the vocabulary was made for another "
            "pattern, which these files do not record, and bpetite cannot reproduce it"
        )

    source_ids = [*byte_ids, *(source_id for _, _, source_id in merges)]
    if not specials:
        specials = {END_OF_TEXT_TOKEN: max(source_ids) + 1}
    ordered = sorted(specials.items(), key=lambda item: item[1])
    source_ids += [source_id for _, source_id in ordered]
    if len(set(source_ids)) != len(source_ids):
        seen: dict[int, int] = {}
        for token_id, source_id in enumerate(source_ids):
            first = seen.setdefault(source_id, token_id)
            if first != token_id:
                raise InteropError(
                    f"the source gives id {source_id} to two tokens (bpetite's {first} and "
                    f"{token_id}); bpetite cannot represent a vocabulary with shared ids"
                )
    if len(byte_ids) != BASE_VOCAB_SIZE:  # pragma: no cover - callers always pass 256
        raise InteropError(f"expected ids for {BASE_VOCAB_SIZE} bytes, got {len(byte_ids)}")
    try:
        tokenizer = Tokenizer(pairs, pattern=pattern, special_tokens=[text for text, _ in ordered])
    except (ParameterError, PatternError) as error:
        raise InteropError(f"the source cannot be a bpetite tokenizer: {error}") from None
    return ImportResult(tokenizer, source_format, tuple(source_ids))
