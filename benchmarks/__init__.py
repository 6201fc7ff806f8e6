"""bpetite's benchmarks: ``uv run --group bench python -m benchmarks`` (see ``run.py``).

A package only so the sections import the harness and mypy sees one namespace; the
library never imports it.
"""
