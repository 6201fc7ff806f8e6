"""``bpetite truncate``, ``chunk``, ``encode --within-limit`` and ``chat``, in process.

Oracles: the library's methods on the same text (themselves checked against
``count_tokens``, transformers and openai-harmony in tests/core and tests/chat), and the
text itself (truncate's output starts it; chunk's pieces join back to it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpetite import Tokenizer, get_encoding
from bpetite.chat import count_chat_tokens
from tests.cli.running import run

TEXT = "naïve café 日本語 🤔🤔!\r\n<|endoftext|> tail " * 3
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "naïve café? 🤔", "name": "ana"},
]


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(TEXT * 5, 300, special_tokens=SPECIALS)


@pytest.fixture
def model(tmp_path: Path, tokenizer: Tokenizer) -> str:
    path = tmp_path / "model.json"
    tokenizer.save(path)
    return str(path)


@pytest.fixture
def text_file(tmp_path: Path) -> str:
    path = tmp_path / "text.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    return str(path)


@pytest.fixture
def conversation(tmp_path: Path) -> str:
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(MESSAGES), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("budget", [0, 1, 5, 17, 1000])
def test_truncate_writes_the_librarys_prefix_exactly(
    capsys: pytest.CaptureFixture[str],
    tokenizer: Tokenizer,
    model: str,
    text_file: str,
    budget: int,
) -> None:
    result = run(
        capsys, "truncate", "--model", model, "--input", text_file, "--max-tokens", str(budget)
    )
    assert result.code == 0, result.err
    assert result.out == tokenizer.truncate(TEXT, budget)
    assert TEXT.startswith(result.out) and tokenizer.count_tokens(result.out) <= budget


def test_truncate_special_policies(
    capsys: pytest.CaptureFixture[str], tokenizer: Tokenizer, model: str
) -> None:
    text = "ab<|endoftext|>cd"
    ordinary = run(
        capsys,
        "truncate",
        "--model",
        model,
        "--text",
        text,
        "--max-tokens",
        "5",
        "--special",
        "ordinary",
    )
    assert ordinary.out == tokenizer.truncate(text, 5, allowed_special=set(), disallowed_special=())
    refused = run(
        capsys,
        "truncate",
        "--model",
        model,
        "--text",
        text,
        "--max-tokens",
        "5",
        "--special",
        "raise",
    )
    assert refused.code == 1 and refused.out == ""
    assert "'<|endoftext|>' at character 2, refused by --special raise" in refused.err
    assert refused.err.count("\n") == 1


@pytest.mark.parametrize(("budget", "overlap"), [(4, 0), (9, 3), (30, 29)])
def test_chunk_prints_the_pieces_with_offsets(
    capsys: pytest.CaptureFixture[str],
    tokenizer: Tokenizer,
    model: str,
    text_file: str,
    budget: int,
    overlap: int,
) -> None:
    result = run(
        capsys,
        "chunk", "--model", model, "--input", text_file,
        "--max-tokens", str(budget), "--overlap", str(overlap),
    )  # fmt: skip
    assert result.code == 0, result.err
    rows = json.loads(result.out)
    pieces, spans = tokenizer.chunk_with_offsets(TEXT, budget, overlap=overlap)
    assert [row["text"] for row in rows] == pieces
    assert [(row["start"], row["end"]) for row in rows] == spans
    for row in rows:
        assert TEXT[row["start"] : row["end"]] == row["text"]
        assert row["tokens"] == tokenizer.count_tokens(row["text"]) <= budget
    if overlap == 0:
        assert "".join(pieces) == TEXT


def test_chunk_refuses_an_overlap_as_large_as_the_budget(
    capsys: pytest.CaptureFixture[str], model: str
) -> None:
    result = run(
        capsys, "chunk", "--model", model, "--text", "abc", "--max-tokens", "2", "--overlap", "2"
    )
    assert result.code == 2 and result.out == ""  # a usage error, with the usage line
    assert result.err.startswith("usage: bpetite chunk")
    assert result.err.endswith(
        "\nbpetite chunk: error: --overlap (2) must be less than --max-tokens (2)\n"
    )
    usage = run(capsys, "chunk", "--model", model, "--text", "abc", "--max-tokens", "0")
    assert usage.code == 2


def test_chunk_says_when_a_character_needs_more_tokens_than_the_budget(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bytes_only = tmp_path / "bytes.json"
    Tokenizer([]).save(bytes_only)
    result = run(capsys, "chunk", "--model", str(bytes_only), "--text", "a🤔", "--max-tokens", "2")
    assert result.code == 1 and result.out == ""
    assert "starts at character 1 ('🤔')" in result.err and result.err.count("\n") == 1


@pytest.mark.parametrize("limit", [0, 10, 10_000])
def test_encode_within_limit(
    capsys: pytest.CaptureFixture[str], tokenizer: Tokenizer, model: str, text_file: str, limit: int
) -> None:
    result = run(
        capsys, "encode", "--model", model, "--input", text_file, "--within-limit", str(limit)
    )
    assert result.code == 0, result.err
    assert result.out == ("true\n" if tokenizer.count_tokens(TEXT) <= limit else "false\n")


def test_chat_renders_encodes_and_counts(
    capsys: pytest.CaptureFixture[str], tokenizer: Tokenizer, model: str, conversation: str
) -> None:
    base = ["chat", "--model", model, "--messages", conversation, "--template", "chatml"]
    ids = tokenizer.apply_chat_template(
        MESSAGES, chat_template="chatml", add_generation_prompt=True
    )
    result = run(capsys, *base, "--add-generation-prompt")
    assert (result.code, json.loads(result.out)) == (0, ids)
    text = run(capsys, *base, "--add-generation-prompt", "--text")
    assert text.out == tokenizer.decode(ids)
    assert text.out.endswith("<|im_start|>assistant\n")
    assert (
        run(capsys, *base, "--count").out
        == f"{len(tokenizer.apply_chat_template(MESSAGES, chat_template='chatml'))}\n"
    )
    estimate = run(
        capsys, "chat", "--model", model, "--messages", conversation, "--openai-estimate"
    )
    assert estimate.out == f"{count_chat_tokens(MESSAGES, tokenizer)}\n"


def test_chat_takes_a_jinja_file_with_variables_and_stdin(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tokenizer: Tokenizer,
    model: str,
    tmp_path: Path,
) -> None:
    template = tmp_path / "chat.jinja"
    template.write_text(
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}",
        encoding="utf-8",
    )
    import io
    import sys

    request = json.dumps({"model": "x", "messages": MESSAGES}).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(request)))
    result = run(
        capsys,
        "chat", "--model", model, "--messages", "-", "--template", str(template),
        "--var", "bos_token=<|im_start|>", "--text",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.out == "<|im_start|>[system] Be brief.\n[user] naïve café? 🤔\n"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("[]", "must hold a non-empty JSON array of messages"),
        ('{"messages": 3}', "must hold a non-empty JSON array of messages"),
        ('["hi"]', "message 0 must be a JSON object"),
        ('[{"role": "user"}]', "message 0 has no 'content'"),
        ("[{", "not valid JSON"),
    ],
)
def test_chat_names_a_bad_conversation(
    capsys: pytest.CaptureFixture[str], model: str, tmp_path: Path, document: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(document, encoding="utf-8")
    result = run(capsys, "chat", "--model", model, "--messages", str(path), "--template", "chatml")
    assert result.code == 1 and result.out == ""
    assert message in result.err and result.err.count("\n") == 1


def test_chat_names_a_failing_template_and_bad_options(
    capsys: pytest.CaptureFixture[str], model: str, conversation: str, tmp_path: Path
) -> None:
    template = tmp_path / "refuse.jinja"
    template.write_text("{{ raise_exception('no system messages, please') }}", encoding="utf-8")
    base = ["chat", "--model", model, "--messages", conversation]
    failed = run(capsys, *base, "--template", str(template))
    assert failed.code == 1 and failed.out == ""
    assert failed.err == "bpetite: error: the chat template failed: no system messages, please\n"
    both = run(capsys, *base, "--template", "chatml", "--openai-estimate")
    assert both.code == 1 and "not both" in both.err
    missing = run(capsys, *base, "--template", str(tmp_path / "nope.jinja"))
    assert missing.code == 1 and "does not exist" in missing.err
    var = run(capsys, *base, "--template", "chatml", "--var", "bos_token=x")
    assert var.code == 1 and "--var is for a Jinja template file" in var.err
    neither = run(capsys, *base)
    assert neither.code == 1 and neither.out == ""
    assert neither.err.startswith("bpetite: error: the model '") and neither.err.count("\n") == 1
    assert "has no chat format of its own: give --template (chatml, harmony" in neither.err


def test_chat_renders_harmony_by_default_for_o200k_harmony(
    capsys: pytest.CaptureFixture[str], conversation: str
) -> None:
    """o200k_harmony's own format needs no --template, as apply_chat_template needs none."""
    tokenizer = get_encoding("o200k_harmony")
    messages = json.loads(Path(conversation).read_text(encoding="utf-8"))
    base = ["chat", "--model", "o200k_harmony", "--messages", conversation]
    plain = run(capsys, *base)
    named = run(capsys, *base, "--template", "harmony")
    assert plain.code == named.code == 0
    assert plain.out == named.out
    assert json.loads(plain.out) == tokenizer.apply_chat_template(messages, chat_template="harmony")
