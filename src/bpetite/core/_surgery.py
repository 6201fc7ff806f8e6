"""Vocabulary surgery: a tokenizer's model edited while every other id stays the same.

Three edits, each taking a :class:`~bpetite.core._model.Model` and returning a new one,
checked by :func:`~bpetite.core._model.define` like any other (``Tokenizer``'s methods
of the same names build the tokenizer, so this module need not import one):

* :func:`with_special_tokens` (:func:`edit_specials`): add, move or drop special
  tokens; an id may not be a mergeable token's or another special's.
* :func:`truncated` (:func:`truncated_specials`): the first `n` mergeable tokens, the
  specials kept where they are or moved to follow the merges.
* :func:`extended` (:func:`extend_merges`): more merges learned on a corpus as the model
  splits it: each chunk encoded with the existing merges, then the trainer's greedy
  loop from there, the new ids following the old ones. Must equal
  ``bpetite.reference.extend``.

Training a model to ``m`` and extending it to ``n`` learns what training to ``n`` learns:
encoding a chunk with the first merges leaves it as training had left it after them, so
the pair counts and the tie-break continue from the same state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from bpetite.core._constants import BASE_VOCAB_SIZE, MAX_TOKEN_ID, MAX_VOCAB_SIZE
from bpetite.core._errors import ParameterError
from bpetite.core._model import (
    TRAINING_LEAST_BECAUSE,
    TRAINING_OPTIONS,
    Merge,
    Model,
    define,
)
from bpetite.core._pretokenizer import require_utf8
from bpetite.core._progress import ProgressCallback
from bpetite.core._trainer import check_limit, check_vocab_size, train_merges

#: The keyword that lets an edit move the special tokens, named by every refusal.
RENUMBER: str = "renumber_specials"


def with_special_tokens(
    model: Model,
    tokens: Mapping[str, int] | Iterable[str],
    drop: Iterable[str],
    vocab: Mapping[int, bytes],
) -> Model:
    """`model` with its special tokens edited by :func:`edit_specials`; `vocab` is its."""
    specials = edit_specials(model.special_tokens, tokens, drop, vocab, model.mergeable_size)
    return define(
        model.merges,
        pattern=model.pattern,
        special_tokens=specials,
        byte_order=model.byte_order,
        training=model.training,
    )


def truncated(model: Model, size: int, *, renumber: bool) -> Model:
    """`model` cut to its first `size` mergeable tokens (see :func:`truncated_specials`)."""
    specials = truncated_specials(
        model.special_tokens, size, model.mergeable_size, renumber=renumber
    )
    return define(
        model.merges[: size - BASE_VOCAB_SIZE],
        pattern=model.pattern,
        special_tokens=specials,
        byte_order=model.byte_order,
        training=model.training,
    )


def extended(
    model: Model,
    chunk_counts: Mapping[bytes, int],
    vocab_size: int,
    *,
    vocab: Mapping[int, bytes],
    encode_chunk: Callable[[bytes], list[int]],
    renumber: bool,
    progress: ProgressCallback | None,
    max_token_bytes: int | None,
    min_frequency: int | None,
) -> Model:
    """`model` with the merges :func:`extend_merges` learns on `chunk_counts` after its own.

    `vocab` and `encode_chunk` are the model's. An option not given is the one the
    model was trained with, and the result records what :func:`continued_training` says.
    """
    options, record = continued_training(
        model.training, {"max_token_bytes": max_token_bytes, "min_frequency": min_frequency}
    )
    new_merges = extend_merges(
        chunk_counts,
        vocab_size,
        vocab=vocab,
        mergeable_size=model.mergeable_size,
        encode_chunk=encode_chunk,
        specials=model.special_tokens,
        renumber=renumber,
        progress=progress,
        max_token_bytes=options["max_token_bytes"],
        min_frequency=options["min_frequency"],
    )
    merges = model.merges + tuple(new_merges)
    specials = dict(model.special_tokens)
    if renumber:
        specials = following(specials, BASE_VOCAB_SIZE + len(merges))
    return define(
        merges,
        pattern=model.pattern,
        special_tokens=specials,
        byte_order=model.byte_order,
        training=record,
    )


def edit_specials(
    specials: Mapping[str, int],
    tokens: Mapping[str, int] | Iterable[str],
    drop: Iterable[str],
    vocab: Mapping[int, bytes],
    mergeable_size: int,
) -> dict[str, int]:
    """The special tokens after dropping `drop`, then setting `tokens`, ordered by id.

    `tokens` maps a text to its id (a new special, or an existing one moved), or lists
    texts: each not yet special takes the next free id, one past the largest id in use
    (a mergeable token's or a special's). `vocab` gives the bytes of the
    `mergeable_size` mergeable tokens, to name the token an id would collide with.
    """
    if isinstance(tokens, (str, bytes)):
        raise TypeError(
            f"special tokens must be a mapping of text to id or a list of texts, not one "
            f"string: write [{tokens!r}]"
        )
    if isinstance(drop, (str, bytes)):
        raise TypeError(f"drop must be a collection of texts, not one string: write [{drop!r}]")
    table = dict(specials)
    for text in drop:
        if text not in table:
            raise ParameterError(
                f"cannot drop {text!r}: it is not a special token of this tokenizer "
                f"(its special tokens: {', '.join(map(repr, specials)) or 'none'})"
            )
        del table[text]
    if isinstance(tokens, Mapping):
        wanted = {_checked_text(text): token_id for text, token_id in tokens.items()}
        for text, token_id in wanted.items():
            _check_special_id(text, token_id, vocab, mergeable_size)
    else:
        texts = [_checked_text(text) for text in tokens]
        repeated = sorted({text for text in texts if texts.count(text) > 1})
        if repeated:
            raise ParameterError(f"special token {repeated[0]!r} is given twice")
        next_id = max([mergeable_size, *(token_id + 1 for token_id in table.values())])
        wanted = {}
        for text in texts:
            if text not in table:
                wanted[text] = next_id
                next_id += 1
        if next_id - 1 > MAX_TOKEN_ID:
            raise ParameterError(f"special token ids may not pass {MAX_TOKEN_ID} (32-bit ids)")
    table.update(wanted)
    owners: dict[int, str] = {}
    for text, token_id in table.items():
        other = owners.setdefault(token_id, text)
        if other != text:
            first, second = (other, text) if text in wanted else (text, other)
            raise ParameterError(
                f"special token {second!r} cannot take id {token_id}: special token "
                f"{first!r} has it (drop or move {first!r} in the same call)"
            )
    return dict(sorted(table.items(), key=lambda item: item[1]))


def truncated_specials(
    specials: Mapping[str, int], size: int, mergeable_size: int, *, renumber: bool
) -> dict[str, int]:
    """The specials of a model cut to `size` mergeable tokens: kept, or following the merges.

    Kept ids stay valid, since they were at or past the old, larger mergeable size.
    """
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"vocab_size must be an integer, got {size!r}")
    if not BASE_VOCAB_SIZE <= size <= mergeable_size:
        raise ParameterError(
            f"vocab_size must be from {BASE_VOCAB_SIZE} to the mergeable vocabulary size "
            f"{mergeable_size} (a truncation keeps a prefix of the merges; to add merges "
            f"use extended()), got {size}"
        )
    _check_flag(renumber)
    return following(specials, size) if renumber else dict(specials)


def following(specials: Mapping[str, int], size: int) -> dict[str, int]:
    """The specials moved to the ids right after `size` mergeable tokens, in id order.

    >>> following({"<|b|>": 900, "<|a|>": 700}, 258)
    {'<|a|>': 258, '<|b|>': 259}
    """
    ordered = sorted(specials, key=specials.__getitem__)
    return {text: size + index for index, text in enumerate(ordered)}


def extend_merges(
    chunk_counts: Mapping[bytes, int],
    vocab_size: int,
    *,
    vocab: Mapping[int, bytes],
    mergeable_size: int,
    encode_chunk: Callable[[bytes], list[int]],
    specials: Mapping[str, int],
    renumber: bool,
    progress: ProgressCallback | None,
    max_token_bytes: int | None,
    min_frequency: int | None,
) -> list[Merge]:
    """The new merges learned on `chunk_counts` as `encode_chunk` splits each chunk.

    Checked before any work: `vocab_size` is at least the current mergeable size, and
    no special token holds an id a new merge could take unless `renumber` moves them.
    """
    size = mergeable_size
    check_vocab_size(vocab_size)
    if vocab_size > MAX_VOCAB_SIZE:
        raise ParameterError(
            f"vocab_size must be at most {MAX_VOCAB_SIZE:,} (token ids are stored as "
            f"characters while training), got {vocab_size:,}"
        )
    _check_flag(renumber)
    if vocab_size < size:
        raise ParameterError(
            f"vocab_size must be at least the mergeable vocabulary size {size} (an extension "
            f"keeps every merge; to drop merges use truncated()), got {vocab_size}"
        )
    in_the_way = sorted((token_id, text) for text, token_id in specials.items())
    if not renumber and in_the_way and in_the_way[0][0] < vocab_size:
        token_id, text = in_the_way[0]
        raise ParameterError(
            f"vocab_size {vocab_size} would give new merges the ids {size}..{vocab_size - 1}, "
            f"but special token {text!r} has id {token_id}: pass {RENUMBER}=True to move the "
            f"special tokens after the new merges, or a vocab_size of at most {token_id}"
        )
    words: dict[str, int] = {}
    for chunk, count in chunk_counts.items():
        # one character per token id, as the trainer keeps its words
        word = "".join(map(chr, encode_chunk(chunk)))
        words[word] = words.get(word, 0) + count
    return train_merges(
        words,
        vocab_size,
        progress,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
        token_lengths=[len(vocab[token_id]) for token_id in range(size)],
    )


def continued_training(
    recorded: Mapping[str, int], given: Mapping[str, int | None]
) -> tuple[dict[str, int | None], dict[str, int]]:
    """The options an extension trains with, and the record its result keeps.

    An option not given is the model's recorded one: the extension continues training
    as it was done. The result records an option only when every merge, old and new,
    was learned under it: the model recorded it, and the extension used the same value.
    """
    used: dict[str, int | None] = {}
    for name, value in given.items():
        least = TRAINING_OPTIONS[name]
        checked = check_limit(name, value, least, TRAINING_LEAST_BECAUSE[name])
        used[name] = recorded.get(name) if checked is None else checked
    record = {
        name: value
        for name, value in used.items()
        if value is not None and recorded.get(name) == value
    }
    return used, record


def _checked_text(text: object) -> str:
    if not isinstance(text, str) or not text:
        raise ParameterError(f"a special token must be a non-empty str, got {text!r}")
    require_utf8(text, "special token")
    return text


def _check_special_id(
    text: str, token_id: object, vocab: Mapping[int, bytes], mergeable_size: int
) -> None:
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"special token {text!r} needs an int id, got {token_id!r}")
    if token_id < 0 or token_id > MAX_TOKEN_ID:
        raise ParameterError(
            f"special token {text!r} cannot take id {token_id}: ids run from 0 to {MAX_TOKEN_ID}"
        )
    if token_id < mergeable_size:
        raise ParameterError(
            f"special token {text!r} cannot take id {token_id}: that is the mergeable token "
            f"{vocab[token_id]!r} (a special's id must be at or after {mergeable_size})"
        )


def _check_flag(renumber: object) -> None:
    if not isinstance(renumber, bool):
        raise TypeError(f"{RENUMBER} must be True or False, got {renumber!r}")
