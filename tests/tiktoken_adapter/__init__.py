"""A package named ``tiktoken`` made of bpetite, for running tiktoken's own tests on it.

``tests/interop/test_tiktoken_suite.py`` puts this folder first on ``sys.path`` of a
pytest process running the tests of tiktoken's sdist, so their ``import tiktoken`` finds
``tiktoken/__init__.py`` here instead of the real one.
"""
