"""The one internal door: what bpetite's own shells share with the library.

The CLI, :mod:`bpetite.interop` and the benchmarks are thin shells over the library;
the few pieces of plumbing they need beyond the public API (the atomic writers, the
strict JSON reader, how a message shows a value, the Dask client, the shared
constants, the regex engine) are reached through this module and no other private
one, so the library's private layout can change without touching them. Not public
API: a name here can change in any release.

Each name is imported from its home when first used (PEP 562), so a command that
needs how a message shows a value does not load the corpus tier for the Dask client.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the type checker sees the names where they live
    from bpetite.chat._render import check_rendered_text
    from bpetite.core._artifact import MAX_ARTIFACT_BYTES
    from bpetite.core._atomic import atomic_writer, check_destination, write_atomically
    from bpetite.core._builtin import (
        BUILTIN_VOCABULARIES,
        BuiltinVocabulary,
        rank_file,
        write_model_file,
    )
    from bpetite.core._constants import BASE_VOCAB_SIZE, END_OF_TEXT_TOKEN
    from bpetite.core._decoder import unknown_id
    from bpetite.core._errors import SHOWN_CHARS, shown
    from bpetite.core._ids import merged_ids
    from bpetite.core._json import loads_json, parse_json_ids
    from bpetite.core._ranks import parse_ranks, recover_merges, show_token
    from bpetite.core._regex import compile_pattern
    from bpetite.corpus._dask import (
        CountsOnDask,
        dask_client,
        dask_count_files,
        dask_count_parts,
    )
    from bpetite.corpus._dataset import SHARD_HINT
    from bpetite.corpus._encoding import WIDER_DTYPE
    from bpetite.corpus._manifest import MANIFEST_FORMAT
    from bpetite.corpus._streaming import measure_text
    from bpetite.corpus._train_files import train_counted

#: Each name's home module.
_HOMES = {
    "check_rendered_text": "bpetite.chat._render",
    "MAX_ARTIFACT_BYTES": "bpetite.core._artifact",
    "atomic_writer": "bpetite.core._atomic",
    "check_destination": "bpetite.core._atomic",
    "write_atomically": "bpetite.core._atomic",
    "unknown_id": "bpetite.core._decoder",
    "BUILTIN_VOCABULARIES": "bpetite.core._builtin",
    "BuiltinVocabulary": "bpetite.core._builtin",
    "rank_file": "bpetite.core._builtin",
    "write_model_file": "bpetite.core._builtin",
    "merged_ids": "bpetite.core._ids",
    "BASE_VOCAB_SIZE": "bpetite.core._constants",
    "END_OF_TEXT_TOKEN": "bpetite.core._constants",
    "SHOWN_CHARS": "bpetite.core._errors",
    "shown": "bpetite.core._errors",
    "loads_json": "bpetite.core._json",
    "parse_json_ids": "bpetite.core._json",
    "parse_ranks": "bpetite.core._ranks",
    "recover_merges": "bpetite.core._ranks",
    "show_token": "bpetite.core._ranks",
    "compile_pattern": "bpetite.core._regex",
    "CountsOnDask": "bpetite.corpus._dask",
    "dask_client": "bpetite.corpus._dask",
    "dask_count_files": "bpetite.corpus._dask",
    "dask_count_parts": "bpetite.corpus._dask",
    "SHARD_HINT": "bpetite.corpus._dataset",
    "WIDER_DTYPE": "bpetite.corpus._encoding",
    "MANIFEST_FORMAT": "bpetite.corpus._manifest",
    "measure_text": "bpetite.corpus._streaming",
    "train_counted": "bpetite.corpus._train_files",
}

__all__ = [
    "BASE_VOCAB_SIZE",
    "BUILTIN_VOCABULARIES",
    "END_OF_TEXT_TOKEN",
    "MANIFEST_FORMAT",
    "MAX_ARTIFACT_BYTES",
    "SHARD_HINT",
    "SHOWN_CHARS",
    "WIDER_DTYPE",
    "BuiltinVocabulary",
    "CountsOnDask",
    "atomic_writer",
    "check_destination",
    "check_rendered_text",
    "compile_pattern",
    "dask_client",
    "dask_count_files",
    "dask_count_parts",
    "loads_json",
    "measure_text",
    "merged_ids",
    "parse_json_ids",
    "parse_ranks",
    "rank_file",
    "recover_merges",
    "show_token",
    "shown",
    "train_counted",
    "unknown_id",
    "write_atomically",
    "write_model_file",
]


def __getattr__(name: str) -> object:
    """Import `name` from its home on first use; Python calls this only for a missing name."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'bpetite._internal' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # found once: the next use is a plain lookup
    return value
