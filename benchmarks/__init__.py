"""bpetite's benchmark suite: run it with ``uv run --group bench python -m benchmarks``.

A package only so the modules can import each other and mypy sees one namespace; the
library never imports it.
"""
