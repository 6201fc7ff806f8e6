"""The benchmark suite: every section in one run, in this order.

    uv run --group bench python benchmarks/run.py             # the full run
    uv run --group bench python benchmarks/run.py --quick     # every section, small; CI runs it
    uv run --group bench python -m benchmarks --write-docs    # the same command as a module

Writes ``results.json`` and ``results.md`` to ``benchmarks/results/`` (or ``--output``)
and exits 1 when a check fails; ``--help`` lists every option (``benchmarks/harness.py``).
"""

import sys
from collections.abc import Sequence
from pathlib import Path

if __name__ == "__main__":  # run as a script: import `benchmarks` from the repository root
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from benchmarks import (
    big_corpus,
    dataset_encode,
    first_contact,
    harness,
    openai_encode,
    openai_load,
    peer_training,
    profiles,
    shakespeare_encode,
    shakespeare_train,
    trainer_sweep,
    web_training,
)

SECTIONS: dict[str, harness.Measure] = {
    "train": shakespeare_train.run,
    "encode": shakespeare_encode.run,
    "openai": openai_encode.run,
    "load": openai_load.run,
    "first-contact": first_contact.run,
    "training": peer_training.run,
    "big-corpus": big_corpus.run,
    "sweep": trainer_sweep.run,
    "dataset": dataset_encode.run,
    "gigabyte": web_training.run,
}
#: Sections left out of ``--quick`` unless named with ``--only``: minutes on a gigabyte.
FULL_ONLY = ("gigabyte",)


def main(argv: Sequence[str]) -> int:
    return harness.main(argv, SECTIONS, profiles.profile, FULL_ONLY)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
