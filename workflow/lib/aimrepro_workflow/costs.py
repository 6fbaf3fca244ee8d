"""What each job costs: CPU seconds, peak memory and disk, from its wildcards.

One model serves three readers:

* the rules: every rule's ``threads``, ``mem_mb`` and ``runtime`` are
  :meth:`CostModel.threads`, :meth:`CostModel.resources` of the rule (the
  rule's callables receive the job's wildcards, as Snakemake passes them);
* ``aimrepro cost``: :meth:`CostModel.table` enumerates every job the
  :class:`~.plans.Plan` plans at a scale (each result path, parsed back to
  its wildcards with :meth:`~.paths.ResultPath.parse`; datasets as the AMP
  and GD runs imply them) and sums them per rule;
* the tests, which compare the model with measured jobs
  (``benchmarks/results/quick_jobs.json``, gathered by
  ``benchmarks/gather_job_costs.py``).

Time
----
A job's CPU seconds are a sum of *work* counted from its wildcards, each kind
of work at a calibrated price (:data:`PRICES`, seconds per unit)::

    cpu = startup(rule) + fixed work + loop × (work per iteration)

The units are either machine rates measured by micro-benchmarks (a
floating-point operation of a large GEMM, a standard normal drawn, an
eigendecomposition per d³) or per-call overheads fitted to the quick-scale
jobs (a Python-level SGD step, an AMP iteration, an ODE right-hand side, one
quadrature point).  ``loop`` is the job's main loop: SGD steps, Adam steps,
AMP iterations, right-hand-side evaluations.  Where the data decide its length
(an AMP run that converges, an SGD run or a flow that stops at an overlap, an
adaptive ODE solver) the model gives two numbers: the expected length, from
what the quick-scale jobs did (:data:`TYPICAL`), for the cost, and the
cap, for the Slurm limit (:attr:`JobCost.cpu_seconds_bound`).  CPU seconds
are counted per job whatever its thread count: BLAS threads share the same
operations (a small parallel overhead is ignored).

Memory and disk
---------------
Peak memory is :mod:`aimrepro.resources`' estimate of the job's arrays plus
the interpreter (the same numbers the config check and the command line use);
disk is the job's outputs, its sidecar and its log.

Limits for a scheduler
----------------------
``runtime`` (minutes) = :data:`RUNTIME_MARGIN` × the bound's CPU seconds /
(threads × :data:`THREAD_EFFICIENCY`) + :data:`RUNTIME_GRACE_MINUTES`;
``mem_mb`` = :data:`MEMORY_MARGIN` × the peak memory + :data:`MEMORY_GRACE_MB`.
The margins cover a slower node and the spread of the measured prices.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aimrepro import resources as R

from . import paths
from .plans import Plan

__all__ = [
    "CostModel", "JobCost", "PRICES", "STARTUP", "TYPICAL", "loop_from_diagnostics",
    "RUNTIME_MARGIN", "RUNTIME_GRACE_MINUTES", "THREAD_EFFICIENCY", "MEMORY_MARGIN",
    "MEMORY_GRACE_MB",
]

# ---------------------------------------------------------------------------
# calibration: prices of each kind of work (seconds per unit)

#: Seconds per unit of work.  Machine rates (``flop``, ``normal``, ``eigh``,
#: ``byte_io``, ``element``, ``small_matmul``) come from benchmarks/bench_costs.py on the
#: reference machine (one core); the overheads are fitted to the quick-scale jobs of
#: benchmarks/results/quick_jobs.json by benchmarks/gather_job_costs.py --fit, except
#: those it holds (``HELD`` there), which the quick jobs cannot tell from a start-up: the
#: moment hierarchy's (bench_moments.py), a summary's read per file, the Fisher table's
#: and the token SE curve's, and the sampled g_out's (no quick job draws one).
PRICES: dict[str, float] = {
    "flop": 1.0 / 35e9,          # GEMM of the pipeline's shapes, one core
    "normal": 14e-9,             # one float64 standard normal (numpy PCG64)
    "eigh": 2.0e-9,              # a symmetric eigendecomposition, per d³
    "byte_io": 1.0e-9,           # writing or reading one byte of a .npz
    "element": 1.1e-9,           # one float64 element of a vectorised expression
    "small_matmul": 1.247e-10,   # one multiply-add of numpy's matmul on stacks of tiny (T × r) matrices
    # the same in float32 (backend.dtype of a kernel family, docs/design.md "Precision"): the float64
    # price over the float32 speed-up bench_costs.py measured beside it (GEMM 1.96, element 2.10,
    # small matmul 1.06)
    "flop32": 1.0 / 35e9 / 1.96,
    "element32": 1.1e-9 / 2.10,
    "small_matmul32": 1.247e-10 / 1.06,
    # overheads per call, fitted
    "se_point_softmax": 0,
    "se_point_hardmax": 0.1042,
    "se_point_hardmax_paper": 0.07992,
    "amp_iteration": 4.148e-4,
    "amp_sample_hardmax": 3.655e-08,
    "amp_sample_softmax": 0,
    "gd_step": 1.019e-4,
    "gd_replica_step": 0,
    "sgd_step": 0,
    "sgd_step_untied": 0,
    "sgd_sample_softmax": 0,
    "rhs_tied": 0.0003162,
    "rhs_direct": 0.0003056,
    "rhs_untied": 0.001404,
    "rhs_untied_limit": 0.01238,  # the slaved limit flow: fast fixed points per right-hand side
    "gamma_softmax": 0.0006989,
    "moment_letter_build": 13e-6,
    "moment_term": 8e-9,
    "moment_rhs": 1.0e-4,
    "mc_sequence": 7.136e-07,
    "quadrature_point": 8.579e-05,
    "fast_state": 0.01084,
    "input_file": 5.0e-3,
    # hardmax with T >= 3 tokens: the Fisher table's CPU seconds come from the package's own
    # per-sample calibration (aimrepro.paper1.hardmax_tokens.estimated_table_seconds)
    "fisher_table_second": 1.0,
    "tokens_se_point": 0.03,
    # generalisation error along an SE curve: nested quadrature per point (T = 3: 2 + 2 dimensions)
    "gen_point_softmax_T2": 0,
    "gen_point_softmax_T3": 0.08098,
    "gen_point_hardmax_T2": 0.1282,
    # the exact finite-d tied flow, per right-hand side and link degree: an overhead, and the
    # moments of its words per d³
    "exact_rhs_h1": 0, "exact_rhs_h2": 2.431e-05, "exact_rhs_h3": 0.001201,
    "exact_rhs_d3_h1": 2.603e-11, "exact_rhs_d3_h2": 3.643e-10, "exact_rhs_d3_h3": 1.218e-09,
    # paper-2 theory tables: per replicate and d (one initial state, its flow or its velocity),
    # and for the tied velocity the exact drift's moments per d³ and link degree
    "tied_velocity_replicate": 0,
    "untied_velocity_replicate": 0.08532,
    "tied_velocity_d3_h1": 5.813e-10, "tied_velocity_d3_h2": 1.342e-09,
    "tied_velocity_d3_h3": 3.604e-09,
    "radius_d3": 3.51e-7,  # one replicate of the truncation radius, per d³
    "untied_truncation_order": 0.07846,  # one truncation order of a replicate, beside its limit flow
    "tokens_gout_proposal": 6.4e-7,  # one importance-sampling proposal of the sampled g_out, per sample
    "instability_time": 0.02539,  # the instability time of one untied flow (paper 2, Figure S5)
    # a claims topic's own work beyond the start-up (claims_topic), per topic
    "claims_paper1_amp": 0.7, "claims_paper1_gd": 0.194, "claims_paper1_hardmax_tokens": 10.56,
    "claims_paper1_theory": 2.404, "claims_paper2_dynamics": 0.938, "claims_paper2_moments": 0,
    "claims_paper2_untied": 0.862,
}

#: CPU seconds of a job's process before and after its work: the interpreter,
#: numpy/scipy (and matplotlib for figures), the aimrepro modules, the input
#: checks and the sidecar; fitted per rule to the quick-scale jobs, except the Fisher
#: table's, the token SE curve's and the token AMP run's, which stay with their rules'
#: hand-set work prices.
STARTUP: dict[str, float] = {
    "se_curve": 0.3041, "aim_dataset": 0.1286, "amp_run": 0.2642, "amp_summary": 0.2437,
    "gd_run": 0, "gd_summary": 0.1433, "sgd_run": 0.1153, "reference_flow": 0.4088, "theorem1": 0,
    "landscape": 0,
    "moment_truncations": 0.3828, "riccati_flow": 0.4252, "truncation_error": 0.5172,
    "untied_sgd_run": 0.09888, "untied_theory": 0.5802, "untied_fast_states": 0,
    "fisher_table": 1.0, "tokens_se_curve": 1.0, "tokens_amp_run": 0.5, "se_generalisation": 0.3111,
    "flow_ensemble": 0.4157, "tied_velocity": 0, "untied_velocity": 0, "truncation_radius": 0,
    "untied_truncation": 0, "untied_decay": 0.58,
    "figure": 1.179, "claims_topic": 0.382, "claims": 0.132,
}

#: Expected loop lengths where the data decide them, from the quick-scale jobs
#: (means, since a total is what they price): AMP iterations per channel; the
#: fraction of its horizon an SGD run that stops at an overlap runs;
#: right-hand-side evaluations of the adaptive ODE solvers (per unit of horizon
#: for the moment hierarchy).
TYPICAL: dict[str, float] = {
    "amp_iterations_hardmax": 329.0,
    "amp_iterations_hardmax_paper": 12.0,
    "amp_iterations_softmax": 499.0,
    "amp_iterations_tokens": 210.0,   # the sampled g_out never settles: `stationary` near 204
    "sgd_stop_fraction": 0.285,
    "untied_stop_fraction": 0.147,
    "tied_flow_rhs": 300.0,
    "direct_flow_rhs": 820.0,
    "untied_flow_rhs_RK45": 780.0,
    "untied_flow_rhs_ROS2": 1300.0,
    "untied_limit_rhs": 128.0,
    "untied_stop_fraction_flow": 0.53,
    # the untied decay table's RK45 population flow, right-hand sides per replicate per d and unit
    # of tau: the stiff fast direction (rate ~ d) sets the steps (d = 50, 100 at tau = 6: 5.2, 4.7)
    "untied_decay_rhs_per_d_tau": 5.0,
    "moment_rhs_per_order": 60.0,
    # flow ensembles, right-hand sides per replicate: a + b × horizon
    "ensemble_rhs_tied": 160.0, "ensemble_rhs_per_time_tied": 48.0,
    "ensemble_rhs_direct": 850.0, "ensemble_rhs_per_time_direct": 0.0,
    "ensemble_rhs_exact": 690.0, "ensemble_rhs_per_time_exact": 0.0,
}

#: Scheduler limits from the model: runtime = margin × bound / (threads × efficiency) + grace.
RUNTIME_MARGIN = 3.0
RUNTIME_GRACE_MINUTES = 10
#: Assumed parallel efficiency of a job's BLAS threads (only GD and paper-size untied SGD use several).
THREAD_EFFICIENCY = 0.6
#: mem_mb = margin × estimated peak + grace (MB).
MEMORY_MARGIN = 1.5
MEMORY_GRACE_MB = 200

#: Disk per job beside its result: sidecar (code hashes, params) and log, measured at quick scale.
SIDECAR_BYTES = 12_000.0
#: Bytes per number of a CSV table (text, with separators).
CSV_BYTES_PER_VALUE = 20.0


@dataclass(frozen=True)
class JobCost:
    """The predicted cost of one job.

    Attributes
    ----------
    rule : the rule (datasets: ``aim_dataset``, whatever the scale)
    cpu_seconds : expected CPU time (start-up included)
    cpu_seconds_bound : CPU time if the main loop runs to its cap (= cpu_seconds when it always does)
    memory_bytes : peak resident memory
    disk_bytes : outputs, sidecar and log
    threads : threads the rule asks for
    temporary : the output is deleted once its consumers are done (datasets at some scales)
    loop : the main loop's expected length (0 without one)
    """

    rule: str
    cpu_seconds: float
    cpu_seconds_bound: float
    memory_bytes: float
    disk_bytes: float
    threads: int = 1
    temporary: bool = False
    loop: float = 0.0


@dataclass
class _Work:
    """Work of one job: fixed units, units per loop iteration, the loop's lengths."""

    startup: str
    fixed: dict[str, float] = field(default_factory=dict)
    per_loop: dict[str, float] = field(default_factory=dict)
    loop: float = 0.0
    loop_bound: float = 0.0
    memory: float = R.BASE_BYTES
    disk: float = 0.0
    threads: int = 1
    temporary: bool = False

    def units(self, loop: float) -> dict[str, float]:
        """Amount of each unit of work with a loop of this length (``startup`` once)."""
        amounts: dict[str, float] = defaultdict(float, {"startup": 1.0})
        for unit, amount in self.fixed.items():
            amounts[unit] += amount
        for unit, amount in self.per_loop.items():
            amounts[unit] += loop * amount
        return dict(amounts)

    def seconds(self, loop: float) -> float:
        return sum(amount * (STARTUP[self.startup] if unit == "startup" else PRICES[unit])
                   for unit, amount in self.units(loop).items())


def _i(wildcards: Mapping[str, str], name: str) -> int:
    return int(wildcards[name])


def _f(wildcards: Mapping[str, str], name: str) -> float:
    return float(wildcards[name])


def _width(d: float, ratio: float) -> int:
    return max(1, int(round(ratio * d)))


def _csv(rows: float, columns: float) -> float:
    return CSV_BYTES_PER_VALUE * rows * columns + SIDECAR_BYTES


def loop_from_diagnostics(rule: str, diagnostics: Mapping[str, Any]) -> float | None:
    """The main loop's measured length from a job's sidecar diagnostics, or None (fixed loops).

    SGD steps (``n_steps``), AMP iterations (``iterations``), right-hand sides of the
    flows (``nfev``, untied: ``flow.nfev``; a flow ensemble: its replicates' ``nfev`` summed).
    """
    if rule in ("sgd_run", "untied_sgd_run"):
        return float(diagnostics["n_steps"])
    if rule == "amp_run":
        return float(diagnostics["iterations"])
    if rule == "reference_flow":
        return float(diagnostics["nfev"]) if diagnostics.get("nfev") is not None else None
    if rule == "flow_ensemble":
        nfev = diagnostics.get("nfev")
        return float(sum(nfev.values())) if isinstance(nfev, Mapping) and nfev else None
    if rule == "untied_theory":
        flow = diagnostics.get("flow") or {}
        return float(flow["nfev"]) if flow.get("nfev") is not None else None
    return None


class CostModel:
    """The cost of every job of a validated config (see the module notes)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config
        self.plan = Plan(config)

    # --- one job ------------------------------------------------------------

    def job(self, rule: str, wildcards: Mapping[str, str], *, loop: float | None = None) -> JobCost:
        """The cost of the job of ``rule`` with these wildcards (strings, as in a path).

        ``loop`` replaces the expected length of the main loop (a measured one).
        """
        kind = _kind(rule)
        if kind not in _RULES:
            raise ValueError(f"rule {rule!r} has no cost model; known: {sorted(_RULES)}")
        work = _RULES[kind](self, _with_rule(rule, kind, wildcards))
        expected = work.loop if loop is None else float(loop)
        return JobCost(rule=rule, cpu_seconds=work.seconds(expected),
                       cpu_seconds_bound=max(work.seconds(work.loop_bound), work.seconds(expected)),
                       memory_bytes=work.memory, disk_bytes=work.disk, threads=work.threads,
                       temporary=work.temporary, loop=expected)

    def units(self, rule: str, wildcards: Mapping[str, str], *,
              loop: float | None = None) -> tuple[str, dict[str, float]]:
        """(start-up name, amount of each unit of work) of a job: what calibration fits."""
        kind = _kind(rule)
        work = _RULES[kind](self, _with_rule(rule, kind, wildcards))
        return work.startup, work.units(work.loop if loop is None else float(loop))

    # --- for the rules --------------------------------------------------------

    def threads(self, rule: str) -> Callable:
        """``threads:`` of a rule: a callable of the wildcards."""
        def threads(wildcards) -> int:
            return self.job(rule, _as_dict(wildcards)).threads
        return threads

    def mem_mb(self, rule: str) -> Callable:
        def mem_mb(wildcards) -> int:
            return memory_limit_mb(self.job(rule, _as_dict(wildcards)).memory_bytes)
        return mem_mb

    def runtime(self, rule: str) -> Callable:
        def runtime(wildcards, threads) -> int:
            return runtime_limit_minutes(self.job(rule, _as_dict(wildcards)).cpu_seconds_bound,
                                         threads)
        return runtime

    def resources(self, rule: str) -> dict[str, Callable]:
        """``resources:`` of a rule: ``mem_mb`` and ``runtime`` (minutes) from the model."""
        return {"mem_mb": self.mem_mb(rule), "runtime": self.runtime(rule)}

    # --- every job of a scale -----------------------------------------------------

    def planned_jobs(self, scale: str) -> list[tuple[str, dict[str, str]]]:
        """(rule, wildcards) of every job the plan has at ``scale``, each once."""
        return _planned_jobs(self.plan, scale)

    def costs(self, scale: str) -> list[JobCost]:
        return [self.job(rule, wildcards) for rule, wildcards in self.planned_jobs(scale)]

    def table(self, scale: str) -> dict[str, Any]:
        """Per rule and in total: jobs, core-hours (expected and bound), peak memory, disk."""
        rows: dict[str, dict[str, Any]] = {}
        for cost in self.costs(scale):
            group = _group(cost.rule)
            row = rows.setdefault(group, {"rule": group, "jobs": 0, "cpu_seconds": 0.0,
                                              "cpu_seconds_bound": 0.0, "peak_memory_bytes": 0.0,
                                              "disk_bytes": 0.0, "temporary_disk_bytes": 0.0,
                                              "largest_job_cpu_seconds": 0.0, "threads": 1})
            row["jobs"] += 1
            row["cpu_seconds"] += cost.cpu_seconds
            row["cpu_seconds_bound"] += cost.cpu_seconds_bound
            row["peak_memory_bytes"] = max(row["peak_memory_bytes"], cost.memory_bytes)
            row["largest_job_cpu_seconds"] = max(row["largest_job_cpu_seconds"], cost.cpu_seconds)
            row["threads"] = max(row["threads"], cost.threads)
            row["temporary_disk_bytes" if cost.temporary else "disk_bytes"] += cost.disk_bytes
        ordered = sorted(rows.values(), key=lambda row: -row["cpu_seconds"])
        total = {"rule": "total", "jobs": sum(r["jobs"] for r in ordered)}
        for key in ("cpu_seconds", "cpu_seconds_bound", "disk_bytes", "temporary_disk_bytes"):
            total[key] = sum(r[key] for r in ordered)
        total["peak_memory_bytes"] = max((r["peak_memory_bytes"] for r in ordered), default=0.0)
        total["largest_job_cpu_seconds"] = max((r["largest_job_cpu_seconds"] for r in ordered),
                                               default=0.0)
        return {"scale": scale, "rules": ordered, "total": total}


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 72 * 3600:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 86400:,.3g} days"


def _bytes(value: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


def _span(total: Mapping[str, Any], cores: int) -> float:
    """A run's wall time on ``cores``: the work spread evenly, but never less than its largest job."""
    return max(total["cpu_seconds"] / cores, total["largest_job_cpu_seconds"])


def _hours(seconds: float) -> str:
    hours = seconds / 3600
    if hours < 0.01:
        return "<0.01"
    return f"{hours:.3g}" if hours < 100 else f"{hours:,.0f}"


def format_table(table: Mapping[str, Any]) -> str:
    """``aimrepro cost``'s table for people: one line per rule, then the totals."""
    header = ("rule", "jobs", "core-h", "bound", "largest job", "memory/job", "disk")
    lines = []
    for row in [*table["rules"], table["total"]]:
        disk = _bytes(row["disk_bytes"])
        if row["temporary_disk_bytes"]:
            disk += f" (+{_bytes(row['temporary_disk_bytes'])} temporary)"
        lines.append((row["rule"], f"{row['jobs']}", _hours(row["cpu_seconds"]),
                      _hours(row["cpu_seconds_bound"]), _duration(row["largest_job_cpu_seconds"]),
                      _bytes(row["peak_memory_bytes"]), disk))
    widths = [max(len(str(line[i])) for line in [header, *lines]) for i in range(len(header))]

    def render(line):
        cells = [str(line[0]).ljust(widths[0])]
        cells += [str(cell).rjust(width) for cell, width in zip(line[1:-1], widths[1:-1])]
        return "  ".join(cells + [str(line[-1])])

    total = table["total"]
    out = [f"aimrepro cost: scale {table['scale']}"
           + (f", config {table['config']}" if table.get("config") else ""),
           render(header), *(render(line) for line in lines[:-1]), render(lines[-1]), "",
           f"{total['jobs']} jobs, {_hours(total['cpu_seconds'])} core-hours expected "
           f"({_hours(total['cpu_seconds_bound'])} if every data-dependent loop ran to its cap); "
           f"on 2 cores about {_duration(_span(total, 2))}, on 64 about "
           f"{_duration(_span(total, 64))} (never less than its largest job, "
           f"{_duration(total['largest_job_cpu_seconds'])} of one core).",
           "core-h: CPU hours of one core of the reference machine (docs/benchmarks.md, "
           "\"Cost model\"); bound: AMP at max_iter, SGD runs and flows that stop at an overlap "
           "run to their horizon; memory/job: the largest job's peak; disk: results kept, "
           "with sidecars and logs."]
    return "\n".join(out)


def runtime_limit_minutes(cpu_seconds_bound: float, threads: int) -> int:
    """Slurm ``runtime`` of a job (minutes) from its CPU-time bound and threads."""
    efficiency = 1.0 if threads <= 1 else THREAD_EFFICIENCY
    wall = RUNTIME_MARGIN * cpu_seconds_bound / (max(1, threads) * efficiency)
    return RUNTIME_GRACE_MINUTES + math.ceil(wall / 60.0)


def memory_limit_mb(memory_bytes: float) -> int:
    """Slurm ``mem_mb`` of a job from its peak memory estimate."""
    return MEMORY_GRACE_MB + math.ceil(MEMORY_MARGIN * memory_bytes / 1e6)


def _with_rule(rule: str, kind: str, wildcards: Mapping[str, str]) -> dict[str, str]:
    """The wildcards, with what the rule's name adds: a dataset's scale, a claims job's topic."""
    wildcards = dict(wildcards)
    if kind == "aim_dataset" and "scale" not in wildcards:  # one dataset rule per scale
        wildcards["scale"] = rule.rsplit("_", 1)[-1]
    if kind == "claims_topic":
        wildcards["topic"] = rule.removeprefix("claims_")
    if kind == "figure":
        wildcards["figure"] = rule
    return wildcards


def _as_dict(wildcards) -> dict[str, str]:
    return dict(wildcards.items()) if hasattr(wildcards, "items") else dict(wildcards)


def _group(rule: str) -> str:
    """The row of ``aimrepro cost`` a rule's jobs go to: one for all figures, one for all claims."""
    kind = _kind(rule)
    return {"figure": "figures", "claims_topic": "claims"}.get(kind, kind)


def _kind(rule: str) -> str:
    """The model's name of a rule: one dataset rule per scale, one figure model, one claims model."""
    if rule.startswith("aim_dataset"):
        return "aim_dataset"
    if rule.startswith("paper1_fig") or rule.startswith("paper2_fig"):
        return "figure"
    if rule.startswith("claims_"):
        return "claims_topic"
    return rule


# ---------------------------------------------------------------------------
# paper 1


def _se_curve(model: CostModel, w: dict) -> _Work:
    """Softmax: one vectorised root over the curve; other channels point by point (warm started)."""
    n = _i(w, "n")
    channel = w["channel"]
    unit = f"se_point_{channel}" if f"se_point_{channel}" in PRICES else "se_point_hardmax"
    return _Work("se_curve", fixed={unit: n},
                 memory=R.se_curve_job(channel=channel, n_points=n).bytes, disk=_csv(n, 12))


def _test_samples(model: CostModel, scale: str) -> int:
    return int(model.config["scales"][scale]["data"]["test_samples"])


def _dataset_sizes(model: CostModel, w: dict) -> tuple[int, int, int, int, int]:
    T, d = _i(w, "T"), _i(w, "d")
    n = max(1, round(_f(w, "alpha") * d * d))
    return n, _test_samples(model, w["scale"]), T, d, _width(d, _f(w, "rho"))


def _dataset_bytes(n: int, n_test: int, T: int, d: int, r: int) -> float:
    """``aimrepro.paper1.data.dataset_bytes``: float32 tokens, float64 labels and W."""
    return 4.0 * (n + n_test) * T * d + 8.0 * (n + n_test) * T * T + 8.0 * d * r


def _aim_dataset(model: CostModel, w: dict) -> _Work:
    """Normals for the tokens, the labels' GEMM X W (2 m T d r) and softmax, the .npz written."""
    n, n_test, T, d, r = _dataset_sizes(model, w)
    m = n + n_test
    size = _dataset_bytes(n, n_test, T, d, r)
    temporary = bool(model.config["scales"][w["scale"]]["data"].get("temporary", False))
    return _Work("aim_dataset",
                 fixed={"normal": m * T * d + d * r, "flop": 2.0 * m * T * d * r,
                        "element": 10.0 * m * T * (d + T * T), "byte_io": size},
                 memory=R.dataset_job(T=T, d=d, rho=_f(w, "rho"), alpha=_f(w, "alpha"),
                                      n_test=n_test).bytes,
                 disk=size + SIDECAR_BYTES, temporary=temporary)


def _amp_run(model: CostModel, w: dict) -> _Work:
    """Per iteration: X S and Xᵀ(G X) (4 n T d² flops, the family's float type), one eigh (d³), the
    channel per sample."""
    n, n_test, T, d, r = _dataset_sizes(model, w)
    flop, _, small_matmul = _arithmetic_units(model, "amp")
    channel = w["channel"].split("_beta")[0]
    solver = model.config["paper1"]["amp_solver"]
    cap = int(solver["max_iter"])
    sample_unit = "amp_sample_softmax" if channel == "softmax" else "amp_sample_hardmax"
    per_sample = T * T if channel == "softmax" else 1
    expected = min(cap, TYPICAL.get(f"amp_iterations_{channel}", TYPICAL["amp_iterations_hardmax"]))
    return _Work(
        "amp_run",
        fixed={"byte_io": _dataset_bytes(n, n_test, T, d, r), "flop": 2.0 * n_test * T * d * d,
               "element": 20.0 * (n + n_test) * T * d},
        per_loop={"amp_iteration": 1, flop: 4.0 * n * T * d * d, "eigh": float(d) ** 3,
                  sample_unit: n * per_sample, small_matmul: n * T * T * d,
                  "element": 10.0 * n * T * d},
        loop=expected, loop_bound=cap,
        memory=R.amp_job(T=T, d=d, rho=_f(w, "rho"), alpha=_f(w, "alpha"), n_test=n_test,
                         max_iter=cap, channel=channel).bytes,
        disk=8.0 * d * d + 40.0 * cap + SIDECAR_BYTES)


def _se_generalisation(model: CostModel, w: dict) -> _Work:
    """The SE curve, then the Bayes and plug-in errors per point (aimrepro.paper1.generalisation)."""
    n = _i(w, "n")
    unit = f"gen_point_{w['channel']}_T{w['T']}"
    if unit not in PRICES:
        raise ValueError(f"no price for the generalisation error of {w['channel']} T={w['T']}")
    return _Work("se_generalisation", fixed={unit: n}, memory=R.BASE_BYTES + 100e6, disk=_csv(n, 7))


def _fisher_table(model: CostModel, w: dict) -> _Work:
    """Nishimori estimates on the table's nodes: rejection sampling, ~(possible labels) candidates each."""
    from aimrepro.paper1.hardmax_tokens import estimated_table_seconds
    seconds = estimated_table_seconds(_i(w, "T"), _i(w, "nref"), _i(w, "nodes"), _f(w, "x_min"))
    return _Work("fisher_table", fixed={"fisher_table_second": seconds},
                 memory=R.BASE_BYTES + 300e6, disk=_csv(_i(w, "nodes"), 8))


def _tokens_se_curve(model: CostModel, w: dict) -> _Work:
    n = _i(w, "n")
    return _Work("tokens_se_curve", fixed={"tokens_se_point": n},
                 memory=R.BASE_BYTES + 100e6, disk=_csv(n, 13))


def _tokens_amp_run(model: CostModel, w: dict) -> _Work:
    """GAMP-RIE's linear algebra as :func:`_amp_run`, the channel by importance sampling:
    n × proposals draws of the T-token scores per iteration."""
    T, d, rho, alpha = _i(w, "T"), _i(w, "d"), _f(w, "rho"), _f(w, "alpha")
    n = max(1, round(alpha * d * d))
    n_test = _test_samples(model, w["scale"])
    r = _width(d, rho)
    proposals = _i(w, "proposals")
    cap = int(model.config["paper1"]["amp_solver"]["max_iter"])
    draws_bytes = 8.0 * 3 * n * proposals * T * T
    return _Work(
        "tokens_amp_run",
        fixed={"byte_io": _dataset_bytes(n, n_test, T, d, r), "flop": 2.0 * n_test * T * d * d},
        per_loop={"amp_iteration": 1, "flop": 4.0 * n * T * d * d, "eigh": float(d) ** 3,
                  "tokens_gout_proposal": n * proposals, "element": 10.0 * n * T * d},
        loop=min(cap, TYPICAL["amp_iterations_tokens"]), loop_bound=cap,
        memory=R.amp_job(T=T, d=d, rho=rho, alpha=alpha, n_test=n_test, max_iter=cap).bytes
        + draws_bytes,
        disk=8.0 * d * d + 40.0 * cap + SIDECAR_BYTES)


def _arithmetic_units(model: CostModel, family: str) -> tuple[str, str, str]:
    """The units of a kernel family's arithmetic, (GEMM flop, element, small matmul), in its float type.

    ``backend.dtype.<family>`` float32 prices the kernels' own arithmetic at
    the float32 rates; what stays float64 in every type (state, records,
    reported numbers) keeps the float64 units in the work functions.
    """
    from aimrepro.backends import family_backend

    if family_backend(model.config.get("backend", {}), family)["dtype"] == "float32":
        return "flop32", "element32", "small_matmul32"
    return "flop", "element", "small_matmul"


def _adding(*pairs: tuple[str, float]) -> dict[str, float]:
    """Units and amounts as a dict, amounts of a unit named twice added."""
    total: dict[str, float] = defaultdict(float)
    for unit, amount in pairs:
        total[unit] += amount
    return dict(total)


def _gd_threads(model: CostModel, scale: str) -> int:
    return int((model.plan.gd_size(scale) or {}).get("threads", 1))


def _gd_run(model: CostModel, w: dict) -> _Work:
    """Per Adam step and student: P = X W and Xᵀ(·) (4 n T d r flops), the pair products P Pᵀ
    and (g + gᵀ) P (2 n T² r multiply-adds on T × r stacks), the softmax (n T²), all in the
    family's float type, and Adam (d r, float64)."""
    n, n_test, T, d, r = _dataset_sizes(model, w)
    K = _i(w, "inits")
    optimizer = (model.config["paper1"]["figure2"]["right"].get("gd") or {}).get("optimizer", {})
    steps = int(optimizer.get("steps", 0))
    flop, element, small_matmul = _arithmetic_units(model, "gd")
    return _Work(
        "gd_run",
        fixed={"byte_io": _dataset_bytes(n, n_test, T, d, r),
               "flop": 2.0 * K * n_test * T * d * r + 2.0 * K * d * d * r},
        per_loop=_adding(("gd_step", 1), ("gd_replica_step", K), (flop, 4.0 * K * n * T * d * r),
                         (small_matmul, 2.0 * K * n * T * T * r), (element, K * 20.0 * n * T * T),
                         ("element", K * 12.0 * d * r)),
        loop=steps, loop_bound=steps, threads=_gd_threads(model, w["scale"]),
        memory=R.gd_job(T=T, d=d, rho=_f(w, "rho"), alpha=_f(w, "alpha"), n_test=n_test, inits=K,
                        steps=max(steps, 1)).bytes,
        disk=8.0 * K * (d * r + steps + 8) + SIDECAR_BYTES)


def _summary_runs(curves, path: str) -> list[str]:
    for curve in curves:
        if curve["path"] == path:
            return [run for per_alpha in curve["runs"] for run in per_alpha]
    return []


def _summary(rule: str, curves: Callable[[str], list], spec: paths.ResultPath, run_bytes: Callable,
             theory: Callable[[dict], dict[str, float]] | None = None):
    """Each run read (its file and its bytes), and the theory the table adds per point."""
    def work(model: CostModel, w: dict) -> _Work:
        scale = w["scale"]
        runs = _summary_runs(curves(model.plan, scale), spec.format(scale, **{
            k: v for k, v in w.items() if k != "scale"}))
        read = sum(run_bytes(model, w) for _ in runs)
        fixed = {"input_file": len(runs), "byte_io": read, **(theory(w) if theory else {})}
        return _Work(rule, fixed=fixed,
                     memory=R.BASE_BYTES + 2.0 * run_bytes(model, w), disk=_csv(64, 12))
    return work


def _amp_summary_theory(w: dict) -> dict[str, float]:
    """The AMP table's theory columns (aimrepro.paper1.amp.summary_table) at its n points: the
    channel's SE curve and, for hardmax and softmax with few tokens, the generalisation errors."""
    n, T = _i(w, "n"), _i(w, "T")
    channel = w["channel"].split("_beta")[0]
    se_unit = f"se_point_{channel}" if f"se_point_{channel}" in PRICES else "se_point_hardmax"
    work = {se_unit: float(n)}
    gen_unit = f"gen_point_{channel}_T{T}"
    # softmax has prices for the token counts the package implements (generalisation.
    # SOFTMAX_TOKENS, not imported: it would bring scipy into Snakemake's process)
    if channel == "softmax" and gen_unit in PRICES or channel == "hardmax":
        if gen_unit not in PRICES:
            raise ValueError(f"no price for the generalisation error of {channel} T={T}")
        work[gen_unit] = float(n)
    return work


def _amp_run_bytes(model: CostModel, w: dict) -> float:
    return 8.0 * _i(w, "d") ** 2


def _gd_run_bytes(model: CostModel, w: dict) -> float:
    d = _i(w, "d")
    return 8.0 * _i(w, "inits") * d * _width(d, _f(w, "rho"))


# ---------------------------------------------------------------------------
# paper 2


def _sgd_work(rule: str, w: dict, *, param: str, stop_fraction: str, flop: str = "flop") -> _Work:
    """Per step: the batch's normals (B T d, float64 in every type), the teacher's and the
    student's projections and the gradient (GEMMs, priced as ``flop``: the family's float type),
    the link on B T² indices and the update (float64), a Python-level step."""
    T, d, B = _i(w, "T"), _i(w, "d"), _i(w, "B")
    rho = _f(w, "rho")
    r_teacher = _width(d, rho)
    r = r_teacher
    lr, horizon, records = _f(w, "lr"), _f(w, "horizon"), _i(w, "records")
    steps = R.sgd_steps(param=param, d=d, lr=lr, horizon=horizon)
    if param == "direct":
        flops = 2.0 * B * T * d * (2 * d + r_teacher)
        elements = 6.0 * d * d + 20.0 * B * T * T
        record = 4.0 * d * d * r_teacher
    elif param == "tied":
        flops = 2.0 * B * T * d * (2 * r + r_teacher)
        elements = 6.0 * d * r + 20.0 * B * T * T
        record = 8.0 * d * r * (r + r_teacher)
    else:
        flops = 4.0 * B * T * d * (2 * r + r_teacher)
        elements = 12.0 * d * r + 20.0 * B * T * T
        record = 16.0 * d * r * (r + r_teacher)
    per_step = {"sgd_step_untied" if param == "untied" else "sgd_step": 1, "normal": B * T * d,
                flop: flops, "element": elements}
    if flop != "flop":  # the tokens cast to the float type
        per_step["element"] += B * T * d
    if w.get("link") == "softmax":
        per_step["sgd_sample_softmax"] = B * T ** 4
    stops = w.get("stop", "none") != "none"
    expected = steps * (TYPICAL[stop_fraction] if stops else 1.0)
    student_rho = rho if param != "untied" else rho
    memory = R.sgd_job(param=param, T=T, d=d, rho=rho, batch=B, lr=lr, horizon=horizon,
                       records=records, student_rho=student_rho).bytes
    # records are taken along the run (in float64): one that stops early takes only its share of them
    per_step["flop"] = per_step.get("flop", 0.0) + records * record / max(steps, 1)
    return _Work(rule, per_loop=per_step, loop=expected,
                 loop_bound=steps, memory=memory, disk=_csv(records, 20))


def _sgd_run(model: CostModel, w: dict) -> _Work:
    return _sgd_work("sgd_run", w, param=w["param"], stop_fraction="sgd_stop_fraction",
                     flop=_arithmetic_units(model, "sgd")[0])


def _untied_threads(w: dict) -> int:
    """One thread at quick sizes; 8 for the paper's large GEMMs (B d >= 10^6, e.g. 4096 x 800)."""
    return 8 if _i(w, "B") * _i(w, "d") >= 10 ** 6 else 1


def _untied_sgd_run(model: CostModel, w: dict) -> _Work:
    work = _sgd_work("untied_sgd_run", {**w, "records": str(_i(w, "records") + _i(w, "nf"))},
                     param="untied", stop_fraction="untied_stop_fraction",
                     flop=_arithmetic_units(model, "sgd")[0])
    work.threads = _untied_threads(w)
    return work


def _reference_flow(model: CostModel, w: dict) -> _Work:
    """Tied: RK45 on W (d r), each right-hand side O(d r² + d r r*) flops and one Γ; direct: the
    closed ODE of a few order parameters from the initial d×d problem."""
    d, records = _i(w, "d"), _i(w, "records")
    rho = _f(w, "rho")
    r = _width(d, rho)
    gamma = {"gamma_softmax": 1} if w["link"] == "softmax" else {}
    if w["param"] == "tied":
        rhs = TYPICAL["tied_flow_rhs"]
        return _Work("reference_flow", fixed={"flop": 4.0 * d * r * r, "normal": 2.0 * d * r},
                     per_loop={"rhs_tied": 1, "flop": 8.0 * d * r * r + 4.0 * d * r * r,
                               "element": 20.0 * d * r, **gamma},
                     loop=rhs, loop_bound=rhs,
                     memory=R.tied_flow_job(d=d, rho=rho, records=records).bytes,
                     disk=_csv(records, 12))
    rhs = TYPICAL["direct_flow_rhs"]
    return _Work("reference_flow", fixed={"flop": 4.0 * d * d * r + 2.0 * d ** 3,
                                          "normal": d * d + d * r},
                 per_loop={"rhs_direct": 1, **gamma}, loop=rhs, loop_bound=rhs,
                 memory=R.direct_flow_job(d=d, rho=rho).bytes, disk=_csv(records, 12))


def _flow_ensemble(model: CostModel, w: dict) -> _Work:
    """``n`` flows of :func:`_reference_flow`, one per replicate; the loop is the right-hand
    sides of all replicates, about ``n`` (a + b × horizon): a long horizon is mostly the slow
    approach to the fixed point.  ``exact``: the finite-d flow, whose right-hand side takes the
    moments of words in (S₁, S₂) up to a length set by the link's degree (O(d³) each, priced
    per link) on top of the tied one's work."""
    flow, link, d, n = w["flow"], w["link"], _i(w, "d"), _i(w, "n")
    one = _reference_flow(model, {**w, "param": "direct" if flow == "direct" else "tied"})
    per_loop = dict(one.per_loop)
    if flow == "exact":
        degree = link if f"exact_rhs_{link}" in PRICES else "h3"
        per_loop[f"exact_rhs_{degree}"] = 1.0
        per_loop[f"exact_rhs_d3_{degree}"] = float(d) ** 3
    rhs = n * (TYPICAL[f"ensemble_rhs_{flow}"]
               + TYPICAL[f"ensemble_rhs_per_time_{flow}"] * _f(w, "horizon"))
    return _Work("flow_ensemble", fixed={u: n * a for u, a in one.fixed.items()},
                 per_loop=per_loop, loop=rhs, loop_bound=rhs, memory=one.memory, disk=n * one.disk)


def _dims(w: dict) -> list[int]:
    return [int(d) for d in str(w["dims"]).split("-")]


def _velocity_table(rule: str) -> Callable[[CostModel, dict], _Work]:
    """Initial velocities per d and replicate: one initial state each (d r normals, its traces).
    Tied: the exact finite-d drift, moments of words up to a length set by the link's degree,
    O(d³) each (priced per d³ and link); untied: a fast phase per replicate."""
    def work(model: CostModel, w: dict) -> _Work:
        dims, n = _dims(w), _i(w, "n")
        rho = _f(w, "rho")
        normals = sum(2.0 * d * _width(d, rho) for d in dims) * n
        largest = max(dims)
        fixed = {f"{rule}_replicate": len(dims) * n, "normal": normals,
                 "flop": sum(4.0 * d * d * _width(d, rho) for d in dims) * n}
        if rule == "tied_velocity":
            degree = w["link"] if f"tied_velocity_d3_{w['link']}" in PRICES else "h3"
            fixed[f"tied_velocity_d3_{degree}"] = n * sum(float(d) ** 3 for d in dims)
        return _Work(rule, fixed=fixed,
                     memory=R.BASE_BYTES + 8.0 * 6 * largest * largest,
                     disk=_csv(len(dims) * n, 12))
    return work


def _truncation_radius(model: CostModel, w: dict) -> _Work:
    """Per replicate, the nearest zero of the Riccati determinant: Newton and an argument-principle
    count, each step O(d³) (d×d determinants and solves)."""
    d, n = _i(w, "d"), _i(w, "n")
    return _Work("truncation_radius", fixed={"radius_d3": n * float(d) ** 3},
                 memory=R.BASE_BYTES + 8.0 * 6 * d * d, disk=_csv(n, 8))


def _untied_truncation(model: CostModel, w: dict) -> _Work:
    """Truncations of order 2..M per replicate against the slaved slow flow (:func:`_untied_theory`'s
    limit flow once per replicate)."""
    n, M, records = _i(w, "n"), _i(w, "M"), _i(w, "records")
    rhs = TYPICAL["untied_limit_rhs"]
    return _Work("untied_truncation", fixed={"untied_truncation_order": n * (M - 1),
                                             "rhs_untied_limit": n * rhs},
                 memory=R.BASE_BYTES + 50e6, disk=_csv(records * (M - 1) * n, 6))


def _theorem1(model: CostModel, w: dict) -> _Work:
    """Monte Carlo over n sequences: tokens (n T d normals), the projections on [W*, W'] (2 n T d 2r
    flops) and the m = k + k(k + 1)/2 control variates, k = 2T² (n m² flops)."""
    T, d, n = _i(w, "T"), _i(w, "d"), _i(w, "n")
    r = _width(d, _f(w, "rho"))
    k = 2 * T * T
    m = k + k * (k + 1) / 2
    links = len(w["links"].split("-"))
    return _Work("theorem1", fixed={"normal": n * T * d, "flop": 2.0 * n * T * d * 2 * r + 2.0 * n * m * m,
                                    "mc_sequence": n * links, "quadrature_point": 3 * links},
                 memory=R.theorem1_job(T=T, d=d, rho=_f(w, "rho"), n_samples=n, n_links=links).bytes,
                 disk=_csv(1, 20))


def _landscape(model: CostModel, w: dict) -> _Work:
    """One 60 × 60 quadrature per grid point."""
    n = _i(w, "n")
    return _Work("landscape", fixed={"quadrature_point": n * n},
                 memory=R.landscape_job(n_grid=n).bytes, disk=_csv(n * n, 5))


def _moment_orders(orders: list[int], d: int, horizon: float, link: str) -> dict[str, float]:
    """Each order: its basis (letters), its DOP853 solve (right-hand sides × 2 letters terms, Γ);
    the initial moments: one d×d product per prefix of the largest basis (2 d³ flops)."""
    work: dict[str, float] = defaultdict(float)
    words, _ = R.word_count(max(orders))
    work["flop"] += 2.0 * words * float(d) ** 3
    for order in orders:
        _, letters = R.word_count(order)
        rhs = TYPICAL["moment_rhs_per_order"]
        work["moment_letter_build"] += letters
        work["moment_term"] += rhs * 2.0 * letters
        work["moment_rhs"] += rhs
        if link == "softmax":
            work["gamma_softmax"] += rhs
    return dict(work)


def _moment_truncations(model: CostModel, w: dict) -> _Work:
    d, records = _i(w, "d"), _i(w, "records")
    orders = [int(m) for m in w["orders"].split("-")]
    return _Work("moment_truncations", fixed=_moment_orders(orders, d, _f(w, "horizon"), w["link"]),
                 memory=R.moment_truncations_job(d=d, rho=_f(w, "rho"), records=records,
                                                 max_order=max(orders)).bytes,
                 disk=_csv(records * len(orders), 12))


def _riccati_flow(model: CostModel, w: dict) -> _Work:
    """One eigendecomposition of S*, then O(d² r + d r² + r³) per record."""
    d, records = _i(w, "d"), _i(w, "records")
    r = _width(d, _f(w, "rho"))
    return _Work("riccati_flow", fixed={"eigh": float(d) ** 3,
                                        "flop": records * 2.0 * (d * d * r + d * r * r + r ** 3)},
                 memory=R.riccati_job(d=d, rho=_f(w, "rho"), records=records).bytes,
                 disk=_csv(records, 12))


def _truncation_error(model: CostModel, w: dict) -> _Work:
    d, records, M = _i(w, "d"), _i(w, "records") + 1, _i(w, "M")
    r = _width(d, _f(w, "rho"))
    work = _moment_orders(list(range(2, M + 1)), d, _f(w, "horizon"), "linear")
    work["eigh"] = work.get("eigh", 0.0) + float(d) ** 3
    work["flop"] += records * 2.0 * (d * d * r + d * r * r + r ** 3)
    return _Work("truncation_error", fixed=work,
                 memory=R.truncation_error_job(d=d, rho=_f(w, "rho"), records=records,
                                               max_order=M).bytes,
                 disk=_csv(records * (M - 1), 6))


def _untied_theory(model: CostModel, w: dict) -> _Work:
    """Flow: the population flow of (U, V), each right-hand side 3 Gram matrices and 4 projections
    (14 d r² flops); limit: the slaved flow of a few order parameters."""
    d = _i(w, "d")
    rho = _f(w, "rho")
    r = _width(d, rho)
    records = _i(w, "records") + _i(w, "nf")
    stops = w.get("stop", "none") != "none"
    if w["kind"] == "flow":
        method = w["method"].lstrip("_").split("-", 1)[0]
        cap = TYPICAL.get(f"untied_flow_rhs_{method}", TYPICAL["untied_flow_rhs_RK45"])
        expected = cap * (TYPICAL["untied_stop_fraction_flow"] if stops else 1.0)
        return _Work("untied_theory", fixed={"normal": 4.0 * d * r, "flop": 16.0 * d * r * r},
                     per_loop={"rhs_untied": 1, "flop": 14.0 * d * r * r, "element": 30.0 * d * r},
                     loop=expected, loop_bound=cap,
                     memory=R.untied_flow_job(d=d, rho=rho, records=records, method=method).bytes,
                     disk=_csv(records, 20))
    rhs = TYPICAL["untied_limit_rhs"]
    return _Work("untied_theory", fixed={"normal": 4.0 * d * r, "flop": 16.0 * d * r * r},
                 per_loop={"rhs_untied_limit": 1}, loop=rhs, loop_bound=rhs,
                 memory=R.untied_flow_job(d=d, rho=rho, records=records).bytes,
                 disk=_csv(records, 20))


def _untied_fast_states(model: CostModel, w: dict) -> _Work:
    n = _i(w, "n")
    return _Work("untied_fast_states", fixed={"fast_state": n},
                 memory=R.fast_states_job(n_grid=n).bytes, disk=_csv(n, 10))


def _untied_decay(model: CostModel, w: dict) -> _Work:
    """``n`` RK45 population flows of (U, V) to the horizon (right-hand sides as
    :func:`_untied_theory`'s, their number ∝ d τ: the stiff fast direction), then per replicate two
    d×d products and eigendecompositions and the mode sum over d² pairs and the records."""
    d, n, records = _i(w, "d"), _i(w, "n"), _i(w, "records") + 1
    r = _width(d, _f(w, "rho"))
    rhs = n * TYPICAL["untied_decay_rhs_per_d_tau"] * d * _f(w, "horizon")
    return _Work("untied_decay", fixed={"normal": n * 4.0 * d * r,
                                        "flop": n * (16.0 * d * r * r + 30.0 * d ** 3
                                                     + 2.0 * d * d * records)},
                 per_loop={"rhs_untied": 1, "flop": 14.0 * d * r * r, "element": 30.0 * d * r},
                 loop=rhs, loop_bound=rhs,
                 memory=R.untied_flow_job(d=d, rho=_f(w, "rho"), records=records).bytes
                 + 8.0 * (6 * d * d + d * d * records),
                 disk=_csv(n * records, 6))


def _light(rule: str, memory_mb: float) -> Callable[[CostModel, dict], _Work]:
    """Figures and claims: start-up (matplotlib for figures) and reading small tables; a claims
    topic adds its own checks (some recompute a theory curve), priced per topic where measured;
    Figure S5 of paper 2 finds the instability time of each of its untied flows."""
    def work(model: CostModel, w: dict) -> _Work:
        topic = f"claims_{w.get('topic')}"
        fixed = {topic: 1.0} if topic in PRICES else {}
        if w.get("figure") == "paper2_figS5":
            fixed["instability_time"] = float(len(model.plan.figureS5_runs(w["scale"])))
        return _Work(rule, fixed=fixed, memory=memory_mb * 1e6, disk=SIDECAR_BYTES + 200_000.0)
    return work


_RULES: dict[str, Callable[[CostModel, dict], _Work]] = {
    "se_curve": _se_curve,
    "aim_dataset": _aim_dataset,
    "amp_run": _amp_run,
    "amp_summary": _summary("amp_summary", lambda plan, s: plan.amp_curves(s), paths.AMP_SUMMARY,
                            _amp_run_bytes, theory=_amp_summary_theory),
    "gd_run": _gd_run,
    "gd_summary": _summary("gd_summary", lambda plan, s: plan.figure2_gd_curves(s), paths.GD_SUMMARY,
                           _gd_run_bytes),
    "sgd_run": _sgd_run,
    "reference_flow": _reference_flow,
    "theorem1": _theorem1,
    "landscape": _landscape,
    "moment_truncations": _moment_truncations,
    "riccati_flow": _riccati_flow,
    "truncation_error": _truncation_error,
    "untied_sgd_run": _untied_sgd_run,
    "untied_theory": _untied_theory,
    "untied_fast_states": _untied_fast_states,
    "fisher_table": _fisher_table,
    "flow_ensemble": _flow_ensemble,
    "tied_velocity": _velocity_table("tied_velocity"),
    "untied_velocity": _velocity_table("untied_velocity"),
    "truncation_radius": _truncation_radius,
    "untied_truncation": _untied_truncation,
    "untied_decay": _untied_decay,
    "se_generalisation": _se_generalisation,
    "tokens_se_curve": _tokens_se_curve,
    "tokens_amp_run": _tokens_amp_run,
    "figure": _light("figure", 250.0),
    "claims_topic": _light("claims_topic", 200.0),
    "claims": _light("claims", 110.0),
}


# ---------------------------------------------------------------------------
# every planned job


def _planned_results(plan: Plan, scale: str) -> list[tuple[str, paths.ResultPath, str]]:
    """(rule, path spec, path) of every result the plan has at ``scale``."""
    results: list[tuple[str, paths.ResultPath, str]] = []

    def add(rule, spec, items):
        results.extend((rule, spec, path) for path in items)

    add("se_curve", paths.SE_CURVE,
        [c["path"] for c in plan.figure1_curves(scale) + plan.figure2_curves(scale)])
    for rule, summary, run, curves in (
            ("amp", paths.AMP_SUMMARY, paths.AMP_RUN, plan.amp_curves(scale)),
            ("gd", paths.GD_SUMMARY, paths.GD_RUN, plan.figure2_gd_curves(scale))):
        runs = [p for curve in curves for per_alpha in curve["runs"] for p in per_alpha]
        trends = plan.trend_runs(scale, rule) + (plan.trend_runs(scale, "gd_amp") if rule == "amp" else [])
        runs += [p for p in trends if p not in set(runs)]
        add(f"{rule}_run", run, runs)
        add(f"{rule}_summary", summary, [curve["path"] for curve in curves])
        add(f"aim_dataset_{scale}", paths.DATASET, [paths.dataset_of(run.parse(p)) for p in runs])
    add("se_generalisation", paths.GEN_CURVE, [c["path"] for c in plan.figureS2_gen_curves(scale)])
    add("fisher_table", paths.FISHER_TABLE, [t["path"] for t in plan.fisher_tables(scale)])
    add("tokens_se_curve", paths.TOKENS_SE_CURVE, [c["path"] for c in plan.tokens_curves(scale)])
    tokens_runs = plan.tokens_amp_runs(scale)
    add("tokens_amp_run", paths.TOKENS_AMP_RUN, [r["path"] for r in tokens_runs])
    add(f"aim_dataset_{scale}", paths.DATASET, [r["data"] for r in tokens_runs])
    families = plan.paper2_families()
    if "dynamics" in families:
        runs = plan.figure2_runs(scale) + plan.figureS3_runs(scale) + plan.figureS3_follow_runs(scale)
        add("sgd_run", paths.SGD_RUN, [r["path"] for r in runs + plan.strong_recovery_sgd_runs(scale)])
        add("reference_flow", paths.REFERENCE_FLOW, [r["flow_path"] for r in runs])
        add("theorem1", paths.THEOREM1, plan.theorem1_paths(scale))
        add("landscape", paths.LANDSCAPE, plan.landscape_paths(scale))
        add("flow_ensemble", paths.FLOW_ENSEMBLE, [e["path"] for e in plan.figure2_flow_ensembles(scale)
                                                   + plan.figureS3_flow_ensembles(scale)
                                                   + plan.strong_recovery_ensembles(scale)])
        add("tied_velocity", paths.TIED_VELOCITY, [t["path"] for t in plan.tied_velocity_tables(scale)])
    if "moments" in families:
        figure1, figure4 = plan.figure1_moment_runs(scale), plan.figure4_moment_runs(scale)
        add("sgd_run", paths.SGD_RUN, [r["path"] for r in figure1 + figure4])
        add("reference_flow", paths.REFERENCE_FLOW, [r["flow_path"] for r in figure1])
        add("moment_truncations", paths.TRUNCATIONS, [r["truncations_path"] for r in figure1 + figure4])
        add("riccati_flow", paths.RICCATI, [r["exact_path"] for r in figure4])
        add("truncation_error", paths.TRUNCATION_ERROR, [t["path"] for t in plan.figureS6_tables(scale)])
        add("truncation_radius", paths.RADIUS, [plan.figure4_radius(scale)["path"]])
    if "untied" in families:
        runs = (plan.figure3_untied_runs(scale) + plan.figureS4_runs(scale)
                + plan.figureS5_runs(scale))
        add("untied_sgd_run", paths.UNTIED_SGD, [r["path"] for r in runs + plan.figure3_plateau_runs(scale)
                                                 + plan.untied_truncation_sgd_runs(scale)
                                                 + plan.untied_decay_sgd_runs(scale)])
        add("untied_theory", paths.UNTIED_THEORY, [r["flow_path"] for r in runs]
            + [r["limit_path"] for r in plan.figureS4_limit_runs(scale)])
        add("untied_fast_states", paths.FAST_STATES, [plan.fast_states_path(scale)])
        add("untied_velocity", paths.UNTIED_VELOCITY, [t["path"] for t in plan.untied_velocity_tables(scale)])
        add("untied_truncation", paths.UNTIED_TRUNCATION,
            [t["path"] for t in plan.untied_truncation_tables(scale)])
        add("untied_decay", paths.UNTIED_DECAY, [t["path"] for t in plan.untied_decay_tables(scale)])
    return results


def _planned_jobs(plan: Plan, scale: str) -> list[tuple[str, dict[str, str]]]:
    seen: set[str] = set()
    jobs: list[tuple[str, dict[str, str]]] = []
    for rule, spec, path in _planned_results(plan, scale):
        if path in seen:
            continue
        seen.add(path)
        jobs.append((rule, spec.parse(path)))
    for name in plan.figures():
        jobs.append((name, {"scale": scale}))
    for topic in plan.claim_topics(scale):
        jobs.append((f"claims_{topic}", {"scale": scale}))
    jobs.append(("claims", {"scale": scale}))
    return jobs
