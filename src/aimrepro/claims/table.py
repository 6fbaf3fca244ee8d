"""Claims of the papers as measured numbers, each with a verdict that says what is known.

Verdicts (:data:`VERDICTS`)
---------------------------
``pass``
    The measurement meets the claim within its stated tolerance, measured
    where the paper makes the claim (its regime, time scale, sample axis).
``erratum``
    The published number is shown wrong; the row's note gives the evidence
    (the corrected theory, and an algorithm that beats the published
    "optimum").
``overstated``
    The paper's statement holds only in a narrower regime, which the row
    measures and names (e.g. "for t < t_c").
``informational``
    A number worth reporting against which no agreement is owed (e.g. an
    algorithm run with the published, non-Bayes channel against its own SE).
``FAIL``
    A real, unexplained disagreement.

Each topic of the pipeline (theory, AMP, GD, dynamics, ...) writes a *claim
fragment*: a TSV file ``results/{scale}/claims/{topic}.tsv`` with one
:class:`ClaimRow` per line.  The ``claims`` rule merges the fragments into
``results/{scale}/claims.md`` (docs/design.md, "Theory ↔ experiment").

TSV format
----------
A header row with the field names of :class:`ClaimRow` in declaration order,
then one row per claim, tab-separated (quoted by the :mod:`csv` rules only if
a field contains a tab or a quote).  ``verdict`` is one of
:data:`VERDICTS`.  Floats are written with
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

__all__ = ["ClaimRow", "VERDICTS", "claim_row", "format_number", "merge_claims", "read_claims",
           "render_claims_markdown", "verdict_counts", "verdict_of", "write_claims"]

Value = float | str

PASS, ERRATUM, OVERSTATED, INFORMATIONAL, FAIL = (
    "pass", "erratum", "overstated", "informational", "FAIL")
#: Every verdict, in the order claims.md counts them.
VERDICTS = (PASS, ERRATUM, OVERSTATED, INFORMATIONAL, FAIL)


def verdict_of(passed: bool) -> str:
    """``pass`` or ``FAIL`` for a plain tolerance check."""
    return PASS if passed else FAIL


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
    verdict : str
        One of :data:`VERDICTS`.  The producer decides: it knows whether the
        tolerance is absolute or relative, and what is known about the claim.
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
    verdict: str
    note: str = ""

    def __post_init__(self) -> None:
        if not self.id.strip():
            raise ValueError("ClaimRow.id must be non-empty")
        if self.verdict not in VERDICTS:
            raise ValueError(f"ClaimRow.verdict must be one of {VERDICTS}, got {self.verdict!r}")
        for spec in dataclasses.fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, str) and ("\n" in value or "\r" in value):
                raise ValueError(f"ClaimRow.{spec.name} must be one line, got {value!r}")

    @property
    def passed(self) -> bool:
        """The verdict is ``pass``."""
        return self.verdict == PASS

    @property
    def failed(self) -> bool:
        """A real, unexplained disagreement (verdict ``FAIL``)."""
        return self.verdict == FAIL


def verdict_counts(rows: Iterable[ClaimRow]) -> dict[str, int]:
    """How many rows carry each verdict, in the order of :data:`VERDICTS`."""
    rows = list(rows)
    return {verdict: sum(row.verdict == verdict for row in rows) for verdict in VERDICTS}


def claim_row(paper: str, *, passed: bool | None = None, **fields) -> ClaimRow:
    """A row of ``paper``, its verdict given as ``verdict=`` or as a plain check ``passed=``."""
    if (passed is None) == ("verdict" not in fields):
        raise TypeError("give exactly one of verdict= and passed=")
    if passed is not None:
        fields["verdict"] = verdict_of(bool(passed))
    return ClaimRow(paper=paper, **fields)


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
        if record["verdict"] not in VERDICTS:
            raise ValueError(f"{path}:{lineno}: verdict must be one of {VERDICTS}, "
                             f"got {record['verdict']!r}")
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
        Markdown: a title, a header line with scale, commit and the count of
        each verdict, the table (claim, expected, measured, tolerance,
        verdict, note).
    """
    commit_text = commit if commit == "unknown" else commit[:12]
    if dirty:
        commit_text += " (uncommitted changes)"
    counts = ", ".join(f"{n} {verdict}" for verdict, n in verdict_counts(rows).items())
    lines = [
        "# Claims of the papers, measured",
        "",
        f"Scale **{scale}** · commit `{commit_text}` · {len(rows)} claims: {counts}",
        "",
        "Verdicts: *pass* (measured where the paper makes the claim, within the stated "
        "tolerance); *erratum* (the published number is shown wrong, evidence in the note); "
        "*overstated* (holds only in the regime the row measures); *informational* (no "
        "agreement is owed); **FAIL** (a real, unexplained disagreement).",
        "",
        "References: *paper1 §x*, *paper2 §x* are sections of docs/paper1.md and docs/paper2.md "
        "(the project's notes on each paper); *[P ...]* is an equation, theorem or appendix of "
        "paper 2 itself.",
        "",
    ]
    if not_measured:
        reasons = "; ".join(f"{topic} ({why})" for topic, why in not_measured.items())
        lines += [f"Not measured at this scale: {reasons}", ""]
    if rows:
        lines += [
            "| claim | expected | measured | tolerance | verdict | note |",
            "|---|---|---|---|---|---|",
        ]
        for row in rows:
            claim = f"**{row.id}** ({row.paper} {row.section}): {row.claim}"
            cells = [claim, _show(row.expected), _show(row.measured), _show(row.tolerance),
                     "**FAIL**" if row.failed else row.verdict, row.note]
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

