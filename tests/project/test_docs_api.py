"""The examples of docs/api.md and docs/tokenizers.md run as shown, in order.

Each page runs as one session: later blocks use the names earlier ones defined.
"""

import doctest
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.docs_runner import doc_blocks

PAGES = {"api.md": 15, "tokenizers.md": 10}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_example_runs_as_shown(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = REPO_ROOT / "docs" / name
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    examples = 0
    for block in doc_blocks(page.read_text(encoding="utf-8")):
        if block.language != "pycon":
            continue
        test = parser.get_doctest(block.text, namespace, page.name, str(page), block.line - 1)
        test.globs = namespace  # one session: later blocks use earlier names
        runner.run(test, out=report.append, clear_globs=False)
        examples += len(test.examples)
    assert runner.failures == 0, "".join(report)
    assert examples >= PAGES[name]
