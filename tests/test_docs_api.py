"""docs/api.md's examples run as shown, in order, sharing one namespace like a session."""

import doctest
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.docs_runner import doc_blocks

PAGE = REPO_ROOT / "docs" / "api.md"


def test_every_example_runs_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    examples = 0
    for block in doc_blocks(PAGE.read_text(encoding="utf-8")):
        if block.language != "pycon":
            continue
        test = parser.get_doctest(block.text, namespace, PAGE.name, str(PAGE), block.line - 1)
        test.globs = namespace  # one session: later blocks use earlier names
        runner.run(test, out=report.append, clear_globs=False)
        examples += len(test.examples)
    assert runner.failures == 0, "".join(report)
    assert examples >= 15
