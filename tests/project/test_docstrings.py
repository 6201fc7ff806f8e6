"""Every example in the package's docstrings runs as shown, so none can drift."""

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import bpetite


def package_modules() -> list[str]:
    names = [bpetite.__name__]
    for info in pkgutil.walk_packages(bpetite.__path__, prefix="bpetite."):
        if info.name != "bpetite.__main__" and not info.name.startswith("bpetite.corpus._dask"):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", package_modules())
def test_docstring_examples(name: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(str(tmp_path))
    module: ModuleType = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
