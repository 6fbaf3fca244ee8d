"""The float32 check: two results trees of one config and seeds, float64 against float32.

Run:  python benchmarks/compare_precision.py REFERENCE CANDIDATE [--scale quick]
          [--output benchmarks/results/precision_check.json] [--markdown FILE]

REFERENCE and CANDIDATE are two working directories of the pipeline (each
with ``results/{scale}/``) that ran the same config and seeds except for
``backend.dtype``.  The script reads, from both trees:

* every online-SGD run (``sgd/``, ``untied/sgd/``): tied and direct runs give the
  final overlap ratio |p12|/p22 and the weak-recovery time T_wr (|p12|/p22 ≥
  ``paper2.threshold``, the claims' ``recovery_summary``); untied runs the final
  |s| and the escape time τ_esc (|s| ≥ 0.3, the claims' ``escape_time``);
* every GD run (``gd/``): the mean single-student error ‖S_k − S*‖²_F/d and the
  averaged student's error ‖S̄ − S*‖²_F/d of the draw;
* every GAMP-RIE run (``amp/``): the final error, its status and iterations;
* every claims fragment (``claims/*.tsv``): each row's verdict and measured value.

Runs are grouped by their condition (the path without its seed).  Per
condition and statistic: the float64 mean over the seeds and its error bar,
the seed spread / √n (s.e., ddof = 1), the float32 − float64 difference of
the means Δ, the s.e. of the paired per-seed differences, and |Δ|/s.e.: the
check asks |Δ| ≤ s.e., i.e. single precision moves no statistic by more than
its own error bar.  A statistic that is NaN in some seeds (a time never
reached) is compared on the seeds where both trees have it, and the counts
are reported.  Files that are byte-identical in both trees are counted per
kind (the families left in float64 must be all identical).

Writes the full comparison as JSON and prints (or writes with ``--markdown``)
the tables docs/benchmarks.md shows ("Single precision").
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import yaml

from aimrepro.claims.paper2_untied import ESCAPE_OVERLAP
from aimrepro.claims.table import read_claims
from aimrepro.paper2.analysis import escape_time
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.records.files import file_sha256
from aimrepro.records.tables import read_table

_SEED = re.compile(r"_seed(\d+)(?=\.\w+$)")
_DIMENSION = re.compile(r"_d(\d+)(?:_|$)")


def condition_of(relative: str) -> str:
    """The run's path without its seed: the condition its seeds replicate."""
    return _SEED.sub("", relative)


def dimension_of(relative: str) -> int:
    match = _DIMENSION.search(Path(relative).parent.name)
    if match is None:
        raise ValueError(f"no _d<d> in the directory of {relative}")
    return int(match.group(1))


def paired_files(reference: Path, candidate: Path, pattern: str) -> list[str]:
    """Result files matching ``pattern`` under ``reference`` that ``candidate`` also has (relative paths)."""
    found = sorted(p.relative_to(reference).as_posix() for p in reference.glob(pattern))
    return [rel for rel in found if (candidate / rel).exists()]


# --- statistics of one run --------------------------------------------------------------------


def sgd_statistics(path: Path, threshold: float) -> dict[str, float]:
    run = Trajectory.from_columns(read_table(path), dimension_of(path.as_posix()))
    if "untied" in path.parts:
        return {"final symmetric overlap": float(abs(run.symmetric_overlap[-1])),
                "tau_esc": escape_time(run, ESCAPE_OVERLAP)}
    t_wr = run.weak_recovery_time(threshold)
    return {"final overlap ratio": float(abs(run.overlap_ratio[-1])), "T_wr": math.nan if t_wr is None else t_wr}


def gd_statistics(path: Path) -> dict[str, float]:
    with np.load(path, allow_pickle=False) as run:
        return {"single error": float(run["single_error"]), "averaged error": float(run["averaged_error"])}


def amp_statistics(path: Path) -> dict[str, float]:
    with np.load(path, allow_pickle=False) as run:
        keys = set(run.files)
        error = float(run["error"]) if "error" in keys else math.nan
        iterations = float(run["iterations"]) if "iterations" in keys else math.nan
        status = str(run["status"]) if "status" in keys else "?"
    return {"error": error, "iterations": iterations, "usable": float(status in ("converged", "stationary"))}


# --- grouping and the differences -------------------------------------------------------------


def _mean_sem(values: np.ndarray) -> tuple[float, float]:
    if values.size == 0:
        return math.nan, math.nan
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan


def compare_runs(reference: Path, candidate: Path, files: Iterable[str],
                 statistics: Callable[[Path], dict[str, float]], kind: str) -> tuple[list[dict], dict]:
    """One row per (condition, statistic), and the byte-identity count of the files."""
    per_condition: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
    identical = total = 0
    for rel in files:
        total += 1
        identical += file_sha256(reference / rel) == file_sha256(candidate / rel)
        per_condition[condition_of(rel)].append((statistics(reference / rel), statistics(candidate / rel)))
    rows = []
    for condition, pairs in sorted(per_condition.items()):
        for name in pairs[0][0]:
            a = np.array([p[0][name] for p in pairs])
            b = np.array([p[1][name] for p in pairs])
            both = np.isfinite(a) & np.isfinite(b)
            mean64, sem64 = _mean_sem(a[both])
            mean32, sem32 = _mean_sem(b[both])
            _, paired_sem = _mean_sem(b[both] - a[both])
            delta = mean32 - mean64 if both.any() else math.nan
            rows.append({
                "kind": kind, "condition": condition, "statistic": name, "n": int(len(pairs)),
                "n_float64": int(np.isfinite(a).sum()), "n_float32": int(np.isfinite(b).sum()),
                "n_both": int(both.sum()), "float64_mean": mean64, "float64_sem": sem64, "float32_mean": mean32,
                "float32_sem": sem32, "delta": delta, "paired_sem": paired_sem,
                # one seed, or seeds that all agree: no error bar to compare with (NaN)
                "delta_over_sem": abs(delta) / sem64 if math.isfinite(sem64) and sem64 > 0 else math.nan,
                "relative_delta": abs(delta) / abs(mean64) if math.isfinite(mean64) and mean64 != 0 else math.nan,
                "max_abs_seed_difference": float(np.max(np.abs(b[both] - a[both]))) if both.any() else math.nan,
            })
    return rows, {"kind": kind, "files": total, "identical": identical}


def compare_claims(reference: Path, candidate: Path, scale: str) -> list[dict]:
    rows = []
    for rel in paired_files(reference, candidate, f"results/{scale}/claims/*.tsv"):
        mine = {row.id: row for row in read_claims(candidate / rel)}
        for row in read_claims(reference / rel):
            other = mine.get(row.id)
            rows.append({"topic": Path(rel).stem, "id": row.id, "verdict_float64": row.verdict,
                         "verdict_float32": other.verdict if other else "(missing)",
                         "measured_float64": str(row.measured), "measured_float32": str(other.measured) if other else "",
                         "same_measured": other is not None and str(row.measured) == str(other.measured)})
    return rows


# --- report -----------------------------------------------------------------------------------


def _number(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:.{digits}g}"


def summary_markdown(rows: list[dict]) -> str:
    """Per kind and statistic: conditions, median and largest |Δ|/s.e., how many beyond 1 s.e.

    Conditions with one seed (or none where both trees have the statistic) have no
    error bar; they count only in the largest relative change |Δ|/|mean|.
    """
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row["kind"], row["statistic"])].append(row)
    lines = ["| runs | statistic | conditions (with an error bar) | seeds | median \\|Δ\\|/s.e. | largest \\|Δ\\|/s.e. "
             "| beyond 1 s.e. | largest \\|Δ\\|/\\|mean\\| |",
             "|---|---|---|---|---|---|---|---|"]
    for (kind, statistic), group in groups.items():
        ratios = np.array([r["delta_over_sem"] for r in group if math.isfinite(r["delta_over_sem"])])
        relative = [r["relative_delta"] for r in group if math.isfinite(r["relative_delta"])]
        seeds = sum(r["n_both"] for r in group)
        lines.append(f"| {kind} | {statistic} | {len(group)} ({ratios.size}) | {seeds} | "
                     f"{_number(float(np.median(ratios)) if ratios.size else math.nan, 2)} | "
                     f"{_number(float(np.max(ratios)) if ratios.size else math.nan, 2)} | {int(np.sum(ratios > 1.0))} | "
                     f"{_number(max(relative) if relative else math.nan, 2)} |")
    return "\n".join(lines)


def rows_markdown(rows: list[dict]) -> str:
    lines = ["| runs | condition | statistic | seeds | float64 mean ± s.e. | float32 − float64 (± paired s.e.) | \\|Δ\\|/s.e. |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        seeds = f"{r['n_both']}" + ("" if r["n_both"] == r["n"] else f" of {r['n']} ({r['n_float64']}, {r['n_float32']})")
        condition = r["condition"].split("/", 2)[-1]  # without results/{scale}/
        lines.append(f"| {r['kind']} | `{condition}` | {r['statistic']} | {seeds} | "
                     f"{_number(r['float64_mean'], 4)} ± {_number(r['float64_sem'], 2)} | "
                     f"{_number(r['delta'], 2)} ± {_number(r['paired_sem'], 2)} | {_number(r['delta_over_sem'], 2)} |")
    return "\n".join(lines)


def claims_markdown(claims: list[dict]) -> str:
    changed = [c for c in claims if c["verdict_float64"] != c["verdict_float32"]]
    counts = defaultdict(lambda: [0, 0])
    for c in claims:
        counts[c["verdict_float64"]][0] += 1
        counts[c["verdict_float32"]][1] += 1
    lines = [f"{len(claims)} claims rows; verdicts changed: {len(changed)}; measured values identical: "
             f"{sum(c['same_measured'] for c in claims)}.", "",
             "| verdict | float64 | float32 |", "|---|---|---|"]
    lines += [f"| {v} | {a} | {b} |" for v, (a, b) in sorted(counts.items())]
    lines += ["", "| topic | row | verdict float64 | verdict float32 | measured float64 | measured float32 |",
              "|---|---|---|---|---|---|"]
    for c in claims:
        if not c["same_measured"] or c["verdict_float64"] != c["verdict_float32"]:
            lines.append(f"| {c['topic']} | {c['id']} | {c['verdict_float64']} | {c['verdict_float32']} | "
                         f"{c['measured_float64']} | {c['measured_float32']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", type=Path, help="the float64 working directory")
    parser.add_argument("candidate", type=Path, help="the float32 working directory")
    parser.add_argument("--scale", default="quick")
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).parent / "results" / "precision_check.json")
    parser.add_argument("--markdown", type=Path, default=None, help="write the tables here (default: print)")
    args = parser.parse_args()
    ref, cand, scale = args.reference, args.candidate, args.scale
    configs = [yaml.safe_load((d / "config.yaml").read_text()) for d in (ref, cand)]
    threshold = float(configs[0].get("paper2", {}).get("threshold", 0.3))
    dtypes = [c.get("backend", {}).get("dtype") for c in configs]
    rows, identity = [], []
    for kind, pattern, statistics in (
            ("sgd", f"results/{scale}/sgd/**/*.csv", lambda p: sgd_statistics(p, threshold)),
            ("untied sgd", f"results/{scale}/untied/sgd/**/*.csv", lambda p: sgd_statistics(p, threshold)),
            ("gd", f"results/{scale}/gd/**/alpha*.npz", gd_statistics),
            ("amp", f"results/{scale}/amp/**/alpha*.npz", amp_statistics)):
        files = paired_files(ref, cand, pattern)
        if not files:
            continue
        kind_rows, count = compare_runs(ref, cand, files, statistics, kind)
        identity.append(count)
        if count["identical"] < count["files"]:
            rows += kind_rows
        print(f"{kind}: {count['files']} runs, {count['identical']} byte-identical", file=sys.stderr)
    claims = compare_claims(ref, cand, scale)
    record = {"reference": str(ref), "candidate": str(cand), "scale": scale, "dtypes": dtypes,
              "identical_files": identity, "statistics": rows, "claims": claims}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=1, allow_nan=True) + "\n")
    text = "\n\n".join([
        f"float64: `{dtypes[0]}`, float32: `{dtypes[1]}`",
        "Byte-identical run files: " + ", ".join(f"{c['kind']} {c['identical']} of {c['files']}" for c in identity),
        summary_markdown(rows), claims_markdown(claims), rows_markdown(rows)])
    if args.markdown:
        args.markdown.write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
