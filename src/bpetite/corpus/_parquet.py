"""Parquet shards as nanochat reads them: each row of a text column is one document.

A file is recognised by its content, not its name: Parquet's magic bytes ``PAR1`` at
its start and its end. It is read one row group at a time, only the text column, so
memory is bounded by the largest row group (nanochat's FineWeb-Edu shards hold about
1,000 documents per group), never by the file. A null in the column is no document.

pyarrow is imported only when a Parquet file is met; it is the optional extra
``bpetite[parquet]``, and without it reading one raises ImportError saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bpetite.core._budget import Budget
from bpetite.core._errors import ParameterError

#: Parquet's magic number, at the start and at the end of every Parquet file.
PARQUET_MAGIC: Final = b"PAR1"
#: The column read by default: nanochat's and FineWeb's, and most datasets' on the Hub.
DEFAULT_TEXT_COLUMN: Final = "text"
#: What installs pyarrow with bpetite.
INSTALL_HINT: Final = "pip install 'bpetite[parquet]'"


def is_parquet(path: str | os.PathLike[str]) -> bool:
    """True if the file at `path` starts and ends with Parquet's magic number."""
    with Path(path).open("rb") as stream:
        if stream.read(len(PARQUET_MAGIC)) != PARQUET_MAGIC:
            return False
        size = stream.seek(0, os.SEEK_END)
        if size < 2 * len(PARQUET_MAGIC):
            return False
        stream.seek(size - len(PARQUET_MAGIC))
        return stream.read() == PARQUET_MAGIC


def pyarrow_parquet() -> Any:
    """The ``pyarrow.parquet`` module, or ImportError naming the extra that installs it."""
    try:
        import pyarrow.parquet  # type: ignore[import-untyped]
    except ImportError:
        raise ImportError(f"reading Parquet files needs pyarrow: {INSTALL_HINT}") from None
    return pyarrow.parquet


def check_text_column(column: object) -> str:
    """Return `column` if it is a non-empty str; otherwise raise naming the value."""
    if not isinstance(column, str):
        raise TypeError(f"text_column must be a column's name (str), got {column!r}")
    if not column:
        raise ParameterError("text_column must be a column's name, got ''")
    return column


@dataclass(frozen=True, slots=True)
class RowGroup:
    """Row group `index` of the Parquet file at `path`, and its text column's size on disk."""

    path: str
    index: int
    size: int


def row_groups(path: str | os.PathLike[str], column: str = DEFAULT_TEXT_COLUMN) -> list[RowGroup]:
    """Every row group of the file at `path`, in order, once its `column` is checked.

    Raises ParameterError if the file is not readable Parquet, has no column `column`
    (naming those it has) or the column does not hold text.
    """
    file = open_parquet(path)
    index = _column_index(file, path, column)
    metadata = file.metadata
    return [
        RowGroup(
            os.fspath(path),
            group,
            metadata.row_group(group).column(index).total_compressed_size,
        )
        for group in range(metadata.num_row_groups)
    ]


def open_parquet(path: str | os.PathLike[str]) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` for `path`; ParameterError if it cannot be read."""
    parquet = pyarrow_parquet()
    import pyarrow

    try:
        return parquet.ParquetFile(path)
    except (pyarrow.ArrowException, ValueError) as error:
        raise ParameterError(
            f"'{os.fspath(path)}' is not a readable Parquet file: {error}"
        ) from None


def _column_index(file: Any, path: str | os.PathLike[str], column: str) -> int:
    import pyarrow

    schema = file.schema_arrow
    index = schema.get_field_index(column)
    if index < 0:
        names = ", ".join(repr(name) for name in schema.names) or "none"
        raise ParameterError(
            f"'{os.fspath(path)}' has no column {column!r} (its columns: {names}); "
            "name the text column with text_column (--text-column)"
        )
    kind = schema.field(index).type
    if not (pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind)):
        raise ParameterError(
            f"column {column!r} of '{os.fspath(path)}' holds {kind}, not text; name the text "
            "column with text_column (--text-column)"
        )
    # The row groups' metadata numbers the leaf columns (a struct column has several).
    leaves = file.schema
    return next(leaf for leaf in range(len(leaves)) if leaves.column(leaf).path == column)


def read_column(group: RowGroup, column: str) -> Any:
    """The non-null values of `column` in `group`, as a pyarrow array of strings."""
    table = open_parquet(group.path).read_row_group(group.index, columns=[column])
    return table.column(0).combine_chunks().drop_null()


def read_texts(group: RowGroup, column: str, budget: Budget, rows: int | None = None) -> list[str]:
    """The documents of `group`, each cut to the budget's `doc_cap`; the first `rows` if given."""
    values = read_column(group, column)
    if rows is not None:
        values = values.slice(0, rows)
    if budget.doc_cap is not None:
        import pyarrow.compute  # type: ignore[import-untyped]

        values = pyarrow.compute.utf8_slice_codeunits(values, 0, budget.doc_cap)
    texts: list[str] = values.to_pylist()
    return texts


def capped_lengths(group: RowGroup, column: str, budget: Budget) -> list[int]:
    """How many characters of each document of `group` the budget takes, in row order."""
    import pyarrow.compute

    lengths = pyarrow.compute.utf8_length(read_column(group, column))
    if budget.doc_cap is not None:
        lengths = pyarrow.compute.min_element_wise(lengths, budget.doc_cap)
    counted: list[int] = lengths.to_pylist()
    return counted
