"""What each job costs, for the rules, ``aimrepro cost`` and the config check.

One model serves three readers:

* the rules: every rule's ``threads``, ``mem_mb`` and ``runtime`` are
  :meth:`CostModel.threads`, :meth:`CostModel.resources` of the rule (the
  rule's callables receive the job's wildcards, as Snakemake passes them, and
  price the job the plan has at that path, :meth:`~.plans.Plan.job_of`);
* ``aimrepro cost``: :meth:`CostModel.table` prices every job of
  :meth:`~.plans.Plan.jobs` at a scale and sums them per rule;
* the config check (:mod:`.checks`), which compares each job's memory and the
  plan's core-hours with ``limits``; and the tests, which compare the model
  with measured jobs (``benchmarks/results/quick_jobs.json``, gathered by
  ``benchmarks/gather_job_costs.py``).

A job's work is its kind's (:mod:`.kinds`: operations counted from its typed
parameters), priced by :mod:`.prices`.

Limits for a scheduler
----------------------
``runtime`` (minutes) = :data:`RUNTIME_MARGIN` × the bound's CPU seconds /
(threads × :data:`THREAD_EFFICIENCY`) + :data:`RUNTIME_GRACE_MINUTES`;
``mem_mb`` = :data:`MEMORY_MARGIN` × the peak memory + :data:`MEMORY_GRACE_MB`.
The margins cover a slower node and the spread of the measured prices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aimrepro import resources as R  # noqa: F401 -- calibration scripts use costs.R

from .kinds import KINDS, Job
from .plans import Plan
from .prices import PRICES, SIDECAR_BYTES, STARTUP, TYPICAL

__all__ = [
    "CostModel", "JobCost", "PRICES", "STARTUP", "TYPICAL", "loop_from_diagnostics", "job_cost",
    "RUNTIME_MARGIN", "RUNTIME_GRACE_MINUTES", "THREAD_EFFICIENCY", "MEMORY_MARGIN",
    "MEMORY_GRACE_MB", "SIDECAR_BYTES", "format_table", "memory_limit_mb", "runtime_limit_minutes",
]

#: Scheduler limits from the model: runtime = margin × bound / (threads × efficiency) + grace.
RUNTIME_MARGIN = 3.0
RUNTIME_GRACE_MINUTES = 10
#: Assumed parallel efficiency of a job's BLAS threads (only GD and paper-size untied SGD use several).
THREAD_EFFICIENCY = 0.6
#: mem_mb = margin × estimated peak + grace (MB).
MEMORY_MARGIN = 1.5
MEMORY_GRACE_MB = 200



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


def job_cost(job: Job, loop: float | None = None) -> JobCost:
    """The cost of one job; ``loop`` replaces the expected length of its main loop (a measured one)."""
    work = job.work
    expected = work.loop if loop is None else float(loop)
    return JobCost(rule=job.rule, cpu_seconds=work.seconds(expected),
                   cpu_seconds_bound=max(work.seconds(work.loop_bound), work.seconds(expected)),
                   memory_bytes=work.memory, disk_bytes=work.disk, threads=work.threads,
                   temporary=work.temporary, loop=expected)


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

    def __init__(self, config: Mapping[str, Any], plan: Plan | None = None) -> None:
        self.config = config
        self.plan = plan if plan is not None else Plan(config)

    # --- one job ------------------------------------------------------------

    def job(self, rule: str, wildcards: Mapping[str, str], *, loop: float | None = None) -> JobCost:
        """The cost of the job of ``rule`` with these wildcards (strings, as in a path).

        ``loop`` replaces the expected length of the main loop (a measured one).
        """
        return job_cost(self.plan.job_of(rule, _as_dict(wildcards)), loop)

    def units(self, rule: str, wildcards: Mapping[str, str], *,
              loop: float | None = None) -> tuple[str, dict[str, float]]:
        """(start-up name, amount of each unit of work) of a job: what calibration fits."""
        work = self.plan.job_of(rule, _as_dict(wildcards)).work
        return work.startup, work.units(work.loop if loop is None else float(loop))

    # --- for the rules --------------------------------------------------------

    def threads(self, rule: str) -> Callable:
        """``threads:`` of a rule: a callable of the wildcards."""
        def threads(wildcards) -> int:
            return self.job(rule, wildcards).threads
        return threads

    def mem_mb(self, rule: str) -> Callable:
        def mem_mb(wildcards) -> int:
            return memory_limit_mb(self.job(rule, wildcards).memory_bytes)
        return mem_mb

    def runtime(self, rule: str) -> Callable:
        def runtime(wildcards, threads) -> int:
            return runtime_limit_minutes(self.job(rule, wildcards).cpu_seconds_bound, threads)
        return runtime

    def resources(self, rule: str) -> dict[str, Callable]:
        """``resources:`` of a rule: ``mem_mb`` and ``runtime`` (minutes) from the model."""
        return {"mem_mb": self.mem_mb(rule), "runtime": self.runtime(rule)}

    # --- every job of a scale -----------------------------------------------------

    def planned_jobs(self, scale: str) -> list[tuple[str, dict[str, str]]]:
        """(rule, wildcards) of every job the plan has at ``scale``, each once."""
        out = []
        for job in self.plan.jobs(scale):
            spec = job.kind.path
            wildcards = {"scale": scale} if spec is None else spec.parse(job.path)
            if job.kind.per_scale:
                wildcards.pop("scale")
            out.append((job.rule, wildcards))
        return out

    def costs(self, scale: str) -> list[JobCost]:
        return [job_cost(job) for job in self.plan.jobs(scale)]

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


def _as_dict(wildcards) -> dict[str, str]:
    return dict(wildcards.items()) if hasattr(wildcards, "items") else dict(wildcards)


def _group(rule: str) -> str:
    """The row of ``aimrepro cost`` a rule's jobs go to: one for all figures, one for all claims."""
    kind = KINDS.of_rule(rule)
    return kind.group or kind.name
