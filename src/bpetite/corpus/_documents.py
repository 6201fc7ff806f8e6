"""A dataset's documents: each input file is one, and ``-`` is standard input.

Directories are expanded before anything is written, and standard input is read
once into a file in the run's temp folder, so that workers read every document the
same way, by path, and error messages still name it ``-``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bpetite.core._errors import ParameterError
from bpetite.corpus._counting import expand_inputs
from bpetite.corpus._streaming import read_blocks

#: What the input path ``-`` means: standard input, spooled to a file first.
STDIN: Final = "-"


@dataclass(frozen=True, slots=True)
class Document:
    """One input file: the path to read and the name errors and the manifest use."""

    path: Path
    name: str


def check_paths(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The input paths as strings: a list of at least one, with ``-`` at most once."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError("paths must be a list of paths, not one path: write [path]")
    checked = [os.fspath(path) for path in paths]
    if not checked:
        raise ParameterError("no input paths were given")
    if checked.count(STDIN) > 1:
        raise ParameterError("'-' (standard input) can be given only once")
    return checked


def expand_documents(inputs: Sequence[str]) -> list[Document]:
    """Every document `inputs` name, in order; a directory, every regular file under it.

    Called before the temp folder exists, so a listing never sees its files (the
    output may be written inside an input directory).
    """
    documents: list[Document] = []
    for raw in inputs:
        if raw == STDIN:
            documents.append(Document(Path(STDIN), STDIN))
        else:
            documents += [Document(path, str(path)) for path in expand_inputs([raw])]
    return documents


def spool_stdin(documents: list[Document], temp_dir: Path) -> list[Document]:
    """`documents` with standard input read once into ``temp_dir/stdin``, still named ``-``."""
    spooled = []
    for document in documents:
        if document.name == STDIN:
            spool = temp_dir / "stdin"
            with spool.open("wb") as handle:
                for block in read_blocks(sys.stdin.buffer):
                    handle.write(block)
            document = Document(spool, STDIN)
        spooled.append(document)
    return spooled
