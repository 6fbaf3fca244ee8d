"""The referee scale's trends designed as experiments, and the design checked against a run.

Run:  python benchmarks/design_referee.py [--results results/referee] [--budget-cpu 9000]

For every trend row of the claims (a finite-size trend judged on s.e.(e∞),
``docs/design.md``, "Theory ↔ experiment") this reads a results tree of the
referee scale (or any scale: ``--scale``) and

1. measures the spread of one run at each d, from the row's own note (the
   claims write "d = 50: m ± s (n runs)" for every trend: spread = s √n), and
   the CPU seconds of one run at each d, from the runs' sidecars;
2. fits both as powers of d (``aimrepro.claims.design.fit_power_law``);
3. predicts s.e.(e∞) of the configured sizes and seeds from those laws and
   puts the measured s.e.(e∞) of the row beside it;
4. designs the cheapest sizes and seeds (among the configured sizes and
   1.5 and 2 times them, never below the smallest configured d, where the
   row's regime starts) that reach 0.8 × tolerance/2 within the row's share
   of the budget (``aimrepro.claims.design.design_trend``).

A measured s.e. above the predicted one is usually the fit's χ²/dof
inflation (``aimrepro.claims.trends``: the s.e. is scaled by √(χ²/dof) when
that exceeds 1), which the laws cannot predict.

The GD row's estimate uses GAMP-RIE on the same datasets as control variate
(``aimrepro.paper1.gd.averaged_trend_point``); its spread per d is that of the
estimate (its s.e. times √n), so its prediction holds for the configured
ratio of AMP to GD draws.

Writes ``benchmarks/results/referee_design.json`` and prints the table that
``docs/benchmarks.md`` ("Referee design") records.
"""

from __future__ import annotations

import argparse
import json
import os
import math
import platform
import re
import sys
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "lib"))

from aimrepro.claims.design import design_trend, extrapolation_se, fit_power_law  # noqa: E402
from aimrepro.claims.table import read_claims  # noqa: E402
from aimrepro.config import validate_config  # noqa: E402
from aimrepro.records.sidecars import read_sidecar  # noqa: E402
from aimrepro_workflow.kinds import KINDS  # noqa: E402
from aimrepro_workflow.checks import check_config  # noqa: E402
from aimrepro_workflow.plans import Plan  # noqa: E402

#: "d = 50: 0.021 ± 0.004 (8 runs)" as FiniteSizeTrend.per_d_text writes it.
PER_D = re.compile(r"d = (\d+): ([-+0-9.eE]+) ± ([-+0-9.eEna]+) \((\d+) runs\)")
#: "e∞ = 0.01 ± 0.003" as FiniteSizeTrend.fit_text writes it.
LIMIT = re.compile(r"e∞ = ([-+0-9.eE]+) ± ([-+0-9.eE]+)")
#: The number a tolerance adds its 2 s.e. to: "... = 0.0128 (+ 2 s.e.)", "|e∞| ≤ 0.05 + 2 s.e.".
TOLERANCE_NUMBER = re.compile(r"([0-9][0-9.]*(?:e-?\d+)?)\s*\(?\+ 2 s")


def _cpu_per_d(result_paths, d_of) -> dict[int, list[float]]:
    cpu = defaultdict(list)
    for path in result_paths:
        try:
            sidecar = read_sidecar(path)
        except (OSError, ValueError):
            continue
        cpu[int(d_of(path))].append(float(sidecar["cpu_seconds"]))
    return cpu


def _run_d(spec):
    return lambda path: spec.parse(path)["d"]


def row_sources(plan: Plan, config, scale: str) -> dict[str, dict]:
    """Row id -> the configured design (dims, seeds) and the CPU per run at each d."""
    rows = {}
    sizes = config["scales"][scale]
    for trend in plan.amp_trends(scale):
        if not trend["points"]:
            continue
        runs = [run for point in trend["points"] for run in point["runs"]]
        for prefix in ("p1-amp-trend", "p1-amp-gen-trend"):
            rows[f"{prefix}-{trend['name']}"] = {
                "dims": [p["d"] for p in trend["points"]], "seeds": [len(p["seeds"]) for p in trend["points"]],
                "cpu": _cpu_per_d(runs, _run_d(KINDS["amp_run"].path))}
    gd = plan.gd_trend(scale)
    if gd and gd["points"]:
        gd_cpu = _cpu_per_d(plan.trend_runs(scale, "gd"), _run_d(KINDS["gd_run"].path))
        amp_cpu = _cpu_per_d(plan.trend_runs(scale, "gd_amp"), _run_d(KINDS["amp_run"].path))
        ratio = {p["d"]: len(p["amp_seeds"]) / len(p["seeds"]) for p in gd["points"]}
        # one "run" of the estimate: a GD draw and its share of AMP draws
        cpu = {d: [sum(gd_cpu[d]) / max(len(gd_cpu[d]), 1) + ratio[d] * (
            sum(amp_cpu[d]) / len(amp_cpu[d]) if amp_cpu.get(d) else 0.0)] for d in gd_cpu}
        rows["p1-gd-trend-averaged"] = {"dims": [p["d"] for p in gd["points"]],
                                        "seeds": [len(p["seeds"]) for p in gd["points"]], "cpu": cpu}
    tokens = plan.tokens_amp_runs(scale)
    if tokens:
        T = tokens[0]["T"]
        amp_size = sizes["hardmax_tokens"]["amp"]
        rows[f"p1x-hardmax-tokens-T{T}-amp"] = {
            "dims": list(amp_size["dims"]), "seeds": [amp_size["seeds"]] * len(amp_size["dims"]),
            "cpu": _cpu_per_d([r["path"] for r in tokens], _run_d(KINDS["tokens_amp_run"].path))}
    for table in plan.tied_velocity_tables(scale):
        try:
            total = float(read_sidecar(table["path"])["cpu_seconds"])
        except (OSError, ValueError):
            total = None  # a pilot's tree predicting another design: spreads only
        # one job holds every d: its CPU split as the exact drift's O(d³) per replicate
        weights = {d: (d / 100.0) ** 3 for d in table["dims"]}
        per_seed = ({} if total is None else
                    {d: total * w / sum(weights.values()) / len(table["seeds"]) for d, w in weights.items()})
        for kind in ("eq17-flow", "sgd-drift"):
            rows[f"p2-tied-{kind}-{table['link']}"] = {
                "dims": table["dims"], "seeds": [len(table["seeds"])] * len(table["dims"]),
                "cpu": {d: [c] for d, c in per_seed.items()}}
    scan = plan.figureS3_runs(scale) + plan.figureS3_follow_runs(scale)
    by_row = defaultdict(list)
    for run in scan:
        by_row[(run["param"], run["link"])].append(run)
    follow = plan.config["paper2"]["figureS3"].get("follow_links") or {}
    for (param, link), runs in by_row.items():
        prefix = "p2-sgd-follows-flow-trend" if link in follow.get(param, []) else "p2-s3-sgd-follows-flow"
        dims = sorted({r["d"] for r in runs})
        cpu = _cpu_per_d([r["path"] for r in runs], _run_d(KINDS["sgd_run"].path))
        flows = _cpu_per_d([r["flow_path"] for r in runs], _run_d(KINDS["reference_flow"].path))
        rows[f"{prefix}-{param}-{link}"] = {
            "dims": dims, "seeds": [sum(r["d"] == d for r in runs) for d in dims],
            "cpu": {d: [sum(cpu[d]) / len(cpu[d]) + (sum(flows[d]) / len(flows[d]) if flows.get(d) else 0.0)]
                    for d in cpu}}
    return rows


def _tolerance(row) -> float:
    """The number the row's s.e.(e∞) is judged against (decisive when s.e. <= tolerance/2)."""
    if row.id == "p1-gd-trend-averaged":
        from aimrepro.claims.paper1_gd import TREND_DECISIVE_SE
        return 2.0 * TREND_DECISIVE_SE
    found = TOLERANCE_NUMBER.findall(str(row.tolerance))
    return float(found[-1]) if found else math.nan


def analyse(row, source, budget) -> dict:
    per_d = [(int(d), float(m), float(s), int(n)) for d, m, s, n in PER_D.findall(row.note)
             if s not in ("nan",)]
    limit = LIMIT.search(row.note)
    out = {"id": row.id, "verdict": row.verdict, "dims": source["dims"], "seeds": source["seeds"],
           "measured_se": float(limit.group(2)) if limit else math.nan,
           "measured_limit": float(limit.group(1)) if limit else math.nan,
           "tolerance": _tolerance(row)}
    cpu = {d: sum(v) / len(v) for d, v in source["cpu"].items() if v}
    out["cpu_seconds"] = sum(cpu.get(d, math.nan) * n for d, n in zip(source["dims"], source["seeds"]))
    if len(per_d) < 2:
        out["note"] = "too few sizes with a spread to fit its law"
        return out
    spread = fit_power_law([d for d, *_ in per_d], [s * math.sqrt(n) for d, _, s, n in per_d],
                           weights=[n for *_, n in per_d])
    out["spread_law"] = spread.to_dict()
    out["predicted_se"] = extrapolation_se(source["dims"], source["seeds"], spread)
    if len(cpu) < 2:
        out["note"] = "too few sizes with a CPU time to fit the cost law: no design"
        return out
    cost = fit_power_law(list(cpu), list(cpu.values()))
    out["cost_law"] = cost.to_dict()
    target = 0.8 * out["tolerance"] / 2.0
    # never below the configured sizes: the smallest d of a row is where its regime starts
    # (r = rho d >= 20, the excess already ~1/d), not a cost to save
    smallest = min(source["dims"])
    candidates = sorted(d for d in set(source["dims"]) | {int(d * f) for d in source["dims"] for f in (1.5, 2.0)}
                        if d >= smallest)
    try:
        best = design_trend(candidates, spread, cost, target_se=target, budget=budget,
                            n_dims=(max(3, len(source["dims"]) - 1), len(source["dims"])))
        out["design"] = best.to_dict()
    except ValueError as err:
        out["design"] = {"error": str(err)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "results" / "referee")
    parser.add_argument("--scale", default="referee")
    parser.add_argument("--config", type=Path, default=REPO / "config.yaml")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "referee_design.json",
                        help="where the JSON goes (a pilot's laws, predicting a later design: "
                             "referee_design_pilot.json)")
    parser.add_argument("--pilot", type=Path, default=None,
                        help="a pilot's JSON (--out of a run on the pilot's tree): print the markdown "
                             "table of docs/benchmarks.md, the pilot's predicted s.e. beside the measured")
    parser.add_argument("--budget-cpu", type=float, default=900.0,
                        help="CPU seconds one row's design may spend (default 900)")
    args = parser.parse_args()
    config = yaml.safe_load(args.config.read_text())
    args.out = args.out.resolve()
    args.pilot = None if args.pilot is None else args.pilot.resolve()
    # result paths are relative to the repository that holds the tree (results/<scale>/...)
    os.chdir(args.results.resolve().parents[1])
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    validate_config(config, schema)
    check_config(config)
    plan = Plan(config)
    rows = {}
    for fragment in sorted((args.results / "claims").glob("*.tsv")):
        rows.update({row.id: row for row in read_claims(fragment)})
    sources = row_sources(plan, config, args.scale)
    report = [analyse(rows[row_id], source, args.budget_cpu) for row_id, source in sources.items()
              if row_id in rows]
    out = args.out
    out.write_text(json.dumps({"results": str(args.results), "scale": args.scale, "host": platform.node(),
                               "budget_cpu_per_row": args.budget_cpu, "rows": report}, indent=2) + "\n")
    print(f"{'row':44s} {'sizes':22s} {'seeds':16s} {'pred s.e.':>9s} {'meas s.e.':>9s} "
          f"{'tol/2':>7s} {'CPU s':>7s}  verdict")
    for r in report:
        print(f"{r['id']:44s} {str(r['dims']):22s} {str(r['seeds']):16s} "
              f"{r.get('predicted_se', math.nan):9.3g} {r['measured_se']:9.3g} {r['tolerance'] / 2:7.3g} "
              f"{r['cpu_seconds']:7.0f}  {r['verdict']}")
        design = r.get("design", {})
        if "dims" in design:
            print(f"{'  designed:':44s} {str(design['dims']):22s} {str(design['seeds']):16s} "
                  f"{design['predicted_se']:9.3g} {'':9s} {'':7s} {design['cpu_seconds']:7.0f}"
                  + ("" if design["reaches_target"] else "  (budget short of the target)"))
    print(f"wrote {out}")
    if args.pilot is not None:
        print()
        print(markdown_table(report, json.loads(args.pilot.read_text())["rows"]))


def markdown_table(report: list[dict], pilot_rows: list[dict]) -> str:
    """The "Referee design" table: each trend row's design, the pilot's predicted s.e., the measured one."""
    predicted = {r["id"]: r.get("predicted_se", math.nan) for r in pilot_rows}
    lines = ["| row | sizes d | runs per d | predicted s.e. (pilot) | measured s.e. | tolerance/2 | CPU s | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for r in report:
        lines.append(f"| `{r['id']}` | {', '.join(map(str, r['dims']))} | {', '.join(map(str, r['seeds']))} | "
                     f"{predicted.get(r['id'], math.nan):.2g} | {r['measured_se']:.2g} | {r['tolerance'] / 2:.2g} | "
                     f"{r['cpu_seconds']:.0f} | {r['verdict']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
