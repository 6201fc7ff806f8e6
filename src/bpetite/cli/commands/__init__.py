"""One module per ``bpetite`` command, each a thin shell over the library.

Each module exposes ``register(subparsers)``, which adds its parser and sets
``handler`` to a function ``(args) -> int``. A command uses bpetite's public API and
the shared support one folder up (``_parser``, ``_inputs``, ``_files``, ``_output``,
``_progress``, ``_sources``, ``_render``), never another command.
"""
