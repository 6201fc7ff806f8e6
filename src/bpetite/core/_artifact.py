"""Artifact schemas v1 and v2: canonical bytes out, strictly validated state back in.

Schema v1 is the specification's: one JSON object with six keys, for a tokenizer with
GPT-2's pattern and exactly ``<|endoftext|>`` after the merges. Schema v2 adds what
other tokenizers need: the pattern's preset name (or ``custom``) beside its regex, any
special tokens with their ids, and optional keys for an id layout and training
metadata; docs/schema.md describes both. Writing is deterministic (sorted keys,
compact separators, no trailing newline) and picks v1 whenever v1 can describe the
tokenizer, so the spec's artifacts stay byte for byte what they were. Reading walks a
fixed checklist so a corrupt or hand-edited file fails loudly instead of producing a
tokenizer that silently encodes differently; its last step is the model's own check of
its fields (:func:`~bpetite.core._model.define`, the Tokenizer constructor's), so a
file the constructor would refuse fails here, as the file's defect. Nothing in a file
is evaluated, except a custom split pattern, which is a regex and is only compiled when
the caller trusts it.
"""

import contextlib
import json
import operator
import os
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Final, NoReturn

from bpetite.core._constants import (
    BASE_VOCAB_SIZE,
    BYTE_TOKENS,
    END_OF_TEXT_TOKEN,
    MAX_TOKEN_ID,
    PRETOKENIZER_PATTERN,
    SCHEMA_VERSION,
)
from bpetite.core._errors import ArtifactError, MissingKeyError, PatternError, shown
from bpetite.core._gc import gc_paused
from bpetite.core._ids import index_table, mergeable_ids, skipped_ids
from bpetite.core._json import check_max_bytes, loads_json, read_limited, too_big
from bpetite.core._model import (
    IDENTITY_BYTE_ORDER,
    TRAINING_OPTIONS,
    IndexedMerges,
    Merges,
    Model,
    define,
    indexed,
    mergeable_tokens,
    misplaced_id,
)
from bpetite.core._patterns import (
    MAX_CUSTOM_PATTERN_CHARS,
    PRESETS,
    SplitPattern,
    custom_pattern,
    preset_pattern,
    resolve_pattern,
)

#: The largest artifact :func:`load` reads unless told otherwise, and the largest
#: :func:`dumps_artifact` writes: one limit for both, so whatever bpetite writes, it loads
#: with its defaults. An artifact of o200k_base's size (200k tokens) is about 10 MiB, and
#: parsing needs about 30 bytes of memory per byte of file, so the limit bounds a hostile
#: file to about 2 GB.
MAX_ARTIFACT_BYTES: Final = 64 * 1024 * 1024

#: The version a tokenizer v1 cannot describe is written with.
SCHEMA_V2: Final = 2
_REQUIRED_KEYS: Final = frozenset(
    {
        "mergeable_vocab_size",
        "merges",
        "pretokenizer_pattern",
        "schema_version",
        "special_tokens",
        "vocab",
    }
)
_REQUIRED_KEYS_V2: Final = _REQUIRED_KEYS - {"merges", "vocab"} | {"pattern_name"}
#: Optional v2 keys. A new optional key can join v2 without a v3: a reader that does not
#: know it refuses the file (unknown keys are never ignored) instead of misreading it.
#: v2 holds the merges either as ``merges`` (pairs, as v1) or as ``merges_flat`` (one
#: flat list ``[left0, right0, left1, right1, ...]``), exactly one of them; and
#: ``vocab`` is optional, since it follows from the merges, the byte order and the
#: special tokens. This bpetite writes ``merges_flat`` and no ``vocab``, the smallest
#: file and the quickest to check (measurements: docs/design-notes.md#the-compact-artifact).
_OPTIONAL_KEYS_V2: Final = frozenset(
    {"id_layout", "merges", "merges_flat", "special_aliases", "training", "vocab"}
)
_MERGE_KEYS_V2: Final = ("merges", "merges_flat")
#: ``id_layout`` fields: how ids depart from the default layout.
_ID_LAYOUT_FIELDS: Final = frozenset({"byte_order", "special_ids"})
#: ``id_layout.special_ids`` values. ``sparse``: the special ids follow the merges with
#: gaps. ``interleaved``: some special id lies among the mergeable ids, which skip it
#: (p50k_base's ``<|endoftext|>``); a bpetite that knows only ``sparse`` refuses such a
#: file instead of misreading its ids.
SPARSE: Final = "sparse"
INTERLEAVED: Final = "interleaved"
_SPECIAL_BYTES: Final = END_OF_TEXT_TOKEN.encode("utf-8")
_INT_ONLY: Final = frozenset({int})
_LIST_ONLY: Final = frozenset({list})
_TWO_ONLY: Final = frozenset({2})

State = tuple[dict[int, bytes], list[tuple[int, int]], dict[str, int]]


@dataclass(frozen=True, slots=True)
class Artifact:
    """What an artifact holds: a checked model, and the file's ``vocab`` if it has one.

    `stored_vocab` is the file's ``vocab`` (None when it has none: v2 may leave it out);
    :attr:`vocab` is the vocabulary either way. :attr:`special_tokens` is ordered by id.
    """

    stored_vocab: dict[int, bytes] | None
    model: Model

    @property
    def merges(self) -> tuple[tuple[int, int], ...]:
        """The merges in ids, checked with the model's rule."""
        return self.model.merges

    @property
    def special_tokens(self) -> dict[str, int]:
        """Each special token's text and id, ordered by id."""
        return dict(self.model.special_tokens)

    @property
    def pattern(self) -> SplitPattern:
        """The split pattern the merges were learned with."""
        return self.model.pattern

    @property
    def training(self) -> dict[str, int]:
        """The training metadata: the options the merges were learned with, if any."""
        return dict(self.model.training)

    @property
    def byte_order(self) -> tuple[int, ...]:
        """The byte each id 0..255 stands for (an imported vocabulary's order)."""
        return self.model.byte_order

    @property
    def vocab(self) -> dict[int, bytes]:
        """Every id's bytes, the special tokens' included: stored, or built from the merges."""
        if self.stored_vocab is not None:
            return self.stored_vocab
        model = self.model
        tokens = mergeable_tokens(model.indexed, model.byte_order)
        vocab = dict(zip(model.mergeable_ids, tokens, strict=True))
        vocab.update(model.special_bytes())
        return vocab

    @property
    def state(self) -> State:
        """(vocab, merges, special_tokens): everything schema v1 records."""
        return self.vocab, list(self.merges), self.special_tokens

    @property
    def schema_version(self) -> int:
        """1 when schema v1 can describe this artifact (the spec's configuration), else 2."""
        model = self.model
        return schema_version(
            model.merges, model.pattern, model.special_tokens, model.training, model.byte_order
        )


def schema_version(
    merges: Sequence[tuple[int, int]],
    pattern: SplitPattern,
    special_tokens: Mapping[str, int],
    training: Mapping[str, int],
    byte_order: Sequence[int],
) -> int:
    """1 when schema v1 can describe this tokenizer (the spec's configuration), else 2.

    Schema v1 spells out every token's bytes, which for a vocabulary of very long tokens
    (one character repeated for megabytes) makes a file over MAX_ARTIFACT_BYTES; such a
    tokenizer is written in v2's compact form instead, which holds only the merges, so
    that the file still loads with the defaults.
    """
    size = BASE_VOCAB_SIZE + len(merges)
    if (
        pattern.name == "gpt2"
        and dict(special_tokens) == {END_OF_TEXT_TOKEN: size}
        and not training
        and tuple(byte_order) == IDENTITY_BYTE_ORDER
        and v1_size(merges, pattern) <= MAX_ARTIFACT_BYTES
    ):
        return SCHEMA_VERSION
    return SCHEMA_V2


#: Each byte value in decimal, and how many digits that is.
_DECIMAL: Final = tuple(map(str, range(BASE_VOCAB_SIZE)))
_BYTE_DIGITS: Final = tuple(map(len, _DECIMAL))


def v1_size(merges: Sequence[tuple[int, int]], pattern: SplitPattern) -> int:
    """The exact size in bytes of the schema v1 file of `merges` with `pattern`.

    Computed from the merges without writing the file: a token's ``vocab`` entry is its
    id, its byte values in decimal and the punctuation around them, and a merged token's
    byte count and digit count are the sums of its two halves'.
    """
    lengths = [1] * BASE_VOCAB_SIZE
    digits = list(_BYTE_DIGITS)
    for left, right in merges:
        lengths.append(lengths[left] + lengths[right])
        digits.append(digits[left] + digits[right])
    size = BASE_VOCAB_SIZE + len(merges)
    special = END_OF_TEXT_TOKEN.encode("utf-8")
    lengths.append(len(special))
    digits.append(sum(map(_BYTE_DIGITS.__getitem__, special)))
    # '"id":[b,b,b]' for each token, joined by commas, in braces (summed in C, term by term)
    entries = _digits_below(size + 1) + sum(digits) + sum(lengths)
    entries += 4 * (size + 1)
    vocab = entries + size + 2
    # '[l,r]' for each merge, joined by commas, in brackets
    merged = sum(map(len, map(str, chain.from_iterable(merges)))) + 3 * len(merges)
    merged += max(len(merges) - 1, 0) + 2
    rest = {
        "mergeable_vocab_size": size,
        "merges": [],
        "pretokenizer_pattern": pattern.source,
        "schema_version": SCHEMA_VERSION,
        "special_tokens": {END_OF_TEXT_TOKEN: size},
    }
    # "vocab" sorts last, so the file is the rest's object with ',"vocab":{...}' before "}"
    rest_size = len(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode("utf-8"))
    return rest_size - len("[]") + merged + len(',"vocab":') + vocab


def _digits_below(stop: int) -> int:
    """How many decimal digits the numbers 0 to ``stop - 1`` take together, width by width."""
    total, width, start = 0, 1, 0
    while start < stop:
        end = min(stop, 10**width)  # the numbers of `width` digits are start to end - 1
        total += (end - start) * width
        start, width = end, width + 1
    return total


# --------------------------------------------------------------------------- writing

#: The byte tokens' ids as the keys of v1's ``vocab``, in the order sorted keys take
#: ("0", "1", "10", "100", ...), and each one's entry, '"b":[b]': the same in every file.
_BYTE_KEYS: Final = tuple(sorted(_DECIMAL))
_BYTE_ENTRIES: Final = tuple(f'"{key}":[{key}]' for key in _BYTE_KEYS)


def _own_v1_vocab(vocab: Mapping[int, bytes], size: int) -> str:
    """The v1 ``vocab`` object of a model's own vocabulary, as ``json.dumps`` with
    sorted keys writes it: ids 0 to `size` (the special token's), the byte tokens in
    the identity order.

    The byte tokens' entries are written once, at import; each other token's entry goes
    where its key sorts among them. A small model's file is mostly those 256 entries.
    """
    entries: list[str] = []
    done = 0  # the byte entries placed so far
    for key in sorted(map(str, range(BASE_VOCAB_SIZE, size + 1))):
        before = bisect_left(_BYTE_KEYS, key, done)
        entries += _BYTE_ENTRIES[done:before]
        entries.append(f'"{key}":[{",".join(map(_DECIMAL.__getitem__, vocab[int(key)]))}]')
        done = before
    entries += _BYTE_ENTRIES[done:]
    return "{" + ",".join(entries) + "}"


def dumps_artifact(
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[int, int]],
    special_tokens: Mapping[str, int],
    *,
    pattern: str | SplitPattern = "gpt2",
    training: Mapping[str, int] | None = None,
    byte_order: Sequence[int] = IDENTITY_BYTE_ORDER,
    checked: bool = False,
) -> bytes:
    """Return the canonical artifact bytes for a tokenizer state.

    `vocab` (every id's bytes, the special tokens' included) is written by schema v1
    only; v2 leaves it to follow from the rest. Schema v1 when it can describe the state
    (GPT-2's pattern, exactly ``<|endoftext|>`` right after the merges, no training
    metadata), else v2. `merges` are in ids; where a special id lies among the mergeable
    ids, v2 says so in ``id_layout``. A text sharing its id with an earlier one is
    written in ``special_aliases``. `mergeable_vocab_size` is recomputed from `merges` so it cannot
    drift from the list it describes, and `sort_keys` makes the bytes independent of
    the caller's dict order. The result is run through :func:`parse_artifact` before it
    is returned, so no caller can ever write an artifact that :func:`load` would reject
    (ArtifactError naming the defect), unless the state is `checked` already: a model
    that :func:`~bpetite.core._model.define` accepted, whose rules are the ones
    :func:`parse_artifact` ends with, and its own vocabulary (``Tokenizer.dumps``);
    such a vocabulary's v1 entries are spliced among the byte tokens' ready-made ones
    (:func:`_own_v1_vocab`). Measurements: docs/design-notes.md#saving-no-second-parse
    """
    split = resolve_pattern(pattern)
    size = BASE_VOCAB_SIZE + len(merges)
    order = tuple(byte_order)
    # An id's first text is its own; a later text with the same id is its alias.
    own: dict[str, int] = {}
    aliases: dict[str, int] = {}
    for text, token_id in special_tokens.items():
        (aliases if token_id in own.values() else own)[text] = token_id
    artifact: dict[str, Any] = {
        "mergeable_vocab_size": size,
        "pretokenizer_pattern": split.source,
        "special_tokens": own,
    }
    own_vocab = None  # a checked model's v1 vocab, written apart (see _own_v1_vocab)
    if schema_version(merges, split, special_tokens, training or {}, order) == SCHEMA_VERSION:
        artifact["schema_version"] = SCHEMA_VERSION
        artifact["merges"] = [list(merge) for merge in merges]
        if checked:
            own_vocab = _own_v1_vocab(vocab, size)
        else:
            artifact["vocab"] = {str(token_id): list(token) for token_id, token in vocab.items()}
    else:
        # The compact lane (see _OPTIONAL_KEYS_V2): flat merges; the vocab follows.
        artifact["schema_version"] = SCHEMA_V2
        artifact["merges_flat"] = list(chain.from_iterable(merges))
        artifact["pattern_name"] = split.name
        layout: dict[str, Any] = {}
        if order != IDENTITY_BYTE_ORDER:
            layout["byte_order"] = list(order)
        if skipped_ids(size, own.values()):
            layout["special_ids"] = INTERLEAVED
        elif not _contiguous(own.values(), size):
            layout["special_ids"] = SPARSE
        if layout:
            artifact["id_layout"] = layout
        if aliases:
            artifact["special_aliases"] = aliases
        if training:
            artifact["training"] = dict(training)
    text = json.dumps(artifact, sort_keys=True, separators=(",", ":"))
    if own_vocab is not None:  # "vocab" sorts last: it goes before the closing brace
        text = f'{text[:-1]},"vocab":{own_vocab}}}'
    data = text.encode("utf-8")
    if len(data) > MAX_ARTIFACT_BYTES:
        # Only text can make a compact artifact this large: the merges of the largest
        # vocabulary take a fraction of the limit, and the pattern has its own bound.
        raise ArtifactError(
            f"the artifact would be {len(data):,} bytes, over the limit of "
            f"{MAX_ARTIFACT_BYTES:,} bytes that loading accepts by default; its special "
            f"tokens hold {sum(map(len, special_tokens)):,} characters: use shorter ones"
        )
    if not checked:
        parse_artifact(data, source="tokenizer state to save", trust_custom_pattern=True)
    return data


# --------------------------------------------------------------------------- reading


def load(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_ARTIFACT_BYTES,
    trust_custom_pattern: bool = False,
) -> Artifact:
    """Read and validate the artifact at `path`; OSErrors from reading propagate.

    A file larger than `max_bytes` is refused from its size, before it is read: parsing
    takes about 30 times the file's size in memory. See :func:`parse_artifact` for
    `trust_custom_pattern`.
    """
    check_trust(trust_custom_pattern)
    data = read_limited(path, max_bytes=max_bytes, error=ArtifactError, what="artifact")
    return parse_artifact(data, os.fspath(path), trust_custom_pattern=trust_custom_pattern)


def loads(
    data: bytes, *, max_bytes: int = MAX_ARTIFACT_BYTES, trust_custom_pattern: bool = False
) -> Artifact:
    """:func:`load` of an artifact held in memory, named ``<bytes>`` in messages."""
    check_trust(trust_custom_pattern)
    if len(data) > check_max_bytes(max_bytes):
        too_big(ArtifactError, MEMORY_SOURCE, "artifact", len(data), max_bytes, trusted="it")
    return parse_artifact(data, MEMORY_SOURCE, trust_custom_pattern=trust_custom_pattern)


def check_trust(trust_custom_pattern: object) -> None:
    """Refuse a `trust_custom_pattern` that is not a bool: a truthy string such as
    ``"no"`` must not trust a regex the caller meant to refuse."""
    if not isinstance(trust_custom_pattern, bool):
        raise TypeError(f"trust_custom_pattern must be True or False, got {trust_custom_pattern!r}")


#: What the messages about an artifact held in memory call it.
MEMORY_SOURCE: Final = "<bytes>"


def parse_artifact(
    data: bytes, source: str = "<artifact>", *, trust_custom_pattern: bool = False
) -> Artifact:
    """Validate raw artifact bytes step by step and return what they hold.

    The checks run in a fixed order so a given defect always produces the same error.
    Missing keys raise MissingKeyError (a KeyError), every other defect ArtifactError
    (a ValueError); messages start with `source` and name the failing field and value.
    A custom split pattern is a regex that will run on every text encoded, so it is
    refused unless `trust_custom_pattern` is true.
    """
    with gc_paused():
        return _parse_artifact(data, source, trust_custom_pattern)


def _parse_artifact(data: bytes, source: str, trust_custom_pattern: bool) -> Artifact:
    artifact = _decode_document(data, source)  # steps 1-3
    version = _check_schema_version(artifact, source)  # steps 4-6
    _check_top_level_keys(artifact, version, source)  # steps 7-8
    pattern = _parse_pattern(artifact, version, trust_custom_pattern, source)  # steps 9-10
    flat = "merges_flat" in artifact
    if flat:
        merges = _parse_flat_merges(artifact["merges_flat"], source)  # step 11 (v2)
    else:
        merges = _parse_merges(artifact["merges"], source)  # step 11
    size = _parse_mergeable_vocab_size(artifact["mergeable_vocab_size"], merges, source)
    vocab = _parse_vocab(artifact["vocab"], source) if "vocab" in artifact else None  # step 14
    layout, byte_order = None, IDENTITY_BYTE_ORDER
    if version != SCHEMA_VERSION and "id_layout" in artifact:
        layout, byte_order = _parse_id_layout(artifact["id_layout"], source)
    ids: Sequence[int] = range(size)
    skipped: tuple[int, ...] = ()
    special_tokens = None
    if layout == INTERLEAVED:
        # Step 18 first: the mergeable ids are the ones the special ids leave free.
        special_tokens = _parse_special_tokens_v2(
            artifact["special_tokens"], vocab, size, layout, source
        )
        skipped = skipped_ids(size, special_tokens.values())
        ids = mergeable_ids(size, skipped)
    if vocab is not None:
        _check_mergeable_ids_present(vocab, ids, source)  # step 15
        _check_base_bytes(vocab, byte_order, source)  # step 16
    checked = _check_merged_ids(merges, ids, skipped, flat, source)  # step 17
    if vocab is not None:
        _check_merged_bytes(vocab, checked, ids, source)  # step 17
    aliases: dict[str, int] = {}
    if version == SCHEMA_VERSION:
        assert vocab is not None  # a required key of v1
        special_tokens = _parse_special_tokens(artifact["special_tokens"], vocab, size, source)
        training: dict[str, int] = {}
    else:
        if special_tokens is None:
            special_tokens = _parse_special_tokens_v2(
                artifact["special_tokens"], vocab, size, layout, source
            )
        if "special_aliases" in artifact:
            aliases = _parse_special_aliases(artifact["special_aliases"], special_tokens, source)
        training = _parse_training(artifact["training"], source) if "training" in artifact else {}
    if vocab is not None:
        _check_no_extra_ids(vocab, ids, special_tokens, source)  # step 19
    # Each id's own text first, then its aliases: an id decodes to the first text listed.
    specials = dict(sorted([*special_tokens.items(), *aliases.items()], key=operator.itemgetter(1)))
    model = _defined(checked, pattern, specials, byte_order, training, source)
    parsed = Artifact(vocab, model)
    # A v1 file may be larger than the limit (written by a bpetite before the limit, and
    # loaded with a larger max_bytes); a v2 file of what v1 describes must need the room.
    if version == SCHEMA_V2 and parsed.schema_version == SCHEMA_VERSION:
        _fail(
            source,
            "schema_version is 2, but schema v1 describes this tokenizer (GPT-2's pattern "
            "and only <|endoftext|>, and a v1 file within the "
            f"{MAX_ARTIFACT_BYTES:,}-byte limit); such an artifact is written as version 1",
        )
    return parsed


def _defined(
    merges: Merges,  # in indices
    pattern: SplitPattern,
    special_tokens: dict[str, int],
    byte_order: tuple[int, ...],
    training: dict[str, int],
    source: str,
) -> Model:
    """After the checklist: the model's own check of its fields, the constructor's.

    The checklist reads the file; :func:`~bpetite.core._model.define` holds the rules
    every model keeps, wherever it comes from. A field the checklist accepts and the
    model refuses (a training option under its least value) is the file's defect:
    ArtifactError naming the file, with the model's message naming the field.
    """
    try:
        return define(
            merges,
            pattern=pattern,
            special_tokens=special_tokens,
            byte_order=byte_order,
            training=training,
        )
    except (ValueError, TypeError) as error:  # ParameterError, UnicodeEncodeError, ...
        _fail(source, str(error))


def _fail(source: str, message: str) -> NoReturn:
    raise ArtifactError(f"{source}: {message}")


def _show(value: object) -> str:
    """repr(value), elided only when huge: a whole vocab list in a message helps nobody."""
    return shown(repr(value))


def _is_int(value: object) -> bool:
    """JSON integers only: bool is an int subclass in Python and 1.0 == 1, so both are out."""
    return type(value) is int


def _decode_document(data: bytes, source: str) -> dict[str, Any]:
    """Steps 1-3: UTF-8, strict JSON (see :mod:`bpetite.core._json`), and a top-level object."""
    document = loads_json(data, source=source, error=ArtifactError)
    if not isinstance(document, dict):
        _fail(source, f"top-level JSON value must be an object, got {type(document).__name__}")
    return document


def _check_schema_version(artifact: dict[str, Any], source: str) -> int:
    """Steps 4-6, before the other keys: each version has its own keys."""
    if "schema_version" not in artifact:
        raise MissingKeyError(f"{source}: missing required key 'schema_version'")
    version = artifact["schema_version"]
    if not _is_int(version):
        _fail(source, f"schema_version must be an integer, got {_show(version)}")
    if version not in (SCHEMA_VERSION, SCHEMA_V2):
        _fail(
            source,
            f"schema_version {_show(version)} is not supported; this bpetite reads "
            f"versions {SCHEMA_VERSION} and {SCHEMA_V2}",
        )
    return int(version)


def _check_top_level_keys(artifact: dict[str, Any], version: int, source: str) -> None:
    """Steps 7-8: exactly the version's keys, so nothing unvalidated can ride along."""
    required = _REQUIRED_KEYS if version == SCHEMA_VERSION else _REQUIRED_KEYS_V2
    allowed = required if version == SCHEMA_VERSION else required | _OPTIONAL_KEYS_V2
    missing = required - artifact.keys()
    if missing:
        raise MissingKeyError(f"{source}: missing required key(s) {', '.join(sorted(missing))}")
    if version != SCHEMA_VERSION:
        present = [key for key in _MERGE_KEYS_V2 if key in artifact]
        if not present:
            raise MissingKeyError(f"{source}: missing required key merges (or merges_flat)")
        if len(present) > 1:
            _fail(source, "has both merges and merges_flat; a v2 artifact holds one of them")
    extra = artifact.keys() - allowed
    if extra:
        shown = ", ".join(json.dumps(key) for key in sorted(extra))
        if version == SCHEMA_VERSION:
            _fail(
                source, f"unexpected top-level key(s) {shown}; schema v1 allows only the six keys"
            )
        _fail(
            source,
            f"unexpected top-level key(s) {shown}; schema v2 allows {', '.join(sorted(allowed))}",
        )


def _parse_pattern(
    artifact: dict[str, Any], version: int, trusted: bool, source: str
) -> SplitPattern:
    """Steps 9-10: an artifact is tied to the split pattern it was trained with.

    v1 holds GPT-2's pattern only. v2 names a preset, whose regex must be the preset's
    to the character, or ``custom``: a regex that is not a preset's, no longer than
    MAX_CUSTOM_PATTERN_CHARS, compiled only when the caller trusts the artifact.
    """
    pattern = artifact["pretokenizer_pattern"]
    if not isinstance(pattern, str):
        _fail(source, f"pretokenizer_pattern must be a string, got {_show(pattern)}")
    if version == SCHEMA_VERSION:
        if pattern != PRETOKENIZER_PATTERN:
            _fail(
                source,
                f"pretokenizer_pattern {_show(pattern)} does not match this bpetite's "
                "pre-tokenizer; the artifact was made by an incompatible version",
            )
        return preset_pattern("gpt2")
    name = artifact["pattern_name"]
    if not isinstance(name, str) or (name != "custom" and name not in PRESETS):
        _fail(
            source,
            f"pattern_name must be one of {', '.join([*PRESETS, 'custom'])}, got {_show(name)}",
        )
    if name != "custom":
        if pattern != PRESETS[name]:
            _fail(
                source,
                f"pretokenizer_pattern {_show(pattern)} is not the {name} preset's regex; "
                "a changed preset would split text differently",
            )
        return preset_pattern(name)
    preset = next((known for known, regex in PRESETS.items() if regex == pattern), None)
    if preset is not None:
        _fail(source, f'pattern_name is "custom", but the regex is the {preset} preset\'s')
    if len(pattern) > MAX_CUSTOM_PATTERN_CHARS:
        _fail(
            source,
            f"the custom pretokenizer_pattern is {len(pattern):,} characters long; at most "
            f"{MAX_CUSTOM_PATTERN_CHARS:,} are accepted",
        )
    if not trusted:
        _fail(
            source,
            f"the artifact uses a custom split pattern {_show(pattern)}, a regex that runs on "
            "every text encoded; load it with trust_custom_pattern=True (Tokenizer.load) "
            "only if you trust where the file came from",
        )
    try:
        return custom_pattern(pattern)
    except PatternError as error:
        _fail(source, f"the custom pretokenizer_pattern cannot be used: {error}")


def _parse_merges(merges: object, source: str) -> list[tuple[int, int]]:
    """Step 11: a list of [left, right] pairs of non-negative ids (upper bound: step 17).

    The common, valid case is checked with whole-list C-level passes; anything they do
    not accept goes through the element-by-element loop, which is the authority and
    finds the first defect to report.
    """
    if not isinstance(merges, list):
        _fail(source, f"merges must be a list, got {_show(merges)}")
    if set(map(type, merges)) <= _LIST_ONLY and set(map(len, merges)) <= _TWO_ONLY:
        lefts = list(map(operator.itemgetter(0), merges))
        rights = list(map(operator.itemgetter(1), merges))
        if set(map(type, lefts)) | set(map(type, rights)) <= _INT_ONLY and (
            not merges or min(min(lefts), min(rights)) >= 0
        ):
            return list(zip(lefts, rights, strict=True))
    return _parse_merges_slowly(merges, source)


def _parse_flat_merges(merges: object, source: str) -> list[tuple[int, int]]:
    """Step 11 (v2 ``merges_flat``): an even-length list of non-negative ids, paired up."""
    if not isinstance(merges, list):
        _fail(source, f"merges_flat must be a list, got {_show(merges)}")
    if not (set(map(type, merges)) <= _INT_ONLY and (not merges or min(merges) >= 0)):
        for index, token_id in enumerate(merges):
            if not _is_int(token_id):
                _fail(source, f"merges_flat[{index}] must be an integer, got {_show(token_id)}")
            if token_id < 0:
                _fail(source, f"merges_flat[{index}] must be non-negative, got {_show(token_id)}")
    if len(merges) % 2:
        _fail(
            source,
            f"merges_flat must hold pairs (left, right, left, right, ...), but its length "
            f"{len(merges)} is odd",
        )
    return list(zip(merges[0::2], merges[1::2], strict=True))


def _parse_merges_slowly(merges: list[Any], source: str) -> list[tuple[int, int]]:
    parsed: list[tuple[int, int]] = []
    for rank, merge in enumerate(merges):
        if not isinstance(merge, list) or len(merge) != 2:
            _fail(source, f"merges[{rank}] must be a list of two token ids, got {_show(merge)}")
        for side, token_id in enumerate(merge):
            if not _is_int(token_id):
                _fail(source, f"merges[{rank}][{side}] must be an integer, got {_show(token_id)}")
            if token_id < 0:
                _fail(source, f"merges[{rank}][{side}] must be non-negative, got {_show(token_id)}")
        parsed.append((merge[0], merge[1]))
    return parsed


def _parse_mergeable_vocab_size(size: object, merges: list[tuple[int, int]], source: str) -> int:
    """Steps 12-13: the stored size must agree with the merge list it describes."""
    if not _is_int(size):
        _fail(source, f"mergeable_vocab_size must be an integer, got {_show(size)}")
    expected = BASE_VOCAB_SIZE + len(merges)
    if size != expected:
        _fail(
            source,
            f"mergeable_vocab_size is {_show(size)}, but {len(merges)} merges + "
            f"{BASE_VOCAB_SIZE} base bytes = {expected}",
        )
    return size


def _parse_vocab(vocab: object, source: str) -> dict[int, bytes]:
    """Step 14: canonical decimal keys, values that are lists of byte values.

    Fast path: int() then str() must give each key back unchanged, which rejects
    signs, spaces, leading zeros, underscores and non-ASCII digits in one C-level
    pass; bytes() range-checks the values. Anything else takes the per-entry loop.
    """
    if not isinstance(vocab, dict):
        _fail(source, f"vocab must be an object, got {_show(vocab)}")
    keys = list(vocab)
    values = list(vocab.values())
    try:
        ids = list(map(int, keys))
    except ValueError:
        ids = None
    if (
        ids is not None
        and list(map(str, ids)) == keys
        and (not ids or min(ids) >= 0)
        and set(map(type, values)) <= _LIST_ONLY
        and set(map(type, chain.from_iterable(values))) <= _INT_ONLY
    ):
        with contextlib.suppress(ValueError):  # a byte value outside 0..255
            return dict(zip(ids, map(bytes, values), strict=True))
    return _parse_vocab_slowly(vocab, source)


def _parse_vocab_slowly(vocab: dict[str, Any], source: str) -> dict[int, bytes]:
    parsed: dict[int, bytes] = {}
    for key, value in vocab.items():
        try:
            token_id = _canonical_id(key)
        except ValueError:  # past int()'s digit limit, so far past any vocabulary
            _fail(source, f"vocab key {_show(key)} is too long to be a token id")
        if token_id is None:
            _fail(
                source,
                f"vocab key {json.dumps(key)} is not a canonical decimal token id "
                "(ASCII digits only, no sign, spaces or leading zeros)",
            )
        if not isinstance(value, list):
            _fail(source, f'vocab["{key}"] must be a list of byte values, got {_show(value)}')
        for index, byte in enumerate(value):
            if not _is_int(byte) or not 0 <= byte <= 255:
                _fail(
                    source,
                    f'vocab["{key}"][{index}] must be an integer in 0..255, got {_show(byte)}',
                )
        parsed[token_id] = bytes(value)
    return parsed


def _canonical_id(key: str) -> int | None:
    """The id a key spells, or None unless it is written exactly as str(id) would.

    ASCII digits only (Arabic-Indic digits pass str.isdigit and int()), no sign, no
    whitespace, no leading zero: so each id has exactly one spelling and duplicate
    keys cannot hide behind different spellings.
    """
    if not (key.isascii() and key.isdigit()) or (key[0] == "0" and len(key) > 1):
        return None
    return int(key)


def _check_mergeable_ids_present(vocab: dict[int, bytes], ids: Sequence[int], source: str) -> None:
    """Step 15: every mergeable id has an entry: 0 .. mergeable_vocab_size - 1, or, when
    special ids are interleaved, the ids they leave free."""
    if all(map(vocab.__contains__, ids)):
        return
    missing = next(token_id for token_id in ids if token_id not in vocab)
    if isinstance(ids, range):
        _fail(source, f'vocab has no entry "{missing}"; ids 0..{len(ids) - 1} must all be present')
    _fail(
        source,
        f'vocab has no entry "{missing}", a mergeable id; every mergeable id must be present',
    )


def _check_base_bytes(vocab: dict[int, bytes], byte_order: Sequence[int], source: str) -> None:
    """Step 16: base token i is the single byte i (or the byte the byte order gives it)."""
    found = list(map(vocab.__getitem__, range(BASE_VOCAB_SIZE)))
    if found == list(map(BYTE_TOKENS.__getitem__, byte_order)):
        return  # the usual case, compared in C; else find the first wrong one
    for token_id, byte in enumerate(byte_order):
        if vocab[token_id] != BYTE_TOKENS[byte]:
            why = "a base token is its own byte" if byte == token_id else "per id_layout.byte_order"
            _fail(
                source,
                f'vocab["{token_id}"] must be [{byte}] ({why}), got {_show(list(vocab[token_id]))}',
            )


def _check_merged_ids(
    merges: list[tuple[int, int]],
    ids: Sequence[int],
    skipped: Sequence[int],
    flat: bool,
    source: str,
) -> Merges:
    """Step 17, first half: in rank order, each merge uses only ids made before its own.

    The rule is the model's (:func:`~bpetite.core._model.misplaced_id`, on the merges in
    indices), the one the Tokenizer constructor applies; only the words naming the
    offender are the file's. Returns the merges in indices.
    """
    if isinstance(ids, range):
        in_indices = merges
        misplaced = misplaced_id(merges)
    else:
        # -1 for an id no mergeable token holds
        in_indices = indexed(merges, index_table(len(ids), skipped))
        misplaced = None
        if (in_indices and min(map(min, in_indices)) < 0) or misplaced_id(in_indices):
            misplaced = next(
                (rank, side)
                for rank, merge in enumerate(in_indices)
                for side in (0, 1)
                if not 0 <= merge[side] < BASE_VOCAB_SIZE + rank
            )
    if misplaced is not None:
        rank, side = misplaced
        token_id, new_id = merges[rank][side], ids[BASE_VOCAB_SIZE + rank]
        where = f"merges_flat[{2 * rank + side}]" if flat else f"merges[{rank}][{side}]"
        if token_id < new_id:  # below, yet not a mergeable id: a special token's
            _fail(
                source,
                f"{where} is {token_id}, a special token's id; a merge joins mergeable tokens",
            )
        _fail(
            source,
            f"{where} is {_show(token_id)}, but merge {rank} creates id "
            f"{new_id} and may only use ids below it",
        )
    return IndexedMerges(in_indices)


def _check_merged_bytes(
    vocab: dict[int, bytes], merges: Merges, ids: Sequence[int], source: str
) -> None:
    """Step 17, second half: each merged id's stored bytes are its pair's, concatenated.

    `merges` are in indices, and ``ids[i]`` is index ``i``'s id. Fast path: one
    whole-list comparison; on a mismatch the rank-order loop names the first bad entry.
    """
    lefts = map(operator.itemgetter(0), merges)
    rights = map(operator.itemgetter(1), merges)
    table = list(map(vocab.__getitem__, ids))  # every mergeable id is present by now
    joined = map(bytes.__add__, map(table.__getitem__, lefts), map(table.__getitem__, rights))
    if list(joined) == table[BASE_VOCAB_SIZE:]:
        return
    for rank, merge in enumerate(merges):
        new_id = ids[BASE_VOCAB_SIZE + rank]
        expected = table[merge[0]] + table[merge[1]]
        if vocab[new_id] != expected:
            pair = [ids[merge[0]], ids[merge[1]]]
            _fail(
                source,
                f'vocab["{new_id}"] must be the bytes of merges[{rank}] = {pair} '
                f"concatenated, {_show(list(expected))}, got {_show(list(vocab[new_id]))}",
            )


def _parse_special_tokens(
    special_tokens: object, vocab: dict[int, bytes], size: int, source: str
) -> dict[str, int]:
    """Step 18: exactly one special token, at id mergeable_vocab_size, with its own bytes."""
    if not isinstance(special_tokens, dict):
        _fail(source, f"special_tokens must be an object, got {_show(special_tokens)}")
    if special_tokens.keys() != {END_OF_TEXT_TOKEN}:
        keys = ", ".join(json.dumps(key) for key in sorted(special_tokens))
        _fail(
            source,
            f"special_tokens must have exactly the key {json.dumps(END_OF_TEXT_TOKEN)}, "
            f"got [{keys}]",
        )
    special_id = special_tokens[END_OF_TEXT_TOKEN]
    field = f"special_tokens[{json.dumps(END_OF_TEXT_TOKEN)}]"
    if not _is_int(special_id):
        _fail(source, f"{field} must be an integer, got {_show(special_id)}")
    if special_id != size:
        _fail(source, f"{field} is {_show(special_id)}, but must equal mergeable_vocab_size {size}")
    if special_id not in vocab:
        _fail(source, f'vocab has no entry "{special_id}" for the special token')
    if vocab[special_id] != _SPECIAL_BYTES:
        _fail(
            source,
            f'vocab["{special_id}"] must be the UTF-8 bytes of {END_OF_TEXT_TOKEN} '
            f"{list(_SPECIAL_BYTES)}, got {_show(list(vocab[special_id]))}",
        )
    return {END_OF_TEXT_TOKEN: special_id}


def _contiguous(ids: Iterable[int], size: int) -> bool:
    """Whether `ids` are exactly size, size + 1, ...: the default place of special tokens."""
    ordered = sorted(ids)
    return ordered == list(range(size, size + len(ordered)))


def _parse_id_layout(layout: object, source: str) -> tuple[str | None, tuple[int, ...]]:
    """Optional ``id_layout``: where the special ids lie, and the ids' byte order.

    ``"special_ids"`` is ``"sparse"`` when the special ids follow the merges with gaps
    (as in cl100k_base), ``"interleaved"`` when one lies among the mergeable ids, which
    skip it (as in p50k_base); ``"byte_order"`` lists the byte of each id 0..255 when
    an imported vocabulary numbers the bytes in its own order (GPT-2's, OpenAI's). Each
    appears only when it departs from the default, so one tokenizer has one artifact.
    """
    if not isinstance(layout, dict) or not layout:
        _fail(source, f"id_layout must be a non-empty object, got {_show(layout)}")
    extra = layout.keys() - _ID_LAYOUT_FIELDS
    if extra:
        shown = ", ".join(json.dumps(key) for key in sorted(extra))
        _fail(source, f"unexpected id_layout key(s) {shown}; known: byte_order, special_ids")
    special_ids = layout.get("special_ids")
    if "special_ids" in layout and special_ids not in (SPARSE, INTERLEAVED):
        _fail(
            source,
            f'id_layout["special_ids"] must be "{SPARSE}" or "{INTERLEAVED}", got '
            f"{_show(special_ids)}",
        )
    byte_order = IDENTITY_BYTE_ORDER
    if "byte_order" in layout:
        order = layout["byte_order"]
        if (
            not isinstance(order, list)
            or len(order) != BASE_VOCAB_SIZE
            or not all(map(_is_int, order))
            or sorted(order) != list(IDENTITY_BYTE_ORDER)
        ):
            _fail(
                source,
                'id_layout["byte_order"] must list each byte 0..255 exactly once (the byte '
                f"of ids 0..255), got {_show(order)}",
            )
        byte_order = tuple(order)
        if byte_order == IDENTITY_BYTE_ORDER:
            _fail(
                source,
                'id_layout["byte_order"] is the default order 0..255; such an artifact '
                "leaves it out",
            )
    return special_ids, byte_order


def _parse_special_tokens_v2(
    special_tokens: object,
    vocab: dict[int, bytes] | None,
    size: int,
    layout: str | None,
    source: str,
) -> dict[str, int]:
    """Step 18 (v2): distinct non-empty texts, each with its own id past the merges.

    The ids follow the mergeable vocabulary without gaps unless ``id_layout`` says
    they are sparse (as in OpenAI's vocabularies), and only then may they have gaps;
    an interleaved layout lets them lie anywhere from 256 on, and at least one must lie
    among the mergeable ids. A stored `vocab` must hold each text's UTF-8 bytes at its id.
    """
    if not isinstance(special_tokens, dict):
        _fail(source, f"special_tokens must be an object, got {_show(special_tokens)}")
    least = BASE_VOCAB_SIZE if layout == INTERLEAVED else size
    seen: dict[int, str] = {}
    for text, token_id in special_tokens.items():
        field = f"special_tokens[{_show(text)}]"
        if not text:
            _fail(source, "a special token must not be the empty string")
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:
            _fail(source, f"special token {_show(text)} is not valid Unicode (a lone surrogate)")
        if not _is_int(token_id):
            _fail(source, f"{field} must be an integer, got {_show(token_id)}")
        if not least <= token_id <= MAX_TOKEN_ID:
            where = "256" if layout == INTERLEAVED else f"mergeable_vocab_size {size}"
            _fail(
                source, f"{field} is {token_id}, but special ids run from {where} to {MAX_TOKEN_ID}"
            )
        if token_id in seen:
            _fail(
                source,
                f"{field} is {token_id}, the id of {_show(seen[token_id])} too (a second text "
                "for one id is listed in special_aliases)",
            )
        seen[token_id] = text
        if vocab is None:
            continue
        if token_id not in vocab:
            _fail(source, f'vocab has no entry "{token_id}" for the special token {_show(text)}')
        if vocab[token_id] != encoded:
            _fail(
                source,
                f'vocab["{token_id}"] must be the UTF-8 bytes of {_show(text)} '
                f"{_show(list(encoded))}, got {_show(list(vocab[token_id]))}",
            )
    if layout == INTERLEAVED:
        if not skipped_ids(size, seen):
            _fail(
                source,
                'id_layout["special_ids"] is "interleaved", but no special id lies among the '
                "mergeable ids; such an artifact has no interleaved layout",
            )
        return {text: seen_id for seen_id, text in sorted(seen.items())}
    contiguous = _contiguous(seen, size)
    if layout == SPARSE and contiguous:
        _fail(
            source,
            'id_layout["special_ids"] is "sparse", but the special ids follow the mergeable '
            "vocabulary without gaps; such an artifact has no id_layout",
        )
    if layout is None and not contiguous:
        _fail(
            source,
            f"special token ids {_show(sorted(seen))} must run from mergeable_vocab_size {size} "
            'without gaps; an artifact with gaps records "id_layout": {"special_ids": "sparse"}',
        )
    return {text: seen_id for seen_id, text in sorted(seen.items())}


def _parse_special_aliases(
    aliases: object, special_tokens: dict[str, int], source: str
) -> dict[str, int]:
    """Optional ``special_aliases``: more texts for special ids, each its own text.

    Each text is non-empty valid Unicode and no special token's; each id is one of
    ``special_tokens``' ids, which decodes to that token's text (o200k_harmony gives
    ``<|reserved_200018|>`` the id of ``<|endofprompt|>``).
    """
    if not isinstance(aliases, dict) or not aliases:
        _fail(source, f"special_aliases must be a non-empty object, got {_show(aliases)}")
    owners = {token_id: text for text, token_id in special_tokens.items()}
    for text, token_id in aliases.items():
        field = f"special_aliases[{_show(text)}]"
        if not text:
            _fail(source, "a special token must not be the empty string")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            _fail(source, f"special token {_show(text)} is not valid Unicode (a lone surrogate)")
        if text in special_tokens:
            _fail(source, f"{field}: {_show(text)} is in special_tokens already")
        if not _is_int(token_id) or token_id not in owners:
            _fail(
                source,
                f"{field} must be the id of a special token (an alias shares one), got "
                f"{_show(token_id)}",
            )
    return dict(sorted(aliases.items(), key=lambda item: (item[1], item[0])))


def _parse_training(training: object, source: str) -> dict[str, int]:
    """Optional ``training``: integers, each at least its option's least value (see
    TRAINING_OPTIONS), that say how the merges were learned."""
    if not isinstance(training, dict) or not training:
        _fail(source, f"training must be a non-empty object, got {_show(training)}")
    extra = training.keys() - TRAINING_OPTIONS.keys()
    if extra:
        shown = ", ".join(json.dumps(key) for key in sorted(extra))
        _fail(
            source,
            f"unexpected training key(s) {shown}; known: {', '.join(sorted(TRAINING_OPTIONS))}",
        )
    for key, value in training.items():
        least = TRAINING_OPTIONS[key]
        if not _is_int(value) or value < least:
            _fail(
                source,
                f"training[{json.dumps(key)}] must be an integer of at least {least}, "
                f"got {_show(value)}",
            )
    return dict(training)


def _check_no_extra_ids(
    vocab: dict[int, bytes], ids: Sequence[int], special_tokens: dict[str, int], source: str
) -> None:
    """Step 19: only the mergeable ids and the specials' ids, so there are no stray entries."""
    if len(vocab) > len(ids) + len(special_tokens):
        known = set(ids) | set(special_tokens.values())
        extra = min(token_id for token_id in vocab if token_id not in known)
        _fail(
            source,
            f'vocab["{extra}"] is outside the vocabulary: its ids are the mergeable ids '
            f"(0 to {len(ids) - 1} unless special ids lie among them), then the special "
            "tokens' ids",
        )
