"""A character budget for training, as nanochat's ``tok_train.py`` has it.

Two limits on the documents a tokenizer learns from, applied in document order:

* `doc_cap`: each document is cut to its first `doc_cap` characters;
* `max_chars`: documents are taken until the one that takes the running total of
  (capped) characters past `max_chars`, that one included. So document ``i`` is taken
  when the characters of the documents before it add up to at most `max_chars`; the
  first document is always taken.

nanochat's loop, for reference: ``doc = doc[:doc_cap]; nchars += len(doc); yield doc;
if nchars > max_chars: return``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bpetite.core._errors import ParameterError


@dataclass(frozen=True, slots=True)
class Budget:
    """The two limits, each None when off; checked on construction."""

    max_chars: int | None = None
    doc_cap: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_chars", "doc_cap"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an integer or None, got {value!r}")
            if value < 1:
                raise ParameterError(f"{name} must be at least 1 character, got {value}")

    @property
    def is_off(self) -> bool:
        """True when neither limit is set: every document is taken whole."""
        return self.max_chars is None and self.doc_cap is None

    def capped(self, length: int) -> int:
        """How many characters of a document of `length` characters are taken."""
        return length if self.doc_cap is None else min(length, self.doc_cap)

    def apply(self, documents: Iterable[str]) -> Iterator[str]:
        """Yield `documents` capped and cut by the budget, reading no document past the cut.

        >>> list(Budget(max_chars=3, doc_cap=2).apply(["abc", "d", "efg", "h"]))
        ['ab', 'd', 'ef']
        """
        doc_cap, max_chars = self.doc_cap, self.max_chars
        total = 0
        for document in documents:
            if doc_cap is not None and len(document) > doc_cap:
                document = document[:doc_cap]
            yield document
            total += len(document)
            if max_chars is not None and total > max_chars:
                return
