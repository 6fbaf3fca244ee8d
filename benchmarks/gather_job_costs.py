"""Measured job costs from a pipeline run's sidecars, and the cost model's fit to them.

Every sidecar records its job's rule, wildcards, ``cpu_seconds``,
``peak_rss_bytes`` and ``wall_seconds`` (aimrepro.records.sidecars), and in its
diagnostics the length of the job's main loop where the data decide it (SGD
steps, AMP iterations, right-hand sides of a flow or of a flow ensemble).  This
script collects them into one JSON list, the calibration set of the cost model
(workflow/lib/aimrepro_workflow/costs.py), and with ``--fit``

* fits the model's overhead prices and start-ups to the set (non-negative
  least squares on the relative error, the machine rates held at their
  benchmarked values and a few prices at their own, ``HELD``) and prints them
  as they are written in prices.py;
* prints the typical loop lengths (``TYPICAL``) the set shows;
* prints, per rule, measured against predicted CPU seconds;

and with ``--held-out`` fits on every other job of each rule and tests the
fit on the rest.

CPU seconds, not wall time: the reference machine was shared (load average
about 20 on 2 cores while the quick set was measured), which stretches wall
time many times over but CPU time only a little.

Usage, from the repository root::

    .venv/bin/python benchmarks/gather_job_costs.py RUN_DIR [RUN_DIR ...] \\
        --out benchmarks/results/quick_jobs.json [--fit] [--scale quick]

RUN_DIR is a working directory of a pipeline run (with results/ and figures/).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "lib"))

from aimrepro.config import validate_config  # noqa: E402
from aimrepro_workflow import costs  # noqa: E402

#: Machine rates, as benchmarked (bench_costs.py); not fitted.
MACHINE_RATES = ("flop", "normal", "eigh", "byte_io", "element", "small_matmul", "flop32", "element32",
                 "small_matmul32")
#: Prices not fitted either: the moment hierarchy's, from bench_moments.py (the quick jobs are
#: too small to separate them from the start-up); a summary's per-file read; the Fisher table's
#: factor on the package's own calibration and the token SE point (their rules' start-ups stay
#: with them, HELD_STARTUPS); the sampled g_out's proposal (no quick job draws one).
HELD = ("moment_letter_build", "moment_term", "moment_rhs", "input_file", "fisher_table_second",
        "tokens_se_point", "tokens_gout_proposal")
HELD_STARTUPS = ("fisher_table", "tokens_se_curve", "tokens_amp_run")
#: The fitted units: per-call overheads.
FITTED = [unit for unit in costs.PRICES if unit not in MACHINE_RATES + HELD]


def gather(run_dir: Path, scale: str | None) -> list[dict]:
    """One record per sidecar with CPU time under ``run_dir``'s results/ and figures/."""
    records = []
    for top in ("results", "figures"):
        for side in sorted((run_dir / top).rglob("*.json")):
            try:
                sidecar = json.loads(side.read_text())
            except (OSError, ValueError):
                continue
            if not isinstance(sidecar, dict) or sidecar.get("cpu_seconds") is None:
                continue
            wildcards = dict(sidecar["params"].get("wildcards", {}))
            rule = sidecar["rule"]
            wildcards.setdefault("scale", side.relative_to(run_dir).parts[1])
            if scale and wildcards["scale"] != scale:
                continue
            output_bytes = sum((run_dir / path).stat().st_size for path in sidecar["outputs"]
                               if (run_dir / path).exists())
            records.append({
                "rule": rule, "wildcards": wildcards,
                "cpu_seconds": sidecar["cpu_seconds"], "wall_seconds": sidecar["wall_seconds"],
                "peak_rss_bytes": sidecar["peak_rss_bytes"],
                "loop": costs.loop_from_diagnostics(rule, sidecar.get("diagnostics", {})),
                "output_bytes": output_bytes,
                "sidecar_bytes": side.stat().st_size,
            })
    return records


def _config(run_dir: Path) -> dict:
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return validate_config(yaml.safe_load((run_dir / "config.yaml").read_text()), schema)


def solve(model: costs.CostModel, records: list[dict]) -> dict[str, float]:
    """The fitted start-ups (``startup:<name>``) and overheads: non-negative least squares on
    the relative error; a column no record uses comes out 0."""
    import numpy as np
    from scipy.optimize import nnls

    rows, targets = [], []
    startups = sorted({model.units(r["rule"], r["wildcards"])[0] for r in records}
                      - set(HELD_STARTUPS))
    columns = [f"startup:{name}" for name in startups] + FITTED
    for record in records:
        startup, units = model.units(record["rule"], record["wildcards"], loop=record["loop"])
        known = sum(amount * costs.PRICES[unit] for unit, amount in units.items()
                    if unit != "startup" and unit not in FITTED)
        row = np.zeros(len(columns))
        if startup in HELD_STARTUPS:
            known += costs.STARTUP[startup]
        else:
            row[columns.index(f"startup:{startup}")] = 1.0
        for unit, amount in units.items():
            if unit in FITTED:
                row[columns.index(unit)] = amount
        measured = record["cpu_seconds"]
        weight = 1.0 / measured
        rows.append(row * weight)
        targets.append((measured - known) * weight)
    solution, _ = nnls(np.array(rows), np.array(targets), maxiter=100 * len(columns))
    return dict(zip(columns, (float(value) for value in solution)))


def _fitted_columns(model: costs.CostModel, record: dict) -> set[str]:
    """The fitted columns a record's prediction uses."""
    startup, units = model.units(record["rule"], record["wildcards"], loop=record["loop"])
    used = {unit for unit, amount in units.items() if amount and unit in FITTED}
    return used | ({f"startup:{startup}"} if startup not in HELD_STARTUPS else set())


def held_out(model: costs.CostModel, records: list[dict]) -> None:
    """Fit on every other job of each rule, predict the rest (loops as measured); a job using
    a price or start-up that no training job uses is left out."""
    by_rule = defaultdict(list)
    for record in records:
        by_rule[record["rule"]].append(record)
    train = [record for jobs in by_rule.values() for record in jobs[0::2]]
    test = [record for jobs in by_rule.values() for record in jobs[1::2]]
    trained = set().union(*(_fitted_columns(model, record) for record in train))
    tested = [record for record in test if _fitted_columns(model, record) <= trained]
    saved = dict(costs.PRICES), dict(costs.STARTUP)
    try:
        for column, value in solve(model, train).items():
            if column.startswith("startup:"):
                costs.STARTUP[column.removeprefix("startup:")] = value
            else:
                costs.PRICES[column] = value
        ratios = sorted(((model.job(r["rule"], r["wildcards"], loop=r["loop"]).cpu_seconds
                          / r["cpu_seconds"], r) for r in tested),
                        key=lambda pair: abs(math.log(max(pair[0], 1e-12))))
    finally:
        costs.PRICES.update(saved[0])
        costs.STARTUP.update(saved[1])
    within = sum(1 / 2 <= ratio <= 2 for ratio, _ in ratios)
    print(f"\n# held out: fitted on {len(train)} jobs (every other job of each rule), "
          f"tested on {len(tested)} ({len(test) - len(tested)} left out: a price no training "
          f"job has)\n    within a factor 2: {within}; 90 % within "
          f"{math.exp(abs(math.log(max(ratios[int(0.9 * len(ratios))][0], 1e-12)))):.3g}; worst:")
    for ratio, record in ratios[-5:][::-1]:
        print(f"    {ratio:.3g}  {record['rule']} {record['wildcards']} "
              f"(measured {record['cpu_seconds']:.3g} s)")


def fit(model: costs.CostModel, records: list[dict]) -> None:
    """Print fitted overheads, typical loops and measured/predicted per rule."""
    print("# fitted (paste into prices.py):")
    for column, value in solve(model, records).items():
        print(f"    {column}: {value:.4g}")
    print("\n# typical loop lengths:")
    loops = defaultdict(list)
    for record in records:
        if record["loop"] is None:
            continue
        w, rule = record["wildcards"], record["rule"]
        if rule == "amp_run":
            loops[f"amp_iterations_{w['channel'].split('_beta')[0]}"].append(record["loop"])
        elif rule in ("sgd_run", "untied_sgd_run") and w.get("stop", "none") != "none":
            param = "untied" if rule == "untied_sgd_run" else w["param"]
            steps = costs.R.sgd_steps(param=param, d=int(w["d"]), lr=float(w["lr"]),
                                      horizon=float(w["horizon"]))
            loops[f"{rule}_stop_fraction"].append(record["loop"] / steps)
        elif rule == "reference_flow":
            loops[f"{w['param']}_flow_rhs"].append(record["loop"])
        elif rule == "flow_ensemble":  # per replicate, against the horizon: fit a + b × horizon
            loops[f"ensemble_rhs_{w['flow']}_t{w['horizon']}"].append(record["loop"] / int(w["n"]))
        elif rule == "untied_theory":
            stops = w.get("stop", "none") != "none"
            loops[f"untied_{w['kind']}_rhs{'_stop' if stops else ''}"].append(record["loop"])
    for name, values in sorted(loops.items()):
        print(f"    {name}: median {statistics.median(values):.4g}, mean "
              f"{statistics.fmean(values):.4g}, range {min(values):.3g}-{max(values):.3g} "
              f"({len(values)} jobs)")


def compare(model: costs.CostModel, records: list[dict]) -> None:
    """Per rule: jobs, measured and predicted CPU (loop as measured, and expected), worst ratio."""
    by_rule = defaultdict(list)
    for record in records:
        given = model.job(record["rule"], record["wildcards"], loop=record["loop"]).cpu_seconds
        expected = model.job(record["rule"], record["wildcards"]).cpu_seconds
        memory = model.job(record["rule"], record["wildcards"]).memory_bytes
        by_rule[costs._group(record["rule"])].append(
            (record["cpu_seconds"], given, expected, record["peak_rss_bytes"], memory))
    print(f"\n{'rule':20s} {'jobs':>5s} {'measured':>10s} {'given loop':>11s} {'expected':>10s} "
          f"{'worst ratio':>11s} {'rss/estimate':>13s}")
    for rule, rows in sorted(by_rule.items()):
        measured = sum(r[0] for r in rows)
        given = sum(r[1] for r in rows)
        expected = sum(r[2] for r in rows)
        worst = max(rows, key=lambda r: abs(math.log(r[1] / r[0])))
        rss = [r[3] / r[4] for r in rows]
        print(f"{rule:20s} {len(rows):5d} {measured:10.1f} {given:11.1f} {expected:10.1f} "
              f"{worst[1] / worst[0]:11.2f} {min(rss):6.2f}-{max(rss):5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--out", type=Path, help="write the records here (JSON)")
    parser.add_argument("--scale", choices=("quick", "paper"), default=None)
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--held-out", action="store_true",
                        help="fit on every other job of each rule, test on the rest")
    args = parser.parse_args()
    records = [record for run_dir in args.run_dirs for record in gather(run_dir, args.scale)]
    print(f"{len(records)} jobs with CPU times", file=sys.stderr)
    model = costs.CostModel(_config(args.run_dirs[0]))
    if args.out:
        args.out.write_text(json.dumps({
            "description": "measured jobs of a pipeline run: rule, wildcards, CPU seconds, wall "
                           "seconds, peak RSS, main-loop length, output bytes "
                           "(benchmarks/gather_job_costs.py)",
            "jobs": records}, indent=1) + "\n")
    if args.fit:
        fit(model, records)
    if args.held_out:
        held_out(model, records)
    compare(model, records)


if __name__ == "__main__":
    main()
