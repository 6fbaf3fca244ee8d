"""The plan: from the config, which results each figure and claims topic needs.

:class:`Plan` wraps a validated config.  Its methods return, for one scale,
the curves, runs and tables a figure or claims topic reads, as plain dicts
(``path`` and the parameters of each): the rules take their inputs from the
paths and their params from the rest, so the sidecar of a figure records
exactly what it plotted.  Paths are spelled by :mod:`.paths` only.

Which figures exist follows the config: paper 1's always; a family of paper
2's when its sections are configured (the tests use smaller configs).  A
claims topic is planned when the results it reads are planned at that scale
(no AMP sizes at a scale: no AMP claims there).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from aimrepro.numerics.grids import grid_values
from aimrepro.paper1.thresholds import n_softmax_measurements

from . import paths
from .paths import fmt_number

__all__ = ["Plan", "PAPER2_FAMILIES", "seeds_per_dim", "strided_indices"]

#: Paper 2's figure families: the config sections each needs, its figures, its claims topic.
PAPER2_FAMILIES = {
    "dynamics": (("figure2", "figureS1", "figureS2", "figureS3"),
                 ("paper2_fig2", "paper2_figS1", "paper2_figS2", "paper2_figS3"), "paper2_dynamics"),
    "moments": (("figure1", "figure4", "figureS6"),
                ("paper2_fig1", "paper2_fig4", "paper2_figS6"), "paper2_moments"),
    "untied": (("figure3", "figureS4", "figureS5"),
               ("paper2_fig3", "paper2_figS4", "paper2_figS5"), "paper2_untied"),
}

#: The loss prefactor c of L = c |F(G1) - F(G2)|^2 unless a figure sets it.
DEFAULT_PREFACTOR = 0.5


def strided_indices(first: int, last: int, stride: int) -> list[int]:
    """Every stride-th index from last down to first, in increasing order (last is always run)."""
    return sorted(range(int(last), int(first) - 1, -int(stride)))


def seeds_per_dim(size: Mapping | None, key: str = "seeds") -> list[tuple[int, int]]:
    """(d, number of seeds) per size of a trend: ``size[key]`` is one count for every d or one per d."""
    if not size:
        return []
    dims = [int(d) for d in size["dims"]]
    counts = size[key]
    counts = [int(counts)] * len(dims) if isinstance(counts, int) else [int(c) for c in counts]
    return list(zip(dims, counts))


def _rounded(value: float) -> float:
    """The value a job reads back from its path (6 significant digits)."""
    return float(fmt_number(value))


class Plan:
    """The jobs of a validated config, per scale."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config

    # --- what is drawn ----------------------------------------------------

    def paper2_families(self) -> list[str]:
        sections = self.config.get("paper2", {})
        return [name for name, (needed, _, _) in PAPER2_FAMILIES.items()
                if all(key in sections for key in needed)]

    def figures(self) -> list[str]:
        names = ["paper1_fig1", "paper1_fig2"]
        if self.hardmax_tokens_planned():
            names.append("paper1_figS1")

        if self.config["paper1"].get("figureS2"):
            names.append("paper1_figS2")
        for family in self.paper2_families():
            names += PAPER2_FAMILIES[family][1]
        return names

    def claim_topics(self, scale: str) -> list[str]:
        topics = ["paper1_theory"]
        if self.amp_curves(scale):
            topics.append("paper1_amp")
        if self.figure2_gd_curves(scale):
            topics.append("paper1_gd")
        if self.hardmax_tokens_planned():
            topics.append("paper1_hardmax_tokens")
        if self.tokens_amp_runs(scale):
            topics.append("paper1_hardmax_tokens_amp")
        topics += [PAPER2_FAMILIES[family][2] for family in self.paper2_families()]
        return topics

    def unmeasured_topics(self, scale: str) -> dict[str, str]:
        """Claims topics the config does not measure at ``scale``, with the reason."""
        reasons = {}
        if not self.amp_curves(scale):
            reasons["paper1_amp"] = f"no AMP sizes in scales.{scale}.amp"
        if not self.figure2_gd_curves(scale):
            reasons["paper1_gd"] = f"no GD sizes in scales.{scale}.gd"
        if self.hardmax_tokens_planned() and not self.tokens_amp_runs(scale):
            reasons["paper1_hardmax_tokens_amp"] = (
                f"no scales.{scale}.hardmax_tokens.amp: GAMP-RIE with the sampled T = 3 hardmax "
                "g_out costs ~1 s per iteration at d = 150 and needs several d and seeds for a "
                "finite-size trend (paper scale; docs/paper1.md §3.6)")
        if "hardmax_tokens" not in self.config["paper1"]:
            reasons["paper1_hardmax_tokens"] = "no paper1.hardmax_tokens in the config"
        for family, (needed, _, topic) in PAPER2_FAMILIES.items():
            if family not in self.paper2_families():
                reasons[topic] = f"no paper2.{', '.join(needed)} in the config"
        return reasons

    def claim_fragments(self, scale: str) -> list[str]:
        return [paths.CLAIM_FRAGMENT.format(scale, topic=topic) for topic in self.claim_topics(scale)]

    def all_targets(self, scale: str) -> list[str]:
        targets = []
        for name in self.figures():
            targets += list(paths.figure_paths(scale, name).values())
        targets.append(paths.claims_table(scale))
        return targets

    # --- paper 1: state evolution -------------------------------------------

    def _curve(self, scale, panel, channel, T, rho, axis, grid, n_points) -> dict:
        return {
            "panel": panel, "channel": channel, "T": int(T), "rho": _rounded(rho), "axis": axis,
            "path": paths.SE_CURVE.format(scale, channel=channel, T=T, rho=rho, axis=axis,
                                          spacing=grid["spacing"], lo=grid["lo"], hi=grid["hi"],
                                          n=n_points),
        }

    def figure1_curves(self, scale: str) -> list[dict]:
        """SE curves of paper 1, Figure 1 (hardmax), in drawing order; rho 0 is the rho -> 0 limit."""
        figure = self.config["paper1"]["figure1"]
        n_points = self.config["scales"][scale]["se_points"]
        curves = []
        for channel in figure["channels"]:
            for rho in figure["left"]["rhos"]:
                curves.append(self._curve(scale, "left", channel, figure["T"], rho, "alpha",
                                          figure["left"]["alpha"], n_points["hardmax"]))
            for rho in figure["right"]["rhos"]:
                curves.append(self._curve(scale, "right", channel, figure["T"], rho, "alphabar",
                                          figure["right"]["alphabar"], n_points["hardmax"]))
            if figure["right"]["small_width_limit"]:
                curves.append(self._curve(scale, "right", channel, figure["T"], 0.0, "alphabar",
                                          figure["right"]["alphabar"], n_points["small_width"]))
        return curves

    def figure2_curves(self, scale: str) -> list[dict]:
        """SE curves of paper 1, Figure 2 (softmax, beta = 1), in drawing order."""
        figure = self.config["paper1"]["figure2"]
        n_points = self.config["scales"][scale]["se_points"]["softmax"]
        left, right = figure["left"], figure["right"]
        curves = [self._curve(scale, "left", "softmax", left["T"], rho, "alphapr", left["alphapr"],
                              n_points) for rho in left["rhos"]]
        if left["rho_infinity"]:
            curves.append(self._curve(scale, "left", "softmax", left["T"], math.inf, "alpha",
                                      left["rho_infinity_alpha"], n_points))
        curves.append(self._curve(scale, "right", "softmax", right["T"], right["rho"], "alphaT",
                                  right["alphaT"], n_points))
        return curves

    # --- paper 1: hardmax attention with T >= 3 tokens (beyond the paper) -------

    def hardmax_tokens_planned(self) -> bool:
        """paper1.hardmax_tokens is configured (its sizes per scale are then required, checks.py)."""
        return "hardmax_tokens" in self.config["paper1"]

    def tokens_size(self, scale: str) -> dict:
        """scales.<scale>.hardmax_tokens: {Ts, n_reference} of the Fisher tables."""
        return self.config["scales"][scale]["hardmax_tokens"]

    def fisher_table(self, scale: str, T: int, nref: int, seed: int) -> dict:
        """The Fisher table F_T(m) with ``nref`` reference samples and ``seed`` (docs/paper1.md §3.6)."""
        table = self.config["paper1"]["hardmax_tokens"]["table"]
        values = dict(T=int(T), x_min=_rounded(table["x_min"]), nodes=int(table["nodes"]),
                      nref=int(nref), degree=int(table["degree"]), seed=int(seed))
        path = paths.FISHER_TABLE.format(scale, **values)
        return {**values, "first_block": int(table["first_block"]), "path": path}

    def fisher_tables(self, scale: str) -> list[dict]:
        """One Fisher table per T of the scale, seeded by the config's seed (node seeds keyed by T)."""
        if not self.hardmax_tokens_planned():
            return []
        size = self.tokens_size(scale)
        return [self.fisher_table(scale, T, size["n_reference"], self.config["seed"])
                for T in size["Ts"]]

    def tokens_curves(self, scale: str) -> list[dict]:
        """SE curves of Figure S1: Figure 1 left's rhos and alpha grid, one per T with a table."""
        if not self.hardmax_tokens_planned():
            return []
        left = self.config["paper1"]["figure1"]["left"]
        n_points = self.config["scales"][scale]["se_points"]["hardmax"]
        grid = left["alpha"]
        curves = []
        for table in self.fisher_tables(scale):
            for rho in left["rhos"]:
                curves.append({
                    "T": table["T"], "rho": _rounded(rho), "table": table["path"],
                    "degree": table["degree"],
                    "path": paths.TOKENS_SE_CURVE.format(
                        scale, T=table["T"], rho=rho, spacing=grid["spacing"], lo=grid["lo"],
                        hi=grid["hi"], n=n_points, nref=table["nref"], seed=table["seed"])})
        return curves

    def tokens_exact_curves(self, scale: str) -> list[dict]:
        """Exact corrected T = 2 curves on Figure S1's grid (the files of Figure 1 left when it draws them)."""
        if not self.hardmax_tokens_planned():
            return []
        left = self.config["paper1"]["figure1"]["left"]
        n_points = self.config["scales"][scale]["se_points"]["hardmax"]
        return [self._curve(scale, "left", "hardmax", 2, rho, "alpha", left["alpha"], n_points)
                for rho in left["rhos"]]

    def tokens_amp_runs(self, scale: str) -> list[dict]:
        """GAMP-RIE runs of the T >= 3 hardmax channel, per d and replicate, or [] (no sizes at the scale)."""
        if not self.hardmax_tokens_planned():
            return []
        science = self.config["paper1"]["hardmax_tokens"].get("amp")
        size = self.tokens_size(scale).get("amp")
        if not science or not size:
            return []
        T, rho, alpha = int(science["T"]), _rounded(science["rho"]), _rounded(science["alpha"])
        proposals = int(science.get("proposals", 256))
        runs = []
        for d in size["dims"]:
            for seed in range(int(size["seeds"])):
                runs.append({
                    "T": T, "rho": rho, "alpha": alpha, "d": int(d), "seed": seed, "proposals": proposals,
                    "path": paths.TOKENS_AMP_RUN.format(scale, T=T, rho=rho, d=d, alpha=alpha,
                                                        proposals=proposals, seed=seed),
                    "data": paths.DATASET.format(scale, link="hardmax", T=T, rho=rho, d=d, alpha=alpha,
                                                 seed=seed)})
        return runs

    def fisher_table_of(self, scale: str, T: int) -> dict:
        """The planned Fisher table of this T at the scale."""
        for table in self.fisher_tables(scale):
            if table["T"] == int(T):
                return table
        raise ValueError(f"no Fisher table for T={T} at scale {scale} (scales.{scale}.hardmax_tokens.Ts)")

    def tokens_amp_table(self, scale: str) -> dict:
        """The Fisher table whose SE the T >= 3 AMP runs are compared with."""
        return self.fisher_table_of(scale, self.config["paper1"]["hardmax_tokens"]["amp"]["T"])

    def figureS2_gen_curves(self, scale: str) -> list[dict]:
        """Generalisation-error curves of paper 1, Figure S2 (softmax per T, corrected hardmax), or []."""
        figure = self.config["paper1"].get("figureS2")
        if not figure:
            return []
        n_points = self.config["scales"][scale]["se_points"]
        curves = []
        softmax = figure.get("softmax")
        for T in (softmax["Ts"] if softmax else []):
            grid = softmax["alphaT"]
            curves.append({"channel": "softmax", "T": int(T), "rho": _rounded(figure["rho"]), "axis": "alphaT",
                           "path": paths.GEN_CURVE.format(scale, channel="softmax", T=T, rho=figure["rho"],
                                                          axis="alphaT", spacing=grid["spacing"], lo=grid["lo"],
                                                          hi=grid["hi"], n=n_points["softmax"])})
        if figure.get("hardmax"):
            grid = figure["hardmax"]["alpha"]
            curves.append({"channel": "hardmax", "T": 2, "rho": _rounded(figure["rho"]), "axis": "alpha",
                           "path": paths.GEN_CURVE.format(scale, channel="hardmax", T=2, rho=figure["rho"],
                                                          axis="alpha", spacing=grid["spacing"], lo=grid["lo"],
                                                          hi=grid["hi"], n=n_points["hardmax"])})
        return curves

    def figureS2_amp_curves(self, scale: str) -> list[dict]:
        """The AMP curves of Figures 1 and 2 whose held-out errors Figure S2 draws (same channel, T, rho)."""
        wanted = {(c["channel"], c["T"], c["rho"]) for c in self.figureS2_gen_curves(scale)}
        return [c for c in self.amp_curves(scale) if (c["channel"], c["T"], c["rho"]) in wanted]

    # --- paper 1: AMP ---------------------------------------------------------

    def amp_size(self, scale: str, family: str) -> dict | None:
        """scales.<scale>.amp.<family> ({d, seeds, alpha_stride}), or None: no AMP at this scale."""
        return self.config["scales"][scale].get("amp", {}).get(family)

    def _amp_curve(self, scale, channel, T, rho, size, alphas, beta=None, **extra) -> dict:
        alphas = [_rounded(a) for a in alphas]
        seeds = list(range(int(size["seeds"])))
        token = paths.dataset_link(channel, beta)
        common = dict(channel=token, T=T, rho=rho, d=size["d"])
        return {
            "channel": channel, "T": int(T), "rho": _rounded(rho), "d": int(size["d"]),
            "beta": beta, "alphas": alphas, "seeds": seeds,
            "path": paths.AMP_SUMMARY.format(scale, n=len(seeds), **common),
            "runs": [[paths.AMP_RUN.format(scale, alpha=a, seed=s, **common) for s in seeds]
                     for a in alphas],
            **extra,
        }

    def figure1_amp_curves(self, scale: str) -> list[dict]:
        """AMP marker curves of Figure 1 left (one per channel and rho), or [] if not configured.

        A rho whose width r = rho d is below the scale's ``min_width`` is left out.
        """
        plan = self.config["paper1"]["figure1"].get("amp")
        size = self.amp_size(scale, "hardmax")
        if not plan or not size:
            return []
        spec = plan["alpha"]
        grid = grid_values(spec["spacing"], spec["lo"], spec["hi"], spec["n"])
        curves = []
        for channel in plan["channels"]:
            for entry in plan["first_index"]:
                if entry["rho"] * size["d"] < size.get("min_width", 0):
                    continue  # r = rho d below the extensive-rank regime the theory describes
                picked = strided_indices(entry["index"], plan["last_index"], size.get("alpha_stride", 1))
                curves.append(self._amp_curve(scale, channel, self.config["paper1"]["figure1"]["T"],
                                              entry["rho"], size, [grid[i] for i in picked],
                                              panel="left"))
        return curves

    def figure2_amp_curves(self, scale: str) -> list[dict]:
        """AMP marker curves of Figure 2 right (one per T), or [] if not configured."""
        right = self.config["paper1"]["figure2"]["right"]
        plan = right.get("amp")
        size = self.amp_size(scale, "softmax")
        if not plan or not size:
            return []
        curves = []
        for run in plan["runs"]:
            spec = run["alpha"]
            grid = grid_values(spec["spacing"], spec["lo"], spec["hi"], spec["n"])
            last = run.get("last_index", spec["n"] - 1)
            picked = strided_indices(0, last, size.get("alpha_stride", 1))
            curves.append(self._amp_curve(scale, "softmax", run["T"], right["rho"], size,
                                          [grid[i] for i in picked], beta=float(plan["beta"]),
                                          panel="right"))
        return curves

    def amp_curves(self, scale: str) -> list[dict]:
        return self.figure1_amp_curves(scale) + self.figure2_amp_curves(scale)

    # --- paper 1: finite-size trends of the claims ---------------------------------

    def trend_sizes(self, scale: str) -> dict:
        """scales.<scale>.trends ({amp: {name: {dims, seeds}}, gd: {dims, seeds, inits}}), or {}."""
        return self.config["scales"][scale].get("trends", {})

    def amp_trends(self, scale: str) -> list[dict]:
        """Every configured AMP trend point (paper1.trends.amp) with its runs per d at this scale.

        A trend without sizes at the scale comes back with ``points`` empty, so
        that its claims row can say it was not measured.
        """
        science = self.config["paper1"].get("trends", {}).get("amp", [])
        sizes = self.trend_sizes(scale).get("amp", {})
        trends = []
        for spec in science:
            size = sizes.get(spec["name"])
            beta = float(spec["beta"]) if spec.get("beta") is not None else None
            token = paths.dataset_link(spec["channel"], beta)
            alpha = _rounded(spec["alpha"])
            points = []
            for d, n_seeds in seeds_per_dim(size):
                seeds = list(range(n_seeds))
                points.append({"d": int(d), "seeds": seeds, "runs": [
                    paths.AMP_RUN.format(scale, channel=token, T=spec["T"], rho=spec["rho"], d=d,
                                         alpha=alpha, seed=s) for s in seeds]})
            trends.append({"name": spec["name"], "channel": spec["channel"], "T": int(spec["T"]),
                           "rho": _rounded(spec["rho"]), "beta": beta, "alpha": alpha, "points": points})
        return trends

    def gd_trend(self, scale: str) -> dict | None:
        """The GD trend point (paper1.trends.gd) with its runs per d, or None if not configured.

        ``points`` is empty at a scale without sizes (scales.<scale>.trends.gd).
        """
        spec = self.config["paper1"].get("trends", {}).get("gd")
        right = self.config["paper1"]["figure2"]["right"]
        if not spec or not right.get("gd"):
            return None
        size = self.trend_sizes(scale).get("gd")
        beta = float(right["gd"]["beta"])
        alpha = _rounded(spec["alphaT"] / n_softmax_measurements(spec["T"]))
        link = paths.dataset_link("softmax", beta)
        points = []
        for i, (d, n_seeds) in enumerate(seeds_per_dim(size)):
            seeds = list(range(n_seeds))
            amp_seeds = list(range(max(seeds_per_dim(size, "amp_seeds")[i][1], n_seeds))
                             if size.get("amp_seeds") else [])
            points.append({"d": int(d), "inits": int(size["inits"]), "seeds": seeds, "runs": [
                paths.GD_RUN.format(scale, link=link, T=spec["T"], rho=right["rho"], d=d,
                                    inits=size["inits"], alpha=alpha, seed=s) for s in seeds],
                "amp_seeds": amp_seeds, "amp_runs": [
                paths.AMP_RUN.format(scale, channel=link, T=spec["T"], rho=right["rho"], d=d,
                                     alpha=alpha, seed=s) for s in amp_seeds]})
        return {"T": int(spec["T"]), "rho": _rounded(right["rho"]), "beta": beta, "alpha": alpha,
                "alphaT": alpha * n_softmax_measurements(spec["T"]), "points": points}

    def trend_runs(self, scale: str, kind: str) -> list[str]:
        """Every run path of one kind of trend at this scale.

        ``kind``: ``"amp"`` (the AMP trends), ``"gd"`` (the GD trend's GD runs)
        or ``"gd_amp"`` (the GD trend's control-variate AMP runs on the same
        datasets, when the scale configures ``amp_seeds``).
        """
        if kind == "amp":
            return [run for trend in self.amp_trends(scale) for point in trend["points"]
                    for run in point["runs"]]
        if kind not in ("gd", "gd_amp"):
            raise ValueError(f"kind must be 'amp', 'gd' or 'gd_amp', got {kind!r}")
        trend = self.gd_trend(scale)
        key = "runs" if kind == "gd" else "amp_runs"
        return [run for point in (trend["points"] if trend else []) for run in point[key]]

    # --- paper 1: gradient descent ---------------------------------------------

    def gd_size(self, scale: str) -> dict | None:
        """scales.<scale>.gd ({d, seeds, inits, alpha_stride, alphaT_max, threads}), or None."""
        return self.config["scales"][scale].get("gd")

    def figure2_gd_curves(self, scale: str) -> list[dict]:
        """GD marker curves of Figure 2 right, one per T, or [] if not configured.

        The alphas are every alpha_stride-th point of the grid counted back from
        its last point, then those with alpha (T^2+T-2) <= alphaT_max (if set).
        """
        right = self.config["paper1"]["figure2"]["right"]
        plan = right.get("gd")
        size = self.gd_size(scale)
        if not plan or not size:
            return []
        spec = plan["alpha"]
        grid = grid_values(spec["spacing"], spec["lo"], spec["hi"], spec["n"])
        picked = [grid[i] for i in strided_indices(0, spec["n"] - 1, size.get("alpha_stride", 1))]
        beta = float(plan["beta"])
        d, n_inits = int(size["d"]), int(size["inits"])
        seeds = list(range(int(size["seeds"])))
        curves = []
        for T in plan["Ts"]:
            measurements = n_softmax_measurements(T)
            alphas = [_rounded(a) for a in picked
                      if size.get("alphaT_max") is None or a * measurements <= size["alphaT_max"]]
            if not alphas:
                continue
            common = dict(link=paths.dataset_link("softmax", beta), T=T, rho=right["rho"], d=d,
                          inits=n_inits)
            curves.append({
                "T": int(T), "rho": _rounded(right["rho"]), "d": d, "inits": n_inits, "beta": beta,
                "alphas": alphas, "seeds": seeds,
                "path": paths.GD_SUMMARY.format(scale, n=len(seeds), **common),
                "runs": [[paths.GD_RUN.format(scale, alpha=a, seed=s, **common) for s in seeds]
                         for a in alphas],
            })
        return curves

    @staticmethod
    def without_runs(curves: Sequence[Mapping]) -> list[dict]:
        """Curves as rule params: everything but the list of run paths (those are inputs)."""
        return [{k: v for k, v in curve.items() if k != "runs"} for curve in curves]

    def curve_of(self, curves: Sequence[Mapping], path: str) -> Mapping:
        """The planned curve whose summary is ``path``."""
        for curve in curves:
            if curve["path"] == path:
                return curve
        raise ValueError(f"{path} is not a planned curve of the config")

    # --- paper 2: dynamics ------------------------------------------------------

    def p2_sizes(self, scale: str) -> dict:
        return self.config["scales"][scale]["paper2"]

    def _seed(self, replicate: int) -> int:
        return self.config["paper2"]["seed"] + replicate

    @staticmethod
    def sgd_run_path(scale, *, param, link, T, rho, normalisation, d, lr, batch, weight_decay,
                     horizon, records, stop, seed, c=DEFAULT_PREFACTOR) -> str:
        return paths.SGD_RUN.format(scale, param=param, link=link, T=T, rho=rho,
                                    normalisation=normalisation, c=c, d=d, lr=lr, B=batch,
                                    wd=weight_decay, horizon=horizon, records=records, stop=stop,
                                    seed=seed)

    @staticmethod
    def reference_flow_path(scale, *, param, link, T, rho, normalisation, d, weight_decay, horizon,
                            records, seed) -> str:
        return paths.REFERENCE_FLOW.format(scale, param=param, link=link, T=T, rho=rho,
                                           normalisation=normalisation, d=d, wd=weight_decay,
                                           horizon=horizon, records=records, seed=seed)

    @staticmethod
    def lr_rule(eta: float, batch: int, d: int) -> float:
        """Step size with per-sample rate lr/batch = eta/(d ln d) (docs/paper2.md §2.4), 6 digits."""
        return _rounded(batch * eta / (d * math.log(d)))

    def figure2_runs(self, scale: str) -> list[dict]:
        """Runs of Figure 2: every parametrisation, link and replicate, with its reference flow.

        One step size and batch for every run, as the paper ([P Fig. 2]), and one
        sample axis: the tied runs go to t = horizon, the direct ones to
        horizon/4, the same number of samples n = horizon d B/(4 lr).
        """
        science, sizes = self.config["paper2"]["figure2"], self.p2_sizes(scale)["figure2"]
        lr, batch = sizes["lr"], sizes["batch"]
        runs = []
        for param in ("tied", "direct"):
            horizon = _rounded(science["horizon"] * (1.0 if param == "tied" else 0.25))
            for link in science["links"]:
                for s in range(sizes["seeds"]):
                    common = dict(param=param, link=link, T=science["T"], rho=science["rho"],
                                  normalisation=science["normalisation"], d=sizes["d"],
                                  weight_decay=science["weight_decay"], horizon=horizon,
                                  records=sizes["records"], seed=self._seed(s))
                    runs.append({**common, "lr": lr, "batch": batch,
                                 "samples": science["horizon"] * sizes["d"] * batch / (4.0 * lr),
                                 "path": self.sgd_run_path(scale, lr=lr, batch=batch,
                                                           stop=None, **common),
                                 "flow_path": self.reference_flow_path(scale, **common)})
        return runs

    def _ensemble(self, scale, *, flow, link, T, rho, normalisation, d, weight_decay, horizon,
                  records, n_seeds) -> dict:
        return {"flow": flow, "link": link, "T": int(T), "rho": _rounded(rho),
                "normalisation": normalisation, "d": int(d), "horizon": _rounded(horizon),
                "records": int(records), "seeds": [self._seed(s) for s in range(n_seeds)],
                "path": paths.FLOW_ENSEMBLE.format(
                    scale, flow=flow, link=link, T=T, rho=rho, normalisation=normalisation, d=d,
                    wd=weight_decay, horizon=horizon, records=records, seed=self._seed(0),
                    n=n_seeds)}

    def figure2_flow_ensembles(self, scale: str) -> list[dict]:
        """Tied flows of Figure 2's problem at ``flow_dims``: exact finite-d and Gaussian, per link.

        The exact finite-d flow (what SGD follows at finite d) exists for the
        polynomial links; at Figure 2's own d it is drawn beside SGD, and over
        ``flow_dims`` it is compared with the Gaussian-equivalent matrix flow
        (claims).  Empty without ``scales.<scale>.paper2.figure2.flow_dims``.
        """
        science, sizes = self.config["paper2"]["figure2"], self.p2_sizes(scale)["figure2"]
        out = []
        for link in science["links"]:
            if link not in paths.POLYNOMIAL_LINKS or science["T"] != 1 or science["weight_decay"]:
                continue
            for d in sizes.get("flow_dims", []):
                for flow in ("exact", "tied"):
                    out.append(self._ensemble(
                        scale, flow=flow, link=link, T=science["T"], rho=science["rho"],
                        normalisation=science["normalisation"], d=d, weight_decay=0.0,
                        horizon=science["horizon"], records=sizes["records"],
                        n_seeds=sizes["seeds"]))
        return out

    def figure2_exact_flows(self, scale: str) -> list[dict]:
        """The exact finite-d flow ensembles at Figure 2's own d (drawn beside SGD)."""
        d = self.p2_sizes(scale)["figure2"]["d"]
        return [e for e in self.figure2_flow_ensembles(scale) if e["flow"] == "exact" and e["d"] == d]

    def tied_velocity_tables(self, scale: str) -> list[dict]:
        """[P eq. 17] against the matrix flow and the exact SGD drift, per link (Figure 2's problem).

        One table per link holds every d of ``scales.<scale>.paper2.initial_velocity``
        (empty without it).
        """
        science = self.config["paper2"]["figure2"]
        sizes = self.p2_sizes(scale).get("initial_velocity")
        if not sizes:
            return []
        return [{"link": link, "T": int(science["T"]), "rho": _rounded(science["rho"]),
                 "normalisation": science["normalisation"], "dims": [int(d) for d in sizes["dims"]],
                 "seeds": [self._seed(s) for s in range(sizes["seeds"])],
                 "path": paths.TIED_VELOCITY.format(
                     scale, link=link, T=science["T"], rho=science["rho"],
                     normalisation=science["normalisation"], dims=sizes["dims"],
                     seed=self._seed(0), n=sizes["seeds"])}
                for link in science["links"]]

    def figureS3_runs(self, scale: str) -> list[dict]:
        """Runs of Figure S3 (per parametrisation, link, d, replicate; lr = B eta/(d ln d)) and flows."""
        links = self.config["paper2"]["figureS3"]["links"]
        return self._s3_scan(scale, {"tied": links, "direct": links})

    def figureS3_follow_runs(self, scale: str) -> list[dict]:
        """Figure S3's scan for ``paper2.figureS3.follow_links`` (claims only: SGD against its flow).

        The same runs and reference flows as :meth:`figureS3_runs`, for the
        links (per parametrisation) that the figure does not draw; empty
        without the key.
        """
        follow = self.config["paper2"]["figureS3"].get("follow_links") or {}
        return self._s3_scan(scale, {param: follow.get(param, []) for param in ("tied", "direct")})

    def _s3_scan(self, scale: str, links: Mapping[str, Sequence[str]]) -> list[dict]:
        science, sizes = self.config["paper2"]["figureS3"], self.p2_sizes(scale)["figureS3"]
        runs = []
        for param in ("tied", "direct"):
            replicates = sizes["seeds"] if isinstance(sizes["seeds"], int) else sizes["seeds"][param]
            for link in links[param]:
                for d in sizes["dims"][param]:
                    lr = self.lr_rule(science["eta"], sizes["batch"], d)
                    for s in range(replicates):
                        common = dict(param=param, link=link, T=science["T"], rho=science["rho"],
                                      normalisation=science["normalisation"], d=d, weight_decay=0.0,
                                      horizon=science["horizon"][param], records=sizes["records"],
                                      seed=self._seed(s))
                        runs.append({**common, "lr": lr, "batch": sizes["batch"],
                                     "path": self.sgd_run_path(scale, lr=lr, batch=sizes["batch"],
                                                               stop=science["stop_overlap"], **common),
                                     "flow_path": self.reference_flow_path(scale, **common)})
        return runs

    def figureS3_flow_ensembles(self, scale: str) -> list[dict]:
        """Deterministic flows of Figure S3's problem over more d and seeds than its SGD runs.

        The weak-recovery time of the direct closed ODE (grows with d) and of the
        tied matrix flow (flat), from finite-d initial states, as finite-size
        trends.  Empty without ``scales.<scale>.paper2.figureS3.flow_trend``.
        """
        science, sizes = self.config["paper2"]["figureS3"], self.p2_sizes(scale)["figureS3"]
        trend = sizes.get("flow_trend")
        if not trend:
            return []
        return [self._ensemble(scale, flow=param, link=link, T=science["T"], rho=science["rho"],
                               normalisation=science["normalisation"], d=d, weight_decay=0.0,
                               horizon=science["horizon"][param], records=sizes["records"],
                               n_seeds=trend["seeds"])
                for param in ("tied", "direct") for link in science["links"]
                for d in trend["dims"][param]]

    def strong_recovery_ensembles(self, scale: str) -> list[dict]:
        """Tied matrix flows and direct closed ODEs to late times, per link ([P App. D.5, F.4]).

        Their excess loss decays at the rate of the linearisation at the teacher
        (claims).  Empty without ``paper2.strong_recovery`` and its sizes.
        """
        science = self.config["paper2"].get("strong_recovery")
        sizes = self.p2_sizes(scale).get("strong_recovery")
        if not science or not sizes:
            return []
        return [self._ensemble(scale, flow=param, link=link, T=science.get("T", 1),
                               rho=science.get("rho", 0.5),
                               normalisation=science.get("normalisation", "unit_variance"),
                               d=sizes["d"], weight_decay=0.0, horizon=science["horizon"][param],
                               records=sizes["records"], n_seeds=sizes["seeds"])
                for param in ("tied", "direct") for link in science["links"]]

    def strong_recovery_sgd_runs(self, scale: str) -> list[dict]:
        """SGD to late times at several step sizes: its excess-loss rate ([P App. D.5, Cor. 6]).

        The replicates of :meth:`strong_recovery_ensembles` (same seeds, d) of one
        parametrisation and link.  Empty without ``paper2.strong_recovery.sgd`` and
        ``scales.<scale>.paper2.strong_recovery.sgd``.
        """
        science = (self.config["paper2"].get("strong_recovery") or {})
        sizes = self.p2_sizes(scale).get("strong_recovery") or {}
        if "sgd" not in science or "sgd" not in sizes:
            return []
        sgd, runs = sizes["sgd"], []
        for lr in sgd["lrs"]:
            for s in range(sgd["seeds"]):
                common = dict(param=science["sgd"]["param"], link=science["sgd"]["link"],
                              T=science.get("T", 1), rho=science.get("rho", 0.5),
                              normalisation=science.get("normalisation", "unit_variance"),
                              d=sizes["d"], weight_decay=0.0, horizon=science["sgd"]["horizon"],
                              records=sgd["records"], seed=self._seed(s))
                runs.append({**common, "lr": lr, "batch": sgd["batch"],
                             "path": self.sgd_run_path(scale, lr=lr, batch=sgd["batch"],
                                                       stop=None, **common)})
        return runs

    def theorem1_paths(self, scale: str) -> list[str]:
        science, sizes = self.config["paper2"]["figureS1"], self.p2_sizes(scale)["figureS1"]
        return [paths.THEOREM1.format(scale, links=science["links"], T=science["T"], rho=science["rho"],
                                      beta=science["beta"], n=sizes["n_samples"],
                                      seed=self.config["paper2"]["seed"], d=d)
                for d in sizes["dims"]]

    def landscape_paths(self, scale: str) -> list[str]:
        science = self.config["paper2"]["figureS2"]
        n_grid = self.p2_sizes(scale)["figureS2"]["n_grid"]
        n_grid += 1 - n_grid % 2  # the grid must contain q12 = 0 and q11 = q22: odd
        return [paths.LANDSCAPE.format(scale, link=link, T=science["T"], rho=science["rho"],
                                       beta=science["beta"], n=n_grid)
                for link in science["links"]]

    # --- paper 2: the moment hierarchy ---------------------------------------------

    def _truncations_path(self, scale, *, link, T, rho, normalisation, c, d, weight_decay,
                          horizon, records, orders, seed) -> str:
        return paths.TRUNCATIONS.format(scale, link=link, T=T, rho=rho, normalisation=normalisation,
                                        c=c, d=d, wd=weight_decay, horizon=horizon, records=records,
                                        orders=orders, seed=seed)

    def figure1_moment_runs(self, scale: str) -> list[dict]:
        """Figure 1 replicates: SGD (rule sgd_run), matrix flow (reference_flow), truncations."""
        science, sizes = self.config["paper2"]["figure1"], self.p2_sizes(scale)["figure1"]
        runs = []
        for s in range(sizes["seeds"]):
            common = dict(param="tied", link="softmax", T=science["T"], rho=science["rho"],
                          normalisation=science["normalisation"], d=sizes["d"],
                          weight_decay=science["weight_decay"], horizon=science["horizon"],
                          records=sizes["records"], seed=self._seed(s))
            runs.append({**common, "lr": sizes["lr"], "batch": sizes["batch"], "c": DEFAULT_PREFACTOR,
                         "path": self.sgd_run_path(scale, lr=sizes["lr"], batch=sizes["batch"],
                                                   stop=None, **common),
                         "flow_path": self.reference_flow_path(scale, **common),
                         "truncations_path": self._truncations_path(
                             scale, link="softmax", T=science["T"], rho=science["rho"],
                             normalisation=science["normalisation"], c=DEFAULT_PREFACTOR,
                             d=sizes["d"], weight_decay=science["weight_decay"],
                             horizon=science["horizon"], records=sizes["records"],
                             orders=science["orders"], seed=self._seed(s))})
        return runs

    def figure4_moment_runs(self, scale: str) -> list[dict]:
        """Figure 4 replicates: SGD with loss c (G1 - G2)^2, the Riccati solution, truncations."""
        science, sizes = self.config["paper2"]["figure4"], self.p2_sizes(scale)["figure4"]
        c = science["prefactor"]
        runs = []
        for s in range(sizes["seeds"]):
            common = dict(rho=science["rho"], normalisation=science["normalisation"], c=c,
                          d=sizes["d"], weight_decay=science["weight_decay"],
                          horizon=science["horizon"], records=sizes["records"], seed=self._seed(s))
            runs.append({**common, "param": "tied", "link": "linear", "T": 1, "lr": sizes["lr"],
                         "batch": sizes["batch"],
                         "path": self.sgd_run_path(scale, param="tied", link="linear", T=1,
                                                   lr=sizes["lr"], batch=sizes["batch"], stop=None,
                                                   **common),
                         "exact_path": paths.RICCATI.format(
                             scale, rho=science["rho"], normalisation=science["normalisation"], c=c,
                             d=sizes["d"], wd=science["weight_decay"], horizon=science["horizon"],
                             records=sizes["records"], seed=self._seed(s)),
                         "truncations_path": self._truncations_path(scale, link="linear", T=1,
                                                                    orders=science["orders"],
                                                                    **common)})
        return runs

    def figure4_radius(self, scale: str) -> dict:
        """The radius of convergence of Figure 4's truncations at its replicates' initial states."""
        science, sizes = self.config["paper2"]["figure4"], self.p2_sizes(scale)["figure4"]
        return {"weight_decay": float(science["weight_decay"]),
                "seeds": [self._seed(s) for s in range(sizes["seeds"])],
                "path": paths.RADIUS.format(
                    scale, rho=science["rho"], normalisation=science["normalisation"],
                    c=science["prefactor"], s=1.0, d=sizes["d"], wd=science["weight_decay"],
                    seed=self._seed(0), n=sizes["seeds"])}

    def figureS6_tables(self, scale: str) -> list[dict]:
        """Figure S6: one truncation-error table per weight decay."""
        science, sizes = self.config["paper2"]["figureS6"], self.p2_sizes(scale)["figureS6"]
        return [{"weight_decay": float(gamma),
                 "path": paths.TRUNCATION_ERROR.format(
                     scale, rho=science["rho"], normalisation=science["normalisation"],
                     c=science["prefactor"], s=science["matrix_scale"], d=sizes["d"], wd=gamma,
                     tmin=science["t_min"], horizon=science["horizon"], records=sizes["records"],
                     M=sizes["max_order"], seed=self.config["paper2"]["seed"])}
                for gamma in science["weight_decays"]]

    # --- paper 2: untied attention ------------------------------------------------

    def _untied_run(self, scale, *, lr, batch, seed, flow, **problem) -> dict:
        """One untied replicate: its SGD path, population-flow path and slaved-limit path."""
        values = dict(link=problem["link"], T=problem["T"], rho=problem["rho"],
                      normalisation=problem["normalisation"], sU=problem["scales"][0],
                      sV=problem["scales"][1], m2=problem["teacher_mean"], m0=problem["init_mean"],
                      d=problem["d"], wd=problem["weight_decay"], horizon=problem["horizon"],
                      records=problem["records"], fh=problem["fast_horizon"],
                      nf=problem["fast_records"], stop=problem["stop"], seed=seed)
        method = f"_{flow['method']}-{fmt_number(flow['rtol'])}"
        return {
            **problem, "lr": lr, "batch": batch, "seed": seed,
            "path": paths.UNTIED_SGD.format(scale, lr=lr, B=batch, **values),
            "flow_path": paths.UNTIED_THEORY.format(scale, kind="flow", method=method, **values),
            "limit_path": paths.UNTIED_THEORY.format(scale, kind="limit", method="", **values),
        }

    @staticmethod
    def _untied_common(science) -> dict:
        return dict(T=science.get("T", 1), rho=science["rho"],
                    normalisation=science["normalisation"], scales=science["init_scales"])

    @staticmethod
    def _replicate_fields(science, case) -> dict:
        """The problem fields of an untied replicate table's path (paths._UNTIED_REPLICATE_FIELDS)."""
        sU, sV = science["init_scales"]
        return dict(link=case["link"], T=int(science.get("T", 1)), rho=science["rho"],
                    normalisation=science["normalisation"], sU=sU, sV=sV,
                    m2=case["teacher_mean"])

    def _replicate_sgd_run(self, scale, science, case, *, lr, batch, seed, d, records) -> dict:
        """Online SGD of one replicate of an untied table (same spec and seed: the same U(0),
        V(0) and teacher) to the case's horizon, recorded on the table's slow-time grid."""
        return self._untied_run(
            scale, lr=lr, batch=batch, seed=seed, flow=self.p2_sizes(scale)["untied_flow"],
            link=case["link"], **self._untied_common(science), teacher_mean=case["teacher_mean"],
            init_mean=None, d=d, weight_decay=0.0, horizon=case["horizon"], records=records,
            fast_horizon=0.0, fast_records=0, stop=None)

    def figure3_untied_runs(self, scale: str) -> list[dict]:
        science, sizes = self.config["paper2"]["figure3"], self.p2_sizes(scale)["figure3"]
        runs = []
        for link in science["links"]:
            for s in range(sizes["seeds"]):
                runs.append(self._untied_run(
                    scale, lr=sizes["lr"][link], batch=sizes["batch"], seed=self._seed(s),
                    flow=self.p2_sizes(scale)["untied_flow"], link=link,
                    **self._untied_common(science), teacher_mean=science["teacher_mean"],
                    init_mean=None, d=sizes["d"], weight_decay=science["weight_decay"],
                    horizon=science["horizon"], records=sizes["records"], fast_horizon=0.0,
                    fast_records=0, stop=None))
        return runs

    def figure3_plateau_runs(self, scale: str) -> list[dict]:
        """SGD of Figure 3's plateau link at ``plateau_dims`` (Figure 3's own d included).

        The overlap plateau of a link without teacher signal, against d.  Empty
        without ``paper2.figure3.plateau`` and ``scales.<scale>.paper2.figure3.plateau_dims``.
        """
        science, sizes = self.config["paper2"]["figure3"], self.p2_sizes(scale)["figure3"]
        plateau = science.get("plateau")
        if not plateau or not sizes.get("plateau_dims"):
            return []
        link = plateau["link"]
        runs = []
        for d in sizes["plateau_dims"]:
            for s in range(sizes["seeds"]):
                runs.append({**self._untied_run(
                    scale, lr=sizes["lr"][link], batch=sizes["batch"], seed=self._seed(s),
                    flow=self.p2_sizes(scale)["untied_flow"], link=link,
                    **self._untied_common(science), teacher_mean=science["teacher_mean"],
                    init_mean=None, d=d, weight_decay=science["weight_decay"],
                    horizon=science["horizon"], records=sizes["records"], fast_horizon=0.0,
                    fast_records=0, stop=None), "start": float(plateau["start"])})
        return runs

    def untied_velocity_tables(self, scale: str) -> list[dict]:
        """[P eq. 42] against the slaved slow flow, one table per case (link, teacher mean), every d.

        Empty without ``paper2.untied_velocity`` and its sizes.
        """
        science = self.config["paper2"].get("untied_velocity")
        sizes = self.p2_sizes(scale).get("untied_velocity")
        if not science or not sizes:
            return []
        return [{"link": case["link"], "teacher_mean": float(case["teacher_mean"]),
                 "T": int(science.get("T", 1)), "rho": _rounded(science["rho"]),
                 "normalisation": science["normalisation"], "scales": list(science["init_scales"]),
                 "dims": [int(d) for d in sizes["dims"]],
                 "seeds": [self._seed(s) for s in range(sizes["seeds"])],
                 "path": paths.UNTIED_VELOCITY.format(
                     scale, **self._replicate_fields(science, case), dims=sizes["dims"],
                     seed=self._seed(0), n=sizes["seeds"])}
                for case in science["cases"]]

    def untied_truncation_tables(self, scale: str) -> list[dict]:
        """[P Cor. 8]: the untied truncations against the slaved slow flow, one table per case.

        Empty without ``paper2.untied_truncation`` and its sizes.
        """
        science = self.config["paper2"].get("untied_truncation")
        sizes = self.p2_sizes(scale).get("untied_truncation")
        if not science or not sizes:
            return []
        d, records = int(sizes["d"]), int(sizes["records"])
        seeds = [self._seed(s) for s in range(sizes["seeds"])]
        out = []
        for case in science["cases"]:
            fields = dict(self._replicate_fields(science, case), d=d, horizon=case["horizon"],
                          records=records, M=int(sizes["max_order"]))
            # the table's replicates under online SGD over its window
            sgd = [] if "lr" not in sizes else [
                self._replicate_sgd_run(scale, science, case, lr=sizes["lr"], batch=sizes["batch"],
                                        seed=seed, d=d, records=records)
                for seed in seeds]
            out.append({**fields, "teacher_mean": float(case["teacher_mean"]),
                        "horizon": _rounded(case["horizon"]), "seeds": seeds,
                        "path": paths.UNTIED_TRUNCATION.format(scale, seed=self._seed(0),
                                                               n=sizes["seeds"], **fields),
                        "sgd_runs": sgd})
        return out

    def untied_truncation_sgd_runs(self, scale: str) -> list[dict]:
        """SGD from the untied truncation tables' replicates over their windows ([P Thm 3, Cor. 8]).

        Empty without ``lr`` and ``batch`` in ``scales.<scale>.paper2.untied_truncation``.
        """
        return [run for table in self.untied_truncation_tables(scale) for run in table["sgd_runs"]]

    def untied_decay_tables(self, scale: str) -> list[dict]:
        """[P App. F.4, Cor. 9]: the untied population flow to late tau and its linearised decay.

        One table per case (its replicates' flows), with ``sgd_runs``: online
        SGD from the first ``sgd.seeds`` replicates (same seeds: the same U(0),
        V(0) and teacher) at each step size, on the table's record grid.
        Empty without ``paper2.untied_strong_recovery`` and its sizes.
        """
        science = self.config["paper2"].get("untied_strong_recovery")
        sizes = self.p2_sizes(scale).get("untied_strong_recovery")
        if not science or not sizes:
            return []
        d, records = int(sizes["d"]), int(sizes["records"])
        seeds = [self._seed(s) for s in range(sizes["seeds"])]
        sgd = sizes.get("sgd")
        out = []
        for case in science["cases"]:
            fields = dict(self._replicate_fields(science, case), d=d, start=case["window_start"],
                          horizon=case["horizon"], records=records)
            runs = [] if not sgd else [
                self._replicate_sgd_run(scale, science, case, lr=lr, batch=sgd["batch"],
                                        seed=self._seed(s), d=d, records=records)
                for lr in sgd["lrs"] for s in range(sgd["seeds"])]
            out.append({**fields, "teacher_mean": float(case["teacher_mean"]),
                        "window_start": _rounded(case["window_start"]),
                        "horizon": _rounded(case["horizon"]), "seeds": seeds,
                        "path": paths.UNTIED_DECAY.format(scale, seed=self._seed(0),
                                                          n=sizes["seeds"], **fields),
                        "sgd_runs": runs})
        return out

    def untied_decay_sgd_runs(self, scale: str) -> list[dict]:
        """SGD of the untied decay tables' replicates to late tau (:meth:`untied_decay_tables`)."""
        return [run for table in self.untied_decay_tables(scale) for run in table["sgd_runs"]]

    def figureS4_runs(self, scale: str) -> list[dict]:
        science, sizes = self.config["paper2"]["figureS4"], self.p2_sizes(scale)["figureS4"]
        runs = []
        for d in sizes["dims"]:
            for s in range(sizes["seeds"]):
                runs.append(self._untied_run(
                    scale, lr=sizes["lr"], batch=sizes["batch"], seed=self._seed(s),
                    flow=self.p2_sizes(scale)["untied_flow"], link=science["link"],
                    **self._untied_common(science), teacher_mean=science["teacher_mean"],
                    init_mean=science["init_mean"], d=d, weight_decay=0.0,
                    horizon=science["horizon"], records=sizes["records"],
                    fast_horizon=science["fast_horizon"], fast_records=sizes["fast_records"],
                    stop=None))
        return runs

    def figureS4_limit_runs(self, scale: str) -> list[dict]:
        """The slaved d -> infinity flow from the largest d's replicates (Figure S4, claims)."""
        runs = self.figureS4_runs(scale)
        largest = max(run["d"] for run in runs)
        return [run for run in runs if run["d"] == largest]

    def figureS5_runs(self, scale: str) -> list[dict]:
        science, sizes = self.config["paper2"]["figureS5"], self.p2_sizes(scale)["figureS5"]
        runs = []
        for teacher_mean in science["teacher_means"]:
            for d in sizes["dims"]:
                for s in range(sizes["seeds"]):
                    runs.append(self._untied_run(
                        scale, lr=sizes["lr"], batch=sizes["batch"], seed=self._seed(s),
                        flow=self.p2_sizes(scale)["untied_flow"], link=science["link"],
                        **self._untied_common(science), teacher_mean=teacher_mean, init_mean=None,
                        d=d, weight_decay=0.0, horizon=science["horizon"],
                        records=sizes["records"], fast_horizon=science["fast_horizon"],
                        fast_records=sizes["fast_records"], stop=science["stop_overlap"]))
        return runs

    def fast_states_path(self, scale: str) -> str:
        science = self.config["paper2"]["figureS5"]
        means = science["teacher_means"]
        return paths.FAST_STATES.format(
            scale, link=science["link"], rho=science["rho"], normalisation=science["normalisation"],
            sU=science["init_scales"][0], sV=science["init_scales"][1], lo=min(means),
            hi=max(means), n=self.p2_sizes(scale)["figureS5"]["n_grid"])


def column(runs: Sequence[Mapping], key: str) -> list:
    """One entry of every planned run (``path``, ``flow_path``, ...)."""
    return [run[key] for run in runs]
