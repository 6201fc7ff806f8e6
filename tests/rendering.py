"""Readers of bpetite's renderings for the tests: the labels a token must get, the plain
output split back into labels, and an HTML page (or a browser's DOM dump) parsed into
its token elements. Written from the format's description, never with the renderer.
"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser

_MARKERS = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}


def expected_label(data: bytes) -> str:
    """The label a token must get: its text with visible whitespace, or ⟨hex⟩ if partial."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "⟨" + " ".join(f"{byte:02x}" for byte in data) + "⟩"
    return "".join(_MARKERS.get(char, char) for char in text)


def parse_plain(output: str) -> list[str]:
    """Split the plain rendering back into token labels: drop layout newlines, honour escapes."""
    body = output.replace("\n", "")
    if not body:
        return []
    labels: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            current.append(body[index + 1])
            index += 2
            continue
        if char == "|":
            labels.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    labels.append("".join(current))
    return labels


class TokenSpans(HTMLParser):
    """Reads a page (or a browser's DOM dump): token elements in order, and header values."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[dict[str, str]] = []
        self.start_tags: Counter[str] = Counter()
        self.attributes: list[tuple[str, str]] = []
        self.by_id: dict[str, str] = {}
        self._token: dict[str, str] | None = None
        self._text: list[str] = []
        self._depth = 0
        self._id_element: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.start_tags[tag] += 1
        values = {name: value or "" for name, value in attrs}
        self.attributes += values.items()
        if self._token is not None:
            self._depth += 1
        elif "data-token-id" in values:
            self._token, self._text, self._depth = values, [], 0
        elif "id" in values:
            self._id_element = values["id"]
            self.by_id[values["id"]] = ""

    def handle_endtag(self, tag: str) -> None:
        if self._token is not None:
            if self._depth:
                self._depth -= 1
                return
            self.tokens.append({**self._token, "text": "".join(self._text)})
            self._token = None
        self._id_element = None

    def handle_data(self, data: str) -> None:
        if self._token is not None:
            self._text.append(data)
        elif self._id_element is not None:
            self.by_id[self._id_element] += data


def parse_page(page: str) -> TokenSpans:
    parser = TokenSpans()
    parser.feed(page)
    parser.close()
    return parser
