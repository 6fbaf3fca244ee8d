"""Claims of the papers as measured numbers with a pass/fail tolerance.

Each topic of the pipeline (theory, AMP, GD, dynamics, ...) writes a *claim
fragment*: a TSV file ``results/{scale}/claims/{topic}.tsv`` with one
:class:`ClaimRow` per line.  The ``claims`` rule merges the fragments into
``results/{scale}/claims.md`` (docs/design.md, "Theory ↔ experiment").

TSV format
----------
A header row with the field names of :class:`ClaimRow` in declaration order,
then one row per claim, tab-separated (quoted by the :mod:`csv` rules only if
a field contains a tab or a quote).  ``passed`` is ``true``/``false``, as in
the CSV tables of :mod:`aimrepro.records`.  Floats are written with
``repr``; on reading, ``expected``/``measured``/``tolerance`` cells that
parse as numbers come back as floats, other cells as strings (a claim may
expect ``"continuous"`` or ``"0.4034 ± 1e-4"``).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from aimrepro.records.files import atomic_write

__all__ = ["ClaimRow", "merge_claims", "read_claims", "render_claims_markdown", "write_claims"]

Value = float | str


@dataclass(frozen=True)
class ClaimRow:
    """One claim of a paper, the number measured for it, and the verdict.

    Parameters
    ----------
    id : str
        Unique, stable identifier, e.g. ``"p1-alpha-c-corrected"``.
    paper : str
        ``"paper1"`` or ``"paper2"``.
    section : str
        Where the claim is stated, e.g. ``"§3.5"`` of ``docs/paper1.md``.
    claim : str
        The claim in words.
    expected : float or str
        The paper's (or the closed form's) value.
    measured : float or str
        What this pipeline computed.
    tolerance : float or str
        The pass criterion, e.g. ``1e-4`` (absolute) or ``"rel 1e-3"``.
    passed : bool
        Whether ``measured`` meets ``expected`` within ``tolerance``.  The
        producer decides: it knows whether the tolerance is absolute or
        relative.
    note : str
        Anything a reader needs (erratum number, grid used, ...).
    """

    id: str
    paper: str
    section: str
    claim: str
    expected: Value
    measured: Value
    tolerance: Value
    passed: bool
    note: str = ""

    def __post_init__(self) -> None:
        if not self.id.strip():
            raise ValueError("ClaimRow.id must be non-empty")
        if not isinstance(self.passed, bool):
            raise TypeError(f"ClaimRow.passed must be a bool, got {self.passed!r}")
        for spec in dataclasses.fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, str) and ("\n" in value or "\r" in value):
                raise ValueError(f"ClaimRow.{spec.name} must be one line, got {value!r}")


FIELDS = tuple(spec.name for spec in dataclasses.fields(ClaimRow))
_NUMERIC_FIELDS = ("expected", "measured", "tolerance")


def format_number(x: float, digits: int = 3) -> str:
    """A measured number in a claim's note: ``digits`` significant digits, ``nan`` if not finite."""
    return "nan" if not math.isfinite(x) else f"{x:.{digits}g}"


def write_claims(path: str | os.PathLike, rows: Iterable[ClaimRow]) -> None:
    """Write claim rows as a TSV fragment, atomically (header row first)."""
    rows = list(rows)
    _check_unique(rows, source=str(path))
    with atomic_write(path, newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(FIELDS)
        for row in rows:
            writer.writerow([_cell(getattr(row, name)) for name in FIELDS])


def read_claims(path: str | os.PathLike) -> list[ClaimRow]:
    """Read a TSV fragment written by :func:`write_claims`."""
    with open(path, newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle, delimiter="\t"))
    if not table or tuple(table[0]) != FIELDS:
        raise ValueError(f"{path}: header must be the fields {', '.join(FIELDS)}, tab-separated")
    rows = []
    for lineno, cells in enumerate(table[1:], start=2):
        if len(cells) != len(FIELDS):
            raise ValueError(f"{path}:{lineno}: {len(cells)} cells, expected {len(FIELDS)}")
        record = dict(zip(FIELDS, cells))
        if record["passed"] not in ("true", "false"):
            raise ValueError(f"{path}:{lineno}: passed must be true or false, got {record['passed']!r}")
        record["passed"] = record["passed"] == "true"
        for name in _NUMERIC_FIELDS:
            record[name] = _parse_value(record[name])
        rows.append(ClaimRow(**record))
    return rows


def merge_claims(paths: Iterable[str | os.PathLike]) -> list[ClaimRow]:
    """Concatenate fragments in the given order; claim ids must be unique overall."""
    rows: list[ClaimRow] = []
    for path in paths:
        rows.extend(read_claims(path))
    _check_unique(rows, source="the merged fragments")
    return rows


def render_claims_markdown(
    rows: Sequence[ClaimRow],
    *,
    scale: str,
    commit: str,
    dirty: bool | None = None,
    not_measured: Mapping[str, str] | None = None,
) -> str:
    """Render claims as a markdown document with one table.

    Parameters
    ----------
    rows : sequence of ClaimRow
    scale : str
        ``quick`` or ``paper``.
    commit : str
        Git commit the claims were computed at (``"unknown"`` allowed).
    dirty : bool or None
        Whether the working tree had uncommitted changes.
    not_measured : mapping of str to str, optional
        Topics the config does not measure at this scale, with the reason;
        listed so a missing topic is visible rather than silently absent.

    Returns
    -------
    str
        Markdown: a title, a header line with scale, commit and counts, the
        table (claim, expected, measured, tolerance, pass/FAIL, note).
    """
    n_failed = sum(not row.passed for row in rows)
    commit_text = commit if commit == "unknown" else commit[:12]
    if dirty:
        commit_text += " (uncommitted changes)"
    lines = [
        "# Claims of the papers, measured",
        "",
        f"Scale **{scale}** · commit `{commit_text}` · {len(rows)} claims: "
        f"{len(rows) - n_failed} pass, {n_failed} FAIL",
        "",
    ]
    if not_measured:
        reasons = "; ".join(f"{topic} ({why})" for topic, why in not_measured.items())
        lines += [f"Not measured at this scale: {reasons}", ""]
    if rows:
        lines += [
            "| claim | expected | measured | tolerance | result | note |",
            "|---|---|---|---|---|---|",
        ]
        for row in rows:
            claim = f"**{row.id}** ({row.paper} {row.section}): {row.claim}"
            cells = [claim, _show(row.expected), _show(row.measured), _show(row.tolerance),
                     "pass" if row.passed else "**FAIL**", row.note]
            lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
    else:
        lines.append("No claims yet.")
    return "\n".join(lines) + "\n"


def _check_unique(rows: Sequence[ClaimRow], *, source: str) -> None:
    seen: set[str] = set()
    for row in rows:
        if row.id in seen:
            raise ValueError(f"duplicate claim id {row.id!r} in {source}")
        seen.add(row.id)


def _cell(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return repr(float(value))  # numpy floats too: never "np.float64(...)"
    return str(value)


def _parse_value(cell: str) -> Value:
    try:
        return float(cell)
    except ValueError:
        return cell


def _show(value: Value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}" if math.isfinite(value) else repr(value)
    return str(value)


def _escape(text: str) -> str:
    # A pipe would end the markdown table cell.
    return text.replace("|", "\\|")

