"""bpetite's benchmark harness: run it with ``uv run --group bench python benchmarks/run.py``.

A package only so the modules can import each other and mypy sees one namespace; the
library never imports it.
"""
