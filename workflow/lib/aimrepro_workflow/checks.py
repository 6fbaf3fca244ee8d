"""The checks of a config that its JSON schema cannot express, before any job runs.

:func:`validated` is what the Snakefile and ``aimrepro cost`` do to a loaded
config: the schema (``aimrepro.config.validate_config``), then
:func:`check_config`, the cross-key checks (a figure family comes whole, an
index lies inside its grid, ...), then :func:`check_plan`, the plan of a scale
against ``limits``:

1. the number of jobs, bounded from the config before any job is made
   (:meth:`.plans.Plan.count`): a billion seeds is refused in microseconds;
2. every job of the plan, made: its typed parameters (the science's own specs
   refuse what they cannot run) and its memory (:mod:`aimrepro.resources`)
   against ``limits.job_memory_gb``;
3. the plan's expected core-hours (the cost model) against ``limits.plan_core_hours``.

A violation raises :class:`aimrepro.config.ConfigError` with one line naming
the key, its value and what is allowed, as the schema's own errors do.  The
key of a size is found by asking which of the job's sized values (each with
the config key the planner took it from, :attr:`.kinds.Job.keys`), set back to
its typical size, shrinks the job most; a value a preset inherits is named
where it is written (``aimrepro.config.source_key``).  No value the check
refuses can make it fail otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from aimrepro.config import ConfigError, configured_scales, source_key, validate_config

from .costs import job_cost
from .kinds import Job
from .plans import PAPER2_FAMILIES, Plan

__all__ = ["check_config", "check_plan", "key_parts", "size_keys", "validated", "SE_RHO_RANGE", "GIB"]

GIB = 2.0 ** 30
#: SE width ratios (``aimrepro.paper1.spectra.RHO_MIN``, ``RHO_MAX``) on which the state evolution
#: is validated, repeated so that the check need not import the spectra; a unit test keeps them equal.
SE_RHO_RANGE = (1e-4, 1e14)


def validated(config: dict[str, Any], schema: Mapping[str, Any], *, scales=None,
              plan: Plan | None = None) -> dict[str, Any]:
    """Fill the schema's defaults into ``config``, validate it, and check the plan of ``scales``.

    ``scales``: the presets whose plan is checked (default: every configured
    one); ``plan``: the :class:`Plan` to check (made if not given), so that the
    caller can keep its jobs.  Raises :class:`ConfigError` (one line).
    """
    validate_config(config, schema, plan_check=None)
    check_config(config)
    check_plan(config, scales, plan=plan)
    return config


def check_config(config: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` on the first cross-key violation; return None if there is none."""
    for check in (_scale, _se_width_ratios, _amp_plan, _paper2_families, _stop_overlaps, _figure_s6,
                  _untied_strong_recovery, _hardmax_tokens, _two_layer, _trends, _token_laws, _token_laws_paper2):
        problem = check(config)
        if problem:
            raise ConfigError(f"invalid config: {problem}")


def _scale(config) -> str | None:
    """The scale to run has a preset."""
    if config["scale"] not in config["scales"]:
        return (f"scale = {config['scale']!r}; allowed: a preset the config defines under scales "
                f"({', '.join(repr(s) for s in configured_scales(config))})")
    return None


def _amp_plan(config) -> str | None:
    plan = config["paper1"]["figure1"].get("amp")
    if plan:
        n = plan["alpha"]["n"]
        if plan["last_index"] >= n:
            return (f"paper1.figure1.amp.last_index = {plan['last_index']}; "
                    f"allowed: an index < alpha.n = {n}")
        left_rhos = {float(r) for r in config["paper1"]["figure1"]["left"]["rhos"]}
        for i, entry in enumerate(plan["first_index"]):
            if float(entry["rho"]) not in left_rhos:
                return (f"paper1.figure1.amp.first_index[{i}].rho = {entry['rho']}; "
                        f"allowed: one of left.rhos {sorted(left_rhos)}")
            if entry["index"] > plan["last_index"]:
                return (f"paper1.figure1.amp.first_index[{i}].index = {entry['index']}; "
                        f"allowed: an index <= last_index = {plan['last_index']}")
    right = config["paper1"]["figure2"]["right"].get("amp")
    for i, run in enumerate(right["runs"] if right else []):
        if run.get("last_index", 0) >= run["alpha"]["n"]:
            return (f"paper1.figure2.right.amp.runs[{i}].last_index = {run['last_index']}; "
                    f"allowed: an index < alpha.n = {run['alpha']['n']}")
    return None


def _paper2_families(config) -> str | None:
    """A family of paper-2 figures comes whole: all its sections, and their sizes at every scale."""
    sections = config.get("paper2", {})
    for family, (needed, _, _) in PAPER2_FAMILIES.items():
        present = [name for name in needed if name in sections]
        if not present:
            continue
        for name in needed:
            if name not in sections:
                return (f"paper2.{name} is missing; allowed: a mapping (the {family} figures need "
                        f"paper2.{', '.join(needed)} together)")
            for scale in configured_scales(config):
                if name not in config["scales"][scale].get("paper2", {}):
                    return (f"scales.{scale}.paper2.{name} is missing; allowed: the sizes of "
                            f"paper2.{name} at scale {scale} (see config.yaml)")
        if family == "untied":
            for scale in configured_scales(config):
                if "untied_flow" not in config["scales"][scale]["paper2"]:
                    return (f"scales.{scale}.paper2.untied_flow is missing; allowed: a mapping "
                            "(the integrator of the untied population flow)")
    return None


def _stop_overlaps(config) -> str | None:
    sections = config.get("paper2", {})
    for name in ("figureS3", "figureS5"):
        if name in sections and sections[name]["stop_overlap"] < sections["threshold"]:
            return (f"paper2.{name}.stop_overlap = {sections[name]['stop_overlap']}; allowed: a "
                    f"number >= paper2.threshold ({sections['threshold']})")
    return None


def _figure_s6(config) -> str | None:
    science = config.get("paper2", {}).get("figureS6")
    if science and not science["t_min"] < science["horizon"]:
        return (f"paper2.figureS6.t_min = {science['t_min']}; "
                f"allowed: a number < paper2.figureS6.horizon ({science['horizon']})")
    return None


def _untied_strong_recovery(config) -> str | None:
    """The window starts inside the horizon; SGD runs from replicates the flows have."""
    science = config.get("paper2", {}).get("untied_strong_recovery")
    if not science:
        return None
    for i, case in enumerate(science["cases"]):
        if not case["window_start"] < case["horizon"]:
            return (f"paper2.untied_strong_recovery.cases[{i}].window_start = "
                    f"{case['window_start']}; allowed: a number < its horizon ({case['horizon']})")
    for scale in configured_scales(config):
        sizes = config["scales"][scale].get("paper2", {}).get("untied_strong_recovery")
        if sizes and "sgd" in sizes and sizes["sgd"]["seeds"] > sizes["seeds"]:
            return (f"scales.{scale}.paper2.untied_strong_recovery.sgd.seeds = "
                    f"{sizes['sgd']['seeds']}; allowed: an integer <= its seeds ({sizes['seeds']}), "
                    "the replicates whose flows the SGD runs are compared with")
    return None


def _hardmax_tokens(config) -> str | None:
    """Figure S1 (paper1.hardmax_tokens) needs its table sizes at every scale and a fit below the node count."""
    science = config["paper1"].get("hardmax_tokens")
    if not science:
        return None
    table = science["table"]
    if table["degree"] >= table["nodes"]:
        return (f"paper1.hardmax_tokens.table.degree = {table['degree']}; allowed: an integer < "
                f"table.nodes = {table['nodes']}")
    missing = _missing_scale_section(config, "hardmax_tokens", "a mapping {Ts, n_reference} (the Fisher tables "
                                                              "of paper1.hardmax_tokens at this scale)")
    if missing:
        return missing
    for scale in configured_scales(config):
        sizes = config["scales"][scale]["hardmax_tokens"]
        amp = science.get("amp")
        if amp and "amp" in sizes and amp["T"] not in sizes["Ts"]:
            return (f"paper1.hardmax_tokens.amp.T = {amp['T']}; allowed: one of "
                    f"scales.{scale}.hardmax_tokens.Ts {sizes['Ts']} (the AMP is compared with that table's SE)")
    return None


def _two_layer(config) -> str | None:
    """Two layers (paper1.two_layer) need their sizes at every scale; drawn and trend skips need a table."""
    science = config["paper1"].get("two_layer")
    if not science:
        return None
    skips = [float(c) for c in science["skips"]]
    for i, skip in enumerate(science["figure_skips"]):
        if float(skip) not in skips:
            return (f"paper1.two_layer.figure_skips[{i}] = {skip:g}; allowed: one of paper1.two_layer.skips "
                    f"{science['skips']} (a drawn curve needs its table)")
    trend = science["amp"].get("trend")
    if trend and float(trend["skip"]) not in skips:
        return (f"paper1.two_layer.amp.trend.skip = {trend['skip']:g}; allowed: one of paper1.two_layer.skips "
                f"{science['skips']} (the trend is judged against that table's SE)")
    return _missing_scale_section(config, "two_layer", "a mapping {se_points, table, threshold, amp} (the sizes "
                                                       "of paper1.two_layer at this scale)")


def _missing_scale_section(config, section: str, allowed: str) -> str | None:
    """The refusal for the first configured scale without ``scales.<scale>.<section>``, or None."""
    for scale in configured_scales(config):
        if section not in config["scales"][scale]:
            return f"scales.{scale}.{section} is missing; allowed: {allowed}"
    return None


def _se_width_ratios(config) -> str | None:
    """The SE curves' width ratios lie where the state evolution is validated."""
    lo, hi = SE_RHO_RANGE
    p1 = config["paper1"]
    keys = [f"paper1.figure1.left.rhos[{i}]" for i in range(len(p1["figure1"]["left"]["rhos"]))]
    keys += [f"paper1.figure1.right.rhos[{i}]" for i in range(len(p1["figure1"]["right"]["rhos"]))]
    keys += [f"paper1.figure2.left.rhos[{i}]" for i in range(len(p1["figure2"]["left"]["rhos"]))]
    keys.append("paper1.figure2.right.rho")
    amp = p1["figure1"].get("amp")
    if amp:
        keys += [f"paper1.figure1.amp.first_index[{i}].rho" for i in range(len(amp["first_index"]))]
    for key in keys:
        rho = _value_at(config, key)
        if not lo <= rho <= hi:
            return (f"{key} = {_show(rho)}; allowed: a number in [{lo:g}, {hi:g}] "
                    f"(the width ratios on which the state evolution is validated)")
    return None


def _trends(config) -> str | None:
    names = [spec["name"] for spec in config["paper1"].get("trends", {}).get("amp", [])]
    if len(set(names)) != len(names):
        return f"paper1.trends.amp names {names}; allowed: distinct names"
    for scale in configured_scales(config):
        trends = config["scales"][scale].get("trends", {})
        for name in trends.get("amp", {}):
            if name not in names:
                return (f"scales.{scale}.trends.amp.{name}; allowed: a name of paper1.trends.amp "
                        f"{names}")
        sizes = [(f"scales.{scale}.trends.amp.{name}", size) for name, size in trends.get("amp", {}).items()]
        sizes += [(f"scales.{scale}.trends.gd", trends["gd"])] if "gd" in trends else []
        for key, size in sizes:
            for field in ("seeds", "amp_seeds"):
                counts = size.get(field)
                if isinstance(counts, list) and len(counts) != len(size["dims"]):
                    return (f"{key}.{field} = {counts}; allowed: one count, or one per d "
                            f"({len(size['dims'])} for dims {size['dims']})")
    return None


def _token_laws(config) -> str | None:
    """The token-law study (paper1.token_laws): distinct point names, sizes only of those points, and the
    Gaussian law among every point's laws (the reference of the paired differences)."""
    science = config["paper1"].get("token_laws")
    if not science:
        return None
    names = [spec["name"] for spec in science["amp"]]
    if len(set(names)) != len(names):
        return f"paper1.token_laws.amp names {names}; allowed: distinct names"
    for i, spec in enumerate(science["amp"]):
        if "gaussian" not in spec.get("laws", science["laws"]):
            where = f"paper1.token_laws.amp[{i}].laws" if "laws" in spec else "paper1.token_laws.laws"
            return f"{where} = {spec.get('laws', science['laws'])}; allowed: a list with gaussian (the reference)"
    if science.get("gd") and "gaussian" not in science["gd"].get("laws", science["laws"]):
        return (f"paper1.token_laws.gd.laws = {science['gd']['laws']}; allowed: a list with gaussian "
                f"(the reference)")
    if science.get("gd") and not config["paper1"]["figure2"]["right"].get("gd"):
        return "paper1.token_laws.gd needs paper1.figure2.right.gd (its beta and optimizer)"
    for scale in configured_scales(config):
        sizes = config["scales"][scale].get("token_laws") or {}
        for name, size in (sizes.get("amp") or {}).items():
            if name not in names:
                return f"scales.{scale}.token_laws.amp.{name}; allowed: a name of paper1.token_laws.amp {names}"
        keyed = [(f"scales.{scale}.token_laws.amp.{name}", size) for name, size in (sizes.get("amp") or {}).items()]
        keyed += [(f"scales.{scale}.token_laws.gd", sizes["gd"])] if sizes.get("gd") else []
        for key, size in keyed:
            counts = size["seeds"]
            if isinstance(counts, list) and len(counts) != len(size["dims"]):
                return (f"{key}.seeds = {counts}; allowed: one count, or one per d "
                        f"({len(size['dims'])} for dims {size['dims']})")
    return None


def _token_laws_paper2(config) -> str | None:
    """Paper 2's token-law sizes: a law's own sizes only for a law of paper2.token_laws.laws."""
    laws = (config.get("paper2", {}).get("token_laws") or {}).get("laws", [])
    for scale in configured_scales(config):
        sizes = config["scales"][scale].get("paper2", {}).get("token_laws") or {}
        for param, per_law in (sizes.get("law_dims") or {}).items():
            for law in per_law:
                if law not in laws:
                    return (f"scales.{scale}.paper2.token_laws.law_dims.{param}.{law}; allowed: a law of "
                            f"paper2.token_laws.laws {laws}")
    return None


# ---------------------------------------------------------------------------
# the plan against limits


def check_plan(config: Mapping[str, Any], scales=None, *, plan: Plan | None = None) -> None:
    """Raise :class:`ConfigError` if the plan of a scale exceeds ``limits`` (see the module notes).

    ``scales``: default every configured preset; the Snakefile checks the one it runs.
    """
    plan = plan if plan is not None else Plan(config)
    limits = config.get("limits", {})
    for scale in (configured_scales(config) if scales is None else scales):
        problem = (_count_problem(config, plan, scale, limits)
                   or _jobs_problem(config, plan, scale, limits))
        if problem:
            raise ConfigError(f"invalid config: {problem}")


def _count_problem(config, plan: Plan, scale: str, limits) -> str | None:
    """More jobs than limits.plan_jobs, counted from the config alone (nothing is planned)."""
    limit = int(limits.get("plan_jobs", 50_000))
    counts = plan.count(scale)
    total = sum(count.jobs for count in counts)
    if total <= limit:
        return None
    largest = max(counts, key=lambda count: count.jobs)
    key = source_key(config, largest.key)
    return (f"{key} = {_show(_value_at(config, key))}: the plan of scale {scale} has ~{total:.3g} jobs and "
            f"replicates ({largest.jobs:.3g} of them {largest.kind}), above limits.plan_jobs = {limit}")


def _jobs_problem(config, plan: Plan, scale: str, limits) -> str | None:
    try:
        jobs = plan.jobs(scale)
    except (ValueError, KeyError, TypeError, OverflowError, ZeroDivisionError) as err:
        return f"the plan of scale {scale} cannot be made: {err}"
    limit = int(limits.get("plan_jobs", 50_000))
    if len(jobs) > limit:
        largest = max(plan.count(scale), key=lambda count: count.jobs, default=None)
        where = f"{source_key(config, largest.key)} = {_show(_value_at(config, source_key(config, largest.key)))}: " \
            if largest else ""
        return f"{where}the plan of scale {scale} has {len(jobs)} jobs, above limits.plan_jobs = {limit}"
    return _memory_problem(config, jobs, limits) or _core_hours_problem(config, plan, scale, jobs, limits)


#: What a job's science refuses: a spec's own check of its arguments.
_REFUSALS = (ValueError, TypeError, OverflowError, ZeroDivisionError)


def _memory_problem(config, jobs: list[Job], limits) -> str | None:
    """A job the science refuses (named by the value that fixes it), or the largest job's memory."""
    largest, largest_memory = None, -1.0
    for job in jobs:
        try:
            memory = job.work.memory  # its typed params first: the science's own specs check them
        except _REFUSALS as err:
            name = _driver(job, lambda candidate: float(candidate.work.memory) * 0.0, require_lower=False)
            where = f"{_named(config, name)}: " if name else ""
            return f"{where}a job ({job.rule}) cannot run: {err}"
        if memory > largest_memory:
            largest, largest_memory = job, memory
    limit_gb = float(limits.get("job_memory_gb", 64))
    gib = largest_memory / GIB
    if largest is None or gib <= limit_gb:
        return None
    name = _driver(largest, lambda job: job.work.memory)
    if name is None:  # ordinary sizes: the limit is what is small
        return (f"limits.job_memory_gb = {limit_gb:g}: the largest job ({largest.rule}) needs "
                f"~{gib:.3g} GiB (estimate) at ordinary sizes")
    return (f"{_named(config, name)}: the largest job ({largest.rule}) needs ~{gib:.3g} GiB (estimate), "
            f"above limits.job_memory_gb = {limit_gb:g}")


def _core_hours_problem(config, plan: Plan, scale: str, jobs: list[Job], limits) -> str | None:
    """The largest job's expected CPU time against limits.job_core_hours, the plan's against
    limits.plan_core_hours (named by the size of its largest job, or by the count of its jobs)."""
    seconds = [job_cost(job).cpu_seconds for job in jobs]
    job_limit = float(limits.get("job_core_hours", 500))
    top, job = max(zip(seconds, jobs), key=lambda pair: pair[0])
    if top / 3600 > job_limit:
        name = _driver(job, lambda candidate: job_cost(candidate).cpu_seconds)
        where = _named(config, name) if name else f"limits.job_core_hours = {job_limit:g}"
        return (f"{where}: the largest job ({job.rule}) needs ~{top / 3600:.3g} core-hours (expected), "
                f"above limits.job_core_hours = {job_limit:g}" + ("" if name else " at ordinary sizes"))
    limit = float(limits.get("plan_core_hours", 20_000))
    hours = math.fsum(seconds) / 3600
    if hours <= limit:
        return None
    by_kind: dict[str, float] = {}
    for job, cpu in zip(jobs, seconds):
        by_kind[job.kind.name] = by_kind.get(job.kind.name, 0.0) + cpu
    kind = max(by_kind, key=by_kind.get)
    of_kind = [(cpu, job) for cpu, job in zip(seconds, jobs) if job.kind.name == kind]
    top, job = max(of_kind, key=lambda pair: pair[0])
    text = (f"the plan of scale {scale} needs ~{hours:.3g} core-hours (expected; {kind}: "
            f"{by_kind[kind] / 3600:.3g}, its largest job {top / 3600:.3g}), above limits.plan_core_hours = {limit:g}")
    if top >= by_kind[kind] / 2:  # one job: its size
        name = _driver(job, lambda candidate: job_cost(candidate).cpu_seconds)
        if name:
            return f"{_named(config, name)}: {text}"
    counts = [count for count in plan.count(scale) if count.kind == kind]
    if counts:  # many jobs: their number
        key = source_key(config, max(counts, key=lambda count: count.jobs).key)
        return f"{key} = {_show(_value_at(config, key))}: {text}"
    return f"limits.plan_core_hours = {limit:g}: {text} at ordinary sizes"


def _driver(job: Job, measure: Callable[[Job], float], *, require_lower: bool = True) -> str | None:
    """The config key of the sized value whose typical size lowers ``measure`` most, or None.

    Each value of ``job.kind.sizes`` that the planner took from a key is set
    back to its typical (quick-scale) size, one at a time (each entry of a list
    of values apart); the smallest ``measure`` wins, the first listed on a tie.
    A candidate the science refuses is skipped.  With
    ``require_lower`` None is returned when no candidate lowers the measure
    (the sizes are ordinary).
    """
    original = math.inf if not require_lower else measure(job)
    best, best_key = math.inf, None
    for name, typical in job.kind.sizes.items():
        key = job.keys.get(name)
        if key is None or name not in job.values:
            continue
        value = job.values[name]
        candidates = ([(k, value[:i] + [typical] + value[i + 1:]) for i, k in enumerate(key)]
                      if isinstance(key, list) else [(key, typical)])
        for candidate_key, candidate in candidates:
            try:
                result = measure(job.with_values(**{name: candidate}))
            except _REFUSALS:
                continue
            if result < best:
                best, best_key = result, candidate_key
    return best_key if best_key is not None and best < original else None


def size_keys(config: Mapping[str, Any], scale: str, plan: Plan | None = None) -> list[str]:
    """The config keys the plan of ``scale`` takes its sizes from, each once (as the plan reads them).

    Every sized value of every job (:attr:`.kinds.Kind.sizes`) with its key, each entry of a list
    apart, and the counts of :meth:`.plans.Plan.count`: the keys the check can name.  A key of an
    expanded preset may be written in its base (``aimrepro.config.source_key``).
    """
    plan = plan if plan is not None else Plan(config)
    keys: dict[str, None] = {count.key: None for count in plan.count(scale)}
    for job in plan.jobs(scale):
        for name in job.kind.sizes:
            key = job.keys.get(name)
            for one in (key if isinstance(key, list) else [key] if key else []):
                keys[one] = None
    # a value left to its default has no key in the config
    return [key for key in keys if key_parts(config, key) is not None]


def _named(config, key: str) -> str:
    """``key = value``, the key where a preset writes it."""
    key = source_key(config, key)
    return f"{key} = {_show(_value_at(config, key))}"


def key_parts(config: Mapping, key: str) -> list[str | int] | None:
    """The parts of a key path ``a.b[0].c`` in ``config``, or None if it holds no value there.

    A name may hold a dot (the trend ``hardmax_rho0.2``): at each mapping the longest
    name the path continues with is taken.
    """
    node: Any = config
    parts: list[str | int] = []
    rest = key
    while rest:
        if rest.startswith("["):
            index, _, rest = rest[1:].partition("]")
            if not (isinstance(node, list) and index.isdigit() and int(index) < len(node)):
                return None
            node = node[int(index)]
            parts.append(int(index))
        elif isinstance(node, Mapping):
            names = [name for name in node if isinstance(name, str) and (
                rest == name or rest.startswith(name + ".") or rest.startswith(name + "["))]
            if not names:
                return None
            name = max(names, key=len)
            node, rest = node[name], rest[len(name):]
            parts.append(name)
        else:
            return None
        rest = rest.removeprefix(".")
    return parts


def _value_at(config: Mapping, key: str) -> Any:
    """The config value at a key path (None if absent: the check never fails on a key)."""
    parts = key_parts(config, key)
    if parts is None:
        return None
    node: Any = config
    for part in parts:
        node = node[part]
    return node


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)
