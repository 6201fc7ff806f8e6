"""``uv run --group bench python -m benchmarks``: the whole suite (see ``benchmarks/_suite.py``)."""

import sys

from benchmarks._suite import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
