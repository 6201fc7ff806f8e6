"""Keep the cyclic garbage collector out of building large, acyclic tables."""

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a block builds large acyclic tables.

    Parsing an artifact, building a tokenizer or training allocates hundreds of
    thousands of tracked containers (a list per JSON entry, a tuple per merge, a list
    per pair in the trainer's index), and the collections they trigger walk those
    containers again and again. Nothing built there can form a reference cycle, so
    those collections never free anything. gc state is process-global: only what this
    call disabled is re-enabled.

    Measurements: docs/design-notes.md#gc-pause
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
