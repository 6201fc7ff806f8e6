r"""The spelled-out Unicode classes equal `regex`'s, code point by code point, over all of Unicode.

Without `regex`, the presets run on `re` with each class (``\p{L}`` ... ``\s``) spelled
out from ``core/_unicode_classes.py``. Each class, and each composed class the presets
use, is checked here against the installed `regex` at every code point from 0 to
0x10FFFF, surrogates included, one match at a time (the generator found runs instead).
The committed module must also be what the generator writes now, so a `regex` upgrade
cannot leave stale tables behind.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from functools import cache
from itertools import pairwise
from types import ModuleType

import pytest
import regex

from bpetite.core._regex import class_members, translate
from bpetite.core._unicode_classes import RANGES, REGEX_VERSION
from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "generate_unicode_classes.py"
MODULE = REPO_ROOT / "src" / "bpetite" / "core" / "_unicode_classes.py"


@cache  # on first use, not in every process that collects this module
def all_code_points() -> str:
    """Every code point, each at the index equal to its value."""
    return "".join(map(chr, range(0x110000)))


#: The classes as the presets compose them, besides the single ones.
COMPOSED = [
    r"[^\s\p{L}\p{N}]",
    r"[^\r\n\p{L}\p{N}]",
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
    r"\S",
    r"\P{L}",
    r"\P{N}",
    r"[\s\p{N}x]",
]


@pytest.fixture(scope="module")
def script() -> ModuleType:
    """The generator imported as a module."""
    spec = importlib.util.spec_from_file_location("generate_unicode_classes", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_module_is_what_the_script_writes_now(script: ModuleType) -> None:
    """Regenerate with ``uv run python scripts/generate_unicode_classes.py`` if this fails."""
    assert MODULE.read_text(encoding="utf-8") == script.module_text()
    assert regex.__version__ == REGEX_VERSION


def test_the_module_names_its_regex_and_unicode_versions() -> None:
    header = MODULE.read_text(encoding="utf-8").split('"""')[1]
    assert f"from regex {regex.__version__}" in header
    assert re.search(r"\(Unicode \d+\.\d+\.\d+, as regex states it\)", header)


def _members(found: re.Pattern[str] | regex.Pattern[str]) -> list[int]:
    """The code points `found` matches on their own, found one match at a time."""
    return list(map(ord, found.findall(all_code_points())))


@pytest.mark.parametrize("spelled", list(RANGES))
def test_each_table_is_regex_class_at_every_code_point(spelled: str) -> None:
    pairs = RANGES[spelled]
    ranges = list(zip(map(ord, pairs[::2]), map(ord, pairs[1::2]), strict=True))
    # Increasing, disjoint and maximal: a gap of at least one code point between runs.
    assert all(first <= last for first, last in ranges)
    assert all(last + 1 < first for (_, last), (first, _) in pairwise(ranges))
    from_table = [code for first, last in ranges for code in range(first, last + 1)]
    assert from_table == _members(regex.compile(spelled))


@pytest.mark.parametrize("spelled", [*RANGES, *COMPOSED])
def test_the_spelled_class_on_re_is_regex_class_at_every_code_point(spelled: str) -> None:
    assert _members(re.compile(translate(spelled))) == _members(regex.compile(spelled))


def test_re_own_whitespace_is_not_regex_so_it_is_spelled_out() -> None:
    r"""Why ``\s`` has a table: `re`'s is ``str.isspace``, which adds U+001C..U+001F."""
    differ = set(_members(re.compile(r"\s"))) ^ set(_members(regex.compile(r"\s")))
    assert differ == {0x1C, 0x1D, 0x1E, 0x1F}
    spelled_out = re.compile("[" + class_members(r"\s") + "]")
    assert not set(_members(spelled_out)) & differ


def _folded_letters(
    compile_pattern: Callable[[str], re.Pattern[str] | regex.Pattern[str]],
    letters: str,
    candidates: list[int],
) -> dict[int, str]:
    """For each candidate code point, the letters `(?i)letter` matches it with."""
    found = {}
    for code in candidates:
        matched = "".join(x for x in letters if compile_pattern(f"(?i:{x})").fullmatch(chr(code)))
        if matched:
            found[code] = matched
    return found


def test_case_folding_of_ascii_letters_other_than_i_is_the_same_at_every_code_point() -> None:
    """The presets' ``(?i:...)`` groups hold ASCII letters, and a custom pattern may too.

    Each engine folds the long s (U+017F) to s and the Kelvin sign (U+212A) to k; every
    code point either engine folds to an ASCII letter other than i is checked here.
    """
    letters = "abcdefghjklmnopqrstuvwxyz"
    either = set(_members(regex.compile(f"(?i:[{letters}])")))
    either |= set(_members(re.compile(f"(?i:[{letters}])")))
    assert {0x17F, 0x212A} <= either
    candidates = sorted(either)
    assert _folded_letters(regex.compile, letters, candidates) == _folded_letters(
        re.compile, letters, candidates
    )


def test_the_dotless_i_is_why_a_custom_case_insensitive_i_needs_regex() -> None:
    """`re` folds U+0131 (ı) to i; `regex`'s simple case folding does not."""
    assert re.fullmatch("(?i:i)", "\u0131")
    assert not regex.fullmatch("(?i:i)", "\u0131")
