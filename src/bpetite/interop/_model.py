"""What every format shares: the import result, the exactness checks, error reporting.

Every format here is byte-level BPE, so a vocabulary is 256 single bytes plus tokens
made by merges in rank order. Where the source numbers its merged tokens ``256 + r``
(GPT-2, OpenAI's vocabularies), or skips only its special tokens' ids among them
(p50k_base), the tokenizer speaks the source's ids directly, with a byte order for its
single bytes and the source's special-token ids; anything else is
renumbered into bpetite's layout and mapped through :attr:`ImportResult.source_ids`.
Anything bpetite cannot reproduce exactly raises :class:`InteropError` instead of
being approximated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from bpetite import SplitPattern, Tokenizer
from bpetite._internal import BASE_VOCAB_SIZE, compile_pattern, show_token
from bpetite._internal import merged_ids as free_ids
from bpetite.errors import InteropError, ParameterError, PatternError, UnknownTokenError

ImportFormat = Literal["vocab+merges", "tokenizer.json", "tiktoken"]
IdLayout = Literal["identical", "bytes permuted", "renumbered"]
#: The files an export writes for a peer whose regex engine runs the pattern.
PeerFormat = Literal["tokenizer.json", ".tiktoken"]

#: Every substring of a chunk of bpetite's pre-tokenizer, and nothing that spans two
#: chunks: an optional space then one class of letters, numbers or other symbols, a
#: whitespace run, or a piece of a contraction such as ``'l`` (of ``'ll``). Hand-derived
#: from ``PRETOKENIZER_PATTERN``; the tests check it against the pre-tokenizer.
_FITS_IN_A_CHUNK: Final = compile_pattern(
    r"(?: ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+|'(?:[sdmt]|ll?|ve?|re?))"
)


@dataclass(frozen=True, slots=True)
class ImportResult:
    """A bpetite tokenizer built from another format, and how its ids relate to the source's.

    Wherever the source's ids allow it, the tokenizer speaks them directly: GPT-2's and
    OpenAI's vocabularies number the 256 bytes in their own order and every merged
    token ``256 + r``, which a tokenizer's ``byte_order`` expresses, so ``encode``
    returns the source's ids and `source_ids` is None. Only a source whose merged
    tokens are numbered otherwise is renumbered into bpetite's layout; then
    ``source_ids[i]`` is the source's id of bpetite's token ``i``, and
    :meth:`to_source_ids` / :meth:`from_source_ids` map between the two. `name` is the
    recognised official vocabulary (``cl100k_base``...), if any.
    """

    tokenizer: Tokenizer
    format: ImportFormat
    source_ids: tuple[int, ...] | None = None
    name: str | None = None
    _to_source: dict[int, int] = field(init=False, repr=False, compare=False)
    _from_source: dict[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built once: a GPT-2 import maps 50,257 ids, too many to rebuild per call.
        if self.source_ids is None:
            pairs = {token_id: token_id for token_id in self.tokenizer.vocab}
        else:
            pairs = dict(enumerate(self.source_ids))
        object.__setattr__(self, "_to_source", pairs)
        object.__setattr__(self, "_from_source", {theirs: ours for ours, theirs in pairs.items()})

    @property
    def id_layout(self) -> IdLayout:
        """How the ids relate to bpetite's own layout.

        ``identical``; ``bytes permuted`` (ids 0..255 name the bytes in the source's
        order, as GPT-2's do, and every id is the source's); or ``renumbered``.
        """
        if self.source_ids is not None and any(
            theirs != ours for ours, theirs in enumerate(self.source_ids)
        ):
            return "renumbered"
        if self.tokenizer.byte_order != tuple(range(BASE_VOCAB_SIZE)):
            return "bytes permuted"
        return "identical"

    def to_source_ids(self, ids: Iterable[int]) -> list[int]:
        """bpetite ids -> the source's ids for the same tokens (KeyError for an unknown id)."""
        return _mapped(self._to_source, ids, "bpetite's")

    def from_source_ids(self, ids: Iterable[int]) -> list[int]:
        """The source's ids -> bpetite's ids (KeyError for an id bpetite does not know)."""
        return _mapped(self._from_source, ids, "the source's")


def _mapped(table: dict[int, int], ids: Iterable[int], whose: str) -> list[int]:
    result = []
    for token_id in ids:
        # `type` first: True and 1.0 would find id 1 by hash equality.
        if type(token_id) is not int or token_id not in table:
            raise UnknownTokenError(f"{token_id!r} is not one of {whose} ids")
        result.append(table[token_id])
    return result


def check_distinct_bytes(tokenizer: Tokenizer, target: str) -> None:
    """Refuse two mergeable tokens with the same bytes: `target` maps the bytes (or their
    text) of a mergeable token to one id. A special token is kept apart from them, matched
    by its text before any merging, so it may have a mergeable token's bytes
    (``specials --add hello`` on GPT-2); the peers then give bpetite's ids."""
    seen: dict[bytes, int] = {}
    vocab = tokenizer.vocab
    for token_id in mergeable_ids(tokenizer):
        token = vocab[token_id]
        first = seen.setdefault(token, token_id)
        if first != token_id:
            raise InteropError(
                f"tokens {first} and {token_id} have the same bytes {show_token(token)}; "
                f"{target} gives every distinct token text one id, so it cannot hold both"
            )


def mergeable_ids(tokenizer: Tokenizer) -> list[int]:
    """The mergeable tokens' ids in order: 0 .. mergeable_vocab_size - 1, unless a special
    token holds an id among them (p50k_base's ``<|endoftext|>``), which they skip."""
    special_ids = set(tokenizer.special_tokens.values())
    return [token_id for token_id in sorted(tokenizer.vocab) if token_id not in special_ids]


def first_token_not_encoding_to_itself(tokenizer: Tokenizer) -> tuple[int, list[int]] | None:
    """The first merged token whose bytes bpetite does not encode as that token, and their ids.

    Trained vocabularies never have one: a merge is learned from a chunk the earlier
    merges had built into exactly its two halves, and encoding replays those merges.
    """
    encode_chunk = tokenizer.encode_chunk
    vocab = tokenizer.vocab
    for token_id in mergeable_ids(tokenizer)[BASE_VOCAB_SIZE:]:
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


def refuse_another_pattern(
    tokens: Iterable[bytes],
    spell: Callable[[bytes], str],
    source: str,
    *,
    known: tuple[str, str] | None = None,
) -> None:
    """Raise InteropError if a token spans two chunks of GPT-2's pattern: proof that the
    vocabulary was made for another pattern (see :func:`first_token_outside_chunks`).

    `known` is the recognised official vocabulary's name and preset, for a file given
    special tokens without a pattern: then the message names the pattern to give.
    """
    outside = first_token_outside_chunks(tokens)
    if outside is None:
        return
    problem = (
        f"{source}: token {spell(outside)} spans two chunks of bpetite's pre-tokenizer "
        "(GPT-2's pattern), so no text could produce it"
    )
    if known is not None:
        name, preset = known
        raise InteropError(
            f"{problem}: the file is OpenAI's {name}, made for the {preset} pattern, and "
            "GPT-2's is assumed when special tokens are given without a pattern; give "
            f"its pattern too (pattern={preset!r}, bpetite import --pattern {preset})"
        )
    raise InteropError(
        f"{problem}: the vocabulary was made for another pattern, which vocabulary + "
        ".tiktoken files do not record; for a .tiktoken file, give the pattern it was "
        "made for (bpetite import --pattern or --pattern-regex)"
    )


#: How the caller's special tokens are named in a message: the library's keyword and
#: the CLI's option.
_GIVEN_SPECIALS: Final = "the special_tokens given (bpetite import --special-token)"


#: Inline flags each peer's engine reads as bpetite's ``regex`` does. Oniguruma (Ruby
#: syntax, in ``tokenizers``) has no ``s``, and its ``m`` means what ``s`` means here;
#: Rust's engines (tiktoken) read ``i``, ``m``, ``s`` and ``x`` alike.
_SAME_FLAGS: Final = {"tokenizer.json": frozenset("i"), ".tiktoken": frozenset("imsx")}


#: A POSIX class inside a character class, ``[:alpha:]`` in ``[[:alpha:]]``: tiktoken's
#: engine reads it as ASCII, bpetite's ``regex`` and Oniguruma each by its own Unicode
#: definition (``[:digit:]`` is 0-9 to ``regex``, every decimal digit to Oniguruma).
_POSIX_CLASS: Final = re.compile(r"\[:\^?[A-Za-z]+:\]")


def refuse_unportable_pattern(tokenizer: Tokenizer, target: PeerFormat) -> None:
    r"""Refuse a custom pattern holding a construct the peer's regex engine reads otherwise.

    The presets are proven to split alike; a custom pattern is handed over as written
    and run by the peer's own engine. This refuses what is known to differ or to fail
    there: inline flags the engine lacks or reads otherwise (``(?s)``), ``$`` (here it
    also matches before a final newline; in Oniguruma before every newline, in Rust only
    at the end), ``^`` in Oniguruma (the start of every line), ``\Z``, a POSIX class
    (``[[:alpha:]]``), and ``\X``, which tiktoken's engine does not have. A pattern
    without them can still split some text differently (docs/interop.md says what is
    and is not guaranteed).
    """
    if tokenizer.pattern_name != "custom":
        return
    found = _first_unportable(tokenizer.pattern, target)
    if found is not None:
        raise InteropError(
            f"the custom split pattern {tokenizer.pattern!r} holds {found}, so {target}'s "
            "regex engine would split some text differently or refuse the pattern; only "
            "the presets (gpt2, cl100k, o200k) are proven to split alike everywhere"
        )


def _first_unportable(pattern: str, target: PeerFormat) -> str | None:
    """The first construct of `pattern`, outside classes, that `target` reads otherwise."""
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            escaped = pattern[index + 1 : index + 2]
            if not in_class and escaped == "Z":
                return "\\Z (the end, or a final newline, in other engines)"
            if not in_class and escaped == "X" and target == ".tiktoken":
                return "\\X, which tiktoken's regex engine does not have"
            index += 2
            continue
        if in_class:
            posix = _POSIX_CLASS.match(pattern, index)
            if posix is not None:
                return (
                    f"the POSIX class {posix.group()} (ASCII only to tiktoken's regex engine; "
                    "Unicode, with other members, to bpetite's and to Oniguruma)"
                )
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += 1
            index += pattern.startswith("^", index)
            index += pattern.startswith("]", index)  # a "]" first in a class is literal
            continue
        elif char == "$":
            return "$ (whose meaning differs between regex engines at a newline)"
        elif char == "^" and target == "tokenizer.json":
            return "^ (the start of every line to Hugging Face's engine)"
        elif pattern.startswith("(?", index):
            flags = _inline_flags(pattern, index + 2)
            if flags and not set(flags) <= _SAME_FLAGS[target]:
                return f"the inline flags (?{flags}), which that engine lacks or reads otherwise"
        index += 1
    return None


def _inline_flags(pattern: str, start: int) -> str:
    """The flag letters of an inline flag group ``(?aiL-s)`` or ``(?i:...)`` at `start`."""
    end = start
    while end < len(pattern) and (pattern[end].isalnum() or pattern[end] == "-"):
        end += 1
    if end < len(pattern) and pattern[end] in ":)" and end > start:
        return pattern[start:end].replace("-", "")
    return ""


def build_import(
    source_format: ImportFormat,
    byte_ids: Sequence[int],
    merges: Sequence[tuple[bytes, bytes, int]],
    specials: Mapping[str, int],
    spell: Callable[[bytes], str],
    *,
    source: str,
    merge_at: Callable[[int], str],
    specials_given: bool = False,
    pattern: str | SplitPattern = "gpt2",
    pattern_known: bool,
    name: str | None = None,
) -> ImportResult:
    """Build bpetite's tokenizer from a byte-level BPE vocabulary, or explain why not.

    `byte_ids[b]` is the source's id for byte ``b``; `merges` lists, in rank order, the
    left and right halves of each merged token and the source's id for it;
    `specials` maps each special token to the source's id for it (a source without
    any has none), or, when `specials_given`, the ids the caller gave for a file that
    records none; two of those may share an id (an alias, as tiktoken allows).
    `pattern` is the split pattern the vocabulary was made for. `spell` writes a token
    the way the source file does, and `source` (the file's name) and `merge_at(rank)`
    (``"'vocab.bpe' line 4"``) say where, for error messages. Unless the source has been checked to
    split text with its pattern (`pattern_known`), a token no text could produce under
    GPT-2's pattern is taken as proof it was made for another. `name` names a
    recognised vocabulary.
    """
    if len(byte_ids) != BASE_VOCAB_SIZE:  # pragma: no cover - callers always pass 256
        raise InteropError(f"expected ids for {BASE_VOCAB_SIZE} bytes, got {len(byte_ids)}")
    try:
        split = SplitPattern.resolve(pattern)
    except PatternError as error:
        raise InteropError(f"{source} cannot be a bpetite tokenizer: {error}") from None
    token_ids = {bytes((byte,)): byte for byte in range(BASE_VOCAB_SIZE)}
    find = token_ids.get
    pairs: list[tuple[int, int]] = []
    # The messages are written only on failure: spelling every merge cost most of an import.
    for rank, (left, right, _) in enumerate(merges):
        left_id, right_id = find(left), find(right)
        if left_id is None or right_id is None:
            missing = left if left_id is None else right
            raise InteropError(
                f"{merge_at(rank)}: the merge {spell(left)} + {spell(right)} uses "
                f"{spell(missing)}, which is neither a byte nor made by an earlier merge; "
                "bpetite needs every merge to build on earlier tokens"
            )
        new_id = BASE_VOCAB_SIZE + rank
        previous = token_ids.setdefault(left + right, new_id)
        if previous != new_id:
            raise InteropError(
                f"{merge_at(rank)}: the merge {spell(left)} + {spell(right)} makes "
                f"{spell(left + right)}, which already is the token of the merge at "
                f"{merge_at(previous - BASE_VOCAB_SIZE)}; a token reachable by two merges "
                "cannot be represented"
            )
        pairs.append((left_id, right_id))

    if not pattern_known and split.name == "gpt2":
        refuse_another_pattern((left + right for left, right, _ in merges), spell, source)

    merged_ids = [source_id for _, _, source_id in merges]
    ordered = sorted(specials.items(), key=lambda item: item[1])
    _check_distinct_ids(byte_ids, merges, ordered, spell, source, specials_given)

    if sorted(byte_ids) == list(range(BASE_VOCAB_SIZE)) and merged_ids == list(
        free_ids(len(merges), specials.values())
    ):
        # The source's ids are bpetite's with the bytes in another order, the merged
        # tokens skipping any special id among theirs (p50k_base's): speak them.
        order = sorted(range(BASE_VOCAB_SIZE), key=byte_ids.__getitem__)
        in_source = [*byte_ids]  # bpetite's byte id b -> the source's id of byte b
        index_to_id = [*in_source, *merged_ids]  # pairs index earlier tokens: bytes, merges
        source_pairs = [(index_to_id[left], index_to_id[right]) for left, right in pairs]
        tokenizer = _tokenizer(source_pairs, split, dict(ordered), order, source)
        return ImportResult(tokenizer, source_format, None, name)

    # Anything else is renumbered into bpetite's layout, the specials after the merges,
    # an alias at its first text's id.
    first_free = BASE_VOCAB_SIZE + len(merges)
    renumbered: dict[int, int] = {}
    for _, source_id in ordered:
        renumbered.setdefault(source_id, first_free + len(renumbered))
    tokenizer = _tokenizer(
        pairs,
        split,
        {text: renumbered[source_id] for text, source_id in ordered},
        None,
        source,
    )
    source_ids = [*byte_ids, *merged_ids, *renumbered]
    return ImportResult(tokenizer, source_format, tuple(source_ids), name)


def _tokenizer(
    pairs: Sequence[tuple[int, int]],
    pattern: SplitPattern,
    special_tokens: Mapping[str, int],
    byte_order: Sequence[int] | None,
    source: str,
) -> Tokenizer:
    try:
        return Tokenizer(
            pairs, pattern=pattern, special_tokens=special_tokens, byte_order=byte_order
        )
    except (ParameterError, PatternError) as error:
        raise InteropError(f"{source} cannot be a bpetite tokenizer: {error}") from None


def _check_distinct_ids(
    byte_ids: Sequence[int],
    merges: Sequence[tuple[bytes, bytes, int]],
    specials: Sequence[tuple[str, int]],
    spell: Callable[[bytes], str],
    source: str,
    specials_given: bool,
) -> None:
    """Refuse two tokens with one id, saying whose they are: the file's, or the caller's.

    Two special tokens the caller gave may share an id (tiktoken takes such aliases).
    """

    def token(position: int) -> str:  # the token at `position` of bytes, merges, specials
        if position < BASE_VOCAB_SIZE:
            return f"the byte {spell(bytes((position,)))}"
        if position < BASE_VOCAB_SIZE + len(merges):
            left, right, _ = merges[position - BASE_VOCAB_SIZE]
            return f"the token {spell(left + right)}"
        text = specials[position - BASE_VOCAB_SIZE - len(merges)][0]
        return f"the special token {json.dumps(text, ensure_ascii=False)}"

    ids = [*byte_ids, *(source_id for _, _, source_id in merges)]
    taken = set(ids)
    if len(taken) != len(ids):  # a repeat, rare: found in Python only then, to name it
        owners: dict[int, int] = {}  # id -> the position of its first token
        for position, source_id in enumerate(ids):
            first = owners.setdefault(source_id, position)
            if first != position:
                raise InteropError(
                    f"{source} gives id {source_id} to two tokens, {token(first)} and "
                    f"{token(position)}; bpetite cannot represent a vocabulary with shared ids"
                )
    special_ids: dict[int, int] = {}  # id -> the position of its first special token
    for offset, (text, source_id) in enumerate(specials):
        position = len(ids) + offset
        holder = ids.index(source_id) if source_id in taken else special_ids.get(source_id)
        if holder is None or (specials_given and holder >= len(ids)):
            special_ids.setdefault(source_id, position)  # new, or an alias of one given
        elif specials_given:
            raise InteropError(
                f"{_GIVEN_SPECIALS} give {json.dumps(text, ensure_ascii=False)} the id "
                f"{source_id}, which {source} gives to {token(holder)}; give it an id the "
                "file does not use"
            )
        else:
            raise InteropError(
                f"{source} gives id {source_id} to two tokens, {token(holder)} and "
                f"{token(position)}; bpetite cannot represent a vocabulary with shared ids"
            )
