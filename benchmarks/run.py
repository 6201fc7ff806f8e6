"""The benchmark suite, run as a script: the same command as ``python -m benchmarks``.

    uv run --group bench python benchmarks/run.py            # the full run
    uv run --group bench python benchmarks/run.py --quick    # every benchmark, small; CI runs it
    uv run --group bench python benchmarks/run.py --profile  # cProfile + pyinstrument reports

Writes ``results.json`` and ``results.md`` to ``benchmarks/results/`` (or ``--output``);
exits 1 when a check fails. ``--help`` lists every option.
"""

import sys
from pathlib import Path


def _main() -> int:
    # Run as a script, so put the repository root on the path: the suite imports
    # `benchmarks.*` and the naive reference algorithms from `tests.reference`.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks._suite import main

    return main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(_main())
