r"""The regex engine of every split: the `regex` package, or `re` with Unicode spelled out.

`regex` is bpetite's declared dependency and its fast path: with it,
:func:`compile_pattern` is ``regex.compile``. Where it cannot be imported (Pyodide
without a network: its npm package runs the standard library, and `regex` comes only
from its CDN), a pattern is translated for the standard library's `re`
(:func:`translate`): each Unicode class of the preset patterns (``\p{L}``, ``\p{Lu}``,
``\p{Ll}``, ``\p{Lt}``, ``\p{Lm}``, ``\p{Lo}``, ``\p{M}``, ``\p{N}``, and ``\s``, which
is `regex`'s White_Space and not `re`'s ``str.isspace``: `re` adds U+001C..U+001F)
becomes the code points `regex` puts in it, read from ``_unicode_classes`` (generated
from `regex`), its members beyond U+FFFF in a branch of their own (:func:`_class_text`
says why). The rest of the presets' syntax (possessive quantifiers, lookahead, ``$``,
``(?i:...)`` around ASCII letters) means the same in both engines.
``tests/core/test_unicode_classes.py`` checks every class against `regex` at every code
point, and ``tests/core/test_regex_fallback.py`` the presets' splits on random text.

Importing this module imports neither `regex` nor the tables: which engine runs is
decided when a pattern is first compiled or escaped (:func:`have_regex`), so
``import bpetite`` stays light.

Without `regex`, a pattern that `re` cannot read the same way raises
:class:`PatternError` naming the construct and its position: another Unicode property,
``\w``, ``\d``, ``\b`` and their negations (the engines' Unicode sets differ), a
negated class or a range end inside a class (``[^\S]``, ``[a-\p{L}]``), an inline flag
other than ``m`` and ``s``, and ``(?i:...)`` around anything but ASCII letters other
than i and I, digits, ``'``, ``|`` and brackets (`re` also folds the dotless ı to i;
`regex` does not).

Measurements: docs/design-notes.md#split-patterns-without-regex
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Final, TypeAlias

from bpetite.core._errors import PatternError, shown

if TYPE_CHECKING:
    import regex

    #: A compiled pattern of either engine; the library uses only what both offer.
    Pattern: TypeAlias = regex.Pattern[str] | re.Pattern[str]


@lru_cache(maxsize=1)
def have_regex() -> bool:
    """Whether `regex` can be imported, tried once, when a pattern first needs an engine.

    Not at import: `regex` is a large module, and ``import bpetite`` and any work on
    ASCII text (which the presets' ``re`` twins split) never need it.
    """
    try:
        import regex  # noqa: F401 - the import is the test
    except ImportError:  # Pyodide without a network, or a test that blocks the import
        return False
    return True


@lru_cache(maxsize=1)
def tables_are_the_engines() -> bool:
    """Whether ``_unicode_classes`` holds the Unicode classes of the `regex` installed.

    The tables were generated from one version of `regex` (``REGEX_VERSION``); another
    may follow another Unicode version, and then only `regex` itself splits text as
    `regex` does. Found without importing `regex` (the narrowed presets exist to spare
    that import): its version as its source states it, or the module's own where it is
    loaded. Without `regex`, the tables are the engine. Unknown counts as different.
    """
    import sys
    from importlib.util import find_spec

    from bpetite.core._unicode_classes import REGEX_VERSION

    loaded = sys.modules.get("regex")
    if loaded is not None:
        return getattr(loaded, "__version__", None) == REGEX_VERSION
    spec = find_spec("regex")
    if spec is None or spec.origin is None:
        return True
    from pathlib import Path

    folder = Path(spec.origin).parent
    for name in ("_main.py", "regex.py"):  # where __version__ is written, new and old
        try:
            source = (folder / name).read_text(encoding="utf-8")
        except OSError:
            continue
        found = re.search(r'^__version__ = "([^"]+)"', source, re.MULTILINE)
        if found is not None:
            return found.group(1) == REGEX_VERSION
    return False


def regex_errors() -> tuple[type[Exception], ...]:
    """What an invalid pattern raises when `regex` compiles it, for an ``except`` clause.

    Without `regex`, :func:`compile_pattern` raises :class:`PatternError` itself, and
    this is empty. An ``except`` clause evaluates it only when an exception reaches it.
    """
    if not have_regex():
        return ()
    import regex

    return (regex.error,)


def escape(text: str) -> str:
    """`text` as a pattern that matches it literally, in the engine's own escaping."""
    if not have_regex():
        return re.escape(text)
    import regex

    return regex.escape(text)


#: Escapes both engines accept with different Unicode sets.
_DIFFERENT_ESCAPES: Final = frozenset("wWdDbB")
#: Inline flags that mean the same in both engines.
_SAME_FLAGS: Final = frozenset("ms")
#: What a ``(?i:...)`` group may hold: characters both engines fold alike.
_SAME_FOLDING: Final = frozenset("ABCDEFGHJKLMNOPQRSTUVWXYZabcdefghjklmnopqrstuvwxyz0123456789'|[]")
_RE_READS_IT_OTHERWISE = "the standard library's re reads it otherwise"
#: The escapes of the classes that are spelled out, and their negations.
_SPELLED_ESCAPES: Final = frozenset("pPsS")
#: The first code point beyond the Basic Multilingual Plane (plane 0).
_FIRST_ASTRAL: Final = 0x10000
#: Every code point beyond the Basic Multilingual Plane, as `re` class text.
_ASTRAL: Final = r"\U00010000-\U0010ffff"
_FLAG_GROUP = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")


@lru_cache(maxsize=128)
def compile_pattern(source: str) -> Pattern:
    """`source` compiled by `regex`, or translated for `re` when `regex` is missing.

    Without `regex`, a pattern `re` rejects or cannot read as `regex` does raises
    :class:`PatternError`; with it, an invalid pattern raises ``regex.error``.
    """
    if not have_regex():
        return compile_for_re(source)
    import regex

    return regex.compile(source)


def compile_for_re(source: str) -> re.Pattern[str]:
    """`source` translated (:func:`translate`) and compiled by the standard library's `re`."""
    translated = translate(source)
    try:
        return re.compile(translated)
    except re.error as error:
        raise PatternError(
            f"the pattern is not one the standard library's re accepts ({error}); the regex "
            "package cannot be imported here: install regex (in Pyodide: "
            "micropip.install('regex'), from its CDN)"
        ) from None


def translate(source: str) -> str:
    r"""`source`, a `regex` pattern, rewritten for `re` with its Unicode classes spelled out.

    >>> translate(r"\s+") == "[" + class_members(r"\s") + "]+"
    True
    """
    out: list[str] = []
    at = 0
    while at < len(source):
        char = source[at]
        if char == "\\" and source[at + 1 : at + 2] in _SPELLED_ESCAPES:
            spelled, end = _spelled_class(source, at)
            out.append(_class_text(source[at + 1].isupper(), [], [spelled]))
            at = end
        elif char == "\\":
            at = _copy_escape(source, at, out)
        elif char == "[":
            at = _translate_class(source, at, out)
        elif source.startswith("(?", at):
            at = _translate_group_opening(source, at, out)
        else:
            out.append(char)
            at += 1
    return "".join(out)


def class_members(spelled: str) -> str:
    r"""The members of a class `regex` spells `spelled` (``\p{L}``...), as `re` class text."""
    below, above = _class_members()[spelled]
    return below + "".join(above[plane] for plane in sorted(above))


@lru_cache(maxsize=1)
def _class_members() -> dict[str, tuple[str, dict[int, str]]]:
    """Each class's members as `re` class text: those in the Basic Multilingual Plane,
    then the rest by plane (``code point >> 16``, 1 to 16)."""
    # Imported here: with `regex` installed, the tables are never read.
    from bpetite.core._unicode_classes import RANGES

    members = {}
    for spelled, pairs in RANGES.items():
        below: list[str] = []
        above: dict[int, list[str]] = {}
        for first, last in zip(map(ord, pairs[::2]), map(ord, pairs[1::2]), strict=True):
            if first < _FIRST_ASTRAL:
                below.append(_range(chr(first), chr(min(last, _FIRST_ASTRAL - 1))))
                first = _FIRST_ASTRAL
            while first <= last:  # cut at each plane's end
                plane = first >> 16
                end = min(last, (plane << 16) | 0xFFFF)
                above.setdefault(plane, []).append(_range(chr(first), chr(end)))
                first = end + 1
        members[spelled] = ("".join(below), {plane: "".join(runs) for plane, runs in above.items()})
    return members


def _range(first: str, last: str) -> str:
    return re.escape(first) if first == last else f"{re.escape(first)}-{re.escape(last)}"


def _class_text(negated: bool, literal: list[str], spelled: list[str]) -> str:
    """A class of `literal` members (escapes and ranges as written) and `spelled` classes.

    `re` tests a class's members below U+FFFF with one table lookup, but those beyond it
    one range at a time, and the letters alone have hundreds of such ranges: a character
    that reached them would pay for all of them. So those members get a branch of their
    own, entered only by a character beyond U+FFFF, and within it one per plane, entered
    only by a character of that plane: a letter of the Basic Multilingual Plane outside
    a negated class, or a character of a plane with few members, tests none or few.
    """
    if literal and literal[0] in "]^-":  # escaped, so that the members' order is free
        literal = ["\\" + literal[0], *literal[1:]]
    if len(literal) > 1 and literal[-1] == "-":
        literal = [*literal[:-1], "\\-"]
    written = "".join(literal)
    below = written + "".join(_class_members()[name][0] for name in spelled)
    above: dict[int, str] = {}
    for name in spelled:
        for plane, members in _class_members()[name][1].items():
            above[plane] = above.get(plane, "") + members
    if not above:  # no member beyond U+FFFF but the literal ones
        return f"[^{below}]" if negated else f"[{below}]"
    planes = [
        f"(?=[{_range(chr(plane << 16), chr((plane << 16) | 0xFFFF))}])[{above[plane]}]"
        for plane in sorted(above)
    ]
    if written:
        planes.append(f"[{written}]")
    beyond = "|".join(planes)
    if negated:
        return f"(?:[^{below}{_ASTRAL}]|(?=[{_ASTRAL}])(?!{beyond})[{_ASTRAL}])"
    return f"(?:[{below}]|(?=[{_ASTRAL}])(?:{beyond}))"


def _translate_class(source: str, at: int, out: list[str]) -> int:
    """Append the bracketed class that opens at `at`; return the position after its ]."""
    opening = at
    negated = source.startswith("[^", at)
    at += 2 if negated else 1
    literal: list[str] = []
    spelled: list[str] = []
    if source.startswith("]", at):  # a ] right after [ or [^ is a member, not the end
        literal.append("]")
        at += 1
    while at < len(source) and source[at] != "]":
        char = source[at]
        if char == "\\" and source[at + 1 : at + 2] in _SPELLED_ESCAPES:
            name, end = _spelled_class(source, at)
            if source[at + 1].isupper():
                raise _refused(
                    at, f"{source[at:end]} inside a character class", _RE_READS_IT_OTHERWISE
                )
            ranged = source[end : end + 1] == "-" and source[end + 1 : end + 2] not in ("]", "")
            if ranged or (len(literal) > 1 and literal[-1] == "-"):
                raise _refused(
                    at,
                    f"a range to or from {source[at:end]}",
                    "a range needs a character at each end",
                )
            spelled.append(name)
            at = end
        elif char == "\\":
            at = _copy_escape(source, at, literal)
        elif char == "[":
            raise _refused(at, "an unescaped [ inside a character class", _RE_READS_IT_OTHERWISE)
        else:
            literal.append(char)
            at += 1
    if at >= len(source):  # never closed: re says so
        out.append(source[opening:])
        return at
    out.append(_class_text(negated, literal, spelled))
    return at + 1


def _spelled_class(source: str, at: int) -> tuple[str, int]:
    """The class spelled by the escape at `at` (``\\s`` for ``\\S`` too), and the end."""
    letter = source[at + 1]
    if letter in "sS":
        return r"\s", at + 2
    close = source.find("}", at) if source.startswith("{", at + 2) else -1
    spelled = "\\p" + source[at + 2 : close + 1] if close >= 0 else ""
    if spelled not in _class_members():
        written = shown(source[at : close + 1] if close >= 0 else source[at : at + 3])
        known = ", ".join(_class_members())
        raise _refused(at, written, f"without regex, bpetite spells out only {known}")
    return spelled, close + 1


def _copy_escape(source: str, at: int, out: list[str]) -> int:
    """Append the escape at `at` as written, refusing those `re` reads otherwise."""
    letter = source[at + 1 : at + 2]
    if letter in _DIFFERENT_ESCAPES:
        raise _refused(at, f"\\{letter}", "its Unicode set in re is not the one in regex")
    out.append(source[at : at + 2])
    return at + 2


def _translate_group_opening(source: str, at: int, out: list[str]) -> int:
    """Append the ``(?`` construct at `at`, refusing flags `re` would read differently."""
    if source.startswith("(?#", at):  # a comment: copied whole, never translated
        close = source.find(")", at)
        end = len(source) if close < 0 else close + 1
        out.append(source[at:end])
        return end
    flags = _FLAG_GROUP.match(source, at)
    if flags is None or not (flags[1] or flags[2]):  # (?: (?= (?! (?<= (?<! (?> (?P<
        out.append("(?")
        return at + 2
    turned = set(flags[1]) | set(flags[2] or "")
    if turned - _SAME_FLAGS:
        body_end = source.find(")", flags.end())
        body = source[flags.end() : body_end]
        scoped_case_folding = flags[1] == "i" and not flags[2] and flags[3] == ":"
        if not (scoped_case_folding and body_end >= 0 and set(body) <= _SAME_FOLDING):
            raise _refused(
                at,
                f"the inline flags {flags[0]}",
                "re reads only the flags m and s as regex does, and i only around ASCII "
                "letters other than i and I, digits, ', | and brackets",
            )
    out.append(flags[0])
    return flags.end()


def _refused(at: int, what: str, why: str) -> PatternError:
    return PatternError(
        f"the pattern uses {what} at position {at}, and {why}; the regex package cannot be "
        "imported here: install regex (in Pyodide: micropip.install('regex'), from its CDN)"
    )
