"""Copy every UTF-8 ``.py`` file of this Python installation into a directory: a real corpus.

    uv run python benchmarks/make_python_corpus.py /tmp/pycorpus

The sources are the standard library directory (with the site-packages inside it) and
the running environment's site-packages, in that order; ``--extra-root`` adds more.
Files are walked in sorted order, symbolic links are skipped, files that are not strict
UTF-8 are skipped and counted, so the same installation always gives the same corpus.
The destination must be outside the repository (corpora are never committed) and must
be absent or empty. Prints a JSON summary; warns when the corpus is smaller than
``--min-bytes`` (150 MB by default, the size the scaling benchmark asks for).
``benchmarks/big_corpus.py`` builds its corpus from the same walk, capped at a size.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import sysconfig
from collections.abc import Iterator, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MIN_BYTES = 150_000_000


def source_roots(extra: Sequence[str]) -> list[Path]:
    """The installation's directories of Python code, each once, none inside another."""
    paths = sysconfig.get_paths()
    candidates = [paths["stdlib"], paths["purelib"], paths["platlib"], *extra]
    roots: list[Path] = []
    for candidate in candidates:
        root = Path(candidate).resolve()
        if not root.is_dir() or any(root == r or root.is_relative_to(r) for r in roots):
            continue
        roots = [r for r in roots if not r.is_relative_to(root)]
        roots.append(root)
    return roots


def python_files(root: Path) -> Iterator[Path]:
    """Regular ``.py`` files under `root`, in sorted order, without following links."""
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(directory, name)
            if name.endswith(".py") and stat.S_ISREG(path.lstat().st_mode):
                yield path


def copy_corpus(roots: Sequence[Path], destination: Path) -> dict[str, object]:
    files = 0
    total = 0
    skipped = 0
    for index, root in enumerate(roots):
        label = f"{index}-{root.name}"
        for path in python_files(root):
            data = path.read_bytes()
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                skipped += 1
                continue
            target = destination / label / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            files += 1
            total += len(data)
    return {
        "destination": str(destination),
        "roots": [str(root) for root in roots],
        "files": files,
        "bytes": total,
        "skipped_not_utf8": skipped,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("destination", type=Path, help="directory to create, outside the repo")
    parser.add_argument(
        "--extra-root", action="append", default=[], help="another directory of code to add"
    )
    parser.add_argument("--min-bytes", type=int, default=DEFAULT_MIN_BYTES)
    args = parser.parse_args(argv)
    destination: Path = args.destination.resolve()
    if destination == REPO_ROOT or destination.is_relative_to(REPO_ROOT):
        parser.error(f"{destination} is inside the repository; corpora are never committed")
    if destination.exists() and any(destination.iterdir()):
        parser.error(f"{destination} exists and is not empty")
    destination.mkdir(parents=True, exist_ok=True)
    summary = copy_corpus(source_roots(args.extra_root), destination)
    print(json.dumps(summary, indent=2))
    size = summary["bytes"]
    assert isinstance(size, int)
    if size < args.min_bytes:
        print(
            f"warning: only {size:,} bytes, less than {args.min_bytes:,}; add more code with "
            "--extra-root (another Python version's lib directory, say)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
