"""Cross-key checks of the config that its JSON schema cannot express.

Run once after the schema validation (``aimrepro.config.validate_config``),
before anything is planned; a violation raises
:class:`aimrepro.config.ConfigError` with one line naming the key, its value
and what is allowed, as the schema's own errors do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aimrepro.config import ConfigError, configured_scales

from .plans import PAPER2_FAMILIES

__all__ = ["check_config"]


def check_config(config: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` on the first cross-key violation; return None if there is none."""
    for check in (_scale, _amp_plan, _paper2_families, _stop_overlaps, _figure_s6, _untied_strong_recovery,
                  _hardmax_tokens, _trends):
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
    for scale in configured_scales(config):
        if "hardmax_tokens" not in config["scales"][scale]:
            return (f"scales.{scale}.hardmax_tokens is missing; allowed: a mapping {{Ts, n_reference}} "
                    "(the Fisher tables of paper1.hardmax_tokens at this scale)")
        sizes = config["scales"][scale]["hardmax_tokens"]
        amp = science.get("amp")
        if amp and "amp" in sizes and amp["T"] not in sizes["Ts"]:
            return (f"paper1.hardmax_tokens.amp.T = {amp['T']}; allowed: one of "
                    f"scales.{scale}.hardmax_tokens.Ts {sizes['Ts']} (the AMP is compared with that table's SE)")


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
    return None
