"""``uv run --group bench python -m benchmarks``: the suite of ``benchmarks/run.py``."""

import sys

from benchmarks.run import main

sys.exit(main(sys.argv[1:]))
