"""Shared fixtures: where the shared data lives, and hypothesis profiles."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO_ROOT = Path(__file__).resolve().parent.parent

# A deep run is one variable away: BPETITE_HYPOTHESIS_EXAMPLES=2000 uv run pytest
settings.register_profile(
    "default",
    max_examples=int(os.environ.get("BPETITE_HYPOTHESIS_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")


def _find_shared(relative: str, env_var: str) -> Path | None:
    """An environment variable, then ../shared/data/, then data/ in the repo."""
    candidates = []
    if os.environ.get(env_var):
        candidates.append(Path(os.environ[env_var]))
    candidates += [REPO_ROOT.parent / "shared" / "data" / relative, REPO_ROOT / "data" / relative]
    return next((path for path in candidates if path.exists()), None)


def _require(path: Path | None, what: str, env_var: str) -> Path:
    if path is None:
        message = f"{what} not found: set {env_var} or place it under ../shared/data/ or data/"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI always has it)")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def shakespeare_path() -> Path:
    """TinyShakespeare; skipped with a reason on a machine without it, a failure under CI."""
    return _require(
        _find_shared("tinyshakespeare.txt", "BPETITE_CORPUS"), "TinyShakespeare", "BPETITE_CORPUS"
    )


@pytest.fixture(scope="session")
def shakespeare_text(shakespeare_path: Path) -> str:
    return shakespeare_path.read_bytes().decode("utf-8")


@pytest.fixture(scope="session")
def gpt2_dir() -> Path:
    """GPT-2's official vocabulary files (encoder.json, vocab.bpe, gpt2.tiktoken)."""
    return _require(
        _find_shared("gpt2", "BPETITE_GPT2_DIR"), "GPT-2 vocabulary", "BPETITE_GPT2_DIR"
    )
