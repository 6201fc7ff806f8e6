"""The public face: what ``import bpetite`` offers, and nothing that is plumbing.

The list is written out here, not read from the package, so adding a name to
``bpetite.__all__`` is a decision a reviewer sees in this file.
"""

import subprocess
import sys
from types import ModuleType

import pytest

import bpetite
from bpetite import _internal, corpus, errors, visualize

#: What a user calls: the tokenizer, the built-in vocabularies (by name or by OpenAI
#: model name), split patterns, training and corpus functions, the compression report,
#: progress events, and the two errors users catch most (the rest of the family is
#: ``bpetite.errors``).
PUBLIC = {
    "Tokenizer",
    "get_encoding",
    "list_encoding_names",
    "encoding_for_model",
    "encoding_name_for_model",
    "SplitPattern",
    "StreamDecoder",
    "PRESETS",
    "count_chunks",
    "train_files",
    "train_counts",
    "write_dataset",
    "evaluate_compression",
    "Progress",
    "ProgressCallback",
    "BpetiteError",
    "ArtifactError",
    "__version__",
}
#: The error family's home.
ERRORS = {
    "BpetiteError",
    "ArtifactError",
    "MissingKeyError",
    "CountsFileError",
    "UnknownTokenError",
    "TokenIdTypeError",
    "NotATokenError",
    "NotARegularFileError",
    "InvalidUtf8Error",
    "InteropError",
    "OutputExistsError",
    "WorkerError",
    "PatternError",
    "DisallowedSpecialError",
    "ParameterError",
    *(
        NEWER_ERRORS := {
            "UnknownModelError",
            "OutputIsADirectoryError",
            "OutputDirectoryMissingError",
            "OutputParentNotADirectoryError",
        }
    ),
}
#: Errors added after the face moved them to bpetite.errors live only there.
#: Names that left the face for their tier's public module, still reachable as
#: ``bpetite.<name>`` for code written before, but not listed.
MOVED = {
    **dict.fromkeys(ERRORS - PUBLIC - NEWER_ERRORS, errors),
    "Dataset": corpus,
    "DatasetSplit": corpus,
    "CompressionReport": visualize,
    "TextResult": visualize,
}
#: Plumbing the shells share: reached through bpetite._internal, never the face.
PLUMBING = {
    "check_rendered_text",
    "measure_text",
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
    assert set(bpetite.__all__) == PUBLIC
    assert len(bpetite.__all__) == len(set(bpetite.__all__))
    for name in bpetite.__all__:
        assert hasattr(bpetite, name), name


def test_the_error_family_lives_in_errors() -> None:
    assert set(errors.__all__) == ERRORS
    for name in ERRORS & PUBLIC:
        assert getattr(bpetite, name) is getattr(errors, name), name


@pytest.mark.parametrize("name", sorted(MOVED))
def test_a_moved_name_is_still_reachable_from_the_face(name: str) -> None:
    home = MOVED[name]
    assert name in home.__all__
    assert getattr(bpetite, name) is getattr(home, name)
    assert name not in dir(bpetite)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="'bpetite' has no attribute 'encode'"):
        getattr(bpetite, "encode")  # noqa: B009 - the lookup is the test


def test_plumbing_is_behind_the_internal_door() -> None:
    assert not PLUMBING & set(dir(bpetite))
    assert PLUMBING - {"resolve_pattern"} <= set(_internal.__all__)
    for name in _internal.__all__:
        assert hasattr(_internal, name), name


def _fresh(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout


def test_a_fresh_import_shows_the_face_and_nothing_else() -> None:
    """``dir(bpetite)`` is the public names, whatever has been loaded: no tier package
    and no helper such as ``version`` left over from building ``__version__``."""
    assert _fresh("import bpetite; print(' '.join(dir(bpetite)))").split() == sorted(PUBLIC)
    code = "import bpetite; bpetite.train_files; bpetite.__version__; print(*dir(bpetite))"
    assert _fresh(code).split() == sorted(PUBLIC)


#: What ``import bpetite`` must not load: the tiers above the model, the libraries only
#: they use (the CLI's terminal library, numpy and pyarrow for datasets, Dask), `regex`
#: (a preset's ASCII twin splits ASCII text; the regex compiles on first use), and the
#: package metadata behind ``__version__``.
NOT_ON_IMPORT = (
    "bpetite.corpus",
    "bpetite.visualize",
    "bpetite.interop",
    "bpetite.cli",
    "bpetite.reference",
    "rich",
    "numpy",
    "pyarrow",
    "dask",
    "regex",
    "importlib.metadata",
)


def test_a_fresh_import_loads_no_module_of_bpetite() -> None:
    """``import bpetite`` runs its own file only (the CLI's signal handlers must be in
    place before any heavier import); the tokenizer loads the model and nothing above it."""
    loaded = set(_fresh("import sys, bpetite; print(*sys.modules)").split())
    assert "bpetite" in loaded  # the check sees what was loaded
    assert not {name for name in loaded if name.startswith("bpetite.")}
    code = "import sys, bpetite; bpetite.Tokenizer; print(*sys.modules)"
    loaded = set(_fresh(code).split())
    assert "bpetite.core._tokenizer" in loaded
    assert not loaded & set(NOT_ON_IMPORT)


def test_encoding_with_a_preset_never_loads_regex() -> None:
    """Training on, encoding and truncating ASCII text runs on the presets' ``re`` twins,
    and text that is not ASCII on the presets narrowed for ``re``; a custom pattern
    compiles with `regex` when first used."""
    code = (
        "import sys, bpetite; t = bpetite.Tokenizer.train('ab ab cd', 260); "
        "t.encode('ab cd ab'); t.encode('caf\\u00e9 \\u4e2d'); "
        "t.truncate('caf\\u00e9 \\u4e2d', 2); "
        "print('regex' in sys.modules, end=' '); "
        "bpetite.Tokenizer.train('ab ab cd', 260, pattern=r'\\p{L}+|\\P{L}'); "
        "print('regex' in sys.modules)"
    )
    assert _fresh(code).split() == ["False", "True"]


def test_the_cli_encoding_with_a_preset_never_loads_regex() -> None:
    """``bpetite encode --model gpt2`` on text that is not ASCII: the command's modules,
    the built-in model and the split all without the regex engine."""
    code = (
        "import atexit, runpy, sys; "
        "atexit.register(lambda: print('regex' in sys.modules)); "
        "sys.argv = ['bpetite', 'encode', '--model', 'gpt2', '--text', 'caf\\u00e9 \\u4e2d']; "
        "runpy.run_module('bpetite', run_name='__main__')"
    )
    ids, loaded = _fresh(code).split()
    assert ids.startswith("[") and loaded == "False"


def test_a_lazy_name_loads_its_tier_on_first_use() -> None:
    code = (
        "import sys, bpetite; before = 'bpetite.corpus' in sys.modules; "
        "bpetite.write_dataset; print(before, 'bpetite.corpus' in sys.modules)"
    )
    assert _fresh(code).split() == ["False", "True"]


@pytest.mark.parametrize("face", [corpus, visualize, errors], ids=lambda m: m.__name__)
def test_every_name_a_face_lists_is_there(face: ModuleType) -> None:
    for name in face.__all__:
        assert hasattr(face, name), name
    if face is not errors:  # a face that loads its names lazily shows them all the same
        assert dir(face) == sorted(face.__all__)


def test_a_tier_face_loads_a_module_when_one_of_its_names_is_used() -> None:
    """``import bpetite.corpus`` loads none of the tier; its counts-file functions load
    the counts file's module, not the workers, Parquet or the datasets."""
    code = (
        "import sys, bpetite.corpus, bpetite.visualize; "
        "print(*sorted(m for m in sys.modules if m.startswith(('bpetite.corpus.', "
        "'bpetite.visualize.'))), end=' | '); "
        "from bpetite.corpus import load_counts; from bpetite.visualize import render_plain; "
        "print(*sorted(m for m in sys.modules if m.startswith(('bpetite.corpus.', "
        "'bpetite.visualize.'))))"
    )
    before, after = _fresh(code).split("|")
    assert before.split() == []
    assert {"bpetite.corpus._counts_file", "bpetite.visualize._render"} <= set(after.split())
    assert not {"bpetite.corpus._workers", "bpetite.corpus._dataset"} & set(after.split())
