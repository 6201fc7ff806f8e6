"""The one progress event every long-running bpetite call reports through.

Progress is a callback so the library stays free of any display: the CLI turns these
events into a live bar on a terminal and plain lines elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Progress:
    """One report from a long-running task.

    `task` says what is measured and so the unit of `done` and `total`: ``"count"``
    and ``"encode"`` in input bytes, ``"merge"`` in merges. Each task reports
    ``"start"`` once, ``"update"`` as it goes, and ``"done"`` once; a training run
    that stops early reports ``done < total`` at the end.
    """

    task: Literal["count", "merge", "encode"]
    stage: Literal["start", "update", "done"]
    done: int
    total: int


#: What every ``progress=`` keyword accepts.
ProgressCallback = Callable[[Progress], None]


def ignore_progress(_: Progress) -> None:
    """The default callback: report nothing."""
