"""Artifact schema v2: patterns and special tokens recorded, read back with v1's strictness.

The expected documents are built here by hand and serialized with the spec's own
``json.dumps`` call, so a writer that drifts from docs/schema.md fails; each loader check
gets an artifact that is valid except for one defect.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bpetite import PRESETS, ArtifactError, Tokenizer, reference
from bpetite.core._artifact import dumps_artifact, parse_artifact
from bpetite.core._constants import MAX_TOKEN_ID
from bpetite.core._patterns import MAX_CUSTOM_PATTERN_CHARS
from bpetite.errors import MissingKeyError
from tests.conftest import REPO_ROOT
from tests.docs_runner import doc_blocks, run_doctest

EOT = "<|endoftext|>"
CORPUS = "the cat sat on the mat; the cat ate the rat. 123 4567\n  done"
#: A pattern that is no preset: words, digits and everything else one character at a time.
CUSTOM = r"[A-Za-z]+|[0-9]|[^A-Za-z0-9]"


def _canonical(document: object) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _vocab_document(merges: list[tuple[int, int]], specials: dict[str, int]) -> dict[str, Any]:
    vocab = {i: bytes([i]) for i in range(256)}
    for rank, (left, right) in enumerate(merges):
        vocab[256 + rank] = vocab[left] + vocab[right]
    for text, token_id in specials.items():
        vocab[token_id] = text.encode("utf-8")
    return {str(token_id): list(token) for token_id, token in vocab.items()}


def _expected(
    merges: list[tuple[int, int]],
    specials: dict[str, int],
    name: str,
    regex: str,
    *,
    stored: bool = False,
    **optional: Any,
) -> dict[str, Any]:
    """The v2 document docs/schema.md describes, built independently of the writer.

    By default the compact lane bpetite writes (``merges_flat``, no ``vocab``); with
    `stored`, the lane of older writers (``merges`` pairs and the whole ``vocab``).
    """
    document = {
        "mergeable_vocab_size": 256 + len(merges),
        "pattern_name": name,
        "pretokenizer_pattern": regex,
        "schema_version": 2,
        "special_tokens": specials,
        **optional,
    }
    if stored:
        document["merges"] = [list(merge) for merge in merges]
        document["vocab"] = _vocab_document(merges, specials)
    else:
        document["merges_flat"] = [token_id for merge in merges for token_id in merge]
    return document


MERGES = reference.train(CORPUS, 266)
SIZE = 256 + len(MERGES)


def _saved(tokenizer: Tokenizer, tmp_path: Path) -> bytes:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    return path.read_bytes()


# --------------------------------------------------------------------------- writing


def test_the_spec_configuration_still_saves_schema_v1(tmp_path: Path) -> None:
    tokenizer = Tokenizer(MERGES, pattern=PRESETS["gpt2"], special_tokens={EOT: SIZE})
    document = json.loads(_saved(tokenizer, tmp_path))
    assert document["schema_version"] == 1
    assert "pattern_name" not in document


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_a_preset_pattern_is_recorded_by_name_and_regex(name: str, tmp_path: Path) -> None:
    tokenizer = Tokenizer(MERGES, pattern=name)
    expected = _expected(MERGES, {EOT: SIZE}, name, PRESETS[name])
    assert _saved(tokenizer, tmp_path) == _canonical(expected)


def test_several_special_tokens_are_recorded_with_their_ids(tmp_path: Path) -> None:
    specials = ("<|endoftext|>", "<|user_start|>", "<|user_end|>")
    tokenizer = Tokenizer(MERGES, special_tokens=specials)
    expected = _expected(
        MERGES, {text: SIZE + i for i, text in enumerate(specials)}, "gpt2", PRESETS["gpt2"]
    )
    assert _saved(tokenizer, tmp_path) == _canonical(expected)


def test_no_special_tokens_at_all(tmp_path: Path) -> None:
    tokenizer = Tokenizer(MERGES, special_tokens=())
    assert _saved(tokenizer, tmp_path) == _canonical(_expected(MERGES, {}, "gpt2", PRESETS["gpt2"]))


def test_special_ids_with_gaps_record_a_sparse_layout(tmp_path: Path) -> None:
    specials = {"<|a|>": SIZE + 10, EOT: SIZE + 1}
    tokenizer = Tokenizer(MERGES, special_tokens=specials)
    expected = _expected(
        MERGES, specials, "gpt2", PRESETS["gpt2"], id_layout={"special_ids": "sparse"}
    )
    assert _saved(tokenizer, tmp_path) == _canonical(expected)


def test_training_metadata_is_optional_and_recorded() -> None:
    data = dumps_artifact(
        Tokenizer(MERGES).vocab,
        MERGES,
        {EOT: SIZE},
        training={"max_token_bytes": 16, "min_frequency": 2},
    )
    expected = _expected(
        MERGES,
        {EOT: SIZE},
        "gpt2",
        PRESETS["gpt2"],
        training={"max_token_bytes": 16, "min_frequency": 2},
    )
    assert data == _canonical(expected)
    assert parse_artifact(data).training == {"max_token_bytes": 16, "min_frequency": 2}


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize(
    ("pattern", "specials"),
    [
        ("gpt2", (EOT,)),
        ("cl100k", (EOT, "<|user|>", "<|assistant|>")),
        ("o200k", ()),
        ("cl100k", {"<|im_start|>": SIZE + 4, EOT: SIZE}),
        ("o200k", ("<|a|>", "<|ab|>", "<|abc|>")),
    ],
)
def test_a_loaded_tokenizer_is_the_saved_one(pattern: str, specials: Any, tmp_path: Path) -> None:
    tokenizer = Tokenizer.train(CORPUS, SIZE, pattern=pattern, special_tokens=specials)
    data = _saved(tokenizer, tmp_path)
    loaded = Tokenizer.load(tmp_path / "tok.json")
    assert loaded.merges == tokenizer.merges
    assert loaded.pattern_name == pattern
    assert loaded.pattern == PRESETS[pattern]
    assert dict(loaded.special_tokens) == dict(tokenizer.special_tokens)
    assert dict(loaded.vocab) == dict(tokenizer.vocab)
    text = CORPUS + "".join(tokenizer.special_tokens) + " x 1234"
    assert loaded.encode(text) == tokenizer.encode(text)
    (tmp_path / "tok.json").unlink()
    assert _saved(loaded, tmp_path) == data


def test_a_custom_pattern_needs_the_callers_trust(tmp_path: Path) -> None:
    tokenizer = Tokenizer.train(CORPUS, 280, pattern=CUSTOM)
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    document = json.loads(path.read_bytes())
    assert (document["pattern_name"], document["pretokenizer_pattern"]) == ("custom", CUSTOM)
    with pytest.raises(ArtifactError, match="trust_custom_pattern=True") as excinfo:
        Tokenizer.load(path)
    assert CUSTOM[:20] in str(excinfo.value)
    loaded = Tokenizer.load(path, trust_custom_pattern=True)
    assert (loaded.pattern_name, loaded.pattern) == ("custom", CUSTOM)
    assert loaded.encode(CORPUS) == tokenizer.encode(CORPUS)


# --------------------------------------------------------------------------- the loader


def _valid(*, stored: bool = True) -> dict[str, Any]:
    specials = {EOT: SIZE, "<|u|>": SIZE + 1}
    return _expected(MERGES, specials, "cl100k", PRESETS["cl100k"], stored=stored)


def _rejected(
    mutate: Callable[[dict[str, Any]], object],
    fragment: str,
    *,
    error: type[Exception] = ArtifactError,
    trust: bool = True,
    stored: bool = True,
) -> None:
    document = _valid(stored=stored)
    mutate(document)
    with pytest.raises(error) as excinfo:
        parse_artifact(_canonical(document), "a.json", trust_custom_pattern=trust)
    assert type(excinfo.value) is error
    assert fragment in str(excinfo.value)


@pytest.mark.parametrize("stored", [True, False])
def test_the_valid_document_loads(stored: bool) -> None:
    artifact = parse_artifact(_canonical(_valid(stored=stored)))
    assert artifact.pattern.name == "cl100k"
    assert list(artifact.merges) == MERGES
    assert artifact.special_tokens == {EOT: SIZE, "<|u|>": SIZE + 1}
    assert artifact.vocab == {
        int(key): bytes(value)
        for key, value in _vocab_document(MERGES, artifact.special_tokens).items()
    }


def test_either_merge_form_may_come_with_or_without_a_vocab() -> None:
    """The merge form and the vocab are independent: four documents, one artifact."""
    stored, compact = _valid(stored=True), _valid(stored=False)
    for merges_key, vocab in [("merges", False), ("merges_flat", True)]:
        document = dict(compact if merges_key == "merges_flat" else stored)
        if not vocab:
            del document["vocab"]
        else:
            document["vocab"] = stored["vocab"]
        artifact = parse_artifact(_canonical(document))
        assert (list(artifact.merges), artifact.special_tokens) == (
            MERGES,
            {EOT: SIZE, "<|u|>": SIZE + 1},
        )
        assert (artifact.stored_vocab is not None) == vocab


def test_the_merges_come_in_exactly_one_form() -> None:
    _rejected(lambda d: d.pop("merges"), "merges (or merges_flat)", error=MissingKeyError)
    _rejected(lambda d: d.update(merges_flat=[97, 98]), "has both merges and merges_flat")


@pytest.mark.parametrize(
    ("merges_flat", "fragment"),
    [
        ({"0": 97}, "merges_flat must be a list"),
        ([97, 98, 32], "its length 3 is odd"),
        ([97, 98, 32, True], "merges_flat[3] must be an integer, got True"),
        ([97, 98, 32.0, 256], "merges_flat[2] must be an integer, got 32.0"),
        ([97, 98, -1, 256], "merges_flat[2] must be non-negative"),
        ([97, 98, 32, 257], "merges_flat[3] is 257, but merge 1 creates id 257"),
        ([256, 98], "merges_flat[0] is 256, but merge 0 creates id 256"),
    ],
)
def test_a_bad_flat_merge_list_is_named_by_its_index(merges_flat: object, fragment: str) -> None:
    def mutate(document: dict[str, Any]) -> None:
        document["merges_flat"] = merges_flat
        if isinstance(merges_flat, list) and len(merges_flat) % 2 == 0:
            size = 256 + len(merges_flat) // 2
            document["mergeable_vocab_size"] = size
            document["special_tokens"] = {EOT: size, "<|u|>": size + 1}

    _rejected(mutate, fragment, stored=False)


def test_a_compact_artifact_checks_its_special_tokens_without_a_vocab() -> None:
    _rejected(
        lambda d: d["special_tokens"].update({"<|u|>": SIZE + 2}),
        "must run from mergeable_vocab_size",
        stored=False,
    )
    _rejected(
        lambda d: d["special_tokens"].update({"<|u|>": SIZE - 1}),
        "special ids run from mergeable_vocab_size",
        stored=False,
    )


def test_v2_requires_the_pattern_name() -> None:
    _rejected(lambda d: d.pop("pattern_name"), "pattern_name", error=MissingKeyError)


@pytest.mark.parametrize("name", ["gpt4", "", "CL100K", None, 1, ["cl100k"]])
def test_an_unknown_pattern_name_is_refused(name: object) -> None:
    _rejected(lambda d: d.update(pattern_name=name), "pattern_name must be one of")


def test_a_preset_name_needs_the_presets_regex() -> None:
    _rejected(
        lambda d: d.update(pretokenizer_pattern=PRESETS["cl100k"] + "|x"),
        "is not the cl100k preset's regex",
    )
    _rejected(lambda d: d.update(pattern_name="o200k"), "is not the o200k preset's regex")


def test_a_custom_pattern_that_is_a_preset_is_refused() -> None:
    _rejected(lambda d: d.update(pattern_name="custom"), "the cl100k preset's")


def test_custom_patterns_are_length_limited_before_trust_is_asked() -> None:
    long_pattern = "a|" * MAX_CUSTOM_PATTERN_CHARS + "b"
    for trust in (True, False):
        _rejected(
            lambda d: d.update(pattern_name="custom", pretokenizer_pattern=long_pattern),
            f"at most {MAX_CUSTOM_PATTERN_CHARS:,} are accepted",
            trust=trust,
        )


@pytest.mark.parametrize(
    ("regex", "fragment"),
    [
        ("[unclosed", "not a valid regex"),
        ("a*", "matches the empty string"),
        ("(a)|.", "capturing groups"),
    ],
)
def test_a_trusted_custom_pattern_must_still_be_usable(regex: str, fragment: str) -> None:
    _rejected(lambda d: d.update(pattern_name="custom", pretokenizer_pattern=regex), fragment)


def test_v2_with_the_spec_configuration_is_refused() -> None:
    """One tokenizer, one artifact: what v1 describes is written as v1."""

    def to_spec(document: dict[str, Any]) -> None:
        document.update(
            pattern_name="gpt2",
            pretokenizer_pattern=PRESETS["gpt2"],
            special_tokens={EOT: SIZE},
            vocab=_vocab_document(MERGES, {EOT: SIZE}),
        )

    _rejected(to_spec, "written as version 1")


def test_v1_keeps_its_six_keys() -> None:
    def v1_with_a_name(document: dict[str, Any]) -> None:
        document.update(
            schema_version=1,
            pattern_name="gpt2",
            pretokenizer_pattern=PRESETS["gpt2"],
            special_tokens={EOT: SIZE},
            vocab=_vocab_document(MERGES, {EOT: SIZE}),
        )

    _rejected(v1_with_a_name, 'unexpected top-level key(s) "pattern_name"')


def test_unknown_keys_are_refused_in_v2() -> None:
    _rejected(lambda d: d.update(byte_order=[]), 'unexpected top-level key(s) "byte_order"')


def _set_special(text: str, token_id: object) -> Callable[[dict[str, Any]], None]:
    def mutate(document: dict[str, Any]) -> None:
        document["special_tokens"] = {EOT: SIZE, text: token_id}
        if type(token_id) is int and token_id > SIZE:  # a fresh id: give it its entry
            document["vocab"].pop(str(SIZE + 1))
            document["vocab"][str(token_id)] = list(text.encode("utf-8", "surrogatepass"))

    return mutate


@pytest.mark.parametrize(
    ("text", "token_id", "fragment"),
    [
        ("", SIZE + 1, "must not be the empty string"),
        ("\ud800", SIZE + 1, "not valid Unicode"),
        ("<|u|>", True, "must be an integer"),
        ("<|u|>", float(SIZE + 1), "must be an integer"),
        ("<|u|>", SIZE, "the id of '<|endoftext|>' too"),
        ("<|u|>", SIZE - 1, "special ids run from mergeable_vocab_size"),
        ("<|u|>", MAX_TOKEN_ID + 1, "special ids run from mergeable_vocab_size"),
        ("<|u|>", SIZE + 2, "without gaps"),
    ],
)
def test_special_tokens_are_checked(text: str, token_id: object, fragment: str) -> None:
    _rejected(_set_special(text, token_id), fragment)


def test_special_tokens_must_spell_their_vocab_entry() -> None:
    _rejected(
        lambda d: d["vocab"].update({str(SIZE + 1): [60]}), "must be the UTF-8 bytes of '<|u|>'"
    )
    _rejected(lambda d: d["vocab"].pop(str(SIZE + 1)), f'vocab has no entry "{SIZE + 1}"')


def test_no_vocab_entry_outside_the_merges_and_the_specials() -> None:
    _rejected(lambda d: d["vocab"].update({str(SIZE + 2): [1]}), "is outside the vocabulary")
    _rejected(
        lambda d: d.update(special_tokens={EOT: SIZE}),
        f'vocab["{SIZE + 1}"] is outside the vocabulary',
    )


def test_the_sparse_layout_is_recorded_exactly_when_ids_have_gaps() -> None:
    def gap(document: dict[str, Any]) -> None:
        document["special_tokens"]["<|u|>"] = SIZE + 5
        document["vocab"][str(SIZE + 5)] = document["vocab"].pop(str(SIZE + 1))

    _rejected(gap, '"id_layout": {"special_ids": "sparse"}')

    def gap_with_layout(document: dict[str, Any]) -> None:
        gap(document)
        document["id_layout"] = {"special_ids": "sparse"}

    document = _valid()
    gap_with_layout(document)
    assert parse_artifact(_canonical(document)).special_tokens == {EOT: SIZE, "<|u|>": SIZE + 5}
    _rejected(
        lambda d: d.update(id_layout={"special_ids": "sparse"}), "follow the mergeable vocabulary"
    )


@pytest.mark.parametrize(
    ("layout", "fragment"),
    [
        ({}, "id_layout must be a non-empty object"),
        (None, "id_layout must be a non-empty object"),
        ([], "id_layout must be a non-empty object"),
        ({"special_ids": "dense"}, 'must be "sparse"'),
        ({"special_ids": "sparse", "bytes": 1}, "unexpected id_layout key(s)"),
    ],
)
def test_the_id_layout_is_checked(layout: object, fragment: str) -> None:
    _rejected(lambda d: d.update(id_layout=layout), fragment)


@pytest.mark.parametrize(
    ("training", "fragment"),
    [
        ({}, "training must be a non-empty object"),
        (None, "training must be a non-empty object"),
        ({"min_frequency": 0}, 'training["min_frequency"] must be an integer of at least 1'),
        ({"min_frequency": True}, "must be an integer of at least 1"),
        ({"max_token_bytes": 2.0}, "must be an integer of at least 2"),
        ({"max_token_bytes": 1}, 'training["max_token_bytes"] must be an integer of at least 2'),
        ({"max_token_bytes": 0}, "must be an integer of at least 2, got 0"),
        ({"epochs": 1}, "unexpected training key(s)"),
    ],
)
def test_training_metadata_is_checked(training: object, fragment: str) -> None:
    _rejected(lambda d: d.update(training=training), fragment)


# --------------------------------------------------------------------------- docs/schema.md


def test_the_examples_in_docs_schema_md_are_what_bpetite_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each JSON example, base entries aside, is the artifact of the tokenizer it describes."""
    path = REPO_ROOT / "docs" / "schema.md"
    blocks = doc_blocks(path.read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    assert sum(run_doctest(block, path) for block in blocks if block.language == "pycon") > 0
    examples = [json.loads(block.text) for block in blocks if block.language == "json"]
    tokenizers = [
        Tokenizer.train("ab ab ab", 258),
        Tokenizer.load(tmp_path / "chat.json"),
        Tokenizer.train("ab ab ab", 258, special_tokens={"<|x|>": 256, "<|y|>": 256}),
    ]
    assert len(examples) == len(tokenizers)
    for example, tokenizer in zip(examples, tokenizers, strict=True):
        document = json.loads(_saved(tokenizer, tmp_path / str(id(tokenizer))))
        if "vocab" in document:  # v1 stores it; v2 as written here does not
            document["vocab"] = {k: v for k, v in document["vocab"].items() if int(k) >= 256}
        assert example == document
