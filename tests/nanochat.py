"""nanochat's tokenizer-training loop, the oracle for bpetite's character budget."""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def nanochat_text_iterator(
    documents: Iterable[str], max_chars: int | None, doc_cap: int | None
) -> Iterator[str]:
    """``text_iterator`` of nanochat's ``scripts/tok_train.py``, line for line.

    Crop every document to `doc_cap` characters, count, yield, and stop once the count
    has passed `max_chars` (None: that limit off).
    """
    nchars = 0
    for doc in documents:
        doc_text = doc
        if doc_cap is not None and len(doc_text) > doc_cap:
            doc_text = doc_text[:doc_cap]
        nchars += len(doc_text)
        yield doc_text
        if max_chars is not None and nchars > max_chars:
            return
