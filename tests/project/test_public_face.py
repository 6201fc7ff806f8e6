"""The public face: what ``import bpetite`` offers, and nothing that is plumbing.

The list is written out here, not read from the package, so adding a name to
``bpetite.__all__`` is a decision a reviewer sees in this file.
"""

import subprocess
import sys

import bpetite
from bpetite import _internal

#: What a user calls: the tokenizer, the built-in vocabularies, split patterns, training
#: and corpus functions, datasets, compression reports, progress events and the error family.
PUBLIC = {
    "Tokenizer",
    "get_encoding",
    "list_encoding_names",
    "SplitPattern",
    "StreamDecoder",
    "PRESETS",
    "count_chunks",
    "train_files",
    "train_counts",
    "write_dataset",
    "Dataset",
    "DatasetSplit",
    "evaluate_compression",
    "CompressionReport",
    "TextResult",
    "Progress",
    "ProgressCallback",
    "__version__",
}
ERRORS = {
    "BpetiteError",
    "ArtifactError",
    "MissingKeyError",
    "CountsFileError",
    "UnknownTokenError",
    "NotATokenError",
    "InvalidUtf8Error",
    "InteropError",
    "OutputExistsError",
    "WorkerError",
    "PatternError",
    "DisallowedSpecialError",
    "ParameterError",
}
#: Plumbing the shells share: reached through bpetite._internal, never the face.
PLUMBING = {
    "write_atomically",
    "atomic_writer",
    "shown",
    "SHOWN_CHARS",
    "MANIFEST_FORMAT",
    "WIDER_DTYPE",
    "SHARD_HINT",
    "loads_json",
    "parse_json_ids",
    "dask_client",
    "dask_count_files",
    "resolve_pattern",
    "parse_ranks",
    "recover_merges",
    "show_token",
    "BUILTIN_VOCABULARIES",
}


def test_all_is_the_public_api_and_nothing_else() -> None:
    assert set(bpetite.__all__) == PUBLIC | ERRORS
    assert len(bpetite.__all__) == len(set(bpetite.__all__))
    for name in bpetite.__all__:
        assert hasattr(bpetite, name), name


def test_plumbing_is_behind_the_internal_door() -> None:
    assert not PLUMBING & set(dir(bpetite))
    assert PLUMBING - {"resolve_pattern"} <= set(_internal.__all__)
    for name in _internal.__all__:
        assert hasattr(_internal, name), name


def test_a_fresh_import_leaves_no_leftovers() -> None:
    """``dir(bpetite)`` holds the public names, dunders and the tier packages, no helper
    such as ``version`` or ``PackageNotFoundError`` left over from building ``__version__``."""
    code = "import bpetite; print(' '.join(dir(bpetite)))"
    names = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    extra = {
        name
        for name in names - set(bpetite.__all__)
        if not (name.startswith("__") and name.endswith("__"))
    }
    assert extra == {"core", "corpus", "visualize"}
