"""Which of a run's correctness checks failed: a benchmark whose results are wrong fails.

Timings are never checked (they are published, not asserted); results are: ids equal
to the reference encoder's, merges equal to the naive trainer's and to the other
configurations' that must agree. Each function returns one message per failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: How the harness marks a failed check in its notes.
FAILED_NOTE = "CHECK FAILED: "


def harness_failures(results: Mapping[str, Any]) -> list[str]:
    """The failed checks of a TinyShakespeare harness run (``_harness.Benchmark.run``).

    Every boolean check in the results counts, and so does every note the harness
    marked as a failure; each failure is reported once.
    """
    failures: list[str] = []
    for key, facts in results.get("merge_agreement", {}).items():
        if facts.get("identical") is False:
            failures.append(f"{key}: merges differ from bpetite's")
    sections = {
        "multi-file training": results.get("multi_file", {}),
        "whole-corpus encode": results.get("encoding", {}).get("text", {}),
        "multilingual encode": results.get("encoding", {}).get("multilingual", {}),
    }
    for section, facts in sections.items():
        for check, ok in facts.get("checks", {}).items():
            if not ok:
                failures.append(f"{section}: {check}")
    for note in results.get("notes", []):
        if note.startswith(FAILED_NOTE) and not _covered(note, failures):
            failures.append(note.removeprefix(FAILED_NOTE))
    return failures


def _covered(note: str, failures: list[str]) -> bool:
    """Whether a note names a check already reported from the results themselves."""
    return any(failure.rsplit(": ", 1)[-1] in note for failure in failures)
