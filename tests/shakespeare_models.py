"""Tokenizers trained on TinyShakespeare, each size trained once per process.

``tests/core/test_encoder.py`` and ``tests/core/test_trainer.py`` train the same sizes
(32,000 takes about half a second). A Tokenizer's merges never change after training
(its caches are only caches), so the two modules read one.
"""

from __future__ import annotations

from functools import cache

from bpetite import Tokenizer
from tests import datafiles


@cache
def trained(vocab_size: int) -> Tokenizer:
    """``Tokenizer.train(TinyShakespeare, vocab_size)``."""
    return Tokenizer.train(datafiles.shakespeare_text(), vocab_size)
