"""A reader of explanation pages for the tests, written from the page's description.

The page draws the text once as a tree of merges: ``<t-n>`` a merged token, ``<t-l>``
one byte, ``<t-s>`` a special token, each in a ``<t-c>`` chunk. An element is a token at
step ``k`` while ``--a <= k < --b`` (``--a`` is 0 for bytes and specials; a root has no
``--b``, so it is never merged away). This reads those rules back without the renderer.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_TOKENS = {"t-n", "t-l", "t-s"}
_NEVER = 1 << 60


class ExplainPage(HTMLParser):
    """Every token element in document order: (depth, first step, last step + 1, id)."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[int, int, int, int]] = []
        self.radios: list[str] = []
        self.checked: list[str] = []
        self.start_tags: dict[str, int] = {}
        self._depth = 0
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.start_tags[tag] = self.start_tags.get(tag, 0) + 1
        values = {name: value or "" for name, value in attrs}
        if tag == "input" and values.get("type") == "radio":
            self.radios.append(values["id"])
            if "checked" in values:
                self.checked.append(values["id"])
        if tag not in _TOKENS:
            return
        style = dict(re.findall(r"--([a-z]+):\s*([0-9]+)", values.get("style", "")))
        start = int(style.get("a", "0"))
        end = int(style["b"]) if "b" in style else _NEVER
        self.elements.append((self._depth, start, end, int(values["data-id"])))
        self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _TOKENS:
            self._depth -= 1

    def tokens_at(self, step: int) -> list[int]:
        """The ids the page draws as tokens after `step` steps, in order.

        Fails if a token is drawn inside another; a byte no token covers shows as an
        id missing from the result.
        """
        ids: list[int] = []
        open_token_depth: int | None = None
        for depth, start, end, token_id in self.elements:
            if open_token_depth is not None and depth <= open_token_depth:
                open_token_depth = None  # left the token's subtree
            if start <= step < end:
                assert open_token_depth is None, "a token inside a token"
                ids.append(token_id)
                open_token_depth = depth
        return ids
