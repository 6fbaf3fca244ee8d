"""CSV tables of equal-length columns: the format of every tabular result.

:func:`write_table` / :func:`read_table` store a table of equal-length
columns as plain CSV: one header row of column names, then one row per
point.  Floats are written with ``repr`` (shortest round-trip form; ``nan``,
``inf`` and ``-inf`` as such), integers as integers and booleans as ``true``
/ ``false``.  Words rather than 0/1 keep a boolean column distinguishable
from an integer column on reading, for people and for :func:`read_table`
alike.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from aimrepro.records.files import PathLike, atomic_write

_TRUE_WORDS = ("true", "false")


def write_table(path: PathLike, columns: Mapping[str, Any]) -> None:
    """Write equal-length columns as a CSV table, atomically.

    Parameters
    ----------
    path : path
        Destination (``.csv``).
    columns : mapping of str to 1-D array-like
        Ordered column name → values.  Column dtype decides the format:
        bool → ``true``/``false``; integer → decimal; anything else → float
        via ``repr`` (exact round trip, ``nan``/``inf`` spelt out).
    """
    names = list(columns)
    if not names:
        raise ValueError("a table needs at least one column")
    arrays = [np.asarray(columns[name]) for name in names]
    lengths = {a.shape for a in arrays}
    if any(a.ndim != 1 for a in arrays) or len(lengths) != 1:
        shapes = {name: a.shape for name, a in zip(names, arrays)}
        raise ValueError(f"table columns must be 1-D and of equal length, got {shapes}")
    for name in names:
        if not name or any(ch in name for ch in ',"\n\r'):
            raise ValueError(f"column names must be non-empty, without commas or quotes: {name!r}")
    formatters = [_cell_formatter(a, name) for name, a in zip(names, arrays)]
    with atomic_write(path, newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(names)
        for row in zip(*arrays):
            writer.writerow([fmt(v) for fmt, v in zip(formatters, row)])


def _cell_formatter(array: np.ndarray, name: str):
    if array.dtype == bool:
        return lambda v: "true" if v else "false"
    if np.issubdtype(array.dtype, np.integer):
        return lambda v: str(int(v))
    if np.issubdtype(array.dtype, np.floating):
        return lambda v: repr(float(v))
    raise TypeError(f"column {name!r} has unsupported dtype {array.dtype}")


def read_table(path: PathLike) -> dict[str, np.ndarray]:
    """Read a table written by :func:`write_table`.

    Returns
    -------
    dict of str to numpy.ndarray
        In file order.  A column whose cells are all ``true``/``false`` is
        bool, all integers → int64, otherwise float64.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise ValueError(f"{path}: empty file, expected a header row")
    names, body = rows[0], rows[1:]
    for i, row in enumerate(body, start=2):
        if len(row) != len(names):
            raise ValueError(f"{path}:{i}: {len(row)} cells, header has {len(names)}")
    cells = list(zip(*body)) if body else [() for _ in names]
    return {name: _parse_column(col, name, path) for name, col in zip(names, cells)}


def _parse_column(cells: Sequence[str], name: str, path: PathLike) -> np.ndarray:
    if cells and all(c in _TRUE_WORDS for c in cells):
        return np.array([c == "true" for c in cells], dtype=bool)
    try:
        if cells and all(c.lstrip("-").isdigit() for c in cells):
            return np.array([int(c) for c in cells], dtype=np.int64)
        return np.array([float(c) for c in cells], dtype=float)
    except ValueError as err:
        raise ValueError(f"{path}: column {name!r} is not numeric: {err}") from None


def split_rows(columns: Mapping[str, Any], key: str) -> dict[int, dict[str, np.ndarray]]:
    """{value: the rows with that value} of a table's integer column ``key``, in order of appearance.

    Undoes the stacking of per-d or per-replicate parts into one table.
    """
    keys = np.asarray(columns[key])
    return {int(value): {name: np.asarray(col)[keys == value] for name, col in columns.items()}
            for value in dict.fromkeys(keys.tolist())}

