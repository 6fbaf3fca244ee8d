"""The jobs a configuration plans, sized before any of them runs.

:func:`planned_jobs` lists, for one scale, the size-bearing jobs the workflow
plans from a validated config (the rules of ``workflow/rules/*.smk``): for each,
the :mod:`aimrepro.resources` estimate to call, its parameters and the config
key that sets each parameter.  Of jobs whose memory grows with one swept value
(the α of an AMP or GD curve, the replicate seed) only the largest is listed:
α the curve's last point, seeds not at all (they do not change a job's size).
Jobs that only read results (summaries, figures, claims) are small and not listed.

:func:`check_job_sizes` estimates every listed job of both scales and refuses
a config whose largest job needs more than ``limits.job_memory_gb``, naming the
key whose value makes it large (:func:`aimrepro.resources.driver`); it also
refuses width ratios of SE curves outside the range on which the state
evolution is validated.  ``configcheck.validate_config`` calls it after the
schema: the config has its defaults filled in and every value its type.

Pure Python on the config mapping (no numpy): it runs once per Snakemake
invocation, in a few milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aimrepro import resources as R
from aimrepro.config import SCALES, configured_scales, source_key

__all__ = ["DEFAULT_JOB_MEMORY_GB", "PlannedJob", "check_job_sizes", "planned_jobs"]

#: ``limits.job_memory_gb`` when the config does not set it (the schema's default).
DEFAULT_JOB_MEMORY_GB = 64.0

#: SE width ratios (``spectra.RHO_MIN``, ``RHO_MAX``), repeated here so that the check
#: need not import numpy; a unit test keeps the two equal.
SE_RHO_RANGE = (1e-4, 1e14)



@dataclass(frozen=True)
class PlannedJob:
    """One planned job: which rule, how to estimate it, from which config keys.

    Attributes
    ----------
    rule : the workflow rule that runs it (``aim_dataset``, ``gd_run``, ...)
    estimate : the :mod:`aimrepro.resources` function of its kind
    params : keyword arguments of ``estimate``
    keys : for each size parameter, the key path of the config value that sets it
    """

    rule: str
    estimate: Callable[..., R.Estimate]
    params: dict[str, Any]
    keys: dict[str, str] = field(default_factory=dict)

    def size(self) -> R.Estimate:
        return self.estimate(**self.params)


# ---------------------------------------------------------------------------
# planning


def _grid_point(grid: Mapping, index: int) -> float:
    """Point ``index`` of an ``indexed_grid`` (``grids.grid_values``, without numpy)."""
    lo, hi, n = float(grid["lo"]), float(grid["hi"]), int(grid["n"])
    if n == 1:
        return lo
    if grid["spacing"] == "log":
        return lo * (hi / lo) ** (index / (n - 1))
    return lo + (hi - lo) * index / (n - 1)


def _strided(first: int, last: int, stride: int) -> list[int]:
    """``common.smk``'s strided_indices: every stride-th index from last down to first."""
    return sorted(range(int(last), int(first) - 1, -int(stride)))


def _paper1_jobs(config: Mapping, scale: str) -> list[PlannedJob]:
    preset = config["scales"][scale]
    points = preset["se_points"]
    p1 = config["paper1"]
    jobs = []
    s = f"scales.{scale}"
    figure1, figure2 = p1["figure1"], p1["figure2"]
    if figure1.get("channels"):
        jobs.append(PlannedJob("se_curve", R.se_curve_job, {"channel": "hardmax", "n_points": points["hardmax"]},
                               {"n_points": f"{s}.se_points.hardmax"}))
        if figure1["right"].get("small_width_limit", True):
            jobs.append(PlannedJob("se_curve", R.se_curve_job,
                                   {"channel": "hardmax", "n_points": points["small_width"]},
                                   {"n_points": f"{s}.se_points.small_width"}))
    jobs.append(PlannedJob("se_curve", R.se_curve_job, {"channel": "softmax", "n_points": points["softmax"]},
                           {"n_points": f"{s}.se_points.softmax"}))

    n_test = preset.get("data", {}).get("test_samples", 1000)
    data_key = f"{s}.data.test_samples"
    max_iter = p1.get("amp_solver", {}).get("max_iter", 500)
    amp = preset.get("amp", {})

    def dataset_and_amp(link, T, T_key, rho, rho_key, size, size_key, alpha, alpha_key):
        dataset = {"T": T, "d": size["d"], "rho": rho, "alpha": alpha, "n_test": n_test}
        keys = {"T": T_key, "d": f"{size_key}.d", "rho": rho_key, "alpha": alpha_key, "n_test": data_key}
        return [PlannedJob("aim_dataset", R.dataset_job, dataset, keys),
                PlannedJob("amp_run", R.amp_job, {**dataset, "max_iter": max_iter, "channel": link},
                           {**keys, "max_iter": "paper1.amp_solver.max_iter"})]

    plan = figure1.get("amp")
    if plan and amp.get("hardmax"):
        last = plan["last_index"]
        alpha = _grid_point(plan["alpha"], min(last, plan["alpha"]["n"] - 1))
        for i, entry in enumerate(plan["first_index"]):
            jobs += dataset_and_amp("hardmax", figure1["T"], "paper1.figure1.T", entry["rho"],
                                    f"paper1.figure1.amp.first_index[{i}].rho", amp["hardmax"],
                                    f"{s}.amp.hardmax", alpha, "paper1.figure1.amp.alpha.hi")
    right = figure2["right"]
    plan = right.get("amp")
    if plan and amp.get("softmax"):
        for i, run in enumerate(plan["runs"]):
            last = min(run.get("last_index", run["alpha"]["n"] - 1), run["alpha"]["n"] - 1)
            jobs += dataset_and_amp("softmax", run["T"], f"paper1.figure2.right.amp.runs[{i}].T",
                                    right["rho"], "paper1.figure2.right.rho", amp["softmax"],
                                    f"{s}.amp.softmax", _grid_point(run["alpha"], last),
                                    f"paper1.figure2.right.amp.runs[{i}].alpha.hi")

    plan, size = right.get("gd"), preset.get("gd")
    if plan and size:
        grid = plan["alpha"]
        picked = [_grid_point(grid, i) for i in _strided(0, grid["n"] - 1, size.get("alpha_stride", 1))]
        for i, T in enumerate(plan["Ts"]):
            measurements = T * T + T - 2
            alphas = [a for a in picked if size.get("alphaT_max") is None
                      or a * measurements <= size["alphaT_max"]]
            if not alphas:
                continue
            keys = {"T": f"paper1.figure2.right.gd.Ts[{i}]", "d": f"{s}.gd.d",
                    "rho": "paper1.figure2.right.rho", "alpha": "paper1.figure2.right.gd.alpha.hi",
                    "n_test": data_key}
            dataset = {"T": T, "d": size["d"], "rho": right["rho"], "alpha": max(alphas), "n_test": n_test}
            jobs.append(PlannedJob("aim_dataset", R.dataset_job, dataset, keys))
            # every alpha: GD's working set is chunked over the students (gd.replica_chunk),
            # so a smaller alpha can hold more students at once and need more memory
            for alpha in alphas:
                jobs.append(PlannedJob(
                    "gd_run", R.gd_job, {**dataset, "alpha": alpha, "inits": size["inits"],
                                         "steps": plan["optimizer"]["steps"]},
                    {**keys, "inits": f"{s}.gd.inits", "steps": "paper1.figure2.right.gd.optimizer.steps"}))

    # the claims' finite-size trends (paper1.trends, sizes in scales.*.trends): their largest d
    trend_sizes = preset.get("trends", {})
    for i, spec in enumerate(p1.get("trends", {}).get("amp", [])):
        size = trend_sizes.get("amp", {}).get(spec["name"])
        if size:
            size_key = f"{s}.trends.amp.{spec['name']}"
            jobs += dataset_and_amp(spec["channel"], spec["T"], f"paper1.trends.amp[{i}].T", spec["rho"],
                                    f"paper1.trends.amp[{i}].rho", {"d": max(size["dims"])},
                                    size_key, spec["alpha"], f"paper1.trends.amp[{i}].alpha")
    spec, size = p1.get("trends", {}).get("gd"), trend_sizes.get("gd")
    if spec and size and plan:
        alpha = spec["alphaT"] / (spec["T"] * spec["T"] + spec["T"] - 2)
        keys = {"T": "paper1.trends.gd.T", "d": f"{s}.trends.gd.dims", "rho": "paper1.figure2.right.rho",
                "alpha": "paper1.trends.gd.alphaT", "n_test": data_key}
        dataset = {"T": spec["T"], "d": max(size["dims"]), "rho": right["rho"], "alpha": alpha,
                   "n_test": n_test}
        jobs.append(PlannedJob("aim_dataset", R.dataset_job, dataset, keys))
        jobs.append(PlannedJob(
            "gd_run", R.gd_job, {**dataset, "inits": size["inits"], "steps": plan["optimizer"]["steps"]},
            {**keys, "inits": f"{s}.trends.gd.inits", "steps": "paper1.figure2.right.gd.optimizer.steps"}))
    return jobs


def _sgd(rule, *, param, T, d, rho, batch, lr, horizon, records, keys, student_rho=None):
    params = {"param": param, "T": T, "d": d, "rho": rho, "batch": batch, "lr": lr,
              "horizon": horizon, "records": records}
    if student_rho is not None:
        params["student_rho"] = student_rho
    return PlannedJob(rule, R.sgd_job, params, keys)


def _paper2_jobs(config: Mapping, scale: str) -> list[PlannedJob]:
    p2 = config.get("paper2")
    sizes = config["scales"][scale].get("paper2")
    if not p2 or not sizes:
        return []
    s = f"scales.{scale}.paper2"
    jobs = []

    science, size = p2.get("figure2"), sizes.get("figure2")
    if science and size:
        for param in ("tied", "direct"):
            # one sample axis: the direct runs go to a quarter of the tied horizon (plans.py)
            horizon = science["horizon"] * (1.0 if param == "tied" else 0.25)
            keys = {"T": "paper2.figure2.T", "d": f"{s}.figure2.d", "rho": "paper2.figure2.rho",
                    "batch": f"{s}.figure2.batch", "lr": f"{s}.figure2.lr",
                    "horizon": "paper2.figure2.horizon", "records": f"{s}.figure2.records"}
            jobs.append(_sgd("sgd_run", param=param, T=science["T"], d=size["d"], rho=science["rho"],
                             batch=size["batch"], lr=size["lr"], horizon=horizon,
                             records=size["records"], keys=keys))
            jobs.append(_reference_flow(param, size["d"], science["rho"], size["records"],
                                        {"d": f"{s}.figure2.d", "rho": "paper2.figure2.rho",
                                         "records": f"{s}.figure2.records"}))
        for i, d in enumerate(size.get("flow_dims", [])):
            jobs.append(_reference_flow("tied", d, science["rho"], size["records"],
                                        {"d": f"{s}.figure2.flow_dims[{i}]",
                                         "rho": "paper2.figure2.rho",
                                         "records": f"{s}.figure2.records"}, rule="flow_ensemble"))

    science, size = p2.get("strong_recovery"), sizes.get("strong_recovery")
    if science and size:
        for param in ("tied", "direct"):
            jobs.append(_reference_flow(param, size["d"], science.get("rho", 0.5), size["records"],
                                        {"d": f"{s}.strong_recovery.d",
                                         "rho": "paper2.strong_recovery.rho",
                                         "records": f"{s}.strong_recovery.records"},
                                        rule="flow_ensemble"))

    science, size = p2.get("figureS3"), sizes.get("figureS3")
    if science and size:
        for param in ("tied", "direct"):
            for i, d in enumerate(size["dims"][param]):
                lr = size["batch"] * science["eta"] / (d * math.log(d))
                keys = {"T": "paper2.figureS3.T", "d": f"{s}.figureS3.dims.{param}[{i}]",
                        "rho": "paper2.figureS3.rho", "batch": f"{s}.figureS3.batch",
                        "lr": "paper2.figureS3.eta", "horizon": f"paper2.figureS3.horizon.{param}",
                        "records": f"{s}.figureS3.records"}
                jobs.append(_sgd("sgd_run", param=param, T=science["T"], d=d, rho=science["rho"],
                                 batch=size["batch"], lr=lr, horizon=science["horizon"][param],
                                 records=size["records"], keys=keys))
                jobs.append(_reference_flow(param, d, science["rho"], size["records"],
                                            {k: keys[k] for k in ("d", "rho", "records")}))
            trend = size.get("flow_trend", {}).get("dims", {}).get(param, [])
            for i, d in enumerate(trend):
                jobs.append(_reference_flow(param, d, science["rho"], size["records"],
                                            {"d": f"{s}.figureS3.flow_trend.dims.{param}[{i}]",
                                             "rho": "paper2.figureS3.rho",
                                             "records": f"{s}.figureS3.records"},
                                            rule="flow_ensemble"))

    science, size = p2.get("figureS1"), sizes.get("figureS1")
    if science and size:
        for i, d in enumerate(size["dims"]):
            jobs.append(PlannedJob(
                "theorem1", R.theorem1_job,
                {"T": science["T"], "d": d, "rho": science["rho"], "n_samples": size["n_samples"],
                 "n_links": len(science["links"])},
                {"T": "paper2.figureS1.T", "d": f"{s}.figureS1.dims[{i}]", "rho": "paper2.figureS1.rho",
                 "n_samples": f"{s}.figureS1.n_samples"}))

    science, size = p2.get("figureS2"), sizes.get("figureS2")
    if science and size:
        n_grid = size["n_grid"] + 1 - size["n_grid"] % 2  # made odd, as dynamics.smk does
        jobs.append(PlannedJob("landscape", R.landscape_job, {"n_grid": n_grid},
                               {"n_grid": f"{s}.figureS2.n_grid"}))
    jobs += _moment_jobs(p2, sizes, s)
    jobs += _untied_jobs(p2, sizes, s)
    return jobs


def _reference_flow(param, d, rho, records, keys, rule="reference_flow") -> PlannedJob:
    """One flow of rule ``reference_flow``, or one replicate of a ``flow_ensemble`` (the same arrays)."""
    if param == "tied":
        return PlannedJob(rule, R.tied_flow_job, {"d": d, "rho": rho, "records": records}, keys)
    return PlannedJob(rule, R.direct_flow_job, {"d": d, "rho": rho}, {k: keys[k] for k in ("d", "rho")})


def _moment_jobs(p2: Mapping, sizes: Mapping, s: str) -> list[PlannedJob]:
    if not all(name in p2 and name in sizes for name in ("figure1", "figure4", "figureS6")):
        return []
    jobs = []
    for figure, link, T in (("figure1", "softmax", p2["figure1"].get("T", 2)), ("figure4", "linear", 1)):
        science, size = p2[figure], sizes[figure]
        keys = {"d": f"{s}.{figure}.d", "rho": f"paper2.{figure}.rho",
                "batch": f"{s}.{figure}.batch", "lr": f"{s}.{figure}.lr",
                "horizon": f"paper2.{figure}.horizon", "records": f"{s}.{figure}.records"}
        if figure == "figure1":
            keys["T"] = "paper2.figure1.T"
        jobs.append(_sgd("sgd_run", param="tied", T=T, d=size["d"], rho=science["rho"], batch=size["batch"],
                         lr=size["lr"], horizon=science["horizon"], records=size["records"], keys=keys))
        common = {"d": size["d"], "rho": science["rho"], "records": size["records"]}
        common_keys = {k: keys[k] for k in ("d", "rho", "records")}
        if figure == "figure1":
            jobs.append(PlannedJob("reference_flow", R.tied_flow_job, common, common_keys))
        else:
            jobs.append(PlannedJob("riccati_flow", R.riccati_job, common, common_keys))
        jobs.append(PlannedJob("moment_truncations", R.moment_truncations_job,
                               {**common, "max_order": max(science["orders"])},
                               {**common_keys, "max_order": f"paper2.{figure}.orders"}))
    science, size = p2["figureS6"], sizes["figureS6"]
    jobs.append(PlannedJob("truncation_error", R.truncation_error_job,
                           {"d": size["d"], "rho": science["rho"], "records": size["records"] + 1,
                            "max_order": size["max_order"]},
                           {"d": f"{s}.figureS6.d", "rho": "paper2.figureS6.rho",
                            "records": f"{s}.figureS6.records", "max_order": f"{s}.figureS6.max_order"}))
    return jobs


def _untied_jobs(p2: Mapping, sizes: Mapping, s: str) -> list[PlannedJob]:
    names = ("figure3", "figureS4", "figureS5")
    if not all(name in p2 and name in sizes for name in names) or "untied_flow" not in sizes:
        return []
    method = sizes["untied_flow"]["method"]
    jobs = []
    for figure in names:
        science, size = p2[figure], sizes[figure]
        dims = [size["d"]] if figure == "figure3" else size["dims"]
        fast = size.get("fast_records", 0)
        for i, d in enumerate(dims):
            d_key = f"{s}.{figure}.d" if figure == "figure3" else f"{s}.{figure}.dims[{i}]"
            # records on the slow and the fast time: name the larger count
            records_key = f"{s}.{figure}.fast_records" if fast > size["records"] \
                else f"{s}.{figure}.records"
            keys = {"T": f"paper2.{figure}.T", "d": d_key, "rho": f"paper2.{figure}.rho",
                    "batch": f"{s}.{figure}.batch", "horizon": f"paper2.{figure}.horizon",
                    "records": records_key}
            links = science["links"] if figure == "figure3" else [science["link"]]
            for link in links:
                lr = size["lr"].get(link) if figure == "figure3" else size["lr"]
                if lr is None:
                    continue
                lr_key = f"{s}.{figure}.lr.{link}" if figure == "figure3" else f"{s}.{figure}.lr"
                jobs.append(_sgd("untied_sgd_run", param="untied", T=science.get("T", 1), d=d,
                                 rho=science["rho"], batch=size["batch"], lr=lr,
                                 horizon=science["horizon"], records=size["records"] + fast,
                                 keys={**keys, "lr": lr_key}))
            flow = {"d": d, "rho": science["rho"], "records": size["records"] + fast}
            flow_keys = {k: keys[k] for k in ("d", "rho", "records")}
            jobs.append(PlannedJob("untied_theory", R.untied_flow_job, {**flow, "method": method},
                                   {**flow_keys, "method": f"{s}.untied_flow.method"}))
            if figure == "figureS4" and d == max(dims):  # the slaved limit, from the largest d
                jobs.append(PlannedJob("untied_theory", R.untied_flow_job, {**flow, "method": "RK45"},
                                       flow_keys))
    jobs.append(PlannedJob("untied_fast_states", R.fast_states_job, {"n_grid": sizes["figureS5"]["n_grid"]},
                           {"n_grid": f"{s}.figureS5.n_grid"}))
    return jobs


def planned_jobs(config: Mapping, scale: str) -> list[PlannedJob]:
    """The size-bearing jobs of ``scale`` (see the module notes), from a schema-valid config."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    return _paper1_jobs(config, scale) + _paper2_jobs(config, scale)


# ---------------------------------------------------------------------------
# the check


def _value_at(config: Mapping, path: str) -> Any:
    """The config value at a key path ``a.b[0].c``."""
    node: Any = config
    for part in path.replace("]", "").replace("[", ".").split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _se_rho_problem(config: Mapping) -> str | None:
    lo, hi = SE_RHO_RANGE
    p1 = config["paper1"]
    paths = [f"paper1.figure1.left.rhos[{i}]" for i in range(len(p1["figure1"]["left"]["rhos"]))]
    paths += [f"paper1.figure1.right.rhos[{i}]" for i in range(len(p1["figure1"]["right"]["rhos"]))]
    paths += [f"paper1.figure2.left.rhos[{i}]" for i in range(len(p1["figure2"]["left"]["rhos"]))]
    paths.append("paper1.figure2.right.rho")
    amp = p1["figure1"].get("amp")
    if amp:
        paths += [f"paper1.figure1.amp.first_index[{i}].rho" for i in range(len(amp["first_index"]))]
    for path in paths:
        rho = _value_at(config, path)
        if not lo <= rho <= hi:
            return (f"invalid config: {path} = {_show(rho)}; allowed: a number in [{lo:g}, {hi:g}] "
                    f"(the width ratios on which the state evolution is validated)")
    return None


def check_job_sizes(config: Mapping) -> str | None:
    """The first problem of a schema-valid config's job sizes as one line, or None.

    SE width ratios outside :data:`SE_RHO_RANGE`; then the largest planned job of
    either scale, if its estimate exceeds ``limits.job_memory_gb`` GiB:
    ``invalid config: <key> = <value>: the largest job (<rule>) needs ~X GiB
    (estimate), above limits.job_memory_gb = Y``.
    """
    problem = _se_rho_problem(config)
    if problem:
        return problem
    limit_gb = float(config.get("limits", {}).get("job_memory_gb", DEFAULT_JOB_MEMORY_GB))
    largest, largest_size = None, None
    for scale in configured_scales(config):
        for job in planned_jobs(config, scale):
            size = job.size()
            if largest_size is None or size.bytes > largest_size.bytes:
                largest, largest_size = job, size
    if largest is None or largest_size.bytes <= limit_gb * R.GIB:
        return None
    name = R.driver(largest.estimate, largest.params, list(largest.keys))
    steps = f", {largest_size.steps:.3g} steps" if largest_size.steps >= 1e6 else ""
    if name is None:  # ordinary sizes: the limit is what is small
        return (f"invalid config: limits.job_memory_gb = {limit_gb:g}: the largest job "
                f"({largest.rule}) needs ~{largest_size.gib:.3g} GiB (estimate{steps}) at "
                f"ordinary sizes")
    key = source_key(config, largest.keys[name])
    return (f"invalid config: {key} = {_show(_value_at(config, key))}: the largest job "
            f"({largest.rule}) needs ~{largest_size.gib:.3g} GiB (estimate{steps}), above "
            f"limits.job_memory_gb = {limit_gb:g}")
