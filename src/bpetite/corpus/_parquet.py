"""Parquet shards as nanochat reads them: each row of a text column is one document.

A file is recognised by its content, not its name: Parquet's magic bytes ``PAR1`` at
its start and its end. It is read one row group at a time, only the text column, so
memory is bounded by the largest row group (nanochat's FineWeb-Edu shards hold about
1,000 documents per group), never by the file. A null in the column is no document.
The column may hold strings, large strings, string views or a dictionary of strings
(a pandas categorical); every value read is checked to be UTF-8, which Parquet does
not promise. A row group's size, for progress and summaries, is the UTF-8 bytes of its
documents' text as read (a text file's is its bytes), whatever the compression.

pyarrow is imported only when a Parquet file is met; it is the optional extra
``bpetite[parquet]``, and without it reading one raises ImportError saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bpetite.core._budget import Budget
from bpetite.core._errors import InvalidUtf8Error, ParameterError

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
    """Row group `index` of the Parquet file at `path`."""

    path: str
    index: int


def row_groups(path: str | os.PathLike[str], column: str = DEFAULT_TEXT_COLUMN) -> list[RowGroup]:
    """Every row group of the file at `path`, in order, once its `column` is checked.

    Raises ParameterError if the file is not readable Parquet, has no column `column`
    (naming those it has) or the column does not hold text.
    """
    file = open_parquet(path)
    _column_index(file, path, column)
    return [RowGroup(os.fspath(path), group) for group in range(file.metadata.num_row_groups)]


def text_size(group: RowGroup, column: str, budget: Budget | None = None) -> int:
    """The UTF-8 bytes of the documents of `group` (each cut to the budget's `doc_cap`):
    what reading it takes in, as a text file's size is; its text is checked on the way."""
    import pyarrow.compute  # type: ignore[import-untyped]

    lengths = pyarrow.compute.binary_length(_capped(read_column(group, column), budget))
    total: int | None = pyarrow.compute.sum(lengths).as_py()
    return total or 0


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
    if pyarrow.types.is_dictionary(kind):  # a pandas categorical column
        kind = kind.value_type
    if not _is_text(kind):
        raise ParameterError(
            f"column {column!r} of '{os.fspath(path)}' holds {kind}, not text; name the text "
            "column with text_column (--text-column)"
        )
    # The row groups' metadata numbers the leaf columns (a struct column has several).
    leaves = file.schema
    return next(leaf for leaf in range(len(leaves)) if leaves.column(leaf).path == column)


def _is_text(kind: Any) -> bool:
    import pyarrow

    is_view = getattr(pyarrow.types, "is_string_view", None)  # pyarrow 16 and later
    return bool(
        pyarrow.types.is_string(kind)
        or pyarrow.types.is_large_string(kind)
        or (is_view is not None and is_view(kind))
    )


def read_column(group: RowGroup, column: str) -> Any:
    """The non-null values of `column` in `group`, as a pyarrow array of strings.

    A dictionary or a view of strings is cast to strings. Raises InvalidUtf8Error
    naming the file, the row group and the row if a value is not UTF-8.
    """
    import pyarrow

    table = open_parquet(group.path).read_row_group(group.index, columns=[column])
    chunks = table.column(0)
    if not (pyarrow.types.is_string(chunks.type) or pyarrow.types.is_large_string(chunks.type)):
        chunks = chunks.cast(pyarrow.large_string())
    values = chunks.combine_chunks()
    try:
        values.validate(full=True)  # Parquet's readers do not check the UTF-8
    except pyarrow.ArrowInvalid as error:
        raise _not_utf8(values, group, column, error) from None
    return values.drop_null()


def _not_utf8(values: Any, group: RowGroup, column: str, error: Exception) -> Exception:
    """The first value of `values` (the rows of `group`) that is not UTF-8, as an error."""
    import pyarrow

    for row, value in enumerate(values.cast(pyarrow.large_binary()).to_pylist()):
        try:
            if value is not None:
                value.decode("utf-8")
        except UnicodeDecodeError as bad:
            where = f"in the text of row {row} of row group {group.index}, column {column!r}"
            return InvalidUtf8Error(
                group.path, bad.start, value[bad.start], f"{bad.reason}, {where}"
            )
    return ParameterError(f"'{group.path}' is not a readable Parquet file: {error}")


def _capped(values: Any, budget: Budget | None) -> Any:
    """`values`, each cut to the budget's `doc_cap` characters."""
    if budget is None or budget.doc_cap is None:
        return values
    import pyarrow.compute

    return pyarrow.compute.utf8_slice_codeunits(values, 0, budget.doc_cap)


def read_texts(group: RowGroup, column: str, budget: Budget, rows: int | None = None) -> list[str]:
    """The documents of `group`, each cut to the budget's `doc_cap`; the first `rows` if given."""
    values = read_column(group, column)
    if rows is not None:
        values = values.slice(0, rows)
    texts: list[str] = _capped(values, budget).to_pylist()
    return texts


def capped_lengths(group: RowGroup, column: str, budget: Budget) -> tuple[list[int], list[int]]:
    """How many characters of each document of `group` the budget takes, in row order,
    and how many UTF-8 bytes those characters are."""
    import pyarrow.compute

    values = _capped(read_column(group, column), budget)
    chars: list[int] = pyarrow.compute.utf8_length(values).to_pylist()
    sizes: list[int] = pyarrow.compute.binary_length(values).to_pylist()
    return chars, sizes
