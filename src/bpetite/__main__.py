"""``python -m bpetite``: the same as the ``bpetite`` command (``bpetite.cli.run``)."""

from bpetite.cli import run

if __name__ == "__main__":
    run()
