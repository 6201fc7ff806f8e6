"""Many texts at once: the one-text method applied to every item, on up to n threads.

tiktoken's ``encode_batch`` and ``decode_batch`` (and Hugging Face's) take a list and a
thread count. Each item goes through the one-text method unchanged, so the one-text
tests cover what a batch returns, and the result never depends on the thread count.
Threads are started only where they can run Python at once (a free-threaded build with
the GIL off); with the GIL they would take turns, so a pool would add only its start-up.
Measurements: docs/design-notes.md#batches-threads-only-without-the-gil
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Final, TypeVar

from bpetite.core._errors import BpetiteError, ParameterError

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")

#: Whether threads run Python at once: only with the GIL off (``sys._is_gil_enabled``,
#: Python 3.13+ free-threaded builds). Elsewhere a batch is mapped in the calling thread.
THREADS_RUN_AT_ONCE: Final = not getattr(sys, "_is_gil_enabled", lambda: True)()


def checked_texts(texts: Sequence[str], method: str) -> Sequence[str]:
    """Refuse one str (a batch of characters) or a non-str item, naming its index."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{method}() takes a list of texts, not one string: write [text]")
    if not isinstance(texts, Sequence):
        texts = list(texts)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"{method}() takes texts (str), but item {index} is {type(text).__name__}"
            )
    return texts


def checked_id_lists(batch: Iterable[Sequence[int]], method: str) -> list[Sequence[int]]:
    """The id lists of `batch` as a list; one str or bytes (not a batch) is refused."""
    if isinstance(batch, (str, bytes)) or not isinstance(batch, Iterable):
        raise TypeError(f"{method}() takes a list of id lists, got {type(batch).__name__}")
    return list(batch)


def checked_threads(num_threads: object) -> int:
    """Return `num_threads` if it is an int of at least 1; otherwise raise."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError(f"num_threads must be an integer, got {num_threads!r}")
    if num_threads < 1:
        raise ParameterError(f"num_threads must be at least 1, got {num_threads}")
    return num_threads


def map_in_threads(
    function: Callable[[_Item], _Result], items: Sequence[_Item], threads: int
) -> list[_Result]:
    """``[function(item) for item in items]``; the first failing item's error is raised,
    its message starting with the item's index (``item 1: unknown token id ...``).

    On up to `threads` threads where they run at once (:data:`THREADS_RUN_AT_ONCE`).
    """
    results: list[_Result] = []
    try:
        if threads == 1 or len(items) < 2 or not THREADS_RUN_AT_ONCE:
            for item in items:
                results.append(function(item))
            return results
        # Only here: `import bpetite` stays light.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(threads, len(items))) as pool:
            # In order: the first error met is the first failing item's.
            for result in pool.map(function, items):
                results.append(result)
    except (BpetiteError, TypeError, UnicodeError) as error:
        _name_item(error, len(results))
        raise
    return results


def _name_item(error: Exception, index: int) -> None:
    """Start `error`'s message with ``item <index>: ``, its type and traceback kept."""
    if isinstance(error, (UnicodeDecodeError, UnicodeEncodeError)):
        error.reason = f"item {index}: {error.reason}"
    elif len(error.args) == 1 and isinstance(error.args[0], str):
        error.args = (f"item {index}: {error.args[0]}",)
