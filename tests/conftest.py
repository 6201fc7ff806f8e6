"""Shared fixtures: the committed test data, hypothesis profiles, the skip policy, and
how the suite runs (in parallel, one pytest-xdist worker per CPU, for ``uv run pytest``).

The data fixtures give the files in ``tests/data/`` (see ``tests/datafiles.py``):
the contents directly, or decompressed copies in a session's temporary directory for
code that takes a path. Nothing here looks outside the repository, and no test skips
for missing data.

Under ``CI=true`` (``.ci/run`` sets it) a skipped test is a failure, unless its reason
starts with :data:`PLATFORM_LIMIT`: a documented limit of the platform the tests run
on (no POSIX permissions, no ``/proc``, no bash), never a missing file or package.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import pytest
from hypothesis import HealthCheck, settings

from bpetite import count_chunks, reference
from tests import datafiles

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parent.parent

#: The prefix of a skip reason that CI accepts: ``pytest.skip(PLATFORM_LIMIT + "why")``.
PLATFORM_LIMIT = "platform limit: "

# A deep run is one variable away: BPETITE_HYPOTHESIS_EXAMPLES=2000 uv run pytest
settings.register_profile(
    "default",
    max_examples=int(os.environ.get("BPETITE_HYPOTHESIS_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")


def pytest_configure(config: pytest.Config) -> None:
    """Give SIGINT its usual handler when the run inherited it ignored.

    A shell starts a background job (``uv run pytest &``) with SIGINT ignored, and an
    ignored signal stays ignored in every process started from it, so the commands
    the tests interrupt with SIGINT would never see it. A handled signal is reset to
    its default in a started program, where Python installs its own handler.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    share_bytecode(config)
    skip_disk_waits()


def skip_disk_waits() -> None:
    """Make ``os.fsync`` in the test processes check its descriptor and return at once.

    bpetite syncs every file it publishes, and its directory, before the rename; what
    that buys (the file survives a power cut) no test can observe, and each call waits
    for the disk: milliseconds each, seconds on a busy disk, and a dataset of 1,720
    shards makes 6,880. The calls are still made, with the same descriptors, and one
    that is not open still raises; the tests that make a sync fail patch ``os.fsync``
    themselves. The processes the tests start (the CLI) sync for real, and so do the
    test processes under ``BPETITE_TEST_REAL_FSYNC=1``.
    Measurements: docs/design-notes.md#test-suite
    """
    if os.environ.get("BPETITE_TEST_REAL_FSYNC") != "1":
        os.fsync = _check_descriptor


def _check_descriptor(fd: FileDescriptorLike) -> None:
    """``os.fsync`` without the wait: OSError (EBADF) if `fd` is not open."""
    os.fstat(fd if isinstance(fd, int) else fd.fileno())


def share_bytecode(config: pytest.Config) -> None:
    """Keep compiled modules in pytest's cache folder when writing them is off.

    Under ``PYTHONDONTWRITEBYTECODE`` (set on the project's machine) every Python process
    compiles each module it imports from source: the test processes themselves
    (collecting the suite rewrites and compiles all its modules) and the hundreds of
    processes the tests start (the CLI, Dask, the README's commands). Instead all of
    them write and read compiled modules in ``.pytest_cache/d/bytecode``
    (``PYTHONPYCACHEPREFIX``), never beside the sources. This runs in each process
    before collection, and the environment it sets reaches the xdist workers and every
    process a test starts. Measurements: docs/design-notes.md#test-suite
    """
    cache = getattr(config, "cache", None)  # None under ``-p no:cacheprovider``
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or cache is None:
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(cache.mkdir("bytecode"))
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


@pytest.fixture(scope="session")
def shakespeare_bytes() -> bytes:
    """TinyShakespeare as published, 1,115,394 bytes."""
    return datafiles.shakespeare_bytes()


@pytest.fixture(scope="session")
def shakespeare_text() -> str:
    return datafiles.shakespeare_text()


@pytest.fixture(scope="session")
def shakespeare_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A decompressed copy of TinyShakespeare, ``.../tinyshakespeare.txt``; do not modify it."""
    directory = datafiles.unpack([datafiles.SHAKESPEARE], tmp_path_factory.mktemp("data"))
    return directory / datafiles.SHAKESPEARE


@pytest.fixture(scope="session")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding GPT-2's ``encoder.json``, ``vocab.bpe`` and ``gpt2.tiktoken``."""
    return datafiles.unpack(datafiles.GPT2_FILES, tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def openai_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding ``cl100k_base.tiktoken`` and ``o200k_base.tiktoken``.

    Build an encoding from them offline with ``tiktoken.load.load_tiktoken_bpe(path)``;
    ``tiktoken.get_encoding`` would download.
    """
    return datafiles.unpack(datafiles.OPENAI_FILES, tmp_path_factory.mktemp("openai"))


@pytest.fixture(scope="session")
def shakespeare_reference(
    tmp_path_factory: pytest.TempPathFactory, shakespeare_text: str
) -> tuple[Counter[bytes], list[tuple[int, int]]]:
    """TinyShakespeare's chunk counts and ``bpetite.reference``'s merges on them to vocab 400.

    The naive trainer takes seconds here, and the trainer's and the merge workers' tests
    both hold their merges to it, so it runs once per run (see :func:`once_per_run`).
    """
    chunks = count_chunks([shakespeare_text])
    merges = once_per_run(
        tmp_path_factory, "shakespeare-reference-400", lambda: reference.train_counts(chunks, 400)
    )
    return chunks, merges


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[], T]
) -> T:
    """`compute()`, or what another xdist worker of this run already computed as `name`.

    The result is pickled into the run's temporary folder, which every worker shares
    and no later run reads, by an atomic rename. Two workers that need it at the same
    moment both compute it; the result is the same.
    """
    run_directory = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_directory = run_directory.parent  # each worker's folder is inside the run's
    path = run_directory / f"{name}.pickle"
    with contextlib.suppress(FileNotFoundError):
        return cast(T, pickle.loads(path.read_bytes()))
    result = compute()
    with tempfile.NamedTemporaryFile(dir=run_directory, delete=False) as file:
        pickle.dump(result, file)
    Path(file.name).replace(path)
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Run the whole suite in parallel: one pytest-xdist worker per CPU.

    Only a run of the ``testpaths`` (``uv run pytest``, no paths given) is spread out by
    default; named files or folders run in this process, where a module's fixtures are
    built once and no workers start. ``-n N`` sets the number of workers either way
    (``-n 0``: none), ``-p no:xdist`` turns the plugin off, and ``--pdb`` or
    ``--collect-only`` keep one process. The default is set here rather than in
    ``addopts``, where ``-n`` would be an unknown option under ``-p no:xdist``.

    Work stealing: each worker starts on a contiguous share of the tests, so a module's
    fixtures are mostly built by one worker, and a worker that runs dry takes tests
    from the end of another's share.
    """
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    option = config.option
    whole_suite = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    one_process = option.usepdb or option.collectonly
    if option.numprocesses is None and whole_suite and not one_process:
        option.numprocesses = "logical"
    if option.numprocesses and option.dist == "no":
        option.dist = "worksteal"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under ``CI=true``, report a skip as a failure unless it is a platform limit."""
    report = yield
    if os.environ.get("CI") != "true" or not report.skipped or hasattr(report, "wasxfail"):
        return report
    reason = skip_reason(report)
    if not reason.startswith(PLATFORM_LIMIT):
        report.outcome = "failed"
        report.longrepr = (
            f"skipped under CI=true: {reason!r}. CI accepts only skips whose reason starts "
            f"with {PLATFORM_LIMIT!r} (see tests/conftest.py)"
        )
    return report


def skip_reason(report: pytest.TestReport) -> str:
    """The reason given to ``pytest.skip`` or ``skipif``, without pytest's "Skipped: "."""
    longrepr = report.longrepr
    message = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return message.removeprefix("Skipped: ")
