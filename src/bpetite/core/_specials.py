"""Special tokens: literal texts that encode to one reserved id each.

Which specials a call honours is its policy (tiktoken's ``allowed_special`` and
``disallowed_special``, with tiktoken's rules): disallowed texts raise, allowed
specials become their ids, and the rest are ordinary text. Where specials overlap in a
text, the leftmost match wins, then the longest.

The extraction must equal what ``bpetite.reference.encode`` does with specials:
:meth:`SpecialTokens.segments` yields the same runs and ids, leftmost then longest.
"""

from __future__ import annotations

import contextlib
import re
from collections import OrderedDict
from collections.abc import Collection, Iterator, Mapping
from typing import Final, Literal, NamedTuple

from bpetite.core._errors import DisallowedSpecialError, ParameterError

#: The policy arguments: a set of special texts, or "all" of them.
SpecialPolicy = Literal["all"] | Collection[str]

_NONE: frozenset[str] = frozenset()

#: Up to this many specials, whether one occurs is a substring search each; beyond, one
#: search of their regex, which looks for their common start first (o200k_harmony's
#: 1,091 specials all start ``<|``), instead of a scan of the text per special.
#: Measurements: docs/design-notes.md#special-tokens-found-in-one-pass
FEW_SPECIALS: Final = 8
#: The regexes kept per tokenizer, one per set of specials a policy names: the least
#: recently used goes first, so a server that allows a different set per request holds
#: a bounded number.
MATCHERS_KEPT: Final = 16


class SpecialMatch(NamedTuple):
    """A special token met in a text: its id, and the text it was written as there (an
    alias's own text, where two texts share the id, as ``o200k_harmony``'s do)."""

    token_id: int
    text: str


def disallowed_special_error(token: str, position: int) -> DisallowedSpecialError:
    """The error for the special token `token` found at `position` where the call does
    not allow it; its advice holds whichever keyword disallowed it."""
    return DisallowedSpecialError(
        f"the text contains the special token {token!r} at position {position}, which "
        "this call does not allow. To encode it as its special id, allow it "
        f"(allowed_special={{{token!r}}} or 'all') and leave it out of disallowed_special; "
        "to encode it as ordinary text, use encode_ordinary() or pass "
        "allowed_special=set(), disallowed_special=()"
    )


class SpecialTokens:
    """An ordered table of special texts and their ids, and the regexes that find them."""

    __slots__ = ("_all", "_matchers", "id_set", "ids")

    def __init__(self, ids: Mapping[str, int]) -> None:
        self.ids: Mapping[str, int] = ids
        self.id_set = frozenset(ids.values())
        self._all = frozenset(ids)
        self._matchers: OrderedDict[frozenset[str], re.Pattern[str]] = OrderedDict()

    def resolve(
        self, allowed: SpecialPolicy, disallowed: SpecialPolicy
    ) -> tuple[frozenset[str], frozenset[str]]:
        """Return (allowed, disallowed) as sets of texts, by tiktoken's rules.

        ``allowed_special="all"`` is every special token; a collection names some, and
        a name that is not a special token of this tokenizer is ignored (no text can
        become its id). ``disallowed_special="all"`` is every special token not
        allowed; a collection is taken as given, so a text it names raises wherever it
        occurs, even if it is also allowed or is no special token at all. As in
        tiktoken, ``disallowed=None`` checks nothing (it is ``()``), and
        ``allowed=None`` is a TypeError.
        """
        if disallowed is None:
            disallowed = ()
        if allowed == "all" and (disallowed == "all" or disallowed == ()):
            # The default policy, on every encode call: no sets to build or check.
            return self._all, _NONE
        allowed_set = self._all if allowed == "all" else self._texts(allowed, "allowed_special")
        allowed_set &= self._all
        if disallowed == "all":
            return allowed_set, self._all - allowed_set
        return allowed_set, self._texts(disallowed, "disallowed_special")

    @staticmethod
    def _texts(policy: SpecialPolicy, keyword: str) -> frozenset[str]:
        try:
            if isinstance(policy, str):  # iterable, but its characters are no policy
                raise TypeError
            names = frozenset(policy)
        except TypeError:  # a str, None, a number: not a collection
            raise TypeError(
                f"{keyword} must be 'all' or a collection of special tokens, got {policy!r}"
            ) from None
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"{keyword} must hold texts (str), got {name!r}")
            if not name:
                raise ParameterError(f"{keyword} holds an empty text, which matches everywhere")
        return names

    def check_disallowed(self, text: str, disallowed: frozenset[str]) -> None:
        """Raise DisallowedSpecialError if `text` contains one of `disallowed`."""
        if not self.occur_in(text, disallowed):
            return
        match = self.matcher(disallowed).search(text)
        if match is None:  # pragma: no cover - the `in` test above found one
            return
        token = match.group()
        if token not in self._all:
            raise DisallowedSpecialError(
                f"the text contains {token!r} at position {match.start()}, which "
                "disallowed_special names; to encode it as ordinary text, leave it out of "
                "disallowed_special"
            )
        raise disallowed_special_error(token, match.start())

    def matcher(self, specials: frozenset[str]) -> re.Pattern[str]:
        """A regex finding any of `specials`: at each position the longest one first.

        Literal texts only, so the standard library's `re` matches them as `regex`
        would, compiles them several times faster and is already loaded.
        """
        # Each step is one call in C, so threads sharing a tokenizer (get_encoding's) may
        # race here without an error: at worst one compiles a regex twice.
        matchers = self._matchers
        found = matchers.get(specials)
        if found is not None:
            with contextlib.suppress(KeyError):  # dropped by another thread meanwhile
                matchers.move_to_end(specials)  # the most recently used
            return found
        ordered = sorted(specials, key=lambda text: (-len(text), text))
        found = matchers[specials] = re.compile("|".join(map(re.escape, ordered)))
        if len(matchers) > MATCHERS_KEPT:
            with contextlib.suppress(KeyError):  # emptied by another thread meanwhile
                matchers.popitem(last=False)  # the least recently used
        return found

    def occur_in(self, text: str, specials: frozenset[str]) -> bool:
        """Whether any of `specials` occurs in `text`: one pass over it, in C."""
        if len(specials) > FEW_SPECIALS:
            return self.matcher(specials).search(text) is not None
        # A plain loop, not any() over a generator: this runs on every encode call, and
        # the generator costs more than the search on a short text.
        for special in specials:  # noqa: SIM110
            if special in text:
                return True
        return False

    def segments(self, text: str, allowed: frozenset[str]) -> Iterator[str | SpecialMatch]:
        """Yield the ordinary runs of `text` (non-empty str) and the allowed specials met."""
        if not self.occur_in(text, allowed):
            if text:
                yield text
            return
        ids = self.ids
        start = 0
        for match in self.matcher(allowed).finditer(text):
            if match.start() > start:
                yield text[start : match.start()]
            yield SpecialMatch(ids[match.group()], match.group())
            start = match.end()
        if start < len(text):
            yield text[start:]
