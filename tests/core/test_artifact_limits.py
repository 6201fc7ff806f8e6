"""One limit for writing and loading: whatever bpetite writes, it loads with its defaults.

Schema v1 spells out every token's bytes, so a vocabulary of long tokens (one character
repeated for megabytes trains into tokens of millions of bytes) would make a v1 file of
hundreds of megabytes that the loader's default limit refuses. Such a tokenizer is
written in v2's compact form; everything else keeps the spec's v1 bytes.
"""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import ArtifactError, Tokenizer
from bpetite.core import _artifact, _model
from bpetite.core._artifact import MAX_ARTIFACT_BYTES, v1_size
from bpetite.core._patterns import resolve_pattern
from bpetite.errors import ParameterError
from bpetite.reference import vocab as reference_vocab

GPT2 = resolve_pattern("gpt2")

#: Merge r joins token 256 + r - 1 with itself: token 256 + r is "a" * 2 ** (r + 1).
DOUBLINGS = [(97, 97)] + [(256 + rank, 256 + rank) for rank in range(24)]


def _v1_document(tokenizer: Tokenizer) -> bytes:
    """The spec's v1 file, built from the reference vocabulary, not from bpetite's writer."""
    size = 256 + len(tokenizer.merges)
    tokens = reference_vocab(tokenizer.merges)
    tokens[size] = b"<|endoftext|>"
    document = {
        "mergeable_vocab_size": size,
        "merges": [list(merge) for merge in tokenizer.merges],
        "pretokenizer_pattern": tokenizer.pattern,
        "schema_version": 1,
        "special_tokens": {"<|endoftext|>": size},
        "vocab": {str(token_id): list(token) for token_id, token in tokens.items()},
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab \n\u00e9\u4e2d0", max_size=300), st.integers(256, 330))
def test_v1_size_is_the_length_of_the_v1_file(corpus: str, vocab_size: int) -> None:
    tokenizer = Tokenizer.train(corpus, vocab_size)
    document = _v1_document(tokenizer)
    assert v1_size(tokenizer.merges, GPT2) == len(document)
    assert tokenizer.dumps() == document  # within the limit: still the spec's bytes


def test_a_vocabulary_too_long_for_v1_is_written_compact_and_loads(tmp_path: Path) -> None:
    tokenizer = Tokenizer(DOUBLINGS)
    assert tokenizer.token_bytes(256 + 24) == b"a" * 2**25
    assert v1_size(tokenizer.merges, GPT2) > MAX_ARTIFACT_BYTES
    data = tokenizer.dumps()
    document = json.loads(data)
    assert document["schema_version"] == 2
    assert "vocab" not in document
    assert len(data) < 1000
    path = tmp_path / "long-tokens.json"
    tokenizer.save(path)
    loaded = Tokenizer.load(path)  # the default limit
    assert loaded.merges == tokenizer.merges
    assert loaded.special_tokens == {"<|endoftext|>": 256 + len(DOUBLINGS)}
    assert loaded.encode("a" * 2**25 + "<|endoftext|>") == [256 + 24, 256 + len(DOUBLINGS)]


def test_a_compact_file_of_what_v1_describes_within_the_limit_is_refused() -> None:
    small = Tokenizer(DOUBLINGS[:3])
    document = json.loads(Tokenizer(DOUBLINGS).dumps())
    document["merges_flat"] = [part for merge in small.merges for part in merge]
    document["mergeable_vocab_size"] = 256 + len(small.merges)
    document["special_tokens"] = {"<|endoftext|>": 256 + len(small.merges)}
    data = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    with pytest.raises(ArtifactError, match="written as version 1"):
        _artifact.parse_artifact(data)


def test_a_v1_file_over_the_limit_still_loads_with_a_larger_max_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A v1 file written before the limit existed is read as v1, not refused as mislabelled."""
    tokenizer = Tokenizer(DOUBLINGS[:6])
    document = _v1_document(tokenizer)
    monkeypatch.setattr(_artifact, "MAX_ARTIFACT_BYTES", len(document) - 1)
    path = tmp_path / "old.json"
    path.write_bytes(document)
    with pytest.raises(ArtifactError, match="pass a larger max_bytes"):
        Tokenizer.load(path, max_bytes=len(document) - 1)
    assert Tokenizer.load(path, max_bytes=len(document)).merges == tokenizer.merges
    # and what this bpetite writes for it now is the compact form, within the limit
    assert json.loads(tokenizer.dumps())["schema_version"] == 2


def test_the_writer_refuses_an_artifact_the_loader_would_refuse(tmp_path: Path) -> None:
    huge = "<|" + "x" * MAX_ARTIFACT_BYTES + "|>"
    tokenizer = Tokenizer([], special_tokens=[huge])
    with pytest.raises(ArtifactError, match="over the limit of 67,108,864 bytes") as caught:
        tokenizer.save(tmp_path / "huge.json")
    assert "special tokens hold 67,108,868 characters" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_merges_that_double_a_token_are_refused_before_the_memory_runs_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each merge (i, i) doubles the last token: 40 of them, a file of under a kilobyte,
    would ask for a terabyte. The bound (lowered here, so the test allocates little)
    refuses it, as a ParameterError built and an ArtifactError naming the file loaded."""
    monkeypatch.setattr(_model, "MAX_TOKEN_BYTES", 1 << 20)
    doubling = [(97, 97)] + [(256 + i, 256 + i) for i in range(40)]
    message = r"merges\[19\] would take the tokens past 1,048,576 bytes in all"
    with pytest.raises(ParameterError, match=message):
        Tokenizer(doubling)
    fits = Tokenizer(doubling[:19])  # 2 + 4 + ... + 2**19 bytes: within the bound
    assert len(fits.token_bytes(256 + 18)) == 1 << 19
    document = {  # schema v2's compact form: the merges, not the tokens' bytes
        "schema_version": 2,
        "mergeable_vocab_size": 256 + len(doubling),
        "merges_flat": [part for pair in doubling for part in pair],
        "pattern_name": "gpt2",
        "pretokenizer_pattern": fits.pattern,
        "special_tokens": {"<|endoftext|>": 256 + len(doubling)},
    }
    path = tmp_path / "doubling.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ArtifactError, match=f"{path}: {message}"):
        Tokenizer.load(path)
    with pytest.raises(ArtifactError, match=f"<bytes>: {message}"):
        Tokenizer.loads(path.read_bytes())
    # What the trainer learns is made from text, so not counted (nor are the built-ins).
    learned = Tokenizer.train("a" * (1 << 20), 300)
    total = sum(len(learned.token_bytes(i)) for i in range(learned.mergeable_vocab_size))
    assert total > 1 << 20
    with pytest.raises(ParameterError, match="would take the tokens past 1,048,576 bytes"):
        Tokenizer(list(learned.merges))  # the same merges, given by hand: counted
