"""Vocabulary surgery: a tokenizer's model edited while every other id stays the same.

Three edits, each taking a :class:`~bpetite.core._model.Model` and returning a new one,
checked by :func:`~bpetite.core._model.define` like any other (``Tokenizer``'s methods
of the same names build the tokenizer, so this module need not import one):

* :func:`with_special_tokens` (:func:`edit_specials`): add, move or drop special
  tokens; an id may not be a mergeable token's or another special's, and no edit may
  free an id the mergeable ids skip (that would renumber the tokens after it).
* :func:`truncated` (:func:`truncated_specials`): the first `n` mergeable tokens, the
  specials kept where they are or moved to follow the merges.
* :func:`extended` (:func:`extend_merges`): more merges learned on a corpus as the model
  splits it: each chunk encoded with the existing merges, then the trainer's greedy
  loop from there, the new merges taking the next ids no special token holds (or, with
  `renumber`, the specials moved after them). In indices it must equal
  ``bpetite.reference.extend``.

Training a model to ``m`` and extending it to ``n`` learns what training to ``n`` learns:
encoding a chunk with the first merges leaves it as training had left it after them, so
the pair counts and the tie-break continue from the same state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence, Set

from bpetite.core._constants import BASE_VOCAB_SIZE, MAX_TOKEN_ID
from bpetite.core._errors import ParameterError
from bpetite.core._ids import mergeable_ids, skipped_ids
from bpetite.core._model import (
    TRAINING_LEAST_BECAUSE,
    TRAINING_OPTIONS,
    IndexedMerges,
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
    specials = edit_specials(model.special_tokens, tokens, drop, vocab, model.mergeable_ids)
    return define(
        IndexedMerges(model.indexed),  # every mergeable id stays: edit_specials checked it
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
        IndexedMerges(model.indexed[: size - BASE_VOCAB_SIZE]),  # a prefix keeps the rule
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
        token_lengths=list(map(len, map(vocab.__getitem__, model.mergeable_ids))),
        encode_chunk=encode_chunk,
        renumber=renumber,
        progress=progress,
        max_token_bytes=options["max_token_bytes"],
        min_frequency=options["min_frequency"],
    )
    merges = IndexedMerges(model.indexed + tuple(new_merges))  # the trainer's continue them
    specials = dict(model.special_tokens)
    if renumber:
        specials = following(specials, BASE_VOCAB_SIZE + len(merges))
    # Without `renumber` the new merges take the next ids no special token holds, and
    # every existing id stays.
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
    ids: Sequence[int],
) -> dict[str, int]:
    """The special tokens after dropping `drop`, then setting `tokens`, ordered by id.

    `tokens` maps a text to its id (a new special, or an existing one moved), or lists
    texts: each not yet special takes the next free id, one past the largest id in use
    (a mergeable token's or a special's). `ids` are the mergeable tokens' ids and
    `vocab` their bytes, to name the token an id would collide with. An id the
    mergeable ids skip must stay a special's: freed, it would renumber the tokens after it.
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
        if text in specials and text not in table:
            raise ParameterError(f"drop names {text!r} twice")
        if text not in table:
            raise ParameterError(
                f"cannot drop {text!r}: it is not a special token of this tokenizer "
                f"(its special tokens: {', '.join(map(repr, specials)) or 'none'})"
            )
        del table[text]
    held = set(ids)
    if isinstance(tokens, Mapping):
        wanted = {_checked_text(text): token_id for text, token_id in tokens.items()}
        for text, token_id in wanted.items():
            _check_special_id(text, token_id, vocab, held)
    else:
        texts = [_checked_text(text) for text in tokens]
        repeated = sorted(text for text, times in Counter(texts).items() if times > 1)
        if repeated:
            raise ParameterError(f"special token {repeated[0]!r} is given twice")
        next_id = max([ids[-1] + 1, *(token_id + 1 for token_id in table.values())])
        wanted = {}
        for text in texts:
            if text not in table:
                wanted[text] = next_id
                next_id += 1
        if next_id - 1 > MAX_TOKEN_ID:
            raise ParameterError(f"special token ids may not pass {MAX_TOKEN_ID} (32-bit ids)")
    for text in wanted:
        table.pop(text, None)  # a moved special leaves its old id
    owners = {token_id: text for text, token_id in reversed(table.items())}  # the first
    for text, token_id in wanted.items():
        other = owners.setdefault(token_id, text)
        if other != text:
            first, second = (other, text)
            raise ParameterError(
                f"special token {second!r} cannot take id {token_id}: special token "
                f"{first!r} has it (drop or move {first!r} in the same call)"
            )
    table.update(wanted)
    count = len(ids)
    if list(mergeable_ids(count, skipped_ids(count, table.values()))) != list(ids):
        freed = min(set(skipped_ids(count, specials.values())) - set(table.values()))
        texts = [text for text, token_id in specials.items() if token_id == freed]
        raise ParameterError(
            f"special token {texts[0]!r} holds id {freed}, among the mergeable tokens' ids; "
            f"dropping or moving it would free that id and renumber every mergeable token "
            f"after it: give id {freed} to another special token in the same call"
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
    """The specials moved to the ids right after `size` mergeable tokens, in id order;
    texts that share an id still share one.

    >>> following({"<|b|>": 900, "<|a|>": 700, "<|c|>": 900}, 258)
    {'<|a|>': 258, '<|b|>': 259, '<|c|>': 259}
    """
    moved = {old: size + index for index, old in enumerate(sorted(set(specials.values())))}
    ordered = sorted(specials.items(), key=lambda item: item[1])  # stable: the first stays
    return {text: moved[token_id] for text, token_id in ordered}


def extend_merges(
    chunk_counts: Mapping[bytes, int],
    vocab_size: int,
    *,
    token_lengths: Sequence[int],
    encode_chunk: Callable[[bytes], list[int]],
    renumber: bool,
    progress: ProgressCallback | None,
    max_token_bytes: int | None,
    min_frequency: int | None,
) -> list[Merge]:
    """The new merges, in indices, learned on `chunk_counts` as `encode_chunk` splits each
    chunk (into indices); `token_lengths` gives each existing token's length, by index.

    Checked before any work: `vocab_size` is at least the current mergeable size.
    """
    size = len(token_lengths)
    check_vocab_size(vocab_size)  # past MAX_VOCAB_SIZE: as far as pairs go (train_merges)
    _check_flag(renumber)
    if vocab_size < size:
        raise ParameterError(
            f"vocab_size must be at least the mergeable vocabulary size {size} (an extension "
            f"keeps every merge; to drop merges use truncated()), got {vocab_size}"
        )
    words: dict[str, int] = {}
    for chunk, count in chunk_counts.items():
        # one character per token index, as the trainer keeps its words
        word = "".join(map(chr, encode_chunk(chunk)))
        words[word] = words.get(word, 0) + count
    return train_merges(
        words,
        vocab_size,
        progress,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
        token_lengths=token_lengths,
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
    text: str, token_id: object, vocab: Mapping[int, bytes], held: Set[int]
) -> None:
    """A special's new id: an int no mergeable token holds (`held`), within 0..MAX_TOKEN_ID."""
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"special token {text!r} needs an int id, got {token_id!r}")
    if token_id < 0 or token_id > MAX_TOKEN_ID:
        raise ParameterError(
            f"special token {text!r} cannot take id {token_id}: ids run from 0 to {MAX_TOKEN_ID}"
        )
    if token_id in held:
        raise ParameterError(
            f"special token {text!r} cannot take id {token_id}: that is the mergeable token "
            f"{vocab[token_id]!r} (a special's id must be one no mergeable token holds)"
        )


def _check_flag(renumber: object) -> None:
    if not isinstance(renumber, bool):
        raise TypeError(f"{RENUMBER} must be True or False, got {renumber!r}")
