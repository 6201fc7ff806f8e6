"""A directory export, loaded by the real ``transformers.AutoTokenizer``, offline.

The oracle is transformers itself: the ids it gives, the special tokens it reports,
what ``decode(..., skip_special_tokens=True)`` keeps and how its chat template renders,
against bpetite's ids, tiktoken's (for a built-in vocabulary) and hand-written text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bpetite import Tokenizer, get_encoding
from bpetite.cli import main
from bpetite.errors import InteropError, ParameterError
from bpetite.interop import HF_FILES, export_hf, export_hf_pretrained, write_hf_pretrained
from tests import datafiles
from tests.strategies import MULTILINGUAL

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]
ROLES = {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "pad_token": "<|pad|>"}
TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Naïve café? 🤔"},
]
SAMPLES = [
    "Hello , world ! It's 2024 .",
    "  leading and trailing spaces  ",
    "<|im_start|>user\nhi<|im_end|>\n<|pad|><|pad|>",
    MULTILINGUAL,
]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    yield


def auto_tokenizer(directory: Path) -> Any:
    """transformers' AutoTokenizer on `directory`, never looking at the network."""
    from transformers import AutoTokenizer  # slow to import: only the tests that load

    return AutoTokenizer.from_pretrained(str(directory), local_files_only=True)


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    corpus = datafiles.shakespeare_text()[:50_000] + MULTILINGUAL
    return Tokenizer.train(corpus, vocab_size=600, special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def loaded(trained: Tokenizer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    directory = tmp_path_factory.mktemp("hf") / "chat-model"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        write_hf_pretrained(
            trained,
            directory,
            bos_token=ROLES["bos_token"],
            eos_token=ROLES["eos_token"],
            pad_token=ROLES["pad_token"],
            chat_template=TEMPLATE,
        )
        return auto_tokenizer(directory)


def test_transformers_gives_bpetites_ids(trained: Tokenizer, loaded: Any) -> None:
    for text in [*SAMPLES, datafiles.shakespeare_text()[50_000:60_000]]:
        ids = trained.encode(text)
        assert loaded.encode(text) == ids
        assert loaded.decode(ids) == text


def test_the_roles_are_transformers_special_tokens(trained: Tokenizer, loaded: Any) -> None:
    assert (loaded.bos_token, loaded.eos_token, loaded.pad_token) == (
        "<|im_start|>",
        "<|im_end|>",
        "<|pad|>",
    )
    assert loaded.eos_token_id == trained.special_tokens["<|im_end|>"]
    assert loaded.pad_token_id == trained.special_tokens["<|pad|>"]
    assert loaded.unk_token is None  # byte-level: every text encodes without one
    assert sorted(loaded.all_special_tokens) == sorted(SPECIALS)
    assert sorted(loaded.all_special_ids) == sorted(trained.special_tokens.values())


def test_skip_special_tokens_drops_every_special(trained: Tokenizer, loaded: Any) -> None:
    ids = trained.encode("<|im_start|>user\nhi<|im_end|><|endoftext|> there<|pad|>")
    assert loaded.decode(ids, skip_special_tokens=True) == "user\nhi there"


def test_the_chat_template_renders(trained: Tokenizer, loaded: Any) -> None:
    expected = (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nNaïve café? 🤔<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    rendered = loaded.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    assert rendered == expected
    ids = loaded.apply_chat_template(MESSAGES, tokenize=True, add_generation_prompt=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):  # transformers 5 returns an encoding
        ids = ids["input_ids"]
    assert list(ids) == trained.encode(expected)


def test_a_builtin_exports_with_tiktokens_ids(tmp_path: Path) -> None:
    tokenizer = get_encoding("cl100k_base")
    write_hf_pretrained(tokenizer, tmp_path / "cl100k", eos_token="<|endoftext|>")
    loaded = auto_tokenizer(tmp_path / "cl100k")
    encoding = datafiles.tiktoken_encoding("cl100k_base")
    for text in [*SAMPLES, "<|fim_prefix|>def f():<|fim_suffix|>"]:
        assert loaded.encode(text) == encoding.encode(text, allowed_special="all")
    assert loaded.eos_token_id == 100257
    assert loaded.bos_token is None and loaded.pad_token is None
    assert sorted(loaded.all_special_tokens) == sorted(tokenizer.special_tokens)


def test_without_roles_every_special_is_still_special(trained: Tokenizer, tmp_path: Path) -> None:
    write_hf_pretrained(trained, tmp_path / "plain")
    loaded = auto_tokenizer(tmp_path / "plain")
    assert loaded.eos_token is None and loaded.bos_token is None
    assert sorted(loaded.all_special_tokens) == sorted(SPECIALS)
    assert loaded.chat_template is None


def test_the_files_are_tokenizer_json_and_the_two_configs(trained: Tokenizer) -> None:
    files = export_hf_pretrained(trained, eos_token="<|endoftext|>", chat_template=TEMPLATE)
    assert list(files) == list(HF_FILES)
    assert files["tokenizer.json"] == export_hf(trained)
    config = json.loads(files["tokenizer_config.json"])
    assert config["chat_template"] == TEMPLATE
    assert config["eos_token"] == "<|endoftext|>"
    assert config["clean_up_tokenization_spaces"] is False
    special_map = json.loads(files["special_tokens_map.json"])
    assert special_map == {
        "eos_token": "<|endoftext|>",
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<|pad|>"],
    }


@pytest.mark.parametrize(
    ("roles", "error", "message"),
    [
        (
            {"eos_token": "<|eos|>"},
            ParameterError,
            'eos_token "<|eos|>" is not a special token of this tokenizer; its special tokens '
            'are "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"',
        ),
        ({"bos_token": "the"}, ParameterError, 'bos_token "the" is not a special token'),
        ({"pad_token": 5}, TypeError, "pad_token must be a str, got int"),
        ({"chat_template": b"{{ x }}"}, TypeError, "chat_template must be a str, got bytes"),
    ],
)
def test_a_role_must_name_a_special_token(
    trained: Tokenizer, tmp_path: Path, roles: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error) as raised:
        write_hf_pretrained(trained, tmp_path / "out", **roles)
    assert message in str(raised.value)
    assert not (tmp_path / "out").exists()


def test_a_models_other_files_stay_and_ours_need_overwrite(
    trained: Tokenizer, tmp_path: Path
) -> None:
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "config.json").write_text("{}", encoding="utf-8")
    write_hf_pretrained(trained, model_dir, eos_token="<|endoftext|>")
    first = {name: (model_dir / name).read_bytes() for name in HF_FILES}
    with pytest.raises(FileExistsError):
        write_hf_pretrained(trained, model_dir, eos_token="<|im_end|>")
    assert {name: (model_dir / name).read_bytes() for name in HF_FILES} == first
    write_hf_pretrained(trained, model_dir, eos_token="<|im_end|>", overwrite=True)
    assert json.loads((model_dir / "tokenizer_config.json").read_text("utf-8"))["eos_token"] == (
        "<|im_end|>"
    )
    assert sorted(path.name for path in model_dir.iterdir()) == sorted(["config.json", *HF_FILES])


def test_a_failed_write_publishes_nothing(trained: Tokenizer, tmp_path: Path) -> None:
    """The last file cannot be written (a directory holds its name): the first two are
    not published either, and no temp file is left."""
    folder = tmp_path / "partial"
    (folder / "special_tokens_map.json").mkdir(parents=True)
    with pytest.raises(IsADirectoryError):
        write_hf_pretrained(trained, folder)
    assert [path.name for path in folder.iterdir()] == ["special_tokens_map.json"]


def test_a_new_directory_is_removed_again_when_the_export_fails(
    trained: Tokenizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bpetite.interop import _hf

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_hf, "atomic_writer", refuse)
    with pytest.raises(OSError, match="No space left"):
        write_hf_pretrained(trained, tmp_path / "new")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["chat_template.jinja", "added_tokens.json"])
def test_a_file_transformers_would_read_instead_is_refused(
    trained: Tokenizer, tmp_path: Path, name: str
) -> None:
    (tmp_path / name).write_text("stale", encoding="utf-8")
    with pytest.raises(InteropError, match=f"'{tmp_path / name}' exists, and transformers"):
        write_hf_pretrained(trained, tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]


def test_a_file_is_not_a_directory(trained: Tokenizer, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(NotADirectoryError):
        write_hf_pretrained(trained, tmp_path / "file")


# --------------------------------------------------------------------------- the CLI


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def model_file(trained: Tokenizer, tmp_path: Path) -> Path:
    path = tmp_path / "model.json"
    trained.save(path)
    return path


def test_export_writes_a_directory_transformers_loads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trained: Tokenizer, model_file: Path
) -> None:
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE, encoding="utf-8")
    output = tmp_path / "hf-model"
    code, out, err = run(
        capsys,
        "export",
        "--model",
        model_file,
        "--format",
        "hf",
        "--output",
        output,
        "--bos",
        "<|im_start|>",
        "--eos",
        "<|im_end|>",
        "--pad",
        "<|pad|>",
        "--chat-template",
        template,
    )
    assert code == 0, err
    assert out == (
        "from transformers import AutoTokenizer\n\n"
        f"tokenizer = AutoTokenizer.from_pretrained({str(output)!r})\n"
    )
    assert err == f"bpetite: wrote the Hugging Face tokenizer directory '{output}'\n"
    files = export_hf_pretrained(trained, **ROLES, chat_template=TEMPLATE)
    for name, text in files.items():
        assert (output / name).read_text(encoding="utf-8") == text
    loaded = auto_tokenizer(output)
    assert loaded.encode(SAMPLES[2]) == trained.encode(SAMPLES[2])
    assert loaded.apply_chat_template(MESSAGES, tokenize=False).startswith("<|im_start|>system")


def test_export_of_a_builtin_name_to_a_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(
        capsys, "export", "--model", "gpt2", "--format", "hf", "--output", "gpt2-hf", "--eos",
        "<|endoftext|>",
    )  # fmt: skip
    assert code == 0, err
    loaded = auto_tokenizer(tmp_path / "gpt2-hf")
    assert loaded.encode("hello world<|endoftext|>") == [31373, 995, 50256]
    assert loaded.eos_token_id == 50256


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--eos", "<|eos|>"],
            'bpetite: error: --eos "<|eos|>" is not a special token of this tokenizer; its '
            'special tokens are "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"\n',
        ),
        (
            ["--chat-template", "missing.jinja"],
            "bpetite: error: --chat-template file 'missing.jinja' does not exist\n",
        ),
    ],
)
def test_export_refuses_bad_roles_and_templates(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    model_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv: list[str | Path] = ["export", "--model", model_file, "--format", "hf", "--output", "out"]
    argv += extra
    assert run(capsys, *argv) == (1, "", message)
    assert not (tmp_path / "out").exists()


def test_export_refuses_a_non_utf8_template(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model_file: Path
) -> None:
    template = tmp_path / "latin1.jinja"
    template.write_bytes("caf\xe9 {{ x }}".encode("latin-1"))
    code, out, err = run(
        capsys, "export", "--model", model_file, "--format", "hf", "--output", tmp_path / "out",
        "--chat-template", template,
    )  # fmt: skip
    assert (code, out) == (1, "")
    assert err.startswith("bpetite: error: ") and "UTF-8" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("format_", "output", "where"),
    [
        ("hf", "one.json", "a single tokenizer.json"),
        ("tiktoken", "tok.tiktoken", "a .tiktoken file"),
    ],
)
def test_roles_need_a_directory_export(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    model_file: Path,
    format_: str,
    output: str,
    where: str,
) -> None:
    argv: list[str | Path] = ["export", "--model", model_file, "--format", format_]
    argv += ["--output", tmp_path / output]
    code, out, err = run(capsys, *argv, "--pad", "<|pad|>")
    assert (code, out) == (1, "")
    assert err == (
        "bpetite: error: --pad is for an hf directory export (--format hf, an --output that "
        f"does not end in .json): {where} has no place for it\n"
    )
    assert not (tmp_path / output).exists()


def test_export_to_a_directory_checks_its_files_first(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model_file: Path
) -> None:
    output = tmp_path / "dir"
    argv: list[str | Path] = ["export", "--model", model_file, "--format", "hf", "--output", output]
    assert run(capsys, *argv)[0] == 0
    code, out, err = run(capsys, *argv)
    assert (code, out) == (1, "")
    assert err == (
        f"bpetite: error: --output '{output / 'tokenizer.json'}' already exists; pass --force "
        "to replace it\n"
    )
    assert run(capsys, *argv, "--force")[0] == 0
    (tmp_path / "file").write_text("x", encoding="utf-8")
    code, out, err = run(
        capsys, "export", "--model", model_file, "--format", "hf", "--output", tmp_path / "file"
    )
    assert (code, out) == (1, "")
    assert "is a file; an hf export writes a directory (or a path ending in .json" in err
