"""``bpetite export`` and ``bpetite import``: docs/interop.md runs as shown, and every refusal.

The documentation's console and pycon blocks run exactly like the README's (same
runner, real subprocesses, outputs compared), in a directory holding TinyShakespeare
and GPT-2's files. The in-process tests drive ``main(argv)`` and check exit codes, that
stdout stays empty on failure, and that nothing is written when a command refuses.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bpetite import Tokenizer
from bpetite.interop import export_hf
from tests.cli.running import Result, run
from tests.conftest import REPO_ROOT
from tests.docs_runner import check_output, console_commands, doc_blocks, run_console, run_doctest

DOCS = REPO_ROOT / "docs" / "interop.md"
MISFIT_MERGES = [(97, 98), (98, 99), (97, 257)]


def assert_refused(result: Result, message: str) -> None:
    """Exit 1, nothing on stdout, one error line on stderr that contains `message`."""
    assert result.code == 1, result
    assert result.out == ""
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("bpetite: error: ")
    assert message in lines[0], lines[0]


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.json"
    Tokenizer.train("the cat sat on the mat, the end " * 4, 270).save(str(path))
    return path


# --------------------------------------------------------------------------- the documentation


def test_docs_interop_runs_as_shown(
    tmp_path: Path, shakespeare_path: Path, gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command and example in docs/interop.md, in order, output for output."""
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "data" / "tinyshakespeare.txt").symlink_to(shakespeare_path)
    (work / "gpt2").symlink_to(gpt2_dir, target_is_directory=True)
    closed = "http://127.0.0.1:9"
    env = dict(
        os.environ,
        README_TEST_PYTHON=sys.executable,
        TIKTOKEN_CACHE_DIR=str(tmp_path / "tiktoken-cache"),
        HTTPS_PROXY=closed,
        HTTP_PROXY=closed,
        https_proxy=closed,
        http_proxy=closed,
    )
    monkeypatch.chdir(work)
    ran = []
    for block in doc_blocks(DOCS.read_text(encoding="utf-8")):
        if block.language == "console":
            for command in console_commands(block):
                check_output(command, run_console(command, work, env))
                ran.append(command.command)
        elif block.language == "pycon":
            run_doctest(block, DOCS)
    words = {word for command in ran for word in command.split()}
    assert {"export", "import", "hf", "tiktoken", "--force"} <= words


# --------------------------------------------------------------------------- export


def test_export_writes_what_the_library_exports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path
) -> None:
    output = tmp_path / "tokenizer-hf.json"
    result = run(capsys, "export", "--model", model, "--format", "hf", "--output", output)
    assert result.code == 0
    assert output.read_text(encoding="utf-8") == export_hf(Tokenizer.load(str(model)))
    assert result.out == (
        f"from tokenizers import Tokenizer\n\ntokenizer = Tokenizer.from_file({str(output)!r})\n"
    )
    assert result.err == f"bpetite: wrote the Hugging Face tokenizer.json '{output}'\n"


@pytest.mark.parametrize("format_", ["hf", "tiktoken"])
def test_export_refuses_an_existing_output_unless_forced(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path, format_: str
) -> None:
    output = tmp_path / ("exists.json" if format_ == "hf" else "exists")  # hf: one file
    output.write_text("keep me", encoding="utf-8")
    argv: list[str | Path] = ["export", "--model", model, "--format", format_, "--output", output]
    assert_refused(run(capsys, *argv), "already exists; pass --force to replace it")
    assert output.read_text(encoding="utf-8") == "keep me"
    assert run(capsys, *argv, "--force").code == 0
    assert output.read_text(encoding="utf-8") != "keep me"


def test_export_refuses_what_the_format_cannot_represent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A hand-made artifact: tiktoken would encode "abc" differently; hf is exact."""
    misfit = tmp_path / "misfit.json"
    Tokenizer(MISFIT_MERGES).save(str(misfit))
    output = tmp_path / "misfit.tiktoken"
    result = run(capsys, "export", "--model", misfit, "--format", "tiktoken", "--output", output)
    assert_refused(result, "cannot export")
    assert "cannot be a .tiktoken file" in result.err
    assert not output.exists()
    hf_output = tmp_path / "misfit-hf.json"
    assert (
        run(capsys, "export", "--model", misfit, "--format", "hf", "--output", hf_output).code == 0
    )

    twins = tmp_path / "twins.json"
    Tokenizer([(97, 98), (97, 98)]).save(str(twins))
    for format_ in ("hf", "tiktoken"):
        result = run(capsys, "export", "--model", twins, "--format", format_, "--output", output)
        assert_refused(result, "have the same bytes")
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "misfit-hf.json",
        "misfit.json",
        "twins.json",
    ]


def test_export_usage_and_model_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path
) -> None:
    output = tmp_path / "out"
    missing = tmp_path / "missing.json"
    result = run(capsys, "export", "--model", missing, "--format", "hf", "--output", output)
    assert_refused(result, f"model file '{missing}' does not exist")
    result = run(
        capsys, "export", "--model", model, "--format", "sentencepiece", "--output", output
    )
    assert result.code == 2
    assert result.out == ""
    no_dir = tmp_path / "no" / "out"
    result = run(capsys, "export", "--model", model, "--format", "hf", "--output", no_dir)
    assert_refused(result, "does not exist")
    assert not output.exists()


# --------------------------------------------------------------------------- import


def test_import_checks_the_output_before_reading_anything(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "exists.json"
    output.write_text("keep me", encoding="utf-8")
    result = run(capsys, "import", tmp_path / "missing.tiktoken", "--output", output)
    assert_refused(result, "already exists; pass --force to replace it")
    assert output.read_text(encoding="utf-8") == "keep me"


def test_import_replaces_with_force_and_prints_a_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path
) -> None:
    exported = tmp_path / "model.tiktoken"
    assert (
        run(capsys, "export", "--model", model, "--format", "tiktoken", "--output", exported).code
        == 0
    )
    output = tmp_path / "imported.json"
    output.write_text("old", encoding="utf-8")
    result = run(capsys, "import", exported, "--output", output, "--force")
    assert result.code == 0
    assert json.loads(result.out) == {
        "format": "tiktoken",
        "vocabulary": None,
        "output": str(output),
        "merges": 14,
        "pattern": "gpt2",
        "special_tokens": {"<|endoftext|>": 270},
        "id_layout": "identical",
    }
    assert output.read_bytes() == model.read_bytes()
    assert result.err.startswith(f"bpetite: imported tiktoken into '{output}'")


def test_import_of_a_tokenizer_without_endoftext_writes_its_specials(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A tokenizer.json whose only special token is another one imports as schema v2."""
    chat = Tokenizer.train("hello world " * 20, 270, pattern="cl100k", special_tokens=("<|u|>",))
    source = tmp_path / "tokenizer.json"
    source.write_text(export_hf(chat), encoding="utf-8")
    output = tmp_path / "imported.json"
    result = run(capsys, "import", source, "--output", output)
    assert result.code == 0, result
    assert json.loads(result.out)["special_tokens"] == {"<|u|>": chat.n_vocab - 1}
    imported = Tokenizer.load(output)
    assert imported.pattern_name == "cl100k"
    assert dict(imported.special_tokens) == dict(chat.special_tokens) == {"<|u|>": chat.n_vocab - 1}


def test_import_refusals_are_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path
) -> None:
    hf = tmp_path / "hf.json"
    document = json.loads(export_hf(Tokenizer.load(str(model))))
    document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\p{L}+|\p{N}{1,3}"
    hf.write_text(json.dumps(document), encoding="utf-8")
    notes = tmp_path / "notes.txt"
    notes.write_text("plain words here\n", encoding="utf-8")
    output = tmp_path / "out.json"
    cases = [
        ([tmp_path / "missing.json"], f"input file '{tmp_path / 'missing.json'}' does not exist"),
        ([tmp_path], "is a directory, not a file"),
        ([notes], "cannot tell the format of"),
        ([hf, notes], "cannot tell the format of"),
        ([hf, model], "cannot import"),
        ([hf], "not bpetite's gpt2, cl100k or o200k"),
    ]
    for inputs, message in cases:
        assert_refused(run(capsys, "import", *inputs, "--output", output), message)
    assert not output.exists()
    assert run(capsys, "import", "--output", output).code == 2


def test_help_lists_both_commands(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "--help")
    assert "export" in result.out and "import" in result.out
    for command in ("export", "import"):
        result = run(capsys, command, "--help")
        assert result.code == 0
        assert "examples:" in result.out
