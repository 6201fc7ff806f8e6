"""Explanations: their steps are the reference's, their ids the fast encoder's, and the
page draws, at every step, exactly the tokens the reference gives with that many merges.

The oracle is :mod:`bpetite.reference`: ``trace_train`` and ``trace_encode`` for the
steps, and ``encode`` with a truncated merge list for what the page must show after
each step (the tokens after the merges of rank below ``r`` are the encode of a model
holding only those merges).
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import product
from operator import methodcaller
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

from bpetite import PRESETS, Tokenizer, get_encoding, reference
from bpetite.core._tokenizer import NOTEBOOK_SAMPLE
from bpetite.errors import DisallowedSpecialError, ParameterError, PatternError
from bpetite.interop import import_vocabulary
from bpetite.visualize import (
    MAX_TRAIN_BYTES,
    MAX_TRAIN_VOCAB,
    Explanation,
    explain_encode,
    explain_train,
)
from bpetite.visualize._trace import trace_train_counts
from tests import datafiles
from tests.rendering import parse_page
from tests.strategies import MULTILINGUAL, merge_lists, texts, tricky_text
from tests.visualize.explain_pages import ExplainPage

#: Jupyter finds the hook by name, as here.
notebook_html = methodcaller("_repr_html_")

_CORPUS = (
    "Hello world, hello there! naïve café 😀😀 🎉 مرحبا بالعالم שלום עולם 你好 "
    "<|endoftext|> it's 12345 \t\n\r\n" * 12
)


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(_CORPUS, 360)


def _chunk_counts(text: str, pattern: str = PRESETS["gpt2"]) -> Counter[bytes]:
    return Counter(chunk.encode("utf-8") for chunk in reference.split(text, pattern))


# --------------------------------------------------------------------------- training


@pytest.mark.parametrize(
    "corpus", ["".join(letters) for size in range(7) for letters in product("ab ", repeat=size)]
)
def test_the_fast_trace_is_the_reference_on_every_small_corpus(corpus: str) -> None:
    """Every corpus of up to six characters over 'a', 'b' and space, trained to the end."""
    assert trace_train_counts(_chunk_counts(corpus), 300) == reference.trace_train(corpus, 300)


@given(
    text=texts,
    vocab_size=st.integers(256, 300),
    max_token_bytes=st.none() | st.integers(1, 5),
    min_frequency=st.none() | st.integers(1, 4),
)
def test_the_fast_trace_is_the_reference(
    text: str, vocab_size: int, max_token_bytes: int | None, min_frequency: int | None
) -> None:
    expected = reference.trace_train(
        text, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    fast = trace_train_counts(
        _chunk_counts(text),
        vocab_size,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
    )
    assert fast == expected


def test_the_fast_trace_keeps_every_tie_and_the_runners_up() -> None:
    """ "cab": (97, 98) and (99, 97) tie at 1, and the smaller pair wins; in "aaab" a pair
    runs into itself: counted twice (overlapping, as the spec counts), merged once."""
    steps = trace_train_counts(_chunk_counts("cab aaab aaab"), 260)
    assert steps == reference.trace_train("cab aaab aaab", 260)
    first = steps[0]
    assert (first.pair, first.count, first.total_tokens) == ((97, 97), 4, 11)
    tied = [step for step in steps if step.tied]
    assert tied and all(step.pair < other for step in tied for other in step.tied)


def test_explain_train_rows_are_the_trace_and_the_merges_are_train(tokenizer: Tokenizer) -> None:
    explanation = explain_train(_CORPUS, 360)
    assert explanation.kind == "train" and explanation.ids == ()
    assert [row.pair for row in explanation.rows] == list(Tokenizer.train(_CORPUS, 360).merges)
    steps = reference.trace_train(_CORPUS, 360)
    assert list(explanation.steps) == steps
    assert [(row.count, row.tokens_after, row.token) for row in explanation.rows] == [
        (step.count, step.total_tokens, step.token) for step in steps
    ]
    assert explanation.start_tokens == explanation.total_bytes == len(_CORPUS.encode("utf-8"))
    for row in explanation.rows:
        assert row.parts[0] + row.parts[1] == row.token
        assert row.note.startswith(("next: ", "tie at ", "the only pair left"))


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", r"\S+|\s+"])
def test_explain_train_takes_the_patterns_train_takes(pattern: str) -> None:
    """A preset by its name, as train takes it (not the regex 'cl100k', which matches
    nothing), a regex, or the preset's value; the merges are train's."""
    corpus = "Hello  world, 1234567 héllo\r\nworld's 中文中文 hello"
    merges = list(Tokenizer.train(corpus, 300, pattern=pattern).merges)
    assert merges  # the corpus has pairs to merge under every pattern
    for spelled in (pattern, PRESETS.get(pattern, pattern)):
        assert [row.pair for row in explain_train(corpus, 300, pattern=spelled).rows] == merges
    with pytest.raises(PatternError, match="leaves the character ' ' at position 5 unmatched"):
        explain_train(corpus, 300, pattern=r"\w+")  # train refuses to drop text, so must this


def test_explain_train_notes_name_the_tie_break() -> None:
    (row,) = explain_train("cab", 257).rows
    assert row.note == "tie at 1 with c+a (99, 97): (97, 98) is the smaller pair"


def test_explain_train_refuses_what_it_cannot_show_quickly() -> None:
    with pytest.raises(ParameterError, match=f"at most {MAX_TRAIN_BYTES:,}"):
        explain_train("a" * (MAX_TRAIN_BYTES + 1), 300)
    with pytest.raises(ParameterError, match=f"between 256 and {MAX_TRAIN_VOCAB}"):
        explain_train("ab", MAX_TRAIN_VOCAB + 1)
    with pytest.raises(ParameterError, match="between 256"):
        explain_train("ab", 255)
    with pytest.raises(TypeError, match="vocab_size must be an integer"):
        explain_train("ab", True)
    with pytest.raises(TypeError, match="takes a str"):
        explain_train(b"ab", 300)  # type: ignore[arg-type]
    explain_train("a" * MAX_TRAIN_BYTES, 258)  # the bound itself is accepted


def test_the_training_page_shows_the_reference_tokens_at_every_step() -> None:
    corpus = _CORPUS.replace("<|endoftext|>", "<|x|>")
    explanation = explain_train(corpus, 330)
    page = ExplainPage(explanation.to_html())
    merges = [row.pair for row in explanation.rows]
    assert len(page.radios) == len(merges) + 1 and page.checked == page.radios[:1]
    for step in range(len(merges) + 1):
        model = reference.Model(merges[:step], special_tokens={})
        assert page.tokens_at(step) == reference.encode(model, explanation.text), step


def test_the_training_page_keeps_a_bounded_sample(shakespeare_text: str) -> None:
    """A megabyte at vocab 2,048: every merge in the table, the first chunks in the text."""
    corpus = shakespeare_text.encode("utf-8")[:1_000_000].decode("utf-8", errors="ignore")
    explanation = explain_train(corpus, 2048)
    assert len(explanation.rows) == 1792
    assert corpus.startswith(explanation.text)
    assert 1000 < len(explanation.text.encode("utf-8")) <= 1500
    page = explanation.to_html()
    assert len(page.encode("utf-8")) < 1_000_000
    assert "The text shows the first 1," in page
    parsed = ExplainPage(page)
    assert len(parsed.radios) == 1793
    final = reference.Model([row.pair for row in explanation.rows], special_tokens={})
    assert parsed.tokens_at(1792) == reference.encode(final, explanation.text)


# --------------------------------------------------------------------------- encoding


def _truncated(tokenizer: Tokenizer, ranks: int) -> reference.Model:
    """The tokenizer with only its first `ranks` merges: the page after those merges."""
    return reference.Model(
        tokenizer.merges[:ranks], tokenizer.pattern, tokenizer.special_tokens, tokenizer.byte_order
    )


def _check_encode(tokenizer: Tokenizer, text: str) -> Explanation:
    """Steps, ids, rows and the page of one explained encode, against the reference."""
    explanation = tokenizer.explain(text)
    assert list(explanation.steps) == reference.trace_encode(tokenizer, text)
    assert list(explanation.ids) == tokenizer.encode(text)
    assert explanation.total_bytes == len(text.encode("utf-8"))
    # each row: the ranks applied in order, and the text's tokens after each
    ranks = [row.rank for row in explanation.rows]
    assert ranks == sorted(set(ranks))
    # the reference's ids of the text with the merges applied so far, after each row
    steps = [
        reference.encode(_truncated(tokenizer, row.rank + 1), text) for row in explanation.rows
    ]
    before = explanation.start_tokens
    for row, ids in zip(explanation.rows, steps, strict=True):
        after = len(ids)
        assert (row.tokens_after, row.count) == (after, before - after)
        assert row.pair == tokenizer.merges[row.rank]
        assert row.token == tokenizer.vocab[row.new_id] == row.parts[0] + row.parts[1]
        before = after
    assert before == len(explanation.ids)
    # the page: at every step, those tokens
    page = ExplainPage(explanation.to_html())
    assert page.tokens_at(0) == reference.encode(_truncated(tokenizer, 0), text)
    for step, ids in enumerate(steps, start=1):
        assert page.tokens_at(step) == ids
    return explanation


@given(text=texts)
def test_explained_encodes_are_the_reference_and_the_fast_encoder(
    tokenizer: Tokenizer, text: str
) -> None:
    _check_encode(tokenizer, text)


@given(merges=merge_lists(), text=tricky_text)
def test_explained_encodes_of_arbitrary_merge_lists(
    merges: list[tuple[int, int]], text: str
) -> None:
    """Hand-made merge lists: duplicate pairs, tokens that never encode to themselves."""
    _check_encode(Tokenizer(merges), text)


def test_explained_encode_of_an_imported_vocabulary(gpt2_dir: Path) -> None:
    """GPT-2's byte order is not the identity: the bytes' ids are its own."""
    gpt2 = import_vocabulary([gpt2_dir / "encoder.json", gpt2_dir / "vocab.bpe"]).tokenizer
    explanation = _check_encode(gpt2, MULTILINGUAL[:400] + "<|endoftext|>")
    assert explanation.rows[-1].rank > 40_000  # deep ranks of a real vocabulary


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_explained_encode_of_openai_vocabularies(name: str) -> None:
    """The built-in vocabularies: their ids are tiktoken's (tests/interop proves it)."""
    tokenizer = get_encoding(name)
    explanation = _check_encode(tokenizer, "naïve مرحبا 😀<|endoftext|>")
    assert explanation.ids[-1] == tokenizer.special_tokens["<|endoftext|>"]


#: Runs of spaces (p50k_base's whitespace tokens, ids 50257 to 50280, follow its
#: <|endoftext|> at 50256), specials, and ordinary words.
_SPACED = "hello" + " " * 30 + "world\n\n    return  x<|endoftext|>  <|a|>the<|b|> cat"


def _check_skipping_ids(tokenizer: Tokenizer, oracle: tiktoken.Encoding) -> None:
    """An explained encode of a model whose merged ids skip a special's: tiktoken's ids,
    and every merge row, step and page element naming the id its token has."""
    explanation = _check_encode(tokenizer, _SPACED)
    assert list(explanation.ids) == oracle.encode(_SPACED, allowed_special="all")
    for row in explanation.rows:
        assert oracle.decode_single_token_bytes(row.new_id) == row.token
    skipped = [row for row in explanation.rows if row.new_id != 256 + row.rank]
    assert skipped, "no merge past a skipped id: the text does not test the layout"
    page = explanation.to_html()
    assert all(f"<small>id {row.new_id}</small>" in page for row in skipped)
    lines = str(explanation).splitlines()
    assert lines[1:-1] == reference.render_trace(reference.trace_encode(tokenizer, _SPACED)).split(
        "\n"
    )
    assert lines[-1] == f"ids: {oracle.encode(_SPACED, allowed_special='all')}"


def test_explained_encode_of_p50k_gives_tiktokens_ids() -> None:
    """p50k_base's merged ids skip 50256: past it, merge r makes id 257 + r."""
    _check_skipping_ids(get_encoding("p50k_base"), datafiles.tiktoken_encoding("p50k_base"))


def test_explained_encode_of_specials_among_the_merged_ids() -> None:
    """A trained model with <|a|> and <|b|> among its merged ids, against tiktoken given
    its tokens by id."""
    tokenizer = Tokenizer.train(_CORPUS, 360, special_tokens={"<|a|>": 260, "<|b|>": 300})
    specials = dict(tokenizer.special_tokens)
    ranks = {data: i for i, data in tokenizer.vocab.items() if i not in specials.values()}
    oracle = tiktoken.Encoding(
        "test", pat_str=tokenizer.pattern, mergeable_ranks=ranks, special_tokens=specials
    )
    _check_skipping_ids(tokenizer, oracle)


def test_explained_encode_with_specials_and_a_policy(tokenizer: Tokenizer) -> None:
    text = "a<|endoftext|>b"
    special = tokenizer.special_tokens["<|endoftext|>"]
    assert special in tokenizer.explain(text).ids
    # the policy is encode's: the same ids, and the same error for a disallowed special
    plain = tokenizer.explain(text, allowed_special=set(), disallowed_special=())
    assert list(plain.ids) == tokenizer.encode(text, allowed_special=set(), disallowed_special=())
    assert special not in plain.ids
    assert list(plain.steps) == reference.trace_encode(tokenizer, text, allowed_special=set())
    with pytest.raises(DisallowedSpecialError) as raised:
        tokenizer.encode(text, allowed_special=set())
    with pytest.raises(DisallowedSpecialError, match=re.escape(str(raised.value))):
        tokenizer.explain(text, allowed_special=set())
    with pytest.raises(ParameterError, match=re.escape("'<|nope|>', which is not a special")):
        explain_encode(tokenizer, text, allowed_special={"<|nope|>"})
    with pytest.raises(TypeError, match="takes a str"):
        tokenizer.explain(b"ab")  # type: ignore[arg-type]
    # and encode's error for a lone surrogate, its position in the whole text
    surrogate = "ab <|endoftext|> \ud800x"
    with pytest.raises(UnicodeEncodeError) as raised_by_encode:
        tokenizer.encode(surrogate)
    with pytest.raises(UnicodeEncodeError, match="at position 17") as raised_by_explain:
        tokenizer.explain(surrogate)
    assert str(raised_by_explain.value) == str(raised_by_encode.value)


def test_explained_encode_prints_the_reference_trace_and_the_ids(tokenizer: Tokenizer) -> None:
    text = "Hello naïve 😀<|endoftext|>"
    lines = str(tokenizer.explain(text)).splitlines()
    assert lines[0].startswith("encode: ")
    assert lines[1:-1] == reference.render_trace(reference.trace_encode(tokenizer, text)).split(
        "\n"
    )
    assert lines[-1] == f"ids: {tokenizer.encode(text)}"


def test_the_page_of_a_long_text_is_bounded(tokenizer: Tokenizer) -> None:
    text = "Hello world, hello there. " * 2000  # 52,000 bytes
    explanation = tokenizer.explain(text)
    page = explanation.to_html()
    assert "The text shows the first 19," in page
    drawn = ExplainPage(page).tokens_at(len(explanation.rows))
    assert drawn == list(explanation.ids[: len(drawn)])
    assert 3000 < len(drawn) < len(explanation.ids)


# --------------------------------------------------------------------------- pages


def test_the_page_has_the_policy_of_show_and_no_script(tokenizer: Tokenizer) -> None:
    page = tokenizer.explain("<script>alert(1)</script> & <i>x</i>").to_html()
    assert (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">" in page
    )
    parsed = ExplainPage(page)
    assert "script" not in parsed.start_tags and "i" not in parsed.start_tags
    assert not re.search(r"https?://", page.replace("http-equiv", ""))


def test_the_page_has_its_style_in_the_head_and_the_fragment_its_own(
    tokenizer: Tokenizer,
) -> None:
    """A page's ``<style>`` belongs in its head; a notebook's fragment carries its own."""
    explanation = tokenizer.explain("ab ab")
    page = explanation.to_html()
    head, body = page.split("</head>")
    assert head.count("<style>") == 1 and "<style>" not in body
    assert ".bpe .tokens" in head
    fragment = notebook_html(explanation)
    style = re.search(r"<style>.*?</style>\n", fragment, re.DOTALL)
    assert style and ".bpe .tokens" in style.group()
    assert fragment.replace(style.group(), "") in body  # the same fragment, its style moved


def test_every_chunk_of_the_page_is_a_bidi_isolate(tokenizer: Tokenizer) -> None:
    """HTML's rendering rules make an element with a ``dir`` a bidi isolate, so a
    right-to-left chunk cannot trade places with its neighbours (the browser test
    measures it); the page's ``unicode-bidi: isolate`` for chunks says so again."""
    page = tokenizer.explain("Hello مرحبا שלום 😀 <|endoftext|>").to_html()
    chunks = re.findall(r"<t-c\b[^>]*>", page)
    assert len(chunks) == 6  # Hello, ·مرحبا, ·שלום, ·😀, ·, <|endoftext|>
    assert set(chunks) == {'<t-c dir="auto">'}


def test_two_explanations_in_one_notebook_do_not_share_radios(tokenizer: Tokenizer) -> None:
    first, second = (notebook_html(tokenizer.explain(text)) for text in ("ab", "abc"))
    assert "<html" not in first and first.startswith('<div class="bpe"')
    ids_first, ids_second = (set(ExplainPage(page).radios) for page in (first, second))
    assert ids_first and ids_second and not ids_first & ids_second


def test_the_tokenizer_shows_a_sample_in_a_notebook(tokenizer: Tokenizer) -> None:
    snippet = notebook_html(tokenizer)
    sample = NOTEBOOK_SAMPLE + "<|endoftext|>"
    tokens = parse_page(snippet).tokens
    assert [int(token["data-token-id"]) for token in tokens] == tokenizer.encode(sample)
    assert b"".join(bytes.fromhex(token["data-bytes"]) for token in tokens) == sample.encode()
    assert "<html" not in snippet and "bpetite-tokens" in snippet
    assert repr(tokenizer) in snippet.replace("&lt;", "<").replace("&gt;", ">")


def test_a_tokenizer_without_specials_shows_the_sample_alone() -> None:
    plain = Tokenizer([], special_tokens=())
    tokens = parse_page(notebook_html(plain)).tokens
    assert len(tokens) == len(NOTEBOOK_SAMPLE.encode("utf-8"))


def test_save_html_writes_the_page_atomically(tokenizer: Tokenizer, tmp_path: Path) -> None:
    explanation = tokenizer.explain("ab")
    path = tmp_path / "page.html"
    explanation.save_html(path)
    assert path.read_text(encoding="utf-8") == explanation.to_html()
    with pytest.raises(FileExistsError):
        explanation.save_html(path)
    explanation.save_html(path, overwrite=True)
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]
