"""The one internal door: what bpetite's own shells share with the library.

The CLI, :mod:`bpetite.interop` and the benchmarks are thin shells over the library;
the few pieces of plumbing they need beyond the public API (the atomic writers, the
strict JSON reader, how a message shows a value, the Dask client, the shared
constants) are reached through this
module and no other private one, so the library's private layout can change without
touching them. Not public API: a name here can change in any release.
"""

from bpetite.core._artifact import MAX_ARTIFACT_BYTES
from bpetite.core._atomic import atomic_writer, write_atomically
from bpetite.core._builtin import BUILTIN_VOCABULARIES, BuiltinVocabulary, packaged_rank_file
from bpetite.core._constants import BASE_VOCAB_SIZE, END_OF_TEXT_TOKEN
from bpetite.core._errors import SHOWN_CHARS, shown
from bpetite.core._json import loads_json, parse_json_ids
from bpetite.core._ranks import parse_ranks, recover_merges, show_token
from bpetite.core._regex import compile_pattern
from bpetite.corpus._dask import dask_client, dask_count_files
from bpetite.corpus._dataset import SHARD_HINT
from bpetite.corpus._encoding import WIDER_DTYPE
from bpetite.corpus._manifest import MANIFEST_FORMAT

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
    "atomic_writer",
    "compile_pattern",
    "dask_client",
    "dask_count_files",
    "loads_json",
    "packaged_rank_file",
    "parse_json_ids",
    "parse_ranks",
    "recover_merges",
    "show_token",
    "shown",
    "write_atomically",
]
