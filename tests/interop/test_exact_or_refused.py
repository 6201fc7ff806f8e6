"""Conversions where bpetite and a peer would give different ids: each refused, or made exact.

Every case is checked against the peer itself (``tokenizers``, ``tiktoken``): first that
the peer really reads the file differently from bpetite (so the refusal is needed), then
that bpetite refuses it with a message naming what is wrong, or now gives the peer's ids.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import regex
import tiktoken
import tokenizers

from bpetite import PRESETS, Tokenizer, get_encoding
from bpetite.interop import InteropError, export_hf, export_tiktoken, import_vocabulary
from bpetite.interop._alphabet import to_alphabet
from bpetite.interop._detect import MAX_GUNZIPPED_BYTES
from tests.cli.running import run

END = "<|endoftext|>"
CORPUS = "hello world the cat sat on the mat " * 20


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


def _tiktoken_ranks(tokenizer: Tokenizer) -> dict[bytes, int]:
    """The mergeable ranks of `tokenizer`, built here, not by the export under test."""
    specials = set(tokenizer.special_tokens.values())
    return {
        data: token_id for token_id, data in tokenizer.vocab.items() if token_id not in specials
    }


# ------------------------------------------------ a possessive counted repetition in tokenizer.json


@pytest.fixture(scope="module")
def cl100k_hf_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(export_hf(get_encoding("cl100k_base")))
    return document


def test_cl100k_spelled_possessively_in_a_tokenizer_json_is_refused(
    cl100k_hf_document: dict[str, Any], tmp_path: Path
) -> None:
    """``\\p{N}{1,3}+`` is one run of up to three digits to bpetite, but any run of digits
    to Oniguruma: tokenizers gives other ids, so the file is not the cl100k preset."""
    document = json.loads(json.dumps(cl100k_hf_document))
    document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = PRESETS["cl100k"]
    path = _write(tmp_path / "possessive.json", document)
    text = "year 2024123"
    theirs = tokenizers.Tokenizer.from_file(str(path)).encode(text).ids
    assert theirs != get_encoding("cl100k_base").encode(text)  # the peer does differ
    with pytest.raises(InteropError, match=r"possessive\.json.*\{1,3\}\+.*repeated group"):
        import_vocabulary([path])


def test_cl100k_as_the_export_spells_it_imports_with_the_peers_ids(
    cl100k_hf_document: dict[str, Any], tmp_path: Path
) -> None:
    path = _write(tmp_path / "exported.json", cl100k_hf_document)
    result = import_vocabulary([path])
    assert result.tokenizer.pattern_name == "cl100k"
    text = "year 2024123, 7 and 12345678 <|endoftext|>"
    theirs = tokenizers.Tokenizer.from_file(str(path)).encode(text).ids
    assert result.to_source_ids(result.tokenizer.encode(text)) == theirs


# ------------------------------------- a special token spelled like a token of the byte alphabet


def _with_added_token(tokenizer: Tokenizer, content: str, token_id: int) -> str:
    """`tokenizer`'s export with one more added token, written by hand as the export would."""
    document = json.loads(export_hf(tokenizer))
    document["added_tokens"].append(
        {
            "id": token_id,
            "content": content,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
    )
    return json.dumps(document, ensure_ascii=False)


@pytest.mark.parametrize("special", ["§", "é", "Ġ", "Ġthe"])
@pytest.mark.parametrize("layout", ["contiguous", "sparse"])
def test_a_special_token_spelled_like_a_mergeable_one_is_refused(special: str, layout: str) -> None:
    """tokenizers gives such an added token the vocabulary entry's id, whatever id the
    file states: in every layout, not only with sparse special ids."""
    base = Tokenizer.train(CORPUS, 300, special_tokens=())
    special_id = base.n_vocab if layout == "contiguous" else base.n_vocab + 7
    mergeable = {to_alphabet(data): token_id for token_id, data in base.vocab.items()}[special]
    hf = tokenizers.Tokenizer.from_str(_with_added_token(base, special, special_id))
    assert hf.encode(f"a{special}").ids[-1] == mergeable != special_id  # the peer differs
    tokenizer = base.with_special_tokens({special: special_id})
    assert tokenizer.encode(f"a{special}")[-1] == special_id
    message = (
        rf'special token "{special}" \(id {special_id}\) is spelled like the mergeable '
        rf"token {mergeable}\b"
    )
    with pytest.raises(InteropError, match=message):
        export_hf(tokenizer)


def test_the_error_of_train_with_a_section_sign_special() -> None:
    """The audit's case: "§" is byte 0xA7's own spelling."""
    tokenizer = Tokenizer.train("hello world " * 50, 270, special_tokens=[END, "§"])
    with pytest.raises(InteropError, match=r'"§" .* mergeable token 167'):
        export_hf(tokenizer)


# ------------------------------------------------ special tokens where one begins another


@pytest.mark.parametrize(
    ("specials", "text"),
    [(["<|a|>", "<|a|>b"], "<|a|>bc"), (["<s>", "</s>", "<s"], "<s>x</s>y<sz")],
)
def test_special_tokens_where_one_begins_another_are_refused_by_the_tiktoken_export(
    specials: list[str], text: str
) -> None:
    tokenizer = Tokenizer.train("hello world " * 50, 270, special_tokens=specials)
    with pytest.raises(InteropError, match=r"is the start of the special token"):
        export_tiktoken(tokenizer)
    # Hugging Face reads the longer, as bpetite does: that export stays.
    hf = tokenizers.Tokenizer.from_str(export_hf(tokenizer))
    assert hf.encode(text).ids == tokenizer.encode(text)


def test_tiktoken_reads_such_special_tokens_in_an_order_bpetite_cannot_follow() -> None:
    """Why the refusal: tiktoken takes whichever alternative its hash table lists first.

    Given ``<s>``, ``</s>`` and ``<s`` it reads ``<s`` in ``<s>`` (the shorter); given
    only ``<s`` and ``<s>`` the longer. Neither "longest" nor "shortest" nor "first
    listed" describes it, so bpetite cannot promise tiktoken's ids for such a set.
    """
    picks = []
    for specials in (["<s>", "</s>", "<s"], ["<s", "<s>"], ["<s>", "<s"]):
        tokenizer = Tokenizer.train("hello world " * 50, 270, special_tokens=specials)
        encoding = tiktoken.Encoding(
            "prefixes",
            pat_str=tokenizer.pattern,
            mergeable_ranks=_tiktoken_ranks(tokenizer),
            special_tokens=dict(tokenizer.special_tokens),
        )
        theirs = encoding.encode("<s>", allowed_special="all")
        picks.append(theirs == tokenizer.encode("<s>"))
    assert not all(picks)  # tiktoken does not always read the longest, as bpetite does


def test_special_tokens_that_overlap_without_a_prefix_export_with_tiktokens_ids() -> None:
    """``<|a`` and ``a|>`` overlap in ``<|a|>`` but neither begins the other: both take the
    leftmost match, so the export stays and gives tiktoken's ids."""
    tokenizer = Tokenizer.train("hello world " * 50, 270, special_tokens=["<|a", "a|>"])
    export = export_tiktoken(tokenizer)
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in map(str.split, export.ranks.splitlines())
    }
    encoding = tiktoken.Encoding(
        "overlap",
        pat_str=export.pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(export.special_tokens),
        explicit_n_vocab=export.n_vocab,
    )
    for text in ("<|a|>", "x<|a|>b", "a|><|a", "<|<|aa|>|>"):
        assert encoding.encode(text, allowed_special="all") == tokenizer.encode(text), text


# ------------------------------------------------------------------------- gzip inputs


@pytest.fixture(scope="module")
def ranks_file() -> bytes:
    return export_tiktoken(Tokenizer.train(CORPUS, 300)).ranks.encode("ascii")


def test_every_member_of_a_multi_member_gzip_is_read(ranks_file: bytes, tmp_path: Path) -> None:
    """``cat a.gz b.gz`` is one gzip file to ``gzip.decompress`` and ``zcat``."""
    lines = ranks_file.splitlines(keepends=True)
    joined = gzip.compress(b"".join(lines[:100])) + gzip.compress(b"".join(lines[100:]))
    assert gzip.decompress(joined) == ranks_file
    whole = tmp_path / "whole.tiktoken"
    whole.write_bytes(ranks_file)
    members = tmp_path / "members.tiktoken.gz"
    members.write_bytes(joined + b"\0" * 8)  # zero padding after the last member, as gzip allows
    expected = import_vocabulary([whole]).tokenizer
    assert import_vocabulary([members]).tokenizer == expected


def test_trailing_data_after_gzip_is_refused(ranks_file: bytes, tmp_path: Path) -> None:
    path = tmp_path / "trailing.tiktoken.gz"
    path.write_bytes(gzip.compress(ranks_file) + b"garbage!")
    with pytest.raises(gzip.BadGzipFile):
        gzip.decompress(path.read_bytes())  # the oracle refuses it too
    with pytest.raises(InteropError, match=r"trailing\.tiktoken\.gz' has 8 bytes after its gzip"):
        import_vocabulary([path])


def test_the_size_limit_counts_every_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bpetite.interop._detect as detect

    monkeypatch.setattr(detect, "MAX_GUNZIPPED_BYTES", 1000)
    path = tmp_path / "large.tiktoken.gz"
    path.write_bytes(gzip.compress(b"a" * 600) + gzip.compress(b"a" * 600))
    with pytest.raises(InteropError, match="expands to more than 1,000 bytes"):
        import_vocabulary([path])
    assert MAX_GUNZIPPED_BYTES == 256 << 20


# ----------------------------------------------------------- sources without special tokens


def test_vocab_and_merges_without_endoftext_import_with_no_special_token(tmp_path: Path) -> None:
    """An encoder.json without ``<|endoftext|>`` has no special token; tokenizers' BPE
    built from the same two files reads the literal as text, and so does the import."""
    source = Tokenizer.train(CORPUS, 300, special_tokens=())
    document = json.loads(export_hf(source))
    vocab, merges = document["model"]["vocab"], document["model"]["merges"]
    encoder = _write(tmp_path / "encoder.json", vocab)
    merges_file = tmp_path / "vocab.bpe"
    merges_file.write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    result = import_vocabulary([encoder, merges_file])
    assert dict(result.tokenizer.special_tokens) == {}
    hf = tokenizers.Tokenizer.from_str(json.dumps(document))
    text = f"the cat{END}sat"
    assert result.to_source_ids(result.tokenizer.encode(text)) == hf.encode(text).ids


def test_gpt2s_files_keep_their_endoftext(gpt2_dir: Path) -> None:
    result = import_vocabulary([gpt2_dir / "encoder.json", gpt2_dir / "vocab.bpe"])
    assert dict(result.tokenizer.special_tokens) == {END: 50256}


def test_the_cli_imports_a_tokenizer_json_without_added_tokens_with_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = json.loads(export_hf(Tokenizer.train(CORPUS, 300, special_tokens=())))
    assert document["added_tokens"] == []
    source = _write(tmp_path / "tokenizer.json", document)
    output = tmp_path / "imported.json"
    result = run(capsys, "import", source, "--output", output)
    assert result.code == 0, result
    assert json.loads(result.out)["special_tokens"] == {}
    assert dict(Tokenizer.load(output).special_tokens) == {}


def test_the_cli_says_which_special_token_is_its_own_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, ranks_file: bytes
) -> None:
    source = tmp_path / "mine.tiktoken"
    source.write_bytes(ranks_file)
    result = run(capsys, "import", source, "--output", tmp_path / "out.json")
    assert result.code == 0, result
    last = max(int(line.split()[1]) for line in ranks_file.splitlines())
    assert f"{END} ({last + 1}) is bpetite's default, not the file's" in result.err
    assert "every id of the file's tokens is the source's" in result.err


# ------------------------------------------------------------------------------ messages


def test_a_repeated_merge_names_the_file_and_both_lines(gpt2_dir: Path, tmp_path: Path) -> None:
    lines = (gpt2_dir / "vocab.bpe").read_text(encoding="utf-8").split("\n")
    lines.insert(3, lines[1])  # the first merge again, as the file's 4th line
    merges = tmp_path / "vocab.bpe"
    merges.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(InteropError) as refused:
        import_vocabulary([gpt2_dir / "encoder.json", merges])
    message = str(refused.value)
    assert message.startswith(f'\'{merges}\' line 4: the merge "Ġ" + "t" makes "Ġt"')
    assert f"the merge at '{merges}' line 2" in message


def test_a_special_token_given_an_id_in_use_names_the_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, openai_dir: Path
) -> None:
    copy = tmp_path / "mine.tiktoken"
    copy.write_bytes((openai_dir / "cl100k_base.tiktoken").read_bytes() + b"\n")
    result = run(
        capsys, "import", copy, "--pattern", "cl100k", "--special-token", f"{END}=5",
        "--output", tmp_path / "out.json",
    )  # fmt: skip
    assert result.code == 1 and result.out == ""
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert "--special-token" in result.err
    assert f"give \"{END}\" the id 5, which '{copy}' gives to the byte" in result.err
    assert "the source gives" not in result.err


def test_special_tokens_for_a_recognised_file_without_its_pattern_name_the_pattern(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, openai_dir: Path
) -> None:
    source = openai_dir / "cl100k_base.tiktoken"
    argv = ["import", source, "--special-token", f"{END}=100257"]
    result = run(capsys, *argv, "--output", tmp_path / "out.json")
    assert result.code == 1
    assert "the file is OpenAI's cl100k_base, made for the cl100k pattern" in result.err
    assert "do not record" not in result.err
    result = run(capsys, *argv, "--pattern", "cl100k", "--output", tmp_path / "out.json")
    assert result.code == 0, result
    assert Tokenizer.load(tmp_path / "out.json").encode("hello world<|endoftext|>") == [
        15339,
        1917,
        100257,
    ]


def test_o200k_harmony_round_trips_through_tiktoken_with_its_alias(
    tmp_path: Path, openai_dir: Path
) -> None:
    """docs/interop.md: the .tiktoken export passes both texts of id 200018; imported back
    with them (and o200k's pattern), the model is get_encoding's, alias and all."""
    harmony = get_encoding("o200k_harmony")
    export = export_tiktoken(harmony)
    path = tmp_path / "o200k_harmony.tiktoken"
    path.write_text(export.ranks, encoding="ascii")
    assert path.read_bytes() == (openai_dir / "o200k_base.tiktoken").read_bytes()
    result = import_vocabulary([path], pattern="o200k", special_tokens=export.special_tokens)
    assert result.tokenizer.dumps() == harmony.dumps()
    assert result.tokenizer.encode("<|reserved_200018|><|endofprompt|>") == [200018, 200018]
    assert result.tokenizer.decode([200018]) == "<|endofprompt|>"


def test_help_names_every_file_and_encoding(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(run(capsys, "import", "--help").out.split())
    assert "(r50k_base, p50k_base, cl100k_base, o200k_base;" in text
    text = " ".join(run(capsys, "compare-tiktoken", "--help").out.split())
    assert (
        "gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base and o200k_harmony "
        "are built by tiktoken"
    ) in text


# ------------------------------------------------------------- custom split patterns


def _hf_pieces(pattern: str, text: str) -> list[str]:
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    return [piece for piece, _ in split.pre_tokenize_str(text)]


@pytest.mark.parametrize(
    ("pattern", "text", "construct"),
    [(r"\s+$|\S+|\s+", "ab \ncd \nx", r"\$"), (r"ab\Z|\S|\s", "ab\n", r"\\Z")],
)
def test_end_anchors_split_differently_in_the_peers_and_are_refused(
    pattern: str, text: str, construct: str
) -> None:
    """Oniguruma's ``$`` matches before every newline, and both peers' ``\\Z`` before a
    final one; bpetite's ``regex`` reads them otherwise."""
    assert _hf_pieces(pattern, text) != regex.findall(pattern, text)  # the peer differs
    tokenizer = Tokenizer.train(CORPUS, 270, pattern=pattern)
    for export in (export_hf, export_tiktoken):
        with pytest.raises(InteropError, match=f"holds {construct}"):
            export(tokenizer)


def test_inline_flags_hugging_face_lacks_are_refused() -> None:
    with pytest.raises(Exception, match="undefined group option"):
        tokenizers.Regex(r"(?s).")  # the peer cannot even load it
    tokenizer = Tokenizer.train(CORPUS, 270, pattern=r"(?s)\S+|\s+")
    with pytest.raises(InteropError, match=r"inline flags \(\?s\)"):
        export_hf(tokenizer)
    export_tiktoken(tokenizer)  # Rust's engine reads (?s) as bpetite's does


def test_a_grapheme_cluster_escape_is_refused_for_tiktoken() -> None:
    byte_ranks = {bytes((byte,)): byte for byte in range(256)}
    with pytest.raises(ValueError, match="Invalid escape"):
        tiktoken.Encoding("x", pat_str=r"\X", mergeable_ranks=byte_ranks, special_tokens={})
    tokenizer = Tokenizer.train(CORPUS, 270, pattern=r" ?\X")
    with pytest.raises(InteropError, match=r"\\X, which tiktoken's regex engine does not have"):
        export_tiktoken(tokenizer)


@pytest.mark.parametrize("pattern", [r"[$^\]]+|\S+|\s+", r"(?i:[a-z]+)|\S|\s+", r"\S+|\s+"])
def test_custom_patterns_without_such_constructs_export_with_the_peers_ids(pattern: str) -> None:
    tokenizer = Tokenizer.train(CORPUS + "$^] HELLO ", 290, pattern=pattern)
    text = "Hello $^] world\n the CAT \n\n sat"
    hf = tokenizers.Tokenizer.from_str(export_hf(tokenizer))
    assert hf.encode(text).ids == tokenizer.encode(text)
    export = export_tiktoken(tokenizer)
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in map(str.split, export.ranks.splitlines())
    }
    encoding = tiktoken.Encoding(
        "custom", pat_str=export.pattern, mergeable_ranks=ranks,
        special_tokens=dict(export.special_tokens), explicit_n_vocab=export.n_vocab,
    )  # fmt: skip
    assert encoding.encode(text, allowed_special="all") == tokenizer.encode(text)


def test_a_posix_class_splits_differently_in_the_peers_and_is_refused() -> None:
    """tiktoken's engine reads ``[[:alpha:]]`` as ASCII letters, bpetite's ``regex`` as
    Unicode's (the Kelvin sign K is one); Oniguruma reads ``[[:digit:]]`` as every decimal
    digit, ``regex`` as 0-9."""
    pattern = r"[[:alpha:]]+|[\s\S]"
    kelvin = "\u212a\u212a"
    tokenizer = Tokenizer.train(f"{kelvin} hello " * 30, 270, pattern=pattern)
    encoding = tiktoken.Encoding(
        "posix", pat_str=pattern, mergeable_ranks=_tiktoken_ranks(tokenizer),
        special_tokens=dict(tokenizer.special_tokens),
    )  # fmt: skip
    assert encoding.encode(kelvin) != tokenizer.encode(kelvin)  # the peer differs
    digits = r"[[:digit:]]+|[\s\S]"
    assert _hf_pieces(digits, "\u0661\u0662") != regex.findall(digits, "\u0661\u0662")
    for export in (export_hf, export_tiktoken):
        with pytest.raises(InteropError, match=r"holds the POSIX class \[:alpha:\]"):
            export(tokenizer)


# ------------------------------------------- a special token with a mergeable token's bytes


@pytest.mark.parametrize("special", [" hello", "hello"])
def test_a_special_token_with_a_mergeable_tokens_bytes_exports_with_the_peers_ids(
    special: str,
) -> None:
    """Both peers match special texts before merging, so a special token may have the
    bytes of a mergeable token; only spelling it like one in tokenizer.json's byte
    alphabet (``hello``, not `` hello``, which is ``Ġhello`` there) is refused."""
    base = Tokenizer.train("hello world abcd " * 50, 280, special_tokens=[END])
    assert special.encode() in base.vocab.values()
    tokenizer = base.with_special_tokens([special])
    texts = [" hello world hello", "hello", "  hello", f"say hello{END}", "hellohello"]
    export = export_tiktoken(tokenizer)
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in map(str.split, export.ranks.splitlines())
    }
    encoding = tiktoken.Encoding(
        "shared", pat_str=export.pattern, mergeable_ranks=ranks,
        special_tokens=dict(export.special_tokens), explicit_n_vocab=export.n_vocab,
    )  # fmt: skip
    for text in texts:
        assert encoding.encode(text, allowed_special="all") == tokenizer.encode(text), text
    if special == "hello":
        with pytest.raises(InteropError, match="is spelled like the mergeable token"):
            export_hf(tokenizer)
        return
    hf = tokenizers.Tokenizer.from_str(export_hf(tokenizer))
    for text in texts:
        assert hf.encode(text).ids == tokenizer.encode(text), text


def test_two_mergeable_tokens_with_the_same_bytes_are_still_refused() -> None:
    base = Tokenizer.train("ab ab ab", 258, special_tokens=())
    (left, right), _ = base.merges  # "a"+"b", then " "+"ab"
    twice = Tokenizer([*base.merges, (left, right)], special_tokens={})
    for export in (export_hf, export_tiktoken):
        with pytest.raises(InteropError, match=r"tokens 256 and 258 have the same bytes"):
            export(twice)


# ------------------------------- an added token of a tokenizer.json that is also mergeable


@pytest.fixture(scope="module")
def trained_by_tokenizers() -> Callable[[], tokenizers.Tokenizer]:
    """A fresh ByteLevel BPE trained by ``tokenizers`` itself, the way the audit made it."""

    def train() -> tokenizers.Tokenizer:
        made = tokenizers.Tokenizer(tokenizers.models.BPE())
        made.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
        made.decoder = tokenizers.decoders.ByteLevel()
        trainer = tokenizers.trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=[END],
            initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        made.train_from_iterator([CORPUS], trainer)
        return made

    return train


@pytest.mark.parametrize(
    ("added", "made_by"), [("Ġthe", r"the merge \S+ \S+ makes it"), ("e", "byte 0x65")]
)
def test_an_added_token_that_is_also_mergeable_is_refused_naming_it(
    trained_by_tokenizers: Callable[[], tokenizers.Tokenizer],
    added: str,
    made_by: str,
    tmp_path: Path,
) -> None:
    """tokenizers gives such an added token the vocabulary entry's id: one id both a
    mergeable and a special token, which bpetite cannot have."""
    peer = trained_by_tokenizers()
    mergeable = peer.token_to_id(added)
    assert mergeable is not None
    peer.add_special_tokens([added])
    assert peer.token_to_id(added) == mergeable  # the peer made the mergeable token special
    path = tmp_path / "tokenizer.json"
    peer.save(str(path))
    message = (
        rf'the added token "{added}" \(id {mergeable}\) is also a mergeable token '
        rf"\(.*{made_by}.*\); bpetite gives a special token an id of its own"
    )
    with pytest.raises(InteropError, match=message):
        import_vocabulary([path])
