"""Ids are not positions: special ids among the mergeable ones, and two texts for one id.

A mergeable token's id is the next id no special token holds. The oracles: tiktoken,
which takes any ranks and special ids (a model's tokens given to it by id must encode
every text as bpetite does), and ``bpetite.reference`` in indices (the same model with
its specials after the merges, whose ids are indices, mapped through the id layout).
The artifact keeps such a model exactly, in a form an older bpetite refuses.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer, get_encoding, list_encoding_names
from bpetite import reference as ref
from bpetite.errors import ArtifactError, ParameterError
from tests import datafiles
from tests.strategies import MULTILINGUAL, tricky_text

CORPUS = datafiles.shakespeare_text()[:20_000]
#: Specials among the merged ids (260, 270), one after them, and an alias of 270.
SPECIALS = {"<|a|>": 260, "<|b|>": 270, "<|c|>": 400, "<|b2|>": 270}


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    """A model in training's layout: indices are ids, <|endoftext|> after the merges."""
    return Tokenizer.train(CORPUS, 300)


@pytest.fixture(scope="module")
def interleaved(trained: Tokenizer) -> Tokenizer:
    """The same tokens with specials among them: merge r takes the r-th free id."""
    return Tokenizer.train(CORPUS, 300, special_tokens=SPECIALS)


def index_to_id(tokenizer: Tokenizer) -> list[int]:
    special_ids = set(tokenizer.special_tokens.values())
    return [token_id for token_id in sorted(tokenizer.vocab) if token_id not in special_ids]


def as_tiktoken(tokenizer: Tokenizer) -> Any:
    """tiktoken given the tokenizer's mergeable tokens and specials by id."""
    special_ids = set(tokenizer.special_tokens.values())
    ranks = {token: i for i, token in tokenizer.vocab.items() if i not in special_ids}
    return tiktoken.Encoding(
        "test",
        pat_str=tokenizer.pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(tokenizer.special_tokens),
    )


def test_the_merged_ids_skip_the_special_ids(trained: Tokenizer, interleaved: Tokenizer) -> None:
    ids = index_to_id(interleaved)
    assert ids[:260] == list(range(260))
    assert ids[260:269] == list(range(261, 270)) and ids[269:271] == [271, 272]
    assert ids[-1] == 301  # 300 tokens, two ids skipped; 400 lies past them
    assert interleaved.mergeable_vocab_size == 300
    assert interleaved.n_vocab == 401
    # the same tokens, in the same order, as training placed them
    assert [interleaved.vocab[i] for i in ids] == [trained.vocab[i] for i in range(300)]
    assert interleaved.merges == tuple((ids[left], ids[right]) for left, right in trained.merges)


@settings(deadline=None)
@given(st.lists(st.one_of(tricky_text, st.sampled_from([*SPECIALS, " " * 30])), max_size=6))
def test_ids_are_the_reference_in_indices_mapped_and_tiktokens(parts: list[str]) -> None:
    text = "".join(parts)
    trained, interleaved = _models()
    ids = index_to_id(interleaved)
    expected = [ids[i] for i in ref.encode(trained, text, allowed_special=set())]
    assert interleaved.encode_ordinary(text) == expected
    assert interleaved.encode(text) == _oracle().encode(text, allowed_special="all")
    # an alias encodes to its id, which decodes to the id's first text
    assert interleaved.decode(interleaved.encode(text)) == text.replace("<|b2|>", "<|b|>")


_CACHE: dict[str, Any] = {}


def _models() -> tuple[Tokenizer, Tokenizer]:
    if "models" not in _CACHE:
        _CACHE["models"] = (
            Tokenizer.train(CORPUS, 300),
            Tokenizer.train(CORPUS, 300, special_tokens=SPECIALS),
        )
    return _CACHE["models"]  # type: ignore[no-any-return]


def _oracle() -> Any:
    if "oracle" not in _CACHE:
        _CACHE["oracle"] = as_tiktoken(_models()[1])
    return _CACHE["oracle"]


def test_every_encode_variant_speaks_ids(interleaved: Tokenizer) -> None:
    text = CORPUS[:5_000] + "<|a|><|b|>" + " " * 40
    ids = interleaved.encode(text)
    ordinary = interleaved.encode_ordinary(text)
    assert {260, 270} <= set(ids)
    assert list(interleaved.encode_ordinary_array(text)) == ordinary
    assert interleaved.encode_to_numpy(text).tolist() == ids
    assert interleaved.encode_to_numpy(text).dtype == np.uint32
    assert interleaved.count_tokens(text) == len(ids)
    assert interleaved.encode_batch([text, text[:99]]) == [ids, interleaved.encode(text[:99])]
    assert interleaved.encode_with_offsets(text)[0] == ids
    assert interleaved.decode_with_offsets(ids)[0] == text
    assert [interleaved.encode_chunk(interleaved.vocab[i]) for i in (271, 301)] == [[271], [301]]
    assert interleaved.encode_bytes(text.encode()) == ordinary
    stream = interleaved.stream_decoder()
    assert "".join(map(stream.step, ids)) + stream.flush() == text
    assert interleaved.encode_single_token(interleaved.vocab[301]) == 301
    with pytest.raises(OverflowError, match="does not fit in array typecode 'B'"):
        interleaved.encode_ordinary_array(text, "B")


def test_an_alias_encodes_to_its_id_and_the_id_decodes_to_the_first_text(
    interleaved: Tokenizer,
) -> None:
    assert interleaved.encode("<|b|><|b2|>") == [270, 270]
    assert interleaved.decode([270]) == "<|b|>"
    assert interleaved.token_bytes(270) == b"<|b|>"
    assert interleaved.encode_single_token("<|b2|>") == 270
    swapped = Tokenizer(
        interleaved.merges, special_tokens={"<|a|>": 260, "<|b2|>": 270, "<|b|>": 270, "<|c|>": 400}
    )
    assert swapped.decode([270]) == "<|b2|>"
    assert swapped != interleaved  # the same ids, not the same text
    # The reference says the same: the id is the first text's.
    for tokenizer in (interleaved, swapped):
        model = ref.Model(tokenizer.merges, special_tokens=dict(tokenizer.special_tokens))
        assert ref.decode(model, [270]) == tokenizer.decode([270])
    assert Tokenizer(interleaved.merges, special_tokens=dict(SPECIALS)) == interleaved


def test_the_constructor_checks_merges_against_the_layout(interleaved: Tokenizer) -> None:
    merges = list(interleaved.merges)
    merges[10] = (merges[10][0], 260)  # merge 10 makes id 267: 260 is below it, a special's
    with pytest.raises(ParameterError, match=r"merges\[10\] is \(\d+, 260\).*special token"):
        Tokenizer(merges, special_tokens=SPECIALS)
    merges[10] = (merges[10][0], 268)  # not below 267
    with pytest.raises(ParameterError, match=r"merges\[10\] must be two token ids below 267"):
        Tokenizer(merges, special_tokens=SPECIALS)
    with pytest.raises(ParameterError, match=r"at least 256 \(ids 0..255 are the bytes\)"):
        Tokenizer(merges, special_tokens={"<|x|>": 255})


def test_pickle_keeps_the_layout_and_the_alias(interleaved: Tokenizer) -> None:
    copy = pickle.loads(pickle.dumps(interleaved))
    assert copy == interleaved
    assert copy.decode([270]) == "<|b|>" and copy.encode("<|b2|> x") == interleaved.encode(
        "<|b2|> x"
    )


# ------------------------------------------------------------------ the artifact


def test_the_artifact_keeps_the_model_exactly(interleaved: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    interleaved.save(path)
    loaded = Tokenizer.load(path)
    assert loaded == interleaved
    assert loaded.dumps() == interleaved.dumps() == path.read_bytes()
    assert loaded.decode([270]) == "<|b|>"


def test_the_artifact_says_what_an_older_bpetite_refuses(interleaved: Tokenizer) -> None:
    """An older loader accepts id_layout.special_ids "sparse" only, special ids from
    mergeable_vocab_size on, and no unknown top-level key: this file breaks all three."""
    document = json.loads(interleaved.dumps())
    assert document["schema_version"] == 2
    assert document["id_layout"] == {"special_ids": "interleaved"}
    assert min(document["special_tokens"].values()) < document["mergeable_vocab_size"]
    assert document["special_tokens"] == {"<|a|>": 260, "<|b|>": 270, "<|c|>": 400}
    assert document["special_aliases"] == {"<|b2|>": 270}


def _refused(tmp_path: Path, document: dict[str, Any], message: str) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ArtifactError, match=message):
        Tokenizer.load(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(id_layout={"special_ids": "interleaved?"}), "must be"),
        (lambda d: d.pop("id_layout"), "special ids run from mergeable_vocab_size 300"),
        (
            lambda d: d.update(special_tokens={"<|c|>": 400}, special_aliases={"<|b2|>": 400}),
            "no special id lies among the mergeable ids",
        ),
        (lambda d: d["special_tokens"].update({"<|a|>": 255}), "run from 256"),
        (lambda d: d["special_aliases"].update({"<|b2|>": 271}), "must be the id of a special"),
        (lambda d: d["special_aliases"].update({"<|a|>": 270}), "is in special_tokens already"),
        (lambda d: d.update(special_aliases={}), "non-empty object"),
        (lambda d: d["special_tokens"].update({"<|b2|>": 270}), "the id of '<|b|>' too"),
        # merge 10 makes index 266, id 267 (260 is skipped below it)
        (lambda d: d["merges_flat"].__setitem__(21, 260), r"merges_flat\[21\] is 260, a special"),
        (lambda d: d["merges_flat"].__setitem__(21, 272), "creates id 267 and may only use"),
    ],
)
def test_the_loader_checks_the_layout_and_the_aliases(
    interleaved: Tokenizer, tmp_path: Path, edit: Any, message: str
) -> None:
    document = json.loads(interleaved.dumps())
    edit(document)
    _refused(tmp_path, document, message)


def test_a_stored_vocab_is_checked_at_the_interleaved_ids(
    interleaved: Tokenizer, tmp_path: Path
) -> None:
    document = json.loads(interleaved.dumps())
    document["vocab"] = {str(i): list(token) for i, token in interleaved.vocab.items()}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert Tokenizer.load(path) == interleaved
    document["vocab"]["261"] = [0]
    _refused(tmp_path, document, r'vocab\["261"\] must be the bytes of merges\[4\]|vocab\["261"\]')
    del document["vocab"]["272"]
    _refused(tmp_path, document, 'vocab has no entry "272"')


# ------------------------------------------------------------------ surgery


def test_p50k_truncates_and_keeps_its_ids() -> None:
    p50k, r50k = get_encoding("p50k_base"), get_encoding("r50k_base")
    assert p50k.truncated(50256).merges == r50k.merges
    assert p50k.truncated(50256) == r50k
    five = p50k.truncated(50261)
    assert sorted(set(five.vocab) - set(r50k.vocab)) == [50257, 50258, 50259, 50260, 50261]
    assert five.encode("a" + " " * 6 + "b") == p50k.encode("a" + " " * 6 + "b")
    renumbered = p50k.truncated(50261, renumber_specials=True)
    assert renumbered.special_tokens == {"<|endoftext|>": 50261}
    assert renumbered.vocab[50256] == b"  "


def test_p50k_special_edits_keep_every_mergeable_id() -> None:
    p50k = get_encoding("p50k_base")
    chat = p50k.with_special_tokens(["<|im_start|>"])
    assert chat.special_tokens["<|im_start|>"] == 50281
    assert chat.encode("<|im_start|>" + " " * 9) == [50281, 50264]
    swapped = p50k.with_special_tokens(
        {"<|eot|>": 50256, "<|endoftext|>": 50300}
    )  # another special takes 50256: nothing is renumbered
    assert swapped.encode("<|eot|><|endoftext|>   ") == [50256, 50300, 50258]
    with pytest.raises(ParameterError, match="free that id and renumber"):
        p50k.with_special_tokens(drop=["<|endoftext|>"])
    with pytest.raises(ParameterError, match="free that id and renumber"):
        p50k.with_special_tokens({"<|endoftext|>": 60000})
    with pytest.raises(ParameterError, match="that is the mergeable token b'  '"):
        p50k.with_special_tokens({"<|x|>": 50257})


def test_harmony_keeps_its_alias_through_edits() -> None:
    harmony = get_encoding("o200k_harmony")
    edited = harmony.with_special_tokens({"<|tool|>": 201_088})
    assert edited.encode("<|reserved_200018|><|tool|>") == [200018, 201_088]
    assert edited.decode([200018]) == "<|endofprompt|>"
    without = harmony.with_special_tokens(drop=["<|reserved_200018|>"])
    assert without.encode("<|endofprompt|>") == [200018]
    assert without.encode("<|reserved_200018|>") == harmony.encode_ordinary("<|reserved_200018|>")
    moved = harmony.truncated(199_998, renumber_specials=True)
    assert moved.special_tokens["<|endofprompt|>"] == moved.special_tokens["<|reserved_200018|>"]


# ------------------------------------------------------------------ every encoding


ADVERSARIAL = [
    " " * 1000,
    "\n" * 300 + " " * 17 + "\t" * 33 + "x",
    "a" * 5000 + " " * 25 + "b",
    "<|endoftext|>" * 3 + "  <|endoftext|>" + " " * 24,
    "<|fim_prefix|> <|fim_middle|>  <|fim_suffix|>   <|endofprompt|>",
    "<|start|>assistant<|channel|>final<|message|>hi<|return|><|reserved_200018|>",
    "<|endoftext",
    MULTILINGUAL,
    "\ud83d",
]


@pytest.mark.parametrize("name", list_encoding_names())
def test_every_encoding_gives_tiktokens_ids_on_adversarial_text(name: str) -> None:
    tokenizer, oracle = get_encoding(name), datafiles.tiktoken_encoding(name)
    for text in ADVERSARIAL:
        assert tokenizer.encode(text, errors="replace") == oracle.encode(
            text, allowed_special="all"
        )
        assert tokenizer.encode_ordinary(text, errors="replace") == oracle.encode_ordinary(text)
        assert tokenizer.encode(
            text, allowed_special=set(), disallowed_special=(), errors="replace"
        ) == oracle.encode(text, disallowed_special=())
        found = [special for special in tokenizer.special_tokens if special in text]
        if found:
            with pytest.raises(ValueError):
                oracle.encode(text)
            with pytest.raises(ValueError, match="allowed_special"):
                tokenizer.encode(text, allowed_special=set(), errors="replace")
