"""Mutation fuzz: a mutated artifact (v1 or v2) is rejected or reproduced exactly."""

import json
from collections.abc import Callable
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from bpetite import Tokenizer, reference
from bpetite.core._artifact import Artifact, dumps_artifact, parse_artifact
from bpetite.core._constants import PRETOKENIZER_PATTERN
from bpetite.core._patterns import PRESETS
from bpetite.errors import ParameterError
from tests.artifacts import (
    EOT,
    canonical,
    trained_state,
)
from tests.strategies import merge_lists

# --------------------------------------------------------------------------- mutation fuzz

#: A custom split pattern (schema v2 records it as "custom"); the fuzz trusts it.
CUSTOM = r"[a-z]+|[^a-z]"

_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 300),
    st.integers(min_value=2**63, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
    st.sampled_from(["1", "97", "256", EOT, PRETOKENIZER_PATTERN]),
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=2)
    ),
    max_leaves=5,
)

JsonPath = tuple[str | int, ...]
# A mutated artifact, and whether it must load (True), must fail (False), or either (None).
Mutant = tuple[bytes, bool | None]


def _paths(node: object, prefix: JsonPath = ()) -> list[JsonPath]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _container(document: Any, path: JsonPath) -> Any:
    for step in path[:-1]:
        document = document[step]
    return document


def _draw_path(draw: st.DrawFn, document: dict[str, Any]) -> JsonPath:
    """A region first, so the small top-level fields are hit as often as the big vocab."""
    region = draw(st.sampled_from(sorted(document)))
    return draw(st.sampled_from(_paths(document[region], (region,))))


def _replace_value(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    path = _draw_path(draw, document)
    _container(document, path)[path[-1]] = draw(_JSON_VALUES)
    return canonical(document), None


def _perturb_int(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    paths = [
        path for path in _paths(document)[1:] if type(_container(document, path)[path[-1]]) is int
    ]
    path = draw(st.sampled_from(paths))
    _container(document, path)[path[-1]] += draw(st.integers(-300, 300))
    return canonical(document), None


def _drop_entry(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    path = _draw_path(draw, document)
    del _container(document, path)[path[-1]]
    return canonical(document), None


def _add_entry(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    targets = [document, document["special_tokens"]]
    if "vocab" in document:  # v1; v2 as bpetite writes it has none
        targets.append(document["vocab"])
    target = draw(st.sampled_from(targets))
    key = draw(
        st.text(max_size=5) | st.integers(0, 400).map(str) | st.sampled_from(sorted(document))
    )
    target[key] = draw(_JSON_VALUES | st.lists(st.integers(0, 255), max_size=3))
    return canonical(document), None


def _swap_merges(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    flat = "merges_flat" in document
    merges = document["merges_flat"] if flat else document["merges"]
    count = len(merges) // 2 if flat else len(merges)
    if count:
        i = draw(st.integers(0, count - 1))
        j = draw(st.integers(0, count - 1))
        if flat:
            merges[2 * i : 2 * i + 2], merges[2 * j : 2 * j + 2] = (
                merges[2 * j : 2 * j + 2],
                merges[2 * i : 2 * i + 2],
            )
        else:
            merges[i], merges[j] = merges[j], merges[i]
    return canonical(document), None


def _respell_vocab_key(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    if "vocab" not in document:  # v2 as bpetite writes it has no vocab to respell
        return _replace_value(draw, document)
    vocab = document["vocab"]
    key = draw(st.sampled_from(sorted(vocab)))
    arabic = key.translate(
        str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")
    )
    new = draw(
        st.sampled_from(
            ["0" + key, "+" + key, "-" + key, " " + key, key + " ", arabic, key + ".0", ""]
        )
    )
    vocab[new] = vocab.pop(key)
    return canonical(document), False


def _consistent_edit(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    """A different but valid state: must load and re-serialize to the same bytes."""
    flat = "merges_flat" in document  # v2 as bpetite writes it: flat merges, no vocab
    if flat:
        ids_in_order = document["merges_flat"]
        merges = list(zip(ids_in_order[0::2], ids_in_order[1::2], strict=True))
    else:
        merges = [tuple(merge) for merge in document["merges"]]
    if merges:
        rank = draw(st.integers(0, len(merges) - 1))
        ids = st.integers(0, 255 + rank)
        merges[rank] = (draw(ids), draw(ids))
    if flat:
        document["merges_flat"] = [token_id for merge in merges for token_id in merge]
        return canonical(document), True
    vocab = {i: token for i, token in reference.vocab(merges).items() if i < 256 + len(merges)}
    for text, token_id in document["special_tokens"].items():
        vocab[token_id] = text.encode("utf-8")
    document["merges"] = [list(merge) for merge in merges]
    document["vocab"] = {str(token_id): list(token) for token_id, token in vocab.items()}
    return canonical(document), True


def _switch_pattern(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    """Another preset's name or regex, or a schema change: consistent only by accident."""
    name = draw(st.sampled_from([*PRESETS, "custom"]))
    if draw(st.booleans()):
        document["pattern_name"] = name
    else:
        document["pretokenizer_pattern"] = PRESETS.get(name, CUSTOM)
    if draw(st.booleans()):
        document["schema_version"] = 3 - document["schema_version"]
    return canonical(document), None


def _duplicate_key(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    objects = {"{": document, '"special_tokens":{': document["special_tokens"]}
    if "vocab" in document:  # v1; v2 as bpetite writes it has none
        objects['"vocab":{'] = document["vocab"]
    anchor = draw(st.sampled_from(sorted(objects)))
    target = objects[anchor]
    if not target:
        return canonical(document), None
    key = draw(st.sampled_from(sorted(target)))
    value = draw(st.just(target[key]) | _JSON_VALUES)
    text = canonical(document).decode("utf-8")
    duplicated = text.replace(anchor, anchor + json.dumps(key) + ":" + json.dumps(value) + ",", 1)
    return duplicated.encode("utf-8"), False


def _truncate(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    data = canonical(document)
    return data[: draw(st.integers(0, len(data) - 1))], False


def _corrupt_encoding(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    data = canonical(document)
    at = draw(st.integers(0, len(data)))
    bad = draw(
        st.sampled_from([b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])
    )
    return data[:at] + bad + data[at:], False


def _plant_constant(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    path = _draw_path(draw, document)
    _container(document, path)[path[-1]] = draw(
        st.sampled_from([float("nan"), float("inf"), -float("inf")])
    )
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8"), False


def _unchanged(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    return canonical(document), True


_MUTATIONS = [
    _replace_value,
    _perturb_int,
    _drop_entry,
    _add_entry,
    _swap_merges,
    _respell_vocab_key,
    _consistent_edit,
    _switch_pattern,
    _duplicate_key,
    _truncate,
    _corrupt_encoding,
    _plant_constant,
    _unchanged,
]


#: Special tokens for the fuzzed artifacts: the spec's, none, several, and ids with gaps.
_SPECIALS: list[Callable[[int], dict[str, int]]] = [
    lambda size: {EOT: size},
    lambda size: {},
    lambda size: {EOT: size, "<|user|>": size + 1, "<|u|>": size + 2},
    lambda size: {"<|a|>": size + 3, EOT: size + 1},
]


@st.composite
def _valid_artifacts(draw: st.DrawFn) -> dict[str, Any]:
    """Schema v1 (GPT-2's pattern, only <|endoftext|>) or v2 (any other configuration)."""
    corpus = draw(st.text(alphabet="ab c\n\u00e9", max_size=40))
    _, merges, _ = trained_state(corpus, draw(st.integers(256, 266)))
    size = 256 + len(merges)
    specials = draw(st.sampled_from(_SPECIALS))(size)
    vocab = {i: token for i, token in reference.vocab(merges).items() if i < size}
    vocab.update((token_id, text.encode()) for text, token_id in specials.items())
    training = draw(st.sampled_from([None, {"min_frequency": 2}]))
    data = dumps_artifact(
        vocab,
        merges,
        specials,
        pattern=draw(st.sampled_from([*PRESETS, CUSTOM])),
        training=training,
    )
    document: dict[str, Any] = json.loads(data)
    return document


@st.composite
def _mutants(draw: st.DrawFn) -> Mutant:
    document = draw(_valid_artifacts())
    mutate: Callable[[st.DrawFn, dict[str, Any]], Mutant] = draw(st.sampled_from(_MUTATIONS))
    return mutate(draw, document)


def _parse_or_none(data: bytes) -> Artifact | None:
    """None for a rejected artifact; any exception other than the documented two escapes."""
    try:
        return parse_artifact(data, trust_custom_pattern=True)
    except (ValueError, KeyError):
        return None


def _dumps(artifact: Artifact) -> bytes:
    return dumps_artifact(
        *artifact.state, pattern=artifact.pattern, training=artifact.training or None
    )


def _is_an_older_v2_lane(data: bytes) -> bool:
    """A v2 document with ``merges`` pairs or a ``vocab``: it loads, and saves compact."""
    document = json.loads(data)
    return document["schema_version"] == 2 and ("merges" in document or "vocab" in document)


@given(_mutants())
def test_mutated_artifacts_are_rejected_or_reproduced_exactly(mutant: Mutant) -> None:
    """Whatever loads must be exactly what was written: nothing is dropped, coerced or
    defaulted on the way in."""
    data, must_load = mutant
    artifact = _parse_or_none(data)
    if must_load is not None:
        assert (artifact is not None) == must_load
    if artifact is not None:
        assert all(type(merge) is tuple and len(merge) == 2 for merge in artifact.merges)
        assert all(type(token_id) is int for token_id in artifact.vocab)
        assert _dumps(artifact) == data or _is_an_older_v2_lane(data)


@given(
    _valid_artifacts(),
    st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 255), st.sampled_from("rid")), max_size=3
    ),
)
def test_byte_noise_is_rejected_or_reproduces_the_canonical_form(
    document: dict[str, Any], edits: list[tuple[int, int, str]]
) -> None:
    """Raw byte flips can make valid JSON with extra whitespace; then the state loaded is
    the one the JSON spells, and saving it gives that JSON's canonical bytes."""
    data = bytearray(canonical(document))
    for position, byte, kind in edits:
        at = position % (len(data) + 1)
        if kind == "r" and at < len(data):
            data[at] = byte
        elif kind == "i":
            data[at:at] = bytes([byte])
        elif at < len(data):
            del data[at]
    artifact = _parse_or_none(bytes(data))
    if artifact is not None:
        assert _dumps(artifact) == canonical(json.loads(bytes(data)))


# --------------------------------------------------------------------------- every model


@st.composite
def _any_model(draw: st.DrawFn) -> Tokenizer:
    """Any model the constructor accepts: arbitrary merges, a preset or custom pattern,
    special tokens after, among (interleaved), apart from (sparse) or sharing (aliases)
    the merged ids, a shuffled byte order, training options, or none of these."""
    merges = draw(merge_lists())
    size = 256 + len(merges)
    texts = draw(st.lists(st.sampled_from([EOT, "<|a|>", "<|ab|>", "é", " x"]), unique=True))
    specials: list[str] | dict[str, int] = texts
    by_id: bool = draw(st.booleans())
    if texts and by_id:
        specials = {text: draw(st.integers(256, size + 4)) for text in texts}
    byte_order = None
    if draw(st.booleans()):
        byte_order = draw(st.permutations(range(256)))
    training = draw(
        st.sampled_from([None, {"min_frequency": 2}, {"max_token_bytes": 3, "min_frequency": 1}])
    )
    try:
        return Tokenizer(
            merges,
            pattern=draw(st.sampled_from([*PRESETS, CUSTOM])),
            special_tokens=specials,
            byte_order=byte_order,
            training=training,
        )
    except ParameterError:
        assume(False)
        raise


@given(_any_model())
def test_every_model_the_constructor_accepts_is_saved_as_a_loadable_artifact(
    tokenizer: Tokenizer,
) -> None:
    """``dumps`` does not parse what it writes: the model's own checks are the loader's."""
    artifact = parse_artifact(tokenizer.dumps(), trust_custom_pattern=True)
    assert artifact.merges == tokenizer.merges
    assert artifact.special_tokens == dict(tokenizer.special_tokens)
    assert artifact.pattern == tokenizer.split_pattern
    assert artifact.byte_order == tokenizer.byte_order
    assert artifact.training == dict(tokenizer.training)
    assert artifact.vocab == dict(tokenizer.vocab)
