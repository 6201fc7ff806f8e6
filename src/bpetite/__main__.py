"""``python -m bpetite``: the same as the ``bpetite`` command."""

from bpetite.cli import run

if __name__ == "__main__":
    run()
