"""How a message shows a value: whole up to PATH_MAX, elided past it, saying how much."""

from __future__ import annotations

import pytest

from bpetite._internal import SHOWN_CHARS, shown


def test_the_longest_path_the_system_takes_is_shown_whole() -> None:
    path = "/" + "/".join(["d" * 255] * 16)[: SHOWN_CHARS - 1]
    assert len(path) == SHOWN_CHARS
    assert shown(path) == path


@pytest.mark.parametrize("length", [SHOWN_CHARS + 1, 1 << 20])
def test_a_longer_value_keeps_its_ends_and_says_how_much_is_left_out(length: int) -> None:
    text = "h" * 1000 + "m" * (length - 2000) + "t" * 1000
    head, rest = shown(text).split("…[")
    count, tail = rest.split(" characters elided]…")
    assert head == "h" * len(head)
    assert tail == "t" * len(tail)
    assert len(head) + int(count) + len(tail) == length
    assert len(shown(text)) < 300


def test_a_smaller_limit_elides_the_same_way() -> None:
    assert shown("abcdefghij", limit=6) == "abcd…[4 characters elided]…ij"
