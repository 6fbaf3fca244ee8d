"""Compare two result trees: which results differ, by how much, and why (``aimrepro diff A B``).

Two runs of the pipeline (two commits, two machines, two precisions, two
configs) leave two trees of results and figures, each file with its
provenance sidecar (:mod:`aimrepro.records.sidecars`).  :func:`diff_trees`
pairs their files by relative path and says, per result:

* present in one tree only;
* ``same``: the same bytes;
* ``close``: other bytes, but the same content within the tolerance (a
  table whose every value agrees to ``atol + rtol * max(|a|, |b|)``, a figure
  whose drawing is the same and only its embedded provenance differs);
* ``differs``, with what differs: the parameters, code files, data inputs,
  software versions and diagnostics recorded in the two sidecars, and the
  content: for a table or an array file the largest absolute and relative
  difference of each column or array, for a claims fragment each changed
  verdict and value, for a figure whether its pixels changed.

A result's *content* decides its status; the sidecars explain it.  Sidecars
themselves, logs and Snakemake's own files are not results.  Given a
repository (a directory with ``results/`` or ``figures/``), only those two
directories are compared.

Relative difference of two values: ``|a - b| / max(|a|, |b|)`` (0 when both
are 0), symmetric in the two trees.  NaN equals NaN at the same place and
nothing else; an infinity equals the same infinity.  Boolean and text
columns must be equal.
"""

from __future__ import annotations

import math
import os
import re
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aimrepro.claims.table import read_claims
from aimrepro.records.files import PathLike, file_sha256
from aimrepro.records.sidecars import _load_sidecar, flattened, sidecar_path
from aimrepro.records.tables import read_table

__all__ = ["SAME", "CLOSE", "DIFFERS", "ONLY_A", "ONLY_B", "STATUSES", "ColumnDiff",
           "FieldChange", "ResultDiff", "TreeDiff", "Tolerance", "diff_trees", "render_diff"]

SAME, CLOSE, DIFFERS, ONLY_A, ONLY_B = "same", "close", "differs", "only in A", "only in B"
#: Every status, in the order the summary counts them.
STATUSES = (SAME, CLOSE, DIFFERS, ONLY_A, ONLY_B)

#: The directories of a repository that hold results.
RESULT_DIRS = ("results", "figures")
#: Sidecar fields that describe when and where a step ran, not what it computed: never compared.
_VOLATILE_SIDECAR_KEYS = ("started", "ended", "wall_seconds", "cpu_seconds", "peak_rss_bytes",
                          "host", "workdir", "slurm_job_id", "aimrepro_path", "reused_inputs",
                          "outputs", "schema", "config_hash")
#: A number inside text (claims.md, notes): compared with the tolerance, the rest exactly.
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)(?!\w|\.\d)")
#: PNG chunks that carry metadata (text, time), not pixels.
_PNG_METADATA_CHUNKS = (b"tEXt", b"zTXt", b"iTXt", b"tIME")


@dataclass(frozen=True)
class Tolerance:
    """``|a - b| <= atol + rtol * max(|a|, |b|)``: equal within it."""

    rtol: float = 0.0
    atol: float = 0.0

    def __post_init__(self) -> None:
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")

    def close(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise: equal within the tolerance (NaN = NaN, inf = inf of the same sign)."""
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        with np.errstate(invalid="ignore", over="ignore"):
            gap = np.abs(a - b)
            bound = self.atol + self.rtol * np.maximum(np.abs(a), np.abs(b))
            return (a == b) | (np.isnan(a) & np.isnan(b)) | (np.isfinite(gap) & (gap <= bound))


@dataclass(frozen=True)
class FieldChange:
    """One recorded value that differs: a parameter, code file, input, version, claim field.

    ``a``/``b`` are ``None`` where the field is absent from that tree.
    """

    key: str
    a: Any
    b: Any


@dataclass(frozen=True)
class ColumnDiff:
    """How one column of a table (or one array of an ``.npz``) differs.

    ``max_abs``/``max_rel`` over the pairs of finite values; ``n_beyond``
    counts the values outside the tolerance (a NaN against a number
    included); ``note`` says what made the column incomparable, if anything
    (only in one tree, another shape, another type).
    """

    name: str
    n_values: int
    n_beyond: int
    max_abs: float
    max_rel: float
    note: str = ""


@dataclass
class ResultDiff:
    """One result (a file present in either tree), its status and what differs."""

    path: str
    status: str
    kind: str
    rule: str | None = None
    params: list[FieldChange] = field(default_factory=list)
    code: list[FieldChange] = field(default_factory=list)
    inputs: list[FieldChange] = field(default_factory=list)
    versions: list[FieldChange] = field(default_factory=list)
    diagnostics: list[FieldChange] = field(default_factory=list)
    columns: list[ColumnDiff] = field(default_factory=list)
    claims: list[FieldChange] = field(default_factory=list)
    note: str = ""

    def reason(self) -> str:
        """What differs, in a few words (the summary's line)."""
        if self.status in (ONLY_A, ONLY_B, SAME):
            return ""
        parts = []
        if self.params:
            # a structured param (a figure's list of runs) is shown by the leaves that changed,
            # shortest first: the value a user edited, not the paths derived from it
            leaves = sorted((change for c in self.params for change in _leaf_changes(c.key, c.a, c.b)),
                            key=lambda change: len(_show(change[1])) + len(_show(change[2])))
            shown = ", ".join(f"{key} {_show(a, 40)} -> {_show(b, 40)}" for key, a, b in leaves[:3])
            parts.append(f"params: {shown}" + (f" (+{len(leaves) - 3})" if len(leaves) > 3 else ""))
        if self.inputs:
            parts.append(_counted(len(self.inputs), "input", "differs"))
        if self.code:
            parts.append(_counted(len(self.code), "code file", "differs"))
        changed = [c for c in self.columns if c.n_beyond or c.note]
        if changed:
            # the example: the numbers that moved most, relatively; else what made a column incomparable
            worst = max(changed, key=lambda c: (not c.note and math.isfinite(c.max_rel),
                                                c.max_rel if math.isfinite(c.max_rel) else 0.0))
            parts.append(_counted(len(changed), "column", "is") + " beyond tolerance, e.g. "
                         + _column_text(worst))
        if self.claims:
            verdicts = [c for c in self.claims if c.key.endswith(".verdict")]
            parts.append(_counted(len(self.claims), "claim field", "changed")
                         + (f" ({_counted(len(verdicts), 'verdict')})" if verdicts else ""))
        if self.note:
            parts.append(self.note)
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"path": self.path, "status": self.status, "kind": self.kind,
                                  "rule": self.rule}
        for name in ("params", "code", "inputs", "versions", "diagnostics", "claims"):
            record[name] = [{"key": c.key, "a": _jsonable(c.a), "b": _jsonable(c.b)}
                            for c in getattr(self, name)]
        record["columns"] = [{"name": c.name, "n_values": c.n_values, "n_beyond": c.n_beyond,
                              "max_abs": _jsonable(c.max_abs), "max_rel": _jsonable(c.max_rel),
                              "note": c.note} for c in self.columns]
        record["note"] = self.note
        return record


@dataclass
class TreeDiff:
    """Every result of two trees and how it compares."""

    a: Path
    b: Path
    tolerance: Tolerance
    results: list[ResultDiff]

    @property
    def equal(self) -> bool:
        """Every result in both trees, and each the same or close."""
        return all(r.status in (SAME, CLOSE) for r in self.results)

    def counts(self) -> dict[str, int]:
        counted = Counter(r.status for r in self.results)
        return {status: counted.get(status, 0) for status in STATUSES}

    def to_json(self) -> dict[str, Any]:
        return {"a": str(self.a), "b": str(self.b), "rtol": self.tolerance.rtol,
                "atol": self.tolerance.atol, "equal": self.equal, "counts": self.counts(),
                "results": [r.to_json() for r in self.results]}


def diff_trees(a: PathLike, b: PathLike, *, rtol: float = 0.0, atol: float = 0.0) -> TreeDiff:
    """Compare every result of tree ``a`` with the result of the same relative path in ``b``.

    Parameters
    ----------
    a, b : path
        Two result trees: repositories (their ``results/`` and ``figures/``
        are compared) or any directories of results.
    rtol, atol : float
        The tolerance of :class:`Tolerance` (default 0: equal values only).

    Returns
    -------
    TreeDiff
        One :class:`ResultDiff` per path found in either tree, sorted.

    Raises
    ------
    ValueError
        ``a`` or ``b`` is not a directory or holds no result with a sidecar, or a
        tolerance is negative or not finite.
    """
    tolerance = Tolerance(float(rtol), float(atol))
    a, b = Path(a), Path(b)
    for name, root in (("A", a), ("B", b)):
        if not root.is_dir():
            raise ValueError(f"{name}: {root} is not a directory")
    found_a, found_b = dict(_result_files(a)), dict(_result_files(b))
    for name, root, found in (("A", a, found_a), ("B", b, found_b)):
        # an empty tree, or one with no result of the pipeline, would compare as "equal"
        if not any(_sidecar_of(path) is not None for path in found.values()):
            raise ValueError(f"{name}: {root} holds no results of the pipeline (no file with a "
                             f"provenance sidecar): give a repository after a run, or its results/ "
                             f"or figures/")
    results = []
    for path in sorted(set(found_a) | set(found_b)):
        if path not in found_b:
            results.append(ResultDiff(path, ONLY_A, _kind(path), rule=_rule(found_a[path])))
        elif path not in found_a:
            results.append(ResultDiff(path, ONLY_B, _kind(path), rule=_rule(found_b[path])))
        else:
            results.append(_compare(path, found_a[path], found_b[path], tolerance))
    return TreeDiff(a, b, tolerance, results)


# --- which files are results ---------------------------------------------------------


def _result_files(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative path, path) of every result below ``root`` (not sidecars, logs, hidden files)."""
    tops = [root / name for name in RESULT_DIRS if (root / name).is_dir()] or [root]
    for top in tops:
        for directory, subdirs, names in os.walk(top):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d != "logs")
            for name in sorted(names):
                path = Path(directory) / name
                if name.startswith(".") or path.suffix == ".log" or _is_sidecar(path):
                    continue
                yield str(path.relative_to(root)), path


def _is_sidecar(path: Path) -> bool:
    if path.suffix != ".json":
        return False
    record, _ = _load_sidecar(path)
    return record is not None


def _kind(path: str) -> str:
    suffix = Path(path).suffix
    if suffix == ".csv":
        return "table"
    if suffix == ".npz":
        return "arrays"
    if suffix == ".tsv":
        return "claims"
    if suffix in (".pdf", ".png"):
        return "figure"
    return "text" if suffix in (".md", ".txt", ".json") else "binary"


def _sidecar_of(path: Path) -> dict[str, Any] | None:
    if path.suffix == ".json":  # a JSON file that is not a sidecar (a benchmark's record) has none
        return None
    side = sidecar_path(path)
    if not side.exists():
        return None
    record, _ = _load_sidecar(side)
    return record


def _rule(path: Path) -> str | None:
    record = _sidecar_of(path)
    return None if record is None else record.get("rule")


# --- one result ---------------------------------------------------------------------------


def _compare(path: str, a: Path, b: Path, tolerance: Tolerance) -> ResultDiff:
    kind = _kind(path)
    side_a, side_b = _sidecar_of(a), _sidecar_of(b)
    rule = (side_b or side_a or {}).get("rule")
    try:
        same = file_sha256(a) == file_sha256(b)
    except OSError as err:
        return ResultDiff(path, DIFFERS, kind, rule=rule, note=f"unreadable: {err}")
    if same:
        return ResultDiff(path, SAME, kind, rule=rule)
    result = ResultDiff(path, DIFFERS, kind, rule=rule)
    _explain(result, side_a, side_b)
    compare = {"table": _compare_table, "arrays": _compare_arrays, "claims": _compare_claims,
               "figure": _compare_figure, "text": _compare_text}.get(kind)
    try:
        close = compare(result, a, b, tolerance) if compare else False
    except (OSError, ValueError, KeyError, zlib.error) as err:
        close = False
        result.note = f"cannot compare the content ({type(err).__name__}: {err}); the bytes differ"
    if compare is None:
        result.note = "the bytes differ"
    result.status = CLOSE if close else DIFFERS
    return result


def _explain(result: ResultDiff, a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> None:
    """What the two sidecars say differs: params, code, inputs, software, diagnostics."""
    if a is None or b is None:
        result.note = "no sidecar in A" if a is None and b is not None else (
            "no sidecar in B" if b is None and a is not None else "")
        return
    flat_a = {**flattened(a.get("params", {}), ""), "rule": a.get("rule"), "seed": a.get("seed")}
    flat_b = {**flattened(b.get("params", {}), ""), "rule": b.get("rule"), "seed": b.get("seed")}
    result.params = _changes(flat_a, flat_b)
    result.code = _changes(a.get("code", {}), b.get("code", {}))
    result.inputs = _changes(a.get("inputs", {}), b.get("inputs", {}))
    result.versions = _changes({**(a.get("versions") or {}), "aimrepro": a.get("aimrepro_version")},
                               {**(b.get("versions") or {}), "aimrepro": b.get("aimrepro_version")})
    result.diagnostics = [c for c in _changes(flattened(a.get("diagnostics") or {}, ""),
                                              flattened(b.get("diagnostics") or {}, ""))
                          if not c.key.endswith(("seconds", "_bytes"))]


def _changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[FieldChange]:
    return [FieldChange(key, a.get(key), b.get(key)) for key in sorted(set(a) | set(b))
            if key not in _VOLATILE_SIDECAR_KEYS and a.get(key) != b.get(key)]


def _compare_table(result: ResultDiff, a: Path, b: Path, tolerance: Tolerance) -> bool:
    try:
        table_a, table_b = read_table(a), read_table(b)
    except ValueError:
        return _compare_text(result, a, b, tolerance)
    return _compare_columns(result, table_a, table_b, tolerance)


def _compare_arrays(result: ResultDiff, a: Path, b: Path, tolerance: Tolerance) -> bool:
    with np.load(a, allow_pickle=False) as file_a, np.load(b, allow_pickle=False) as file_b:
        arrays_a = {name: file_a[name] for name in file_a.files}
        arrays_b = {name: file_b[name] for name in file_b.files}
    return _compare_columns(result, arrays_a, arrays_b, tolerance)


def _compare_columns(result: ResultDiff, a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray],
                     tolerance: Tolerance) -> bool:
    close = True
    for name in list(a) + [n for n in b if n not in a]:
        column = _column_diff(name, a.get(name), b.get(name), tolerance)
        if column.n_beyond or column.note:
            close = False
        if column.n_beyond or column.note or column.max_abs > 0:
            result.columns.append(column)
    return close


def _column_diff(name: str, a: np.ndarray | None, b: np.ndarray | None,
                 tolerance: Tolerance) -> ColumnDiff:
    if a is None or b is None:
        size = (b if a is None else a).size
        return ColumnDiff(name, size, size, math.nan, math.nan, ONLY_B if a is None else ONLY_A)
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return ColumnDiff(name, max(a.size, b.size), max(a.size, b.size), math.nan, math.nan,
                          f"shape {a.shape} in A, {b.shape} in B")
    numeric = [np.issubdtype(x.dtype, np.number) and not np.issubdtype(x.dtype, np.bool_)
               for x in (a, b)]
    if not all(numeric):
        # strings of any width compare by value; other mixes of types do not compare
        comparable = a.dtype == b.dtype or (a.dtype.kind == b.dtype.kind and a.dtype.kind in "US")
        differing = int(np.count_nonzero(a != b)) if comparable else a.size
        note = "" if comparable else f"type {a.dtype} in A, {b.dtype} in B"
        return ColumnDiff(name, a.size, differing, math.nan, math.nan, note)
    fa, fb = a.astype(float).ravel(), b.astype(float).ravel()
    beyond = int(np.count_nonzero(~tolerance.close(fa, fb)))
    finite = np.isfinite(fa) & np.isfinite(fb)
    gap = np.abs(fa[finite] - fb[finite])
    scale = np.maximum(np.abs(fa[finite]), np.abs(fb[finite]))
    relative = np.divide(gap, scale, out=np.zeros_like(gap), where=scale > 0)
    return ColumnDiff(name, a.size, beyond, float(gap.max(initial=0.0)),
                      float(relative.max(initial=0.0)))


#: The fields of a claim row compared, as suffixes of their FieldChange keys (``p1-x.verdict``).
_CLAIM_FIELDS = (".verdict", ".measured", ".expected", ".tolerance", ".claim", ".note", ".section")


def _compare_claims(result: ResultDiff, a: Path, b: Path, tolerance: Tolerance) -> bool:
    try:
        rows_a = {row.id: row for row in read_claims(a)}
        rows_b = {row.id: row for row in read_claims(b)}
    except ValueError:
        return _compare_text(result, a, b, tolerance)
    close = True
    for claim in list(rows_a) + [i for i in rows_b if i not in rows_a]:
        row_a, row_b = rows_a.get(claim), rows_b.get(claim)
        if row_a is None or row_b is None:
            result.claims.append(FieldChange(f"{claim}", None if row_a is None else row_a.verdict,
                                             None if row_b is None else row_b.verdict))
            close = False
            continue
        for name in (field.lstrip(".") for field in _CLAIM_FIELDS):
            value_a, value_b = getattr(row_a, name), getattr(row_b, name)
            if value_a == value_b:
                continue
            result.claims.append(FieldChange(f"{claim}.{name}", value_a, value_b))
            if name == "verdict" or not _values_close(value_a, value_b, tolerance):
                close = False
    return close


def _values_close(a: Any, b: Any, tolerance: Tolerance) -> bool:
    """Two claim cells: numbers within the tolerance, or texts equal but for such numbers."""
    if isinstance(a, float) and isinstance(b, float):
        return bool(tolerance.close(a, b))
    return isinstance(a, str) and isinstance(b, str) and _text_close(a, b, tolerance)


def _compare_figure(result: ResultDiff, a: Path, b: Path, tolerance: Tolerance) -> bool:
    """The same drawing, whatever the provenance embedded in the file (commit, config hash)?"""
    data_a, data_b = a.read_bytes(), b.read_bytes()
    if a.suffix == ".png":
        if _png_pixels(data_a) == _png_pixels(data_b):
            result.note = "the same pixels; only the embedded metadata differs"
            return True
        result.note = _pixel_difference(a, b)
        return False
    if _pdf_drawing(data_a) == _pdf_drawing(data_b):
        result.note = "the same drawing; only the document information (metadata) differs"
        return True
    result.note = "the drawing differs"
    return False


def _png_pixels(data: bytes) -> tuple[bytes, bytes]:
    """(header, decompressed image data) of a PNG: what it shows, not what it says about itself."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ValueError("not a PNG file")
    position, header, image = 8, b"", []
    while position + 8 <= len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            image.append(body)
        position += 12 + length
    return header, zlib.decompress(b"".join(image))


def _pixel_difference(a: Path, b: Path) -> str:
    from matplotlib.image import imread  # only for figures that differ

    pixels_a, pixels_b = imread(a), imread(b)
    if pixels_a.shape != pixels_b.shape:
        return f"the pixels differ: {pixels_a.shape[1]}x{pixels_a.shape[0]} in A, " \
               f"{pixels_b.shape[1]}x{pixels_b.shape[0]} in B"
    changed = np.any(pixels_a != pixels_b, axis=-1) if pixels_a.ndim == 3 else pixels_a != pixels_b
    return f"the pixels differ: {np.count_nonzero(changed)} of {changed.size} " \
           f"({100 * np.count_nonzero(changed) / changed.size:.2g} %)"


def _pdf_drawing(data: bytes) -> bytes:
    """A PDF without its document information dictionary and cross-reference table.

    The information dictionary holds the metadata (title, keywords with the
    commit and config hash, creator); the cross-reference table only the
    byte offsets of the objects, which shift when the metadata's length does.
    """
    info = re.search(rb"/Info (\d+) 0 R", data[-2048:])
    if info is None:
        return data
    number = info.group(1)
    without = re.sub(rb"(?ms)^" + number + rb" 0 obj\b.*?endobj\s*", b"", data, count=1)
    return re.sub(rb"(?s)\nxref\n.*\Z", b"", without)


#: The commit a claims table names in its header (``claims.table.claims_markdown``): where
#: it was computed, like a figure's embedded metadata, not what it says.
_HEADER_COMMIT = re.compile(r"(?m)^(Scale \*\*\S+\*\* · commit )`[^`]*`")


def _compare_text(result: ResultDiff, a: Path, b: Path, tolerance: Tolerance) -> bool:
    text_a, text_b = a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")
    if a.name == "claims.md" and text_a != text_b:
        unstamped_a, unstamped_b = (_HEADER_COMMIT.sub(r"\1`…`", text) for text in (text_a, text_b))
        if unstamped_a == unstamped_b:
            result.note = "the same claims; only the commit in its header differs"
            return True
    lines_a, lines_b = text_a.splitlines(), text_b.splitlines()
    differing = [i for i in range(max(len(lines_a), len(lines_b)))
                 if (lines_a[i] if i < len(lines_a) else None) != (lines_b[i] if i < len(lines_b) else None)]
    close = _text_close(text_a, text_b, tolerance)
    first = differing[0] + 1 if differing else None
    result.note = (_counted(len(differing), "line", "differs") + f" (first: line {first})"
                   + ("; every number within tolerance" if close else ""))
    return close


def _text_close(a: str, b: str, tolerance: Tolerance) -> bool:
    """Equal text, but for numbers equal within the tolerance."""
    words_a, words_b = _NUMBER.split(a), _NUMBER.split(b)
    numbers_a, numbers_b = _NUMBER.findall(a), _NUMBER.findall(b)
    if words_a != words_b or len(numbers_a) != len(numbers_b):
        return False
    return bool(np.all(tolerance.close(np.array([float(x) for x in numbers_a]),
                                       np.array([float(x) for x in numbers_b]))))


# --- printing ----------------------------------------------------------------------------


def render_diff(diff: TreeDiff, *, details: bool = False) -> str:
    """The comparison as text: a summary first, then one line per result that is not the same.

    With ``details``, each such result is followed by everything that
    differs: parameters, code files, inputs, software, diagnostics, columns,
    claims.
    """
    counts = diff.counts()
    n = len(diff.results)
    tol = diff.tolerance
    lines = [f"A: {diff.a}", f"B: {diff.b}",
             f"{n} results: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
             + f" (rtol {tol.rtol:g}, atol {tol.atol:g}): "
             + ("equal" if diff.equal else "NOT equal")]
    by_rule = Counter((r.rule or "(no sidecar)", r.status) for r in diff.results if r.status != SAME)
    if by_rule:
        rules = sorted({rule for rule, _ in by_rule})
        lines.append("by rule: " + "; ".join(
            f"{rule} " + ", ".join(f"{by_rule[rule, s]} {s}" for s in STATUSES if by_rule[rule, s])
            for rule in rules))
    fragments = [r for r in diff.results if r.kind == "claims" and r.status not in (ONLY_A, ONLY_B)]
    if fragments:
        # the first question of a comparison: did any verdict change?
        verdicts = [f"{c.key.removesuffix('.verdict')} {_show(c.a)} -> {_show(c.b)}"
                    for r in fragments for c in r.claims
                    if c.key.endswith(".verdict") or not c.key.endswith(_CLAIM_FIELDS)]  # or a row in one only
        lines.append(f"claims ({_counted(len(fragments), 'fragment')} in both): "
                     + (f"{_counted(len(verdicts), 'verdict')} changed: " + ", ".join(verdicts)
                        if verdicts else "no verdict changed"))
    shown = [r for r in diff.results if r.status != SAME]
    if shown:
        lines.append("")
    width = max((len(r.status) for r in shown), default=0)
    for result in shown:
        reason = result.reason()
        lines.append(f"{result.status:<{width}}  {result.path}" + (f"  ({reason})" if reason else ""))
        if details:
            lines.extend("    " + line for line in _details(result))
    return "\n".join(lines)


def _details(result: ResultDiff) -> list[str]:
    lines = []
    for title, changes in (("param", result.params), ("code", result.code),
                           ("input", result.inputs), ("software", result.versions),
                           ("diagnostic", result.diagnostics), ("claim", result.claims)):
        for change in changes:
            lines.append(f"{title} {change.key}: {_show(change.a)} -> {_show(change.b)}")
    for column in result.columns:
        lines.append("column " + _column_text(column))
    if result.note:
        lines.append(result.note)
    return lines


def _counted(n: int, noun: str, verb: str = "") -> str:
    """``1 input differs``, ``2 inputs differ``; ``2 columns are``."""
    plural = {"differs": "differ", "is": "are"}.get(verb, verb)
    return f"{n} {noun}{'s' * (n != 1)}" + (f" {verb if n == 1 else plural}" if verb else "")


def _column_text(column: ColumnDiff) -> str:
    if column.note:
        return f"{column.name}: {column.note}"
    if math.isnan(column.max_abs):
        return f"{column.name}: {column.n_beyond} of {column.n_values} values differ"
    return (f"{column.name}: max |a-b| {column.max_abs:.3g}, max rel {column.max_rel:.3g}, "
            f"{column.n_beyond} of {column.n_values} beyond tolerance")


def _show(value: Any, limit: int | None = None) -> str:
    """A value as the summary prints it; cut to ``limit`` characters (with …) if given."""
    if value is None:
        return "(absent)"
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return f"sha256:{value[:12]}"
    if isinstance(value, float):
        return f"{value:.6g}"
    text = str(value)
    return text if limit is None or len(text) <= limit else text[:limit - 1] + "…"


def _leaf_changes(key: str, a: Any, b: Any) -> Iterator[tuple[str, Any, Any]]:
    """The innermost places where two parameter values differ: ``runs[0].lr``, 0.05, 0.04.

    Mappings are walked by key, lists of equal length by index; anything
    else that differs (lists of other lengths included) is one leaf.
    """
    if a == b:
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for name in list(a) + [name for name in b if name not in a]:
            yield from _leaf_changes(f"{key}.{name}", a.get(name), b.get(name))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (item_a, item_b) in enumerate(zip(a, b)):
            yield from _leaf_changes(f"{key}[{index}]", item_a, item_b)
    else:
        yield key, a, b


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (np.floating, np.integer)):
        return _jsonable(value.item())
    return value
