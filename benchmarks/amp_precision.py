"""GAMP-RIE in float32 against float64 on the quick scale's own runs: statuses, iterations, errors, CPU.

Run:  python benchmarks/amp_precision.py [--config config.yaml] [--scale quick] [--limit N]

Every AMP run the plan of the config has at the scale (the markers of
Figures 1, 2 and S2 and the softmax T = 3 trend: ``Plan.amp_curves``,
``Plan.amp_trends``) is made again outside Snakemake: its dataset exactly as
the pipeline samples it (same base seed and parameters, so the same bits),
then :func:`aimrepro.paper1.amp.run_on_dataset` with the config's solver
settings, once with ``backend.dtype`` float64 and once with float32 (the
two GEMMs in single precision).  One BLAS thread, CPU time.

Reported per run and summed: whether the status changed (a run that no
longer settles is no longer a usable marker), the iterations, the final
error and the CPU time; per condition (the run without its seed) the
float32 − float64 difference of the mean error against the seed spread
/ √n.  Writes ``benchmarks/results/amp_precision.json``; what it decided:
``docs/benchmarks.md``, "Single precision".
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "lib"))

from aimrepro.config import validate_config  # noqa: E402
from aimrepro.paper1.amp import USABLE_STATUSES, run_on_dataset  # noqa: E402
from aimrepro.paper1.data import DatasetSpec, parse_link_token, sample_dataset  # noqa: E402
from aimrepro_workflow import paths  # noqa: E402
from aimrepro_workflow.plans import Plan  # noqa: E402


def planned_runs(config: dict, scale: str) -> list[str]:
    plan = Plan(config)
    runs = [p for curve in plan.amp_curves(scale) for per_alpha in curve["runs"] for p in per_alpha]
    for trend in plan.amp_trends(scale):
        for point in trend.get("points", []):
            runs += list(point.get("runs", []))
    return sorted(set(runs))


def dataset_for(run: dict, config: dict, scale: str):
    data = paths.dataset_of(run)
    wc = paths.DATASET.parse(data)
    link, beta = parse_link_token(wc["link"])
    spec = DatasetSpec(link=link, T=int(wc["T"]), rho=float(wc["rho"]), d=int(wc["d"]), alpha=float(wc["alpha"]),
                       replicate=int(wc["seed"]), n_test=int(config["scales"][scale]["data"]["test_samples"]), beta=beta)
    return sample_dataset(spec, config["seed"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "config.yaml")
    parser.add_argument("--scale", default="quick")
    parser.add_argument("--limit", type=int, default=None, help="the first N runs only (a smoke run)")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "results" / "amp_precision.json")
    args = parser.parse_args()
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    config = validate_config(yaml.safe_load(args.config.read_text()), schema)
    solver = config["paper1"]["amp_solver"]
    runs = planned_runs(config, args.scale)[:args.limit]
    load_start = os.getloadavg()
    records = []
    for i, path in enumerate(runs):
        run = paths.AMP_RUN.parse(path)
        dataset = dataset_for(run, config, args.scale)
        channel = run["channel"].split("_beta")[0]
        record = {"path": path}
        for dtype in ("float64", "float32"):
            start = time.process_time()
            result = run_on_dataset(dataset, channel, damping=solver["damping"], tol=solver["tol"],
                                    max_iter=solver["max_iter"], backend={"name": "numpy", "dtype": dtype}).result
            record[dtype] = {"status": result.status, "iterations": result.iterations, "error": result.error,
                             "cpu_seconds": time.process_time() - start}
        records.append(record)
        print(f"{i + 1}/{len(runs)} {path}: " + ", ".join(
            f"{dtype} {record[dtype]['status']} {record[dtype]['iterations']} it, error {record[dtype]['error']:.6g}"
            for dtype in ("float64", "float32")), flush=True)

    changed = [r for r in records if r["float64"]["status"] != r["float32"]["status"]]
    lost = [r for r in changed if r["float64"]["status"] in USABLE_STATUSES
            and r["float32"]["status"] not in USABLE_STATUSES]
    cpu = {dtype: sum(r[dtype]["cpu_seconds"] for r in records) for dtype in ("float64", "float32")}
    iterations = {dtype: sum(r[dtype]["iterations"] for r in records) for dtype in ("float64", "float32")}
    conditions = defaultdict(list)
    for r in records:
        if r["float64"]["status"] in USABLE_STATUSES and r["float32"]["status"] in USABLE_STATUSES:
            conditions[r["path"].rsplit("_seed", 1)[0]].append(r)
    moved = []
    for condition, group in sorted(conditions.items()):
        a = np.array([r["float64"]["error"] for r in group])
        b = np.array([r["float32"]["error"] for r in group])
        sem = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else math.nan
        moved.append({"condition": condition, "n": int(a.size), "float64_mean": float(a.mean()), "float64_sem": sem,
                      "delta": float(b.mean() - a.mean()),
                      "delta_over_sem": abs(float(b.mean() - a.mean())) / sem if sem and sem > 0 else math.nan})
    summary = {"runs": len(records), "status_changed": len(changed), "usable_lost": len(lost),
               "cpu_seconds": cpu, "iterations": iterations,
               "conditions_beyond_1_sem": sum(1 for m in moved if m["delta_over_sem"] > 1.0),
               "largest_delta_over_sem": max((m["delta_over_sem"] for m in moved if math.isfinite(m["delta_over_sem"])),
                                             default=math.nan)}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"benchmark": "amp_precision", "scale": args.scale, "config": str(args.config),
                                       "load_average_at_start": load_start, "load_average_at_end": os.getloadavg(),
                                       "summary": summary, "changed": changed, "conditions": moved,
                                       "runs": records}, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    for r in changed:
        print(f"status changed: {r['path']}: {r['float64']['status']} ({r['float64']['iterations']} it) -> "
              f"{r['float32']['status']} ({r['float32']['iterations']} it)")


if __name__ == "__main__":
    main()
