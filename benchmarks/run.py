"""Benchmark bpetite against the naive design, HF tokenizers and tiktoken, in one command.

    uv run --group bench python benchmarks/run.py            # the full run, a few minutes
    uv run --group bench python benchmarks/run.py --quick    # a short check, under a minute
    uv run --group bench python benchmarks/run.py --profile  # cProfile + pyinstrument reports

Writes ``results.json`` and ``results.md`` to ``benchmarks/results/`` (or ``--output``).
"""

import sys
from pathlib import Path


def _main() -> int:
    # Run as a script, so put the repository root on the path: the harness imports
    # `benchmarks.*` and the naive reference algorithms from `tests.reference`.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks._harness import main

    return main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(_main())
