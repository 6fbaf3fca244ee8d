"""The plan: from the config, every job of a scale, and what each figure and claims topic reads.

:class:`Plan` wraps a validated config.  Its planners make typed jobs of the
registered kinds (:mod:`.kinds`: :meth:`Plan.job`), each with the config key
that set each of its sizes, and group them into *records*: one replicate's SGD
run with its reference flow, one marker curve with its runs.  A figure or
claims job reads records; :meth:`Plan.needs` gives, per figure or topic, the
result paths it takes as inputs and the records it is given as params, from one
planning.  :meth:`Plan.jobs` is every job of a scale, each once: what the
rules run, what ``aimrepro cost`` prices and what the config check sizes.
:meth:`Plan.count` bounds the number of jobs from the config alone, before
any is made.

Which figures exist follows the config: paper 1's always; a family of paper
2's when its sections are configured (the tests use smaller configs).  A
claims topic is planned when the results it reads are planned at that scale
(no AMP sizes at a scale: no AMP claims there).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aimrepro.numerics.grids import grid_values
from aimrepro.paper1.thresholds import n_softmax_measurements

from . import paths
from .kinds import KINDS, Job
from .kinds.outputs import CLAIM_FRAGMENT
from .kinds.paper1 import data_link
from .kinds.paper2 import POLYNOMIAL_LINKS
from .paths import fmt_number

__all__ = ["Plan", "Needs", "Count", "PAPER2_FAMILIES", "column", "seeds_per_dim", "strided_indices"]

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


def column(runs: Sequence[Mapping], key: str = "path") -> list:
    """One entry of every planned run (``path``, ``flow_path``, ...)."""
    return [run[key] for run in runs]


def _rounded(value: float) -> float:
    """The value a job reads back from its path (6 significant digits)."""
    return float(fmt_number(value))


@dataclass(frozen=True)
class Needs:
    """What a figure or claims job reads: result paths by input name, and its planned params."""

    inputs: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Count:
    """An upper bound on the jobs of a family of the plan, from the config alone.

    ``key`` is the config key of the count that multiplies them (a number of
    seeds), for a message; ``kind`` the family's main kind.
    """

    family: str
    jobs: int
    key: str | None
    kind: str


def _memo(method: Callable) -> Callable:
    """Plan the records of ``method`` once per plan and arguments."""
    @functools.wraps(method)
    def cached(self, *args):
        key = (method.__name__, args)
        if key not in self._memo:
            self._memo[key] = method(self, *args)
        return self._memo[key]
    return cached


class Plan:
    """The jobs of a validated config, per scale."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config
        self._memo: dict = {}

    # --- jobs -----------------------------------------------------------------

    def job(self, name: str, scale: str, keys: Mapping[str, Any] | None = None, **values: Any) -> Job:
        """A planned job of kind ``name``: its path fields read back, its config reads filled in.

        ``keys`` name the config key each value came from (a list for a list of values).
        """
        kind = KINDS[name]
        path = None
        if kind.path is not None:
            path, read = kind.path.read_back(scale, **{f: values[f] for f in kind.path.fields})
            values.update(read)
        read_values, read_keys = self._reads(kind.name, scale)
        for value, read in read_values.items():
            values.setdefault(value, read)
        return Job(self, kind, scale, values, {**read_keys, **(keys or {})}, path=path)

    def _reads(self, name: str, scale: str) -> tuple[dict, dict]:
        """The config values a kind reads at a scale, and their keys (read once per plan)."""
        memo = self._memo.setdefault("_reads", {})
        if (name, scale) not in memo:
            reads = KINDS[name].reads
            memo[name, scale] = ({value: read.value(self.config, scale) for value, read in reads.items()},
                                 {value: read.key_at(scale) for value, read in reads.items()})
        return memo[name, scale]

    def job_of(self, rule: str, wildcards: Mapping[str, str]) -> Job:
        """The job a rule runs for these wildcards (as Snakemake passes them)."""
        kind = KINDS.of_rule(rule)
        scale = wildcards.get("scale") or rule.rpartition("_")[2]
        if kind.path is None:
            return self.job(kind.name, scale)
        values = kind.path.values({**wildcards, "scale": scale})
        planned = self._planned_jobs(scale).get(kind.path.format(scale, **values))
        return planned if planned is not None else self.job(kind.name, scale, **values)

    @_memo
    def _planned_jobs(self, scale: str) -> dict[str, Job]:
        return {job.path: job for job in self.jobs(scale) if job.path is not None}

    @_memo
    def jobs(self, scale: str) -> list[Job]:
        """Every job of ``scale``, each once (first planned first): results, figures, claims."""
        seen: dict[str, Job] = {}

        def add(items):
            for job in items:
                seen.setdefault(job.path, job)

        for family in self._families(scale):
            add(family)
        # what runs read: the datasets of the AMP, GD and T >= 3 AMP runs
        runs = [job for job in list(seen.values()) if job.kind.name in ("amp_run", "gd_run", "tokens_amp_run")]
        add(self._dataset(run) for run in runs)
        out = list(seen.values())
        out += [self.job(name, scale) for name in self.figures()]
        out += [self.job(f"claims_{topic}", scale) for topic in self.claim_topics(scale)]
        out.append(self.job("claims", scale))
        return out

    def _dataset(self, run: Job) -> Job:
        """The dataset job a run reads, with the run's keys for its sizes."""
        v = run.values
        link = v["link"] if "link" in v else data_link(v.get("channel", "hardmax"))
        return self.job("aim_dataset", run.scale, keys={k: run.keys[k] for k in ("T", "d", "rho", "alpha")
                                                       if k in run.keys},
                        link=link, T=v["T"], rho=v["rho"], d=v["d"], alpha=v["alpha"], seed=v["seed"])

    def _families(self, scale: str) -> list[list[Job]]:
        """The jobs of every planned family, in a stable order."""
        def jobs_of(records, *roles):
            return [record[role] for record in records for role in roles if role in record]

        fam = []
        p1 = [self.figure1_curves, self.figure2_curves, self.tokens_exact_curves]
        fam += [jobs_of(self._records(f(scale)), "path") for f in p1]
        for curves in (self.amp_curves(scale), self.figure2_gd_curves(scale)):
            fam.append([job for curve in self._records(curves) for job in curve["runs"]])
        fam.append(self._trend_jobs(scale))
        fam.append([job for curve in self._records(self.amp_curves(scale)) for job in [curve["path"]]])
        fam.append([job for curve in self._records(self.figure2_gd_curves(scale)) for job in [curve["path"]]])
        for planner in (self.figureS2_gen_curves, self.fisher_tables, self.tokens_curves,
                        self.tokens_amp_runs, self.two_layer_tables, self.two_layer_curves,
                        self.two_layer_amp_markers, self.two_layer_amp_trend_runs, self.two_layer_gd_runs):
            fam.append(jobs_of(self._records(planner(scale)), "path"))
        for planner in (self.token_law_amp_runs, self.token_law_gd_runs, self.token_law_theories,
                        self.token_law_curves, self.token_law_sgd_runs):
            fam.append(jobs_of(self._records(planner(scale)), "path"))
        families = self.paper2_families()
        if "dynamics" in families:
            for planner in (self.figure2_runs, self.figureS3_runs, self.figureS3_follow_runs):
                fam.append(jobs_of(self._records(planner(scale)), "path"))
            fam.append(jobs_of(self._records(self.strong_recovery_sgd_runs(scale)), "path"))
            for planner in (self.figure2_runs, self.figureS3_runs, self.figureS3_follow_runs):
                fam.append(jobs_of(self._records(planner(scale)), "flow_path"))
            fam.append(jobs_of(self._records(self.theorem1_tables(scale)), "path"))
            fam.append(jobs_of(self._records(self.landscape_tables(scale)), "path"))
            for planner in (self.figure2_flow_ensembles, self.figureS3_flow_ensembles,
                            self.strong_recovery_ensembles, self.tied_velocity_tables):
                fam.append(jobs_of(self._records(planner(scale)), "path"))
        if "moments" in families:
            figure1 = self._records(self.figure1_moment_runs(scale))
            figure4 = self._records(self.figure4_moment_runs(scale))
            fam.append(jobs_of(figure1 + figure4, "path"))
            fam.append(jobs_of(figure1, "flow_path"))
            fam.append(jobs_of(figure1 + figure4, "truncations_path"))
            fam.append(jobs_of(figure4, "exact_path"))
            fam.append(jobs_of(self._records(self.figureS6_tables(scale)), "path"))
            fam.append(jobs_of(self._records([self.figure4_radius(scale)]), "path"))
        if "untied" in families:
            untied = self._records(self.figure3_untied_runs(scale) + self.figureS4_runs(scale)
                                   + self.figureS5_runs(scale))
            fam.append(jobs_of(untied, "path"))
            for planner in (self.figure3_plateau_runs, self.untied_truncation_sgd_runs,
                            self.untied_decay_sgd_runs):
                fam.append(jobs_of(self._records(planner(scale)), "path"))
            fam.append(jobs_of(untied, "flow_path"))
            fam.append(jobs_of(self._records(self.figureS4_limit_runs(scale)), "limit_path"))
            fam.append(jobs_of(self._records([self.fast_states(scale)]), "path"))
            for planner in (self.untied_velocity_tables, self.untied_truncation_tables,
                            self.untied_decay_tables):
                fam.append(jobs_of(self._records(planner(scale)), "path"))
        return fam

    # A record is what a figure or claims job is given about a planned result (its params);
    # the plan keeps the record's jobs beside it, by role ("path", "flow_path", "runs", ...).

    def _records(self, records: Sequence[Mapping]) -> list[Mapping]:
        return [self._jobs_of[id(record)] for record in records]

    def _record(self, jobs: Mapping[str, Any], **info: Any) -> dict:
        """A record's params (paths in place of its jobs), remembering its jobs for :meth:`jobs`."""
        params = dict(info)
        for role, value in jobs.items():
            if isinstance(value, Job):
                params[role] = value.path
            else:  # the runs of a curve: per alpha, per seed
                params[role] = [[job.path for job in row] for row in value]
        self._jobs_of[id(params)] = {role: (value if isinstance(value, Job)
                                            else [job for row in value for job in row])
                                     for role, value in jobs.items()}
        self._keep.append(params)
        return params

    @property
    def _jobs_of(self) -> dict:
        return self._memo.setdefault("_jobs_of", {})

    @property
    def _keep(self) -> list:
        # records stay alive with the plan, so their ids stay theirs
        return self._memo.setdefault("_keep", [])

    # --- the count, before any job is made ---------------------------------------

    def count(self, scale: str) -> list[Count]:
        """An upper bound on what the planner enumerates, per family, without enumerating it.

        Families whose size is a product of lists written in the config (links,
        dims, rhos) are small by construction; the ones here multiply by an
        integer the config states (a number of seeds, of alphas), which may be
        anything: the jobs of a family, or the replicates one job's table lists
        (a flow ensemble's seeds).  Each count is its own product, so an absurd
        number of seeds is caught in microseconds, before any list is made.
        """
        s, out = f"scales.{scale}", []
        preset = self.config["scales"][scale]
        p1 = self.config["paper1"]

        def add(family, jobs, key, kind):
            out.append(Count(family, int(jobs), key, kind))

        amp = preset.get("amp", {})
        plan = p1["figure1"].get("amp")
        if plan and amp.get("hardmax"):
            size = amp["hardmax"]
            alphas = len(strided_indices(0, plan["last_index"], size.get("alpha_stride", 1)))
            add("figure1_amp", 2 * len(plan["channels"]) * len(plan["first_index"]) * alphas * size["seeds"],
                f"{s}.amp.hardmax.seeds", "amp_run")
        right = p1["figure2"]["right"]
        if right.get("amp") and amp.get("softmax"):
            size = amp["softmax"]
            alphas = sum(len(strided_indices(0, run.get("last_index", run["alpha"]["n"] - 1),
                                             size.get("alpha_stride", 1))) for run in right["amp"]["runs"])
            add("figure2_amp", 2 * alphas * size["seeds"], f"{s}.amp.softmax.seeds", "amp_run")
        gd = preset.get("gd")
        if right.get("gd") and gd:
            alphas = len(strided_indices(0, right["gd"]["alpha"]["n"] - 1, gd.get("alpha_stride", 1)))
            add("figure2_gd", 2 * len(right["gd"]["Ts"]) * alphas * gd["seeds"], f"{s}.gd.seeds", "gd_run")
        for name, size in preset.get("trends", {}).get("amp", {}).items():
            add(f"trend_{name}", 2 * sum(n for _, n in seeds_per_dim(size)),
                f"{s}.trends.amp.{name}.seeds", "amp_run")
        trend = preset.get("trends", {}).get("gd")
        if trend:
            add("trend_gd", 2 * sum(n for _, n in seeds_per_dim(trend)), f"{s}.trends.gd.seeds", "gd_run")
            if trend.get("amp_seeds"):
                add("trend_gd_amp", 2 * sum(n for _, n in seeds_per_dim(trend, "amp_seeds")),
                    f"{s}.trends.gd.amp_seeds", "amp_run")
        tokens = preset.get("hardmax_tokens", {}).get("amp")
        if tokens and p1.get("hardmax_tokens", {}).get("amp"):
            add("tokens_amp", 2 * len(tokens["dims"]) * tokens["seeds"], f"{s}.hardmax_tokens.amp.seeds",
                "tokens_amp_run")
        # the token-law study: replicates listed in one job's table
        laws = p1.get("token_laws")
        for name, size in (preset.get("token_laws") or {}).get("amp", {}).items() if laws else ():
            point = next((spec for spec in laws["amp"] if spec["name"] == name), {})
            add(f"token_laws_{name}", len(point.get("laws", laws["laws"])) * sum(n for _, n in seeds_per_dim(size)),
                f"{s}.token_laws.amp.{name}.seeds", "token_law_amp")
        if laws and laws.get("gd") and (preset.get("token_laws") or {}).get("gd"):
            add("token_laws_gd", len(laws["gd"].get("laws", laws["laws"]))
                * sum(n for _, n in seeds_per_dim(preset["token_laws"]["gd"])), f"{s}.token_laws.gd.seeds",
                "token_law_gd")
        p2_laws, p2_sizes = self.config.get("paper2", {}).get("token_laws"), preset.get("paper2", {}).get("token_laws")
        if p2_laws and p2_sizes:
            for param, dims in p2_sizes["dims"].items():
                seeds = p2_sizes["seeds"] if isinstance(p2_sizes["seeds"], int) else p2_sizes["seeds"][param]
                own = (p2_sizes.get("law_dims") or {}).get(param, {})
                n_sizes = sum(len(own.get(law, dims)) for law in p2_laws["laws"])
                add(f"token_laws_sgd_{param}", n_sizes * seeds,
                    f"{s}.paper2.token_laws.seeds" + ("" if isinstance(p2_sizes["seeds"], int) else f".{param}"),
                    "token_law_sgd")
        two_layer, two_sizes = p1.get("two_layer"), preset.get("two_layer") or {}
        if two_layer and two_sizes:
            add("two_layer_amp", len(two_layer["figure_skips"]) * len(two_layer["amp"]["alphas"])
                * two_sizes["amp"]["seeds"], f"{s}.two_layer.amp.seeds", "two_layer_amp_run")
            trend = two_sizes.get("amp_trend")
            if trend:
                add("two_layer_amp_trend", len(trend["dims"]) * trend["seeds"], f"{s}.two_layer.amp_trend.seeds",
                    "two_layer_amp_run")
            gd = two_sizes.get("gd")
            if gd and two_layer.get("gd"):
                add("two_layer_gd", len(two_layer["gd"]["skips"]) * len(two_layer["gd"]["alphas"]) * gd["seeds"],
                    f"{s}.two_layer.gd.seeds", "two_layer_gd_run")
        p2, sizes = self.config.get("paper2", {}), preset.get("paper2", {})
        families = self.paper2_families()
        k = f"{s}.paper2"
        if "dynamics" in families:
            add("figure2", 4 * len(p2["figure2"]["links"]) * sizes["figure2"]["seeds"],
                f"{k}.figure2.seeds", "sgd_run")
            s3, s3_sizes = p2["figureS3"], sizes["figureS3"]
            follow = s3.get("follow_links") or {}
            for param in ("tied", "direct"):
                seeds = s3_sizes["seeds"] if isinstance(s3_sizes["seeds"], int) else s3_sizes["seeds"][param]
                links = len(s3["links"]) + len(follow.get(param, []))
                key = f"{k}.figureS3.seeds" + ("" if isinstance(s3_sizes["seeds"], int) else f".{param}")
                add(f"figureS3_{param}", 2 * links * len(s3_sizes["dims"][param]) * seeds, key, "sgd_run")
            strong = sizes.get("strong_recovery", {}).get("sgd")
            if strong and "sgd" in (p2.get("strong_recovery") or {}):
                add("strong_sgd", len(strong["lrs"]) * strong["seeds"],
                    f"{k}.strong_recovery.sgd.seeds", "sgd_run")
            # replicates listed in one job's table
            trend = s3_sizes.get("flow_trend")
            if trend:
                add("figureS3_flow_trend", trend["seeds"] * len(s3["links"]) * sum(map(len, trend["dims"].values())),
                    f"{k}.figureS3.flow_trend.seeds", "flow_ensemble")
            if sizes.get("strong_recovery") and p2.get("strong_recovery"):
                add("strong_recovery", 2 * len(p2["strong_recovery"]["links"]) * sizes["strong_recovery"]["seeds"],
                    f"{k}.strong_recovery.seeds", "flow_ensemble")
            if sizes.get("initial_velocity"):
                add("initial_velocity", len(p2["figure2"]["links"]) * sizes["initial_velocity"]["seeds"],
                    f"{k}.initial_velocity.seeds", "tied_velocity")
        if "moments" in families:
            for name in ("figure1", "figure4"):
                add(name, 3 * sizes[name]["seeds"], f"{k}.{name}.seeds", "sgd_run")
        if "untied" in families:
            f3 = sizes["figure3"]
            plateau = len(f3.get("plateau_dims", [])) if p2["figure3"].get("plateau") else 0
            add("figure3", (2 * len(p2["figure3"]["links"]) + plateau) * f3["seeds"], f"{k}.figure3.seeds",
                "untied_sgd_run")
            add("figureS4", 3 * len(sizes["figureS4"]["dims"]) * sizes["figureS4"]["seeds"],
                f"{k}.figureS4.seeds", "untied_sgd_run")
            add("figureS5", 2 * len(p2["figureS5"]["teacher_means"]) * len(sizes["figureS5"]["dims"])
                * sizes["figureS5"]["seeds"], f"{k}.figureS5.seeds", "untied_sgd_run")
            truncation = sizes.get("untied_truncation")
            if truncation and "lr" in truncation and p2.get("untied_truncation"):
                add("untied_truncation_sgd", len(p2["untied_truncation"]["cases"]) * truncation["seeds"],
                    f"{k}.untied_truncation.seeds", "untied_sgd_run")
            decay = (sizes.get("untied_strong_recovery") or {}).get("sgd")
            if decay and p2.get("untied_strong_recovery"):
                add("untied_decay_sgd", len(p2["untied_strong_recovery"]["cases"]) * len(decay["lrs"])
                    * decay["seeds"], f"{k}.untied_strong_recovery.sgd.seeds", "untied_sgd_run")
            # replicates listed in one job's table
            for name, kind in (("untied_velocity", "untied_velocity"), ("untied_truncation", "untied_truncation"),
                               ("untied_strong_recovery", "untied_decay")):
                if sizes.get(name) and p2.get(name):
                    add(name, len(p2[name]["cases"]) * sizes[name]["seeds"], f"{k}.{name}.seeds", kind)
        return out

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
        if self.two_layer_planned():
            names.append("paper1_two_layer")
        for family in self.paper2_families():
            names += PAPER2_FAMILIES[family][1]
        if self.token_laws_planned():
            names.append("paper1_token_laws")
        if self.config.get("paper2", {}).get("token_laws"):
            names.append("paper2_token_laws")
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
        if self.two_layer_planned():
            topics.append("paper1_two_layer")
        topics += [PAPER2_FAMILIES[family][2] for family in self.paper2_families()]
        if self.token_law_amp_runs(scale) or self.token_law_gd_runs(scale):
            topics.append("paper1_token_laws")
        if self.token_law_sgd_runs(scale):
            topics.append("paper2_token_laws")
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
        if not self.two_layer_planned():
            reasons["paper1_two_layer"] = "no paper1.two_layer in the config"
        for family, (needed, _, topic) in PAPER2_FAMILIES.items():
            if family not in self.paper2_families():
                reasons[topic] = f"no paper2.{', '.join(needed)} in the config"
        if not (self.token_law_amp_runs(scale) or self.token_law_gd_runs(scale)):
            reasons["paper1_token_laws"] = (f"no scales.{scale}.token_laws sizes" if self.token_laws_planned()
                                            else "no paper1.token_laws in the config")
        if not self.token_law_sgd_runs(scale):
            reasons["paper2_token_laws"] = (f"no scales.{scale}.paper2.token_laws sizes"
                                            if self.config.get("paper2", {}).get("token_laws")
                                            else "no paper2.token_laws in the config")
        return reasons

    def claim_fragments(self, scale: str) -> list[str]:
        return [CLAIM_FRAGMENT.format(scale, topic=topic) for topic in self.claim_topics(scale)]

    def all_targets(self, scale: str) -> list[str]:
        targets = []
        for name in self.figures():
            targets += list(paths.figure_paths(scale, name).values())
        targets.append(paths.claims_table(scale))
        return targets

    # --- paper 1: state evolution -------------------------------------------

    def _curve(self, scale, panel, channel, T, rho, axis, grid, n_points, keys) -> dict:
        job = self.job("se_curve", scale, keys, channel=channel, T=T, rho=rho, axis=axis,
                       spacing=grid["spacing"], lo=grid["lo"], hi=grid["hi"], n=n_points)
        return self._record({"path": job}, panel=panel, channel=channel, T=int(T), rho=_rounded(rho),
                            axis=axis)

    @_memo
    def figure1_curves(self, scale: str) -> list[dict]:
        """SE curves of paper 1, Figure 1 (hardmax), in drawing order; rho 0 is the rho -> 0 limit."""
        figure = self.config["paper1"]["figure1"]
        n_points = self.config["scales"][scale]["se_points"]
        keys = {"n": f"scales.{scale}.se_points.hardmax"}
        curves = []
        for channel in figure["channels"]:
            for rho in figure["left"]["rhos"]:
                curves.append(self._curve(scale, "left", channel, figure["T"], rho, "alpha",
                                          figure["left"]["alpha"], n_points["hardmax"], keys))
            for rho in figure["right"]["rhos"]:
                curves.append(self._curve(scale, "right", channel, figure["T"], rho, "alphabar",
                                          figure["right"]["alphabar"], n_points["hardmax"], keys))
            if figure["right"]["small_width_limit"]:
                curves.append(self._curve(scale, "right", channel, figure["T"], 0.0, "alphabar",
                                          figure["right"]["alphabar"], n_points["small_width"],
                                          {"n": f"scales.{scale}.se_points.small_width"}))
        return curves

    @_memo
    def figure2_curves(self, scale: str) -> list[dict]:
        """SE curves of paper 1, Figure 2 (softmax, beta = 1), in drawing order."""
        figure = self.config["paper1"]["figure2"]
        n_points = self.config["scales"][scale]["se_points"]["softmax"]
        keys = {"n": f"scales.{scale}.se_points.softmax"}
        left, right = figure["left"], figure["right"]
        curves = [self._curve(scale, "left", "softmax", left["T"], rho, "alphapr", left["alphapr"],
                              n_points, keys) for rho in left["rhos"]]
        if left["rho_infinity"]:
            curves.append(self._curve(scale, "left", "softmax", left["T"], math.inf, "alpha",
                                      left["rho_infinity_alpha"], n_points, keys))
        curves.append(self._curve(scale, "right", "softmax", right["T"], right["rho"], "alphaT",
                                  right["alphaT"], n_points, keys))
        return curves

    # --- paper 1: hardmax attention with T >= 3 tokens (beyond the paper) -------

    def hardmax_tokens_planned(self) -> bool:
        """paper1.hardmax_tokens is configured (its sizes per scale are then required, checks.py)."""
        return "hardmax_tokens" in self.config["paper1"]

    def tokens_size(self, scale: str) -> dict:
        """scales.<scale>.hardmax_tokens: {Ts, n_reference} of the Fisher tables."""
        return self.config["scales"][scale]["hardmax_tokens"]

    def fisher_table(self, scale: str, T: int, nref: int, seed: int, keys=None) -> dict:
        """The Fisher table F_T(m) with ``nref`` reference samples and ``seed`` (docs/paper1.md §3.6)."""
        table = self.config["paper1"]["hardmax_tokens"]["table"]
        values = dict(T=int(T), x_min=_rounded(table["x_min"]), nodes=int(table["nodes"]),
                      nref=int(nref), degree=int(table["degree"]), seed=int(seed))
        job = self.job("fisher_table", scale, keys, **values)
        return self._record({"path": job}, **values, first_block=int(table["first_block"]))

    @_memo
    def fisher_tables(self, scale: str) -> list[dict]:
        """One Fisher table per T of the scale, seeded by the config's seed (node seeds keyed by T)."""
        if not self.hardmax_tokens_planned():
            return []
        size = self.tokens_size(scale)
        return [self.fisher_table(scale, T, size["n_reference"], self.config["seed"], keys={
            "T": f"scales.{scale}.hardmax_tokens.Ts[{i}]", "nref": f"scales.{scale}.hardmax_tokens.n_reference",
            "nodes": "paper1.hardmax_tokens.table.nodes"}) for i, T in enumerate(size["Ts"])]

    @_memo
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
                job = self.job("tokens_se_curve", scale, {"n": f"scales.{scale}.se_points.hardmax"},
                               T=table["T"], rho=rho, spacing=grid["spacing"], lo=grid["lo"],
                               hi=grid["hi"], n=n_points, nref=table["nref"], seed=table["seed"])
                curves.append(self._record({"path": job}, T=table["T"], rho=_rounded(rho),
                                           table=table["path"], degree=table["degree"]))
        return curves

    @_memo
    def tokens_exact_curves(self, scale: str) -> list[dict]:
        """Exact corrected T = 2 curves on Figure S1's grid (the files of Figure 1 left when it draws them)."""
        if not self.hardmax_tokens_planned():
            return []
        left = self.config["paper1"]["figure1"]["left"]
        n_points = self.config["scales"][scale]["se_points"]["hardmax"]
        return [self._curve(scale, "left", "hardmax", 2, rho, "alpha", left["alpha"], n_points,
                            {"n": f"scales.{scale}.se_points.hardmax"}) for rho in left["rhos"]]

    @_memo
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
        keys = {"T": "paper1.hardmax_tokens.amp.T", "rho": "paper1.hardmax_tokens.amp.rho",
                "alpha": "paper1.hardmax_tokens.amp.alpha", "proposals": "paper1.hardmax_tokens.amp.proposals"}
        runs = []
        for i, d in enumerate(size["dims"]):
            for seed in range(int(size["seeds"])):
                job = self.job("tokens_amp_run", scale,
                               {**keys, "d": f"scales.{scale}.hardmax_tokens.amp.dims[{i}]"},
                               T=T, rho=rho, d=d, alpha=alpha, proposals=proposals, seed=seed)
                runs.append(self._record({"path": job, "data": self._dataset(job)}, T=T, rho=rho,
                                         alpha=alpha, d=int(d), seed=seed, proposals=proposals))
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

    # --- paper 1: two attention layers, T = 2 (beyond the paper, docs/paper1.md §14) ---------

    def two_layer_planned(self) -> bool:
        """paper1.two_layer is configured (its sizes per scale are then required, checks.py)."""
        return "two_layer" in self.config["paper1"]

    def two_layer_size(self, scale: str) -> dict:
        """scales.<scale>.two_layer: se_points, table, threshold, amp and optionally amp_trend, gd."""
        return self.config["scales"][scale]["two_layer"]

    def _two_layer_table_values(self, scale: str, skip: float) -> dict:
        table = self.two_layer_size(scale)["table"]
        return dict(rho=_rounded(self.config["paper1"]["two_layer"]["rho"]), skip=_rounded(skip),
                    nodes=int(table["nodes"]), log2_samples=int(table["log2_samples"]),
                    replicates=int(table["replicates"]), seed=int(self.config["seed"]))

    def _two_layer_table_keys(self, scale: str, i: int) -> dict:
        k = f"scales.{scale}.two_layer.table"
        return {"skip": f"paper1.two_layer.skips[{i}]", "nodes": f"{k}.nodes",
                "log2_samples": f"{k}.log2_samples", "replicates": f"{k}.replicates"}

    @_memo
    def two_layer_tables(self, scale: str) -> list[dict]:
        """One two-layer Fisher table per skip c of paper1.two_layer.skips, seeded by the config's seed."""
        if not self.two_layer_planned():
            return []
        tables = []
        for i, skip in enumerate(self.config["paper1"]["two_layer"]["skips"]):
            values = self._two_layer_table_values(scale, skip)
            job = self.job("two_layer_table", scale, self._two_layer_table_keys(scale, i), **values)
            tables.append(self._record({"path": job}, skip=values["skip"]))
        return tables

    @_memo
    def two_layer_curves(self, scale: str) -> list[dict]:
        """The two-layer SE curve of each skip on paper1.two_layer.alpha, se_points points."""
        if not self.two_layer_planned():
            return []
        grid = self.config["paper1"]["two_layer"]["alpha"]
        n = int(self.two_layer_size(scale)["se_points"])
        curves = []
        for i, skip in enumerate(self.config["paper1"]["two_layer"]["skips"]):
            values = self._two_layer_table_values(scale, skip)
            job = self.job("two_layer_se_curve", scale,
                           {**self._two_layer_table_keys(scale, i), "n": f"scales.{scale}.two_layer.se_points"},
                           **values, spacing=grid["spacing"], lo=grid["lo"], hi=grid["hi"], n=n)
            curves.append(self._record({"path": job}, skip=values["skip"]))
        return curves

    def two_layer_figure_curves(self, scale: str) -> list[dict]:
        """The SE curves the figure draws: those of paper1.two_layer.figure_skips."""
        if not self.two_layer_planned():
            return []
        drawn = {_rounded(c) for c in self.config["paper1"]["two_layer"]["figure_skips"]}
        return [curve for curve in self.two_layer_curves(scale) if curve["skip"] in drawn]

    def _two_layer_run(self, kind: str, scale: str, keys: dict, *, skip, alpha, d, seed, **extra) -> dict:
        rho = _rounded(self.config["paper1"]["two_layer"]["rho"])
        job = self.job(kind, scale, keys, rho=rho, skip=_rounded(skip), d=int(d), alpha=_rounded(alpha),
                       seed=int(seed), **extra)
        return self._record({"path": job}, skip=_rounded(skip), alpha=_rounded(alpha), d=int(d), seed=int(seed),
                            **extra)

    @_memo
    def two_layer_amp_markers(self, scale: str) -> list[dict]:
        """GAMP-RIE at each figure skip and marker alpha: scales.<scale>.two_layer.amp seeds at its d."""
        if not self.two_layer_planned():
            return []
        science, size = self.config["paper1"]["two_layer"], self.two_layer_size(scale)["amp"]
        runs = []
        for i, skip in enumerate(science["figure_skips"]):
            for j, alpha in enumerate(science["amp"]["alphas"]):
                for seed in range(int(size["seeds"])):
                    runs.append(self._two_layer_run(
                        "two_layer_amp_run", scale,
                        {"skip": f"paper1.two_layer.figure_skips[{i}]", "alpha": f"paper1.two_layer.amp.alphas[{j}]",
                         "d": f"scales.{scale}.two_layer.amp.d"}, skip=skip, alpha=alpha, d=size["d"], seed=seed))
        return runs

    @_memo
    def two_layer_amp_trend_runs(self, scale: str) -> list[dict]:
        """GAMP-RIE at paper1.two_layer.amp.trend's (c, alpha) over several d, or [] (no amp_trend at the scale)."""
        if not self.two_layer_planned():
            return []
        trend = self.config["paper1"]["two_layer"]["amp"].get("trend")
        size = self.two_layer_size(scale).get("amp_trend")
        if not trend or not size:
            return []
        return [self._two_layer_run("two_layer_amp_run", scale,
                                    {"skip": "paper1.two_layer.amp.trend.skip",
                                     "alpha": "paper1.two_layer.amp.trend.alpha",
                                     "d": f"scales.{scale}.two_layer.amp_trend.dims[{i}]"},
                                    skip=trend["skip"], alpha=trend["alpha"], d=d, seed=seed)
                for i, d in enumerate(size["dims"]) for seed in range(int(size["seeds"]))]

    def two_layer_trend_table(self, scale: str) -> dict | None:
        """The table whose SE the AMP trend is judged against (the trend's skip), or None without a trend."""
        if not self.two_layer_amp_trend_runs(scale):
            return None
        skip = _rounded(self.config["paper1"]["two_layer"]["amp"]["trend"]["skip"])
        for table in self.two_layer_tables(scale):
            if table["skip"] == skip:
                return table
        raise ValueError(f"no two-layer table for the trend's skip c = {skip:g} (paper1.two_layer.skips)")

    @_memo
    def two_layer_gd_runs(self, scale: str) -> list[dict]:
        """Two-layer GD at paper1.two_layer.gd's skips and alphas, or [] (no gd at the scale)."""
        if not self.two_layer_planned():
            return []
        science = self.config["paper1"]["two_layer"].get("gd")
        size = self.two_layer_size(scale).get("gd")
        if not science or not size:
            return []
        return [self._two_layer_run("two_layer_gd_run", scale,
                                    {"skip": f"paper1.two_layer.gd.skips[{i}]",
                                     "alpha": f"paper1.two_layer.gd.alphas[{j}]",
                                     "d": f"scales.{scale}.two_layer.gd.d", "inits": f"scales.{scale}.two_layer.gd.inits",
                                     "steps": "paper1.two_layer.gd.steps"},
                                    skip=skip, alpha=alpha, d=size["d"], seed=seed, inits=int(size["inits"]),
                                    steps=int(science["steps"]))
                for i, skip in enumerate(science["skips"]) for j, alpha in enumerate(science["alphas"])
                for seed in range(int(size["seeds"]))]

    @_memo
    def figureS2_gen_curves(self, scale: str) -> list[dict]:
        """Generalisation-error curves of paper 1, Figure S2 (softmax per T, corrected hardmax), or []."""
        figure = self.config["paper1"].get("figureS2")
        if not figure:
            return []
        n_points = self.config["scales"][scale]["se_points"]
        curves = []

        def curve(channel, T, axis, grid, points):
            job = self.job("se_generalisation", scale, {"n": f"scales.{scale}.se_points.{points}"},
                           channel=channel, T=T, rho=figure["rho"], axis=axis, spacing=grid["spacing"],
                           lo=grid["lo"], hi=grid["hi"], n=n_points[points])
            return self._record({"path": job}, channel=channel, T=int(T), rho=_rounded(figure["rho"]),
                                axis=axis)

        softmax = figure.get("softmax")
        for T in (softmax["Ts"] if softmax else []):
            curves.append(curve("softmax", T, "alphaT", softmax["alphaT"], "softmax"))
        if figure.get("hardmax"):
            curves.append(curve("hardmax", 2, "alpha", figure["hardmax"]["alpha"], "hardmax"))
        return curves

    def figureS2_amp_curves(self, scale: str) -> list[dict]:
        """The AMP curves of Figures 1 and 2 whose held-out errors Figure S2 draws (same channel, T, rho)."""
        wanted = {(c["channel"], c["T"], c["rho"]) for c in self.figureS2_gen_curves(scale)}
        return [c for c in self.amp_curves(scale) if (c["channel"], c["T"], c["rho"]) in wanted]

    # --- paper 1: AMP ---------------------------------------------------------

    def amp_size(self, scale: str, family: str) -> dict | None:
        """scales.<scale>.amp.<family> ({d, seeds, alpha_stride}), or None: no AMP at this scale."""
        return self.config["scales"][scale].get("amp", {}).get(family)

    def _amp_curve(self, scale, channel, T, rho, size, alphas, keys, beta=None, **extra) -> dict:
        alphas = [_rounded(a) for a in alphas]
        seeds = list(range(int(size["seeds"])))
        token = paths.dataset_link(channel, beta)
        common = dict(channel=token, T=T, rho=rho, d=size["d"])
        runs = [[self.job("amp_run", scale, keys, alpha=a, seed=s, **common) for s in seeds] for a in alphas]
        summary = self.job("amp_summary", scale, n=len(seeds), **common)
        curve = self._record({"path": summary, "runs": runs}, channel=channel, T=int(T), rho=_rounded(rho),
                             d=int(size["d"]), beta=beta, alphas=alphas, seeds=seeds)
        curve.update(extra)
        return curve

    @_memo
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
            for i, entry in enumerate(plan["first_index"]):
                if entry["rho"] * size["d"] < size.get("min_width", 0):
                    continue  # r = rho d below the extensive-rank regime the theory describes
                picked = strided_indices(entry["index"], plan["last_index"], size.get("alpha_stride", 1))
                keys = {"T": "paper1.figure1.T", "d": f"scales.{scale}.amp.hardmax.d",
                        "rho": f"paper1.figure1.amp.first_index[{i}].rho", "alpha": "paper1.figure1.amp.alpha.hi"}
                curves.append(self._amp_curve(scale, channel, self.config["paper1"]["figure1"]["T"],
                                              entry["rho"], size, [grid[i] for i in picked], keys,
                                              panel="left"))
        return curves

    @_memo
    def figure2_amp_curves(self, scale: str) -> list[dict]:
        """AMP marker curves of Figure 2 right (one per T), or [] if not configured."""
        right = self.config["paper1"]["figure2"]["right"]
        plan = right.get("amp")
        size = self.amp_size(scale, "softmax")
        if not plan or not size:
            return []
        curves = []
        for i, run in enumerate(plan["runs"]):
            spec = run["alpha"]
            grid = grid_values(spec["spacing"], spec["lo"], spec["hi"], spec["n"])
            last = run.get("last_index", spec["n"] - 1)
            picked = strided_indices(0, last, size.get("alpha_stride", 1))
            keys = {"T": f"paper1.figure2.right.amp.runs[{i}].T", "d": f"scales.{scale}.amp.softmax.d",
                    "rho": "paper1.figure2.right.rho", "alpha": f"paper1.figure2.right.amp.runs[{i}].alpha.hi"}
            curves.append(self._amp_curve(scale, "softmax", run["T"], right["rho"], size,
                                          [grid[i] for i in picked], keys, beta=float(plan["beta"]),
                                          panel="right"))
        return curves

    def amp_curves(self, scale: str) -> list[dict]:
        return self.figure1_amp_curves(scale) + self.figure2_amp_curves(scale)

    def summary_runs(self, family: str, summary: Job) -> list[str]:
        """The run paths of the planned curve whose summary is ``summary`` (alpha-major, seeds inside)."""
        curves = self.amp_curves(summary.scale) if family == "amp" else self.figure2_gd_curves(summary.scale)
        return [run for per_alpha in self.curve_of(curves, summary.path)["runs"] for run in per_alpha]

    # --- paper 1: finite-size trends of the claims ---------------------------------

    def trend_sizes(self, scale: str) -> dict:
        """scales.<scale>.trends ({amp: {name: {dims, seeds}}, gd: {dims, seeds, inits}}), or {}."""
        return self.config["scales"][scale].get("trends", {})

    @_memo
    def _amp_trend_jobs(self, scale: str) -> list[tuple[dict, list[tuple[int, list[Job]]]]]:
        science = self.config["paper1"].get("trends", {}).get("amp", [])
        sizes = self.trend_sizes(scale).get("amp", {})
        out = []
        for i, spec in enumerate(science):
            size = sizes.get(spec["name"])
            beta = float(spec["beta"]) if spec.get("beta") is not None else None
            token = paths.dataset_link(spec["channel"], beta)
            alpha = _rounded(spec["alpha"])
            points = []
            for j, (d, n_seeds) in enumerate(seeds_per_dim(size)):
                keys = {"T": f"paper1.trends.amp[{i}].T", "rho": f"paper1.trends.amp[{i}].rho",
                        "alpha": f"paper1.trends.amp[{i}].alpha",
                        "d": f"scales.{scale}.trends.amp.{spec['name']}.dims[{j}]"}
                points.append((int(d), [self.job("amp_run", scale, keys, channel=token, T=spec["T"],
                                                 rho=spec["rho"], d=d, alpha=alpha, seed=s)
                                        for s in range(n_seeds)]))
            out.append(({"name": spec["name"], "channel": spec["channel"], "T": int(spec["T"]),
                         "rho": _rounded(spec["rho"]), "beta": beta, "alpha": alpha}, points))
        return out

    def amp_trends(self, scale: str) -> list[dict]:
        """Every configured AMP trend point (paper1.trends.amp) with its runs per d at this scale.

        A trend without sizes at the scale comes back with ``points`` empty, so
        that its claims row can say it was not measured.
        """
        return [{**info, "points": [{"d": d, "seeds": list(range(len(runs))),
                                     "runs": [job.path for job in runs]} for d, runs in points]}
                for info, points in self._amp_trend_jobs(scale)]

    @_memo
    def _gd_trend_jobs(self, scale: str) -> tuple[dict, list[tuple[int, int, list[Job], list[Job]]]] | None:
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
            keys = {"T": "paper1.trends.gd.T", "rho": "paper1.figure2.right.rho",
                    "alpha": "paper1.trends.gd.alphaT", "d": f"scales.{scale}.trends.gd.dims[{i}]"}
            n_amp = max(seeds_per_dim(size, "amp_seeds")[i][1], n_seeds) if size.get("amp_seeds") else 0
            gd = [self.job("gd_run", scale, {**keys, "inits": f"scales.{scale}.trends.gd.inits"}, link=link,
                           T=spec["T"], rho=right["rho"], d=d, inits=size["inits"], alpha=alpha, seed=s)
                  for s in range(n_seeds)]
            amp = [self.job("amp_run", scale, keys, channel=link, T=spec["T"], rho=right["rho"], d=d,
                            alpha=alpha, seed=s) for s in range(n_amp)]
            points.append((int(d), int(size["inits"]), gd, amp))
        return ({"T": int(spec["T"]), "rho": _rounded(right["rho"]), "beta": beta, "alpha": alpha,
                 "alphaT": alpha * n_softmax_measurements(spec["T"])}, points)

    def gd_trend(self, scale: str) -> dict | None:
        """The GD trend point (paper1.trends.gd) with its runs per d, or None if not configured.

        ``points`` is empty at a scale without sizes (scales.<scale>.trends.gd).
        """
        planned = self._gd_trend_jobs(scale)
        if planned is None:
            return None
        info, points = planned
        return {**info, "points": [{"d": d, "inits": inits, "seeds": list(range(len(gd))),
                                    "runs": [job.path for job in gd], "amp_seeds": list(range(len(amp))),
                                    "amp_runs": [job.path for job in amp]}
                                   for d, inits, gd, amp in points]}

    def _trend_jobs(self, scale: str) -> list[Job]:
        jobs = [job for _, points in self._amp_trend_jobs(scale) for _, runs in points for job in runs]
        planned = self._gd_trend_jobs(scale)
        for _, _, gd, amp in (planned[1] if planned else []):
            jobs += gd
        for _, _, gd, amp in (planned[1] if planned else []):
            jobs += amp
        return jobs

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

    @_memo
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
        for i, T in enumerate(plan["Ts"]):
            measurements = n_softmax_measurements(T)
            alphas = [_rounded(a) for a in picked
                      if size.get("alphaT_max") is None or a * measurements <= size["alphaT_max"]]
            if not alphas:
                continue
            common = dict(link=paths.dataset_link("softmax", beta), T=T, rho=right["rho"], d=d,
                          inits=n_inits)
            keys = {"T": f"paper1.figure2.right.gd.Ts[{i}]", "d": f"scales.{scale}.gd.d",
                    "rho": "paper1.figure2.right.rho", "alpha": "paper1.figure2.right.gd.alpha.hi",
                    "inits": f"scales.{scale}.gd.inits"}
            runs = [[self.job("gd_run", scale, keys, alpha=a, seed=s, **common) for s in seeds] for a in alphas]
            summary = self.job("gd_summary", scale, n=len(seeds), **common)
            curves.append(self._record({"path": summary, "runs": runs}, T=int(T), rho=_rounded(right["rho"]),
                                       d=d, inits=n_inits, beta=beta, alphas=alphas, seeds=seeds))
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
    def lr_rule(eta: float, batch: int, d: int) -> float:
        """Step size with per-sample rate lr/batch = eta/(d ln d) (docs/paper2.md §2.4), 6 digits."""
        return _rounded(batch * eta / (d * math.log(d)))

    def _sgd(self, scale, keys, *, param, link, T, rho, normalisation, d, lr, batch, weight_decay,
             horizon, records, stop, seed, c=DEFAULT_PREFACTOR) -> Job:
        return self.job("sgd_run", scale, keys, param=param, link=link, T=T, rho=rho,
                        normalisation=normalisation, c=c, d=d, lr=lr, B=batch, wd=weight_decay,
                        horizon=horizon, records=records, stop=stop, seed=seed)

    def _reference_flow(self, scale, keys, *, param, link, T, rho, normalisation, d, weight_decay,
                        horizon, records, seed) -> Job:
        return self.job("reference_flow", scale, keys, param=param, link=link, T=T, rho=rho,
                        normalisation=normalisation, d=d, wd=weight_decay, horizon=horizon,
                        records=records, seed=seed)

    def _p2_keys(self, scale: str, figure: str, sizes=(), science=(), **extra) -> dict[str, str]:
        """Config keys of a paper-2 job's values: ``sizes`` under scales.<scale>.paper2.<figure>,
        ``science`` under paper2.<figure>; each a value name or (value, key name)."""
        keys = {}
        for prefix, names in ((f"scales.{scale}.paper2.{figure}", sizes), (f"paper2.{figure}", science)):
            for name in names:
                value, key = name if isinstance(name, tuple) else (name, name)
                keys[value] = f"{prefix}.{key}"
        return {**keys, **extra}

    @_memo
    def figure2_runs(self, scale: str) -> list[dict]:
        """Runs of Figure 2: every parametrisation, link and replicate, with its reference flow.

        One step size and batch for every run, as the paper ([P Fig. 2]), and one
        sample axis: the tied runs go to t = horizon, the direct ones to
        horizon/4, the same number of samples n = horizon d B/(4 lr).
        """
        science, sizes = self.config["paper2"]["figure2"], self.p2_sizes(scale)["figure2"]
        lr, batch = sizes["lr"], sizes["batch"]
        keys = self._p2_keys(scale, "figure2", ("d", ("B", "batch"), "lr", "records"),
                             ("T", "rho", "horizon"))
        runs = []
        for param in ("tied", "direct"):
            horizon = _rounded(science["horizon"] * (1.0 if param == "tied" else 0.25))
            for link in science["links"]:
                for s in range(sizes["seeds"]):
                    common = dict(param=param, link=link, T=science["T"], rho=science["rho"],
                                  normalisation=science["normalisation"], d=sizes["d"],
                                  weight_decay=science["weight_decay"], horizon=horizon,
                                  records=sizes["records"], seed=self._seed(s))
                    runs.append(self._record(
                        {"path": self._sgd(scale, keys, lr=lr, batch=batch, stop=None, **common),
                         "flow_path": self._reference_flow(scale, keys, **common)},
                        **common, lr=lr, batch=batch,
                        samples=science["horizon"] * sizes["d"] * batch / (4.0 * lr)))
        return runs

    def _ensemble(self, scale, keys, *, flow, link, T, rho, normalisation, d, weight_decay, horizon,
                  records, n_seeds) -> dict:
        job = self.job("flow_ensemble", scale, keys, flow=flow, link=link, T=T, rho=rho,
                       normalisation=normalisation, d=d, wd=weight_decay, horizon=horizon,
                       records=records, seed=self._seed(0), n=n_seeds)
        return self._record({"path": job}, flow=flow, link=link, T=int(T), rho=_rounded(rho),
                            normalisation=normalisation, d=int(d), horizon=_rounded(horizon),
                            records=int(records), seeds=[self._seed(s) for s in range(n_seeds)])

    @_memo
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
            if link not in POLYNOMIAL_LINKS or science["T"] != 1 or science["weight_decay"]:
                continue
            for i, d in enumerate(sizes.get("flow_dims", [])):
                keys = self._p2_keys(scale, "figure2", ("records", ("d", f"flow_dims[{i}]")), ("T", "rho"))
                for flow in ("exact", "tied"):
                    out.append(self._ensemble(
                        scale, keys, flow=flow, link=link, T=science["T"], rho=science["rho"],
                        normalisation=science["normalisation"], d=d, weight_decay=0.0,
                        horizon=science["horizon"], records=sizes["records"], n_seeds=sizes["seeds"]))
        return out

    def figure2_exact_flows(self, scale: str) -> list[dict]:
        """The exact finite-d flow ensembles at Figure 2's own d (drawn beside SGD)."""
        d = self.p2_sizes(scale)["figure2"]["d"]
        return [e for e in self.figure2_flow_ensembles(scale) if e["flow"] == "exact" and e["d"] == d]

    @_memo
    def tied_velocity_tables(self, scale: str) -> list[dict]:
        """[P eq. 17] against the matrix flow and the exact SGD drift, per link (Figure 2's problem).

        One table per link holds every d of ``scales.<scale>.paper2.initial_velocity``
        (empty without it).
        """
        science = self.config["paper2"]["figure2"]
        sizes = self.p2_sizes(scale).get("initial_velocity")
        if not sizes:
            return []
        keys = {"dims": [f"scales.{scale}.paper2.initial_velocity.dims[{i}]" for i in range(len(sizes["dims"]))],
                "rho": "paper2.figure2.rho"}
        out = []
        for link in science["links"]:
            job = self.job("tied_velocity", scale, keys, link=link, T=science["T"], rho=science["rho"],
                           normalisation=science["normalisation"], dims=sizes["dims"],
                           seed=self._seed(0), n=sizes["seeds"])
            out.append(self._record({"path": job}, link=link, T=int(science["T"]), rho=_rounded(science["rho"]),
                                    normalisation=science["normalisation"],
                                    dims=[int(d) for d in sizes["dims"]],
                                    seeds=[self._seed(s) for s in range(sizes["seeds"])]))
        return out

    def figureS3_runs(self, scale: str) -> list[dict]:
        """Runs of Figure S3 (per parametrisation, link, d, replicate; lr = B eta/(d ln d)) and flows."""
        links = self.config["paper2"]["figureS3"]["links"]
        return self._s3_scan(scale, ("tied", tuple(links)), ("direct", tuple(links)))

    def figureS3_follow_runs(self, scale: str) -> list[dict]:
        """Figure S3's scan for ``paper2.figureS3.follow_links`` (claims only: SGD against its flow).

        The same runs and reference flows as :meth:`figureS3_runs`, for the
        links (per parametrisation) that the figure does not draw; empty
        without the key.
        """
        follow = self.config["paper2"]["figureS3"].get("follow_links") or {}
        return self._s3_scan(scale, *((param, tuple(follow.get(param, []))) for param in ("tied", "direct")))

    @_memo
    def _s3_scan(self, scale: str, *links: tuple[str, tuple[str, ...]]) -> list[dict]:
        science, sizes = self.config["paper2"]["figureS3"], self.p2_sizes(scale)["figureS3"]
        runs = []
        for param, param_links in links:
            replicates = sizes["seeds"] if isinstance(sizes["seeds"], int) else sizes["seeds"][param]
            for link in param_links:
                for i, d in enumerate(sizes["dims"][param]):
                    lr = self.lr_rule(science["eta"], sizes["batch"], d)
                    keys = self._p2_keys(scale, "figureS3", ("records", ("B", "batch"), ("d", f"dims.{param}[{i}]")),
                                         ("T", "rho", ("lr", "eta"), ("horizon", f"horizon.{param}")))
                    for s in range(replicates):
                        common = dict(param=param, link=link, T=science["T"], rho=science["rho"],
                                      normalisation=science["normalisation"], d=d, weight_decay=0.0,
                                      horizon=science["horizon"][param], records=sizes["records"],
                                      seed=self._seed(s))
                        runs.append(self._record(
                            {"path": self._sgd(scale, keys, lr=lr, batch=sizes["batch"],
                                               stop=science["stop_overlap"], **common),
                             "flow_path": self._reference_flow(scale, keys, **common)},
                            **common, lr=lr, batch=sizes["batch"]))
        return runs

    @_memo
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
        return [self._ensemble(scale, self._p2_keys(scale, "figureS3", ("records", ("d", f"flow_trend.dims.{param}[{i}]")),
                                                    ("T", "rho")),
                               flow=param, link=link, T=science["T"], rho=science["rho"],
                               normalisation=science["normalisation"], d=d, weight_decay=0.0,
                               horizon=science["horizon"][param], records=sizes["records"],
                               n_seeds=trend["seeds"])
                for param in ("tied", "direct") for link in science["links"]
                for i, d in enumerate(trend["dims"][param])]

    @_memo
    def strong_recovery_ensembles(self, scale: str) -> list[dict]:
        """Tied matrix flows and direct closed ODEs to late times, per link ([P App. D.5, F.4]).

        Their excess loss decays at the rate of the linearisation at the teacher
        (claims).  Empty without ``paper2.strong_recovery`` and its sizes.
        """
        science = self.config["paper2"].get("strong_recovery")
        sizes = self.p2_sizes(scale).get("strong_recovery")
        if not science or not sizes:
            return []
        keys = self._p2_keys(scale, "strong_recovery", ("d", "records"), ("T", "rho"))
        return [self._ensemble(scale, keys, flow=param, link=link, T=science.get("T", 1),
                               rho=science.get("rho", 0.5),
                               normalisation=science.get("normalisation", "unit_variance"),
                               d=sizes["d"], weight_decay=0.0, horizon=science["horizon"][param],
                               records=sizes["records"], n_seeds=sizes["seeds"])
                for param in ("tied", "direct") for link in science["links"]]

    @_memo
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
        for i, lr in enumerate(sgd["lrs"]):
            keys = self._p2_keys(scale, "strong_recovery", ("d", ("B", "sgd.batch"), ("records", "sgd.records"),
                                                            ("lr", f"sgd.lrs[{i}]")),
                                 ("T", "rho", ("horizon", "sgd.horizon")))
            for s in range(sgd["seeds"]):
                common = dict(param=science["sgd"]["param"], link=science["sgd"]["link"],
                              T=science.get("T", 1), rho=science.get("rho", 0.5),
                              normalisation=science.get("normalisation", "unit_variance"),
                              d=sizes["d"], weight_decay=0.0, horizon=science["sgd"]["horizon"],
                              records=sgd["records"], seed=self._seed(s))
                runs.append(self._record({"path": self._sgd(scale, keys, lr=lr, batch=sgd["batch"], stop=None,
                                                            **common)},
                                         **common, lr=lr, batch=sgd["batch"]))
        return runs

    @_memo
    def theorem1_tables(self, scale: str) -> list[dict]:
        science, sizes = self.config["paper2"]["figureS1"], self.p2_sizes(scale)["figureS1"]
        out = []
        for i, d in enumerate(sizes["dims"]):
            keys = self._p2_keys(scale, "figureS1", (("n", "n_samples"), ("d", f"dims[{i}]")), ("T", "rho"))
            out.append(self._record({"path": self.job(
                "theorem1", scale, keys, links=science["links"], T=science["T"], rho=science["rho"],
                beta=science["beta"], n=sizes["n_samples"], seed=self.config["paper2"]["seed"], d=d)}))
        return out

    def theorem1_paths(self, scale: str) -> list[str]:
        return column(self.theorem1_tables(scale))

    @_memo
    def landscape_tables(self, scale: str) -> list[dict]:
        science = self.config["paper2"]["figureS2"]
        n_grid = self.p2_sizes(scale)["figureS2"]["n_grid"]
        n_grid += 1 - n_grid % 2  # the grid must contain q12 = 0 and q11 = q22: odd
        keys = {"n": f"scales.{scale}.paper2.figureS2.n_grid"}
        return [self._record({"path": self.job("landscape", scale, keys, link=link, T=science["T"],
                                               rho=science["rho"], beta=science["beta"], n=n_grid)})
                for link in science["links"]]

    def landscape_paths(self, scale: str) -> list[str]:
        return column(self.landscape_tables(scale))

    # --- paper 2: the moment hierarchy ---------------------------------------------

    def _truncations(self, scale, keys, *, link, T, rho, normalisation, c, d, weight_decay, horizon,
                     records, orders, seed) -> Job:
        return self.job("moment_truncations", scale, keys, link=link, T=T, rho=rho,
                        normalisation=normalisation, c=c, d=d, wd=weight_decay, horizon=horizon,
                        records=records, orders=orders, seed=seed)

    @_memo
    def figure1_moment_runs(self, scale: str) -> list[dict]:
        """Figure 1 replicates: SGD (rule sgd_run), matrix flow (reference_flow), truncations."""
        science, sizes = self.config["paper2"]["figure1"], self.p2_sizes(scale)["figure1"]
        keys = self._p2_keys(scale, "figure1", ("d", ("B", "batch"), "lr", "records"), ("T", "rho", "horizon"),
                             orders=[f"paper2.figure1.orders[{i}]" for i in range(len(science["orders"]))])
        runs = []
        for s in range(sizes["seeds"]):
            common = dict(param="tied", link="softmax", T=science["T"], rho=science["rho"],
                          normalisation=science["normalisation"], d=sizes["d"],
                          weight_decay=science["weight_decay"], horizon=science["horizon"],
                          records=sizes["records"], seed=self._seed(s))
            problem = {k: v for k, v in common.items() if k != "param"}
            runs.append(self._record(
                {"path": self._sgd(scale, keys, lr=sizes["lr"], batch=sizes["batch"], stop=None, **common),
                 "flow_path": self._reference_flow(scale, keys, **common),
                 "truncations_path": self._truncations(scale, keys, c=DEFAULT_PREFACTOR,
                                                       orders=science["orders"], **problem)},
                **common, lr=sizes["lr"], batch=sizes["batch"], c=DEFAULT_PREFACTOR))
        return runs

    @_memo
    def figure4_moment_runs(self, scale: str) -> list[dict]:
        """Figure 4 replicates: SGD with loss c (G1 - G2)^2, the Riccati solution, truncations."""
        science, sizes = self.config["paper2"]["figure4"], self.p2_sizes(scale)["figure4"]
        c = science["prefactor"]
        keys = self._p2_keys(scale, "figure4", ("d", ("B", "batch"), "lr", "records"), ("rho", "horizon"),
                             orders=[f"paper2.figure4.orders[{i}]" for i in range(len(science["orders"]))])
        runs = []
        for s in range(sizes["seeds"]):
            common = dict(rho=science["rho"], normalisation=science["normalisation"], c=c,
                          d=sizes["d"], weight_decay=science["weight_decay"],
                          horizon=science["horizon"], records=sizes["records"], seed=self._seed(s))
            exact = self.job("riccati_flow", scale, keys, rho=science["rho"],
                             normalisation=science["normalisation"], c=c, d=sizes["d"],
                             wd=science["weight_decay"], horizon=science["horizon"],
                             records=sizes["records"], seed=self._seed(s))
            runs.append(self._record(
                {"path": self._sgd(scale, keys, param="tied", link="linear", T=1, lr=sizes["lr"],
                                   batch=sizes["batch"], stop=None, **common),
                 "exact_path": exact,
                 "truncations_path": self._truncations(scale, keys, link="linear", T=1,
                                                       orders=science["orders"], **common)},
                **common, param="tied", link="linear", T=1, lr=sizes["lr"], batch=sizes["batch"]))
        return runs

    @_memo
    def figure4_radius(self, scale: str) -> dict:
        """The radius of convergence of Figure 4's truncations at its replicates' initial states."""
        science, sizes = self.config["paper2"]["figure4"], self.p2_sizes(scale)["figure4"]
        job = self.job("truncation_radius", scale, {"d": f"scales.{scale}.paper2.figure4.d"},
                       rho=science["rho"], normalisation=science["normalisation"], c=science["prefactor"],
                       s=1.0, d=sizes["d"], wd=science["weight_decay"], seed=self._seed(0), n=sizes["seeds"])
        return self._record({"path": job}, weight_decay=float(science["weight_decay"]),
                            seeds=[self._seed(s) for s in range(sizes["seeds"])])

    @_memo
    def figureS6_tables(self, scale: str) -> list[dict]:
        """Figure S6: one truncation-error table per weight decay."""
        science, sizes = self.config["paper2"]["figureS6"], self.p2_sizes(scale)["figureS6"]
        keys = self._p2_keys(scale, "figureS6", ("d", "records", ("M", "max_order")), ("rho",))
        return [self._record({"path": self.job(
            "truncation_error", scale, keys, rho=science["rho"], normalisation=science["normalisation"],
            c=science["prefactor"], s=science["matrix_scale"], d=sizes["d"], wd=gamma,
            tmin=science["t_min"], horizon=science["horizon"], records=sizes["records"],
            M=sizes["max_order"], seed=self.config["paper2"]["seed"])}, weight_decay=float(gamma))
            for gamma in science["weight_decays"]]

    # --- paper 2: untied attention ------------------------------------------------

    def _untied_run(self, scale, keys, *, lr, batch, seed, flow, limit=False, **problem) -> dict:
        """One untied replicate: its SGD run, population flow and (``limit``) slaved-limit flow."""
        values = dict(link=problem["link"], T=problem["T"], rho=problem["rho"],
                      normalisation=problem["normalisation"], sU=problem["scales"][0],
                      sV=problem["scales"][1], m2=problem["teacher_mean"], m0=problem["init_mean"],
                      d=problem["d"], wd=problem["weight_decay"], horizon=problem["horizon"],
                      records=problem["records"], fh=problem["fast_horizon"],
                      nf=problem["fast_records"], stop=problem["stop"], seed=seed)
        method = f"_{flow['method']}-{fmt_number(flow['rtol'])}"
        flow_keys = {**keys, "method": f"scales.{scale}.paper2.untied_flow.method"}
        jobs = {"path": self.job("untied_sgd_run", scale, keys, lr=lr, B=batch, **values),
                "flow_path": self.job("untied_theory", scale, flow_keys, kind="flow", method=method, **values),
                "limit_path": self.job("untied_theory", scale, keys, kind="limit", method="", **values)}
        return self._record(jobs, **problem, lr=lr, batch=batch, seed=seed)

    @staticmethod
    def _untied_common(science) -> dict:
        return dict(T=science.get("T", 1), rho=science["rho"],
                    normalisation=science["normalisation"], scales=science["init_scales"])

    @staticmethod
    def _replicate_fields(science, case) -> dict:
        """The problem fields of an untied replicate table's path (its students' independent factors)."""
        sU, sV = science["init_scales"]
        return dict(link=case["link"], T=int(science.get("T", 1)), rho=science["rho"],
                    normalisation=science["normalisation"], sU=sU, sV=sV,
                    m2=case["teacher_mean"])

    def _replicate_sgd_run(self, scale, keys, science, case, *, lr, batch, seed, d, records) -> dict:
        """Online SGD of one replicate of an untied table (same spec and seed: the same U(0),
        V(0) and teacher) to the case's horizon, recorded on the table's slow-time grid."""
        return self._untied_run(
            scale, keys, lr=lr, batch=batch, seed=seed, flow=self.p2_sizes(scale)["untied_flow"],
            link=case["link"], **self._untied_common(science), teacher_mean=case["teacher_mean"],
            init_mean=None, d=d, weight_decay=0.0, horizon=case["horizon"], records=records,
            fast_horizon=0.0, fast_records=0, stop=None)

    def _untied_keys(self, scale, figure, d="d", lr="lr", records="records", batch="batch",
                     horizon="horizon", **extra) -> dict:
        return self._p2_keys(scale, figure, (("d", d), ("B", batch), ("lr", lr), ("records", records)),
                             ("T", "rho", ("horizon", horizon)), **extra)

    @_memo
    def figure3_untied_runs(self, scale: str) -> list[dict]:
        science, sizes = self.config["paper2"]["figure3"], self.p2_sizes(scale)["figure3"]
        runs = []
        for link in science["links"]:
            keys = self._untied_keys(scale, "figure3", lr=f"lr.{link}")
            for s in range(sizes["seeds"]):
                runs.append(self._untied_run(
                    scale, keys, lr=sizes["lr"][link], batch=sizes["batch"], seed=self._seed(s),
                    flow=self.p2_sizes(scale)["untied_flow"], link=link,
                    **self._untied_common(science), teacher_mean=science["teacher_mean"],
                    init_mean=None, d=sizes["d"], weight_decay=science["weight_decay"],
                    horizon=science["horizon"], records=sizes["records"], fast_horizon=0.0,
                    fast_records=0, stop=None))
        return runs

    @_memo
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
        for i, d in enumerate(sizes["plateau_dims"]):
            keys = self._untied_keys(scale, "figure3", d=f"plateau_dims[{i}]", lr=f"lr.{link}")
            for s in range(sizes["seeds"]):
                run = self._untied_run(
                    scale, keys, lr=sizes["lr"][link], batch=sizes["batch"], seed=self._seed(s),
                    flow=self.p2_sizes(scale)["untied_flow"], link=link,
                    **self._untied_common(science), teacher_mean=science["teacher_mean"],
                    init_mean=None, d=d, weight_decay=science["weight_decay"],
                    horizon=science["horizon"], records=sizes["records"], fast_horizon=0.0,
                    fast_records=0, stop=None)
                run["start"] = float(plateau["start"])
                runs.append(run)
        return runs

    @_memo
    def untied_velocity_tables(self, scale: str) -> list[dict]:
        """[P eq. 42] against the slaved slow flow, one table per case (link, teacher mean), every d.

        Empty without ``paper2.untied_velocity`` and its sizes.
        """
        science = self.config["paper2"].get("untied_velocity")
        sizes = self.p2_sizes(scale).get("untied_velocity")
        if not science or not sizes:
            return []
        keys = {"dims": [f"scales.{scale}.paper2.untied_velocity.dims[{i}]" for i in range(len(sizes["dims"]))],
                "rho": "paper2.untied_velocity.rho"}
        return [self._record({"path": self.job("untied_velocity", scale, keys,
                                               **self._replicate_fields(science, case), dims=sizes["dims"],
                                               seed=self._seed(0), n=sizes["seeds"])},
                             link=case["link"], teacher_mean=float(case["teacher_mean"]),
                             T=int(science.get("T", 1)), rho=_rounded(science["rho"]),
                             normalisation=science["normalisation"], scales=list(science["init_scales"]),
                             dims=[int(d) for d in sizes["dims"]],
                             seeds=[self._seed(s) for s in range(sizes["seeds"])])
                for case in science["cases"]]

    @_memo
    def untied_truncation_tables(self, scale: str) -> list[dict]:
        """[P Cor. 8]: the untied truncations against the slaved slow flow, one table per case.

        Each table comes with ``sgd_runs``: online SGD from its replicates over its
        window, when ``scales.<scale>.paper2.untied_truncation`` has ``lr`` and ``batch``.
        Empty without ``paper2.untied_truncation`` and its sizes.
        """
        science = self.config["paper2"].get("untied_truncation")
        sizes = self.p2_sizes(scale).get("untied_truncation")
        if not science or not sizes:
            return []
        d, records = int(sizes["d"]), int(sizes["records"])
        seeds = [self._seed(s) for s in range(sizes["seeds"])]
        out = []
        for i, case in enumerate(science["cases"]):
            keys = self._untied_keys(scale, "untied_truncation", horizon=f"cases[{i}].horizon",
                                     M=f"scales.{scale}.paper2.untied_truncation.max_order")
            fields = dict(self._replicate_fields(science, case), d=d, horizon=case["horizon"],
                          records=records, M=int(sizes["max_order"]))
            # the table's replicates under online SGD over its window
            sgd = [] if "lr" not in sizes else [
                self._replicate_sgd_run(scale, keys, science, case, lr=sizes["lr"], batch=sizes["batch"],
                                        seed=seed, d=d, records=records)
                for seed in seeds]
            table = self.job("untied_truncation", scale, keys, seed=self._seed(0), n=sizes["seeds"], **fields)
            record = self._record({"path": table}, **{**fields, "teacher_mean": float(case["teacher_mean"]),
                                                      "horizon": _rounded(case["horizon"]), "seeds": seeds})
            record["sgd_runs"] = sgd
            out.append(record)
        return out

    def untied_truncation_sgd_runs(self, scale: str) -> list[dict]:
        """SGD from the untied truncation tables' replicates over their windows ([P Thm 3, Cor. 8])."""
        return [run for table in self.untied_truncation_tables(scale) for run in table["sgd_runs"]]

    @_memo
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
        for c, case in enumerate(science["cases"]):
            fields = dict(self._replicate_fields(science, case), d=d, start=case["window_start"],
                          horizon=case["horizon"], records=records)
            runs = [] if not sgd else [
                self._replicate_sgd_run(scale, self._untied_keys(scale, "untied_strong_recovery",
                                                                 lr=f"sgd.lrs[{i}]", batch="sgd.batch",
                                                                 horizon=f"cases[{c}].horizon"),
                                        science, case, lr=lr, batch=sgd["batch"], seed=self._seed(s),
                                        d=d, records=records)
                for i, lr in enumerate(sgd["lrs"]) for s in range(sgd["seeds"])]
            keys = self._p2_keys(scale, "untied_strong_recovery", ("d", "records"),
                                 ("T", "rho", ("horizon", f"cases[{c}].horizon")))
            table = self.job("untied_decay", scale, keys, seed=self._seed(0), n=sizes["seeds"], **fields)
            record = self._record({"path": table}, **{
                **fields, "teacher_mean": float(case["teacher_mean"]),
                "window_start": _rounded(case["window_start"]), "horizon": _rounded(case["horizon"]),
                "seeds": seeds})
            record["sgd_runs"] = runs
            out.append(record)
        return out

    def untied_decay_sgd_runs(self, scale: str) -> list[dict]:
        """SGD of the untied decay tables' replicates to late tau (:meth:`untied_decay_tables`)."""
        return [run for table in self.untied_decay_tables(scale) for run in table["sgd_runs"]]

    @_memo
    def figureS4_runs(self, scale: str) -> list[dict]:
        science, sizes = self.config["paper2"]["figureS4"], self.p2_sizes(scale)["figureS4"]
        runs = []
        for i, d in enumerate(sizes["dims"]):
            keys = self._untied_keys(scale, "figureS4", d=f"dims[{i}]", nf=f"scales.{scale}.paper2.figureS4.fast_records")
            for s in range(sizes["seeds"]):
                runs.append(self._untied_run(
                    scale, keys, lr=sizes["lr"], batch=sizes["batch"], seed=self._seed(s),
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

    @_memo
    def figureS5_runs(self, scale: str) -> list[dict]:
        science, sizes = self.config["paper2"]["figureS5"], self.p2_sizes(scale)["figureS5"]
        runs = []
        for teacher_mean in science["teacher_means"]:
            for i, d in enumerate(sizes["dims"]):
                keys = self._untied_keys(scale, "figureS5", d=f"dims[{i}]",
                                         nf=f"scales.{scale}.paper2.figureS5.fast_records")
                for s in range(sizes["seeds"]):
                    runs.append(self._untied_run(
                        scale, keys, lr=sizes["lr"], batch=sizes["batch"], seed=self._seed(s),
                        flow=self.p2_sizes(scale)["untied_flow"], link=science["link"],
                        **self._untied_common(science), teacher_mean=teacher_mean, init_mean=None,
                        d=d, weight_decay=0.0, horizon=science["horizon"],
                        records=sizes["records"], fast_horizon=science["fast_horizon"],
                        fast_records=sizes["fast_records"], stop=science["stop_overlap"]))
        return runs

    @_memo
    def fast_states(self, scale: str) -> dict:
        science = self.config["paper2"]["figureS5"]
        means = science["teacher_means"]
        job = self.job("untied_fast_states", scale, {"n": f"scales.{scale}.paper2.figureS5.n_grid"},
                       link=science["link"], rho=science["rho"], normalisation=science["normalisation"],
                       sU=science["init_scales"][0], sV=science["init_scales"][1], lo=min(means),
                       hi=max(means), n=self.p2_sizes(scale)["figureS5"]["n_grid"])
        return self._record({"path": job})

    def fast_states_path(self, scale: str) -> str:
        return self.fast_states(scale)["path"]

    # --- beyond both papers: tokens that are not Gaussian (docs/paper1.md §13, docs/paper2.md §10) ---

    def token_laws_planned(self) -> bool:
        """paper1.token_laws is configured (its figure and theory exist at every scale)."""
        return "token_laws" in self.config["paper1"]

    def token_law_sizes(self, scale: str) -> dict:
        """scales.<scale>.token_laws ({amp: {name: {dims, seeds}}, gd: {dims, seeds, inits}, theory_samples}), or {}."""
        return self.config["scales"][scale].get("token_laws") or {}

    @_memo
    def token_law_amp_runs(self, scale: str) -> list[dict]:
        """GAMP-RIE of every token-law point, law and d at this scale: one record per (point, law, d)."""
        if not self.token_laws_planned():
            return []
        science = self.config["paper1"]["token_laws"]
        sizes = self.token_law_sizes(scale).get("amp") or {}
        runs = []
        for i, spec in enumerate(science["amp"]):
            size, name = sizes.get(spec["name"]), spec["name"]
            beta = float(spec["beta"]) if spec.get("beta") is not None else None
            channel = paths.dataset_link(spec["channel"], beta)
            for j, (d, n) in enumerate(seeds_per_dim(size)):
                keys = {"T": f"paper1.token_laws.amp[{i}].T", "rho": f"paper1.token_laws.amp[{i}].rho",
                        "alpha": f"paper1.token_laws.amp[{i}].alpha",
                        "d": f"scales.{scale}.token_laws.amp.{name}.dims[{j}]",
                        "n": f"scales.{scale}.token_laws.amp.{name}.seeds"}
                for law in spec.get("laws", science["laws"]):
                    job = self.job("token_law_amp", scale, keys, channel=channel, T=spec["T"], rho=spec["rho"],
                                   d=d, alpha=spec["alpha"], law=law, n=n)
                    runs.append(self._record({"path": job}, point=name, law=law, d=int(d), seeds=int(n)))
        return runs

    def token_law_points(self, scale: str) -> list[dict]:
        """The token-law trend points (paper1.token_laws.amp) with their laws and the dims of this scale."""
        if not self.token_laws_planned():
            return []
        science = self.config["paper1"]["token_laws"]
        sizes = self.token_law_sizes(scale).get("amp") or {}
        return [{"name": spec["name"], "channel": spec["channel"], "T": int(spec["T"]), "rho": _rounded(spec["rho"]),
                 "alpha": _rounded(spec["alpha"]),
                 "beta": float(spec["beta"]) if spec.get("beta") is not None else None,
                 "laws": list(spec.get("laws", science["laws"])),
                 "dims": [d for d, _ in seeds_per_dim(sizes.get(spec["name"]))]} for spec in science["amp"]]

    @_memo
    def token_law_theories(self, scale: str) -> list[dict]:
        """The finite-d theory of every hardmax point and law other than Gaussian, over the point's dims."""
        if not self.token_laws_planned():
            return []
        science = self.config["paper1"]["token_laws"]
        samples = self.token_law_sizes(scale).get("theory_samples")
        tables = []
        for i, point in enumerate(self.token_law_points(scale)):
            if point["channel"] != "hardmax" or not point["dims"] or not samples:
                continue
            for law in point["laws"]:
                if law == "gaussian":
                    continue
                job = self.job("token_law_theory", scale,
                               {"samples": f"scales.{scale}.token_laws.theory_samples",
                                "dims": f"scales.{scale}.token_laws.amp.{point['name']}.dims"},
                               channel="hardmax", T=point["T"], rho=point["rho"], alpha=point["alpha"], law=law,
                               dims=point["dims"], samples=samples, seed=science["theory"]["seed"])
                tables.append(self._record({"path": job}, point=point["name"], law=law))
        return tables

    @_memo
    def token_law_curves(self, scale: str) -> list[dict]:
        """The SE of each law of the first hardmax point along Figure 1 left's alpha grid (the figure's lines)."""
        hardmax = [p for p in self.token_law_points(scale) if p["channel"] == "hardmax"]
        if not hardmax:
            return []
        point, grid = hardmax[0], self.config["paper1"]["figure1"]["left"]["alpha"]
        n = self.config["scales"][scale]["se_points"]["hardmax"]
        keys = {"n": f"scales.{scale}.se_points.hardmax"}
        curves = []
        for law in point["laws"]:
            if law == "gaussian":  # the papers' SE: Figure 1 left's curve when it has this rho
                job = self.job("se_curve", scale, keys, channel="hardmax", T=point["T"], rho=point["rho"],
                               axis="alpha", spacing=grid["spacing"], lo=grid["lo"], hi=grid["hi"], n=n)
            else:
                job = self.job("token_law_se_curve", scale, keys, channel="hardmax", T=point["T"], rho=point["rho"],
                               law=law, spacing=grid["spacing"], lo=grid["lo"], hi=grid["hi"], n=n)
            curves.append(self._record({"path": job}, law=law))
        return curves

    def token_law_softmax_curve(self, scale: str) -> dict:
        """Figure 2 right's SE curve (one for every law: the softmax SE does not depend on it, §13)."""
        return [c for c in self.figure2_curves(scale) if c["panel"] == "right"][0]

    @_memo
    def token_law_gd_runs(self, scale: str) -> list[dict]:
        """Averaged GD of paper1.token_laws.gd per law and d (Figure 2 right's rho, beta, optimizer), or []."""
        spec = (self.config["paper1"].get("token_laws") or {}).get("gd")
        size = self.token_law_sizes(scale).get("gd")
        right = self.config["paper1"]["figure2"]["right"]
        if not spec or not size or not right.get("gd"):
            return []
        alpha = _rounded(spec["alphaT"] / n_softmax_measurements(spec["T"]))
        link = paths.dataset_link("softmax", float(right["gd"]["beta"]))
        runs = []
        for i, (d, n) in enumerate(seeds_per_dim(size)):
            keys = {"T": "paper1.token_laws.gd.T", "rho": "paper1.figure2.right.rho",
                    "alpha": "paper1.token_laws.gd.alphaT", "d": f"scales.{scale}.token_laws.gd.dims[{i}]",
                    "n": f"scales.{scale}.token_laws.gd.seeds", "inits": f"scales.{scale}.token_laws.gd.inits"}
            for law in spec.get("laws", self.config["paper1"]["token_laws"]["laws"]):
                job = self.job("token_law_gd", scale, keys, link=link, T=spec["T"], rho=right["rho"], d=d,
                               inits=size["inits"], alpha=alpha, law=law, n=n)
                runs.append(self._record({"path": job}, law=law, d=int(d), seeds=int(n)))
        return runs

    def token_law_gd_point(self, scale: str) -> dict | None:
        """The GD point of the token-law claims and figure, or None (not configured or no sizes here)."""
        runs = self.token_law_gd_runs(scale)
        if not runs:
            return None
        spec, size = self.config["paper1"]["token_laws"]["gd"], self.token_law_sizes(scale)["gd"]
        right = self.config["paper1"]["figure2"]["right"]
        alpha = _rounded(spec["alphaT"] / n_softmax_measurements(spec["T"]))
        return {"T": int(spec["T"]), "rho": _rounded(right["rho"]), "alpha": alpha,
                "alphaT": alpha * n_softmax_measurements(spec["T"]), "beta": float(right["gd"]["beta"]),
                "inits": int(size["inits"]), "laws": list(dict.fromkeys(r["law"] for r in runs)),
                "dims": list(dict.fromkeys(r["d"] for r in runs))}

    @_memo
    def token_law_sgd_runs(self, scale: str) -> list[dict]:
        """Paper 2's token-law runs (paper2.token_laws) per parametrisation, law and d: SGD and both flows."""
        science = self.config.get("paper2", {}).get("token_laws")
        sizes = self.config["scales"][scale].get("paper2", {}).get("token_laws")
        if not science or not sizes:
            return []
        runs = []
        for param in ("tied", "direct"):
            # replicates per job: one count, or one per parametrisation (as Figure S3's)
            per_param = not isinstance(sizes["seeds"], int)
            seeds = sizes["seeds"][param] if per_param else sizes["seeds"]
            own = (sizes.get("law_dims") or {}).get(param, {})
            # the common sizes, or a law's own (law_dims) in their place
            sized = [(d, f"dims.{param}[{i}]", law) for i, d in enumerate(sizes["dims"].get(param, []))
                     for law in science["laws"] if law not in own]
            sized += [(d, f"law_dims.{param}.{law}[{i}]", law) for law in science["laws"] if law in own
                      for i, d in enumerate(own[law])]
            for d, d_key, law in sized:
                lr = self.lr_rule(science["eta"], sizes["batch"], d)
                keys = self._p2_keys(scale, "token_laws", ("records", "n", ("B", "batch"), ("d", d_key)),
                                     ("T", "rho", ("lr", "eta"), ("horizon", f"horizon.{param}")),
                                     n=f"scales.{scale}.paper2.token_laws.seeds" + (f".{param}" if per_param else ""))
                job = self.job("token_law_sgd", scale, keys, param=param, link=science["link"], T=science["T"],
                               rho=science["rho"], normalisation=science["normalisation"], d=d, law=law, lr=lr,
                               B=sizes["batch"], horizon=science["horizon"][param], records=sizes["records"],
                               stop=science.get("stop_overlap"), seed=self._seed(0), n=seeds)
                runs.append(self._record({"path": job}, param=param, link=science["link"], law=law, d=int(d)))
        return runs

    def token_law_figure_runs(self, scale: str) -> list[dict]:
        """The paper-2 token-law runs the figure draws: each parametrisation's largest d."""
        sizes = self.config["scales"][scale].get("paper2", {}).get("token_laws") or {}
        largest = {param: max(dims) for param, dims in sizes.get("dims", {}).items() if dims}
        # per parametrisation and law, the run at the largest common size, or the law's own size nearest it
        chosen: dict[tuple[str, str], dict] = {}
        for run in self.token_law_sgd_runs(scale):
            target = largest.get(run["param"], run["d"])
            key = (run["param"], run["law"])
            if key not in chosen or abs(run["d"] - target) < abs(chosen[key]["d"] - target):
                chosen[key] = run
        return list(chosen.values())


    # --- what each figure and claims topic reads ------------------------------------

    def needs(self, name: str, scale: str) -> Needs:
        """The inputs (result paths by name) and planned params of figure or claims job ``name``."""
        key = ("needs", name, scale)
        if key not in self._memo:
            names, build = _NEEDS[name]
            needs = build(self, scale)
            if tuple(needs.params) != names:
                raise AssertionError(f"{name}: planned params {tuple(needs.params)}, declared {names}")
            self._memo[key] = needs
        return self._memo[key]

    @staticmethod
    def needs_params(name: str) -> tuple[str, ...]:
        """The names of the planned params of figure or claims job ``name`` (the same at every scale)."""
        return _NEEDS[name][0]


def _paths(records, *roles) -> list[str]:
    """The paths of ``roles`` of every record, record by record."""
    return [record[role] for record in records for role in roles]


#: What each figure and claims job reads, one entry each: the names of its planned params
#: (a rule declares them before any scale is planned), and the :class:`Needs` of a scale.
_NEEDS: dict[str, tuple[tuple[str, ...], Callable[[Plan, str], Needs]]] = {
    "paper1_fig1": (("curves", "amp_curves"), lambda plan, s: Needs(
        {"curves": column(plan.figure1_curves(s)), "amp": column(plan.figure1_amp_curves(s))},
        {"curves": plan.figure1_curves(s), "amp_curves": Plan.without_runs(plan.figure1_amp_curves(s))})),
    "paper1_fig2": (("curves", "amp_curves", "gd_curves", "gd_trend"), lambda plan, s: Needs(
        {"curves": column(plan.figure2_curves(s)), "amp": column(plan.figure2_amp_curves(s)),
         "gd": column(plan.figure2_gd_curves(s)), "gd_trend": plan.trend_runs(s, "gd"),
         "gd_trend_amp": plan.trend_runs(s, "gd_amp")},
        {"curves": plan.figure2_curves(s), "amp_curves": Plan.without_runs(plan.figure2_amp_curves(s)),
         "gd_curves": Plan.without_runs(plan.figure2_gd_curves(s)), "gd_trend": plan.gd_trend(s)})),
    "paper1_figS1": (("curves", "exact"), lambda plan, s: Needs(
        {"curves": column(plan.tokens_curves(s)), "exact": column(plan.tokens_exact_curves(s))},
        {"curves": plan.tokens_curves(s), "exact": plan.tokens_exact_curves(s)})),
    "paper1_figS2": (("curves", "amp_curves"), lambda plan, s: Needs(
        {"curves": column(plan.figureS2_gen_curves(s)), "amp": column(plan.figureS2_amp_curves(s))},
        {"curves": plan.figureS2_gen_curves(s),
         "amp_curves": Plan.without_runs(plan.figureS2_amp_curves(s))})),
    "paper1_two_layer": (("curves", "amp"), lambda plan, s: Needs(
        {"curves": column(plan.two_layer_figure_curves(s)), "amp": column(plan.two_layer_amp_markers(s))},
        {"curves": plan.two_layer_figure_curves(s), "amp": plan.two_layer_amp_markers(s)})),
    "paper2_fig1": (("runs",), lambda plan, s: Needs(
        {"runs": column(plan.figure1_moment_runs(s)),
         "flows": column(plan.figure1_moment_runs(s), "flow_path"),
         "truncations": column(plan.figure1_moment_runs(s), "truncations_path")},
        {"runs": plan.figure1_moment_runs(s)})),
    "paper2_fig2": (("runs", "exact"), lambda plan, s: Needs(
        {"runs": column(plan.figure2_runs(s)), "flows": column(plan.figure2_runs(s), "flow_path"),
         "exact": column(plan.figure2_exact_flows(s))},
        {"runs": plan.figure2_runs(s), "exact": plan.figure2_exact_flows(s)})),
    "paper2_fig3": (("runs", "plateau"), lambda plan, s: Needs(
        {"runs": column(plan.figure3_untied_runs(s)),
         "flows": column(plan.figure3_untied_runs(s), "flow_path"),
         "plateau": column(plan.figure3_plateau_runs(s))},
        {"runs": plan.figure3_untied_runs(s), "plateau": plan.figure3_plateau_runs(s)})),
    "paper2_fig4": (("runs",), lambda plan, s: Needs(
        {"runs": column(plan.figure4_moment_runs(s)),
         "exact": column(plan.figure4_moment_runs(s), "exact_path"),
         "truncations": column(plan.figure4_moment_runs(s), "truncations_path"),
         "radius": plan.figure4_radius(s)["path"]},
        {"runs": plan.figure4_moment_runs(s)})),
    "paper2_figS1": ((), lambda plan, s: Needs({"tables": plan.theorem1_paths(s)})),
    "paper2_figS2": ((), lambda plan, s: Needs({"tables": plan.landscape_paths(s)})),
    "paper2_figS3": (("runs", "ensembles"), lambda plan, s: Needs(
        {"runs": column(plan.figureS3_runs(s)), "flows": column(plan.figureS3_runs(s), "flow_path"),
         "ensembles": column(plan.figureS3_flow_ensembles(s))},
        {"runs": plan.figureS3_runs(s), "ensembles": plan.figureS3_flow_ensembles(s)})),
    "paper2_figS4": (("runs", "limits"), lambda plan, s: Needs(
        {"runs": column(plan.figureS4_runs(s)), "flows": column(plan.figureS4_runs(s), "flow_path"),
         "limits": column(plan.figureS4_limit_runs(s), "limit_path")},
        {"runs": plan.figureS4_runs(s), "limits": plan.figureS4_limit_runs(s)})),
    "paper2_figS5": (("runs",), lambda plan, s: Needs(
        {"runs": column(plan.figureS5_runs(s)), "flows": column(plan.figureS5_runs(s), "flow_path"),
         "fast_states": plan.fast_states_path(s)},
        {"runs": plan.figureS5_runs(s)})),
    "paper2_figS6": (("tables",), lambda plan, s: Needs(
        {"tables": column(plan.figureS6_tables(s))}, {"tables": plan.figureS6_tables(s)})),
    "claims_paper1_theory": ((), lambda plan, s: Needs({})),
    "claims_paper1_amp": (("curves", "trends"), lambda plan, s: Needs(
        {"summaries": column(plan.amp_curves(s)), "trend_runs": plan.trend_runs(s, "amp")},
        {"curves": Plan.without_runs(plan.amp_curves(s)), "trends": plan.amp_trends(s)})),
    "claims_paper1_gd": (("curves", "trend"), lambda plan, s: Needs(
        {"summaries": column(plan.figure2_gd_curves(s)), "trend_runs": plan.trend_runs(s, "gd"),
         "trend_amp_runs": plan.trend_runs(s, "gd_amp")},
        {"curves": Plan.without_runs(plan.figure2_gd_curves(s)), "trend": plan.gd_trend(s)})),
    "claims_paper1_hardmax_tokens": (("curves", "exact", "tables"), lambda plan, s: Needs(
        {"curves": column(plan.tokens_curves(s)), "exact": column(plan.tokens_exact_curves(s)),
         "tables": column(plan.fisher_tables(s))},
        {"curves": plan.tokens_curves(s), "exact": plan.tokens_exact_curves(s),
         "tables": plan.fisher_tables(s)})),
    "claims_paper1_hardmax_tokens_amp": (("runs", "table"), lambda plan, s: Needs(
        {"runs": column(plan.tokens_amp_runs(s)), "table": plan.tokens_amp_table(s)["path"]},
        {"runs": plan.tokens_amp_runs(s), "table": plan.tokens_amp_table(s)})),
    "claims_paper1_two_layer": (("tables", "curves", "trend", "trend_table", "gd"), lambda plan, s: Needs(
        {"tables": column(plan.two_layer_tables(s)), "curves": column(plan.two_layer_curves(s)),
         "trend": column(plan.two_layer_amp_trend_runs(s)), "gd": column(plan.two_layer_gd_runs(s))},
        {"tables": plan.two_layer_tables(s), "curves": plan.two_layer_curves(s),
         "trend": plan.two_layer_amp_trend_runs(s), "trend_table": plan.two_layer_trend_table(s),
         "gd": plan.two_layer_gd_runs(s)})),
    "claims_paper2_dynamics": (
        ("figure2", "figureS3", "follow", "figure2_ensembles", "s3_ensembles", "velocity", "strong",
         "strong_sgd"),
        lambda plan, s: Needs(
            {"theorem1": plan.theorem1_paths(s), "figure2": column(plan.figure2_runs(s)),
             "figureS3": column(plan.figureS3_runs(s)),
             "figureS3_flows": column(plan.figureS3_runs(s), "flow_path"),
             "follow": column(plan.figureS3_follow_runs(s)),
             "follow_flows": column(plan.figureS3_follow_runs(s), "flow_path"),
             "figure2_flows": column(plan.figure2_runs(s), "flow_path"),
             "figure2_ensembles": column(plan.figure2_flow_ensembles(s)),
             "s3_ensembles": column(plan.figureS3_flow_ensembles(s)),
             "velocity": column(plan.tied_velocity_tables(s)),
             "strong": column(plan.strong_recovery_ensembles(s)),
             "strong_sgd": column(plan.strong_recovery_sgd_runs(s))},
            {"figure2": plan.figure2_runs(s), "figureS3": plan.figureS3_runs(s),
             "follow": plan.figureS3_follow_runs(s), "figure2_ensembles": plan.figure2_flow_ensembles(s),
             "s3_ensembles": plan.figureS3_flow_ensembles(s), "velocity": plan.tied_velocity_tables(s),
             "strong": plan.strong_recovery_ensembles(s), "strong_sgd": plan.strong_recovery_sgd_runs(s)})),
    "claims_paper2_moments": (("s6", "figure1", "figure4"), lambda plan, s: Needs(
        {"s6": column(plan.figureS6_tables(s)),
         "figure1": _paths(plan.figure1_moment_runs(s), "path", "flow_path", "truncations_path"),
         "figure4": _paths(plan.figure4_moment_runs(s), "path", "exact_path", "truncations_path"),
         "radius": plan.figure4_radius(s)["path"]},
        {"s6": plan.figureS6_tables(s), "figure1": plan.figure1_moment_runs(s),
         "figure4": plan.figure4_moment_runs(s)})),
    "claims_paper2_untied": (
        ("figure3", "figureS4", "figureS4_limits", "figureS5", "velocity", "plateau", "truncations",
         "decay"),
        lambda plan, s: Needs(
            {"figure3": column(plan.figure3_untied_runs(s)), "figureS4": column(plan.figureS4_runs(s)),
             "figureS4_flows": column(plan.figureS4_runs(s), "flow_path"),
             "figureS4_limits": column(plan.figureS4_limit_runs(s), "limit_path"),
             "figureS5": column(plan.figureS5_runs(s)),
             "figureS5_flows": column(plan.figureS5_runs(s), "flow_path"),
             "fast_states": plan.fast_states_path(s), "velocity": column(plan.untied_velocity_tables(s)),
             "plateau": column(plan.figure3_plateau_runs(s)),
             "truncations": column(plan.untied_truncation_tables(s)),
             "truncation_sgd": column(plan.untied_truncation_sgd_runs(s)),
             "decay": column(plan.untied_decay_tables(s)),
             "decay_sgd": column(plan.untied_decay_sgd_runs(s))},
            {"figure3": plan.figure3_untied_runs(s), "figureS4": plan.figureS4_runs(s),
             "figureS4_limits": plan.figureS4_limit_runs(s), "figureS5": plan.figureS5_runs(s),
             "velocity": plan.untied_velocity_tables(s), "plateau": plan.figure3_plateau_runs(s),
             "truncations": plan.untied_truncation_tables(s), "decay": plan.untied_decay_tables(s)})),
    # beyond both papers: tokens that are not Gaussian
    "paper1_token_laws": (("points", "runs", "curves", "softmax_curve", "gd_point", "gd_runs"), lambda plan, s: Needs(
        {"runs": column(plan.token_law_amp_runs(s)), "curves": column(plan.token_law_curves(s)),
         "softmax_curve": plan.token_law_softmax_curve(s)["path"], "gd_runs": column(plan.token_law_gd_runs(s))},
        {"points": plan.token_law_points(s), "runs": plan.token_law_amp_runs(s), "curves": plan.token_law_curves(s),
         "softmax_curve": plan.token_law_softmax_curve(s), "gd_point": plan.token_law_gd_point(s),
         "gd_runs": plan.token_law_gd_runs(s)})),
    "paper2_token_laws": (("runs",), lambda plan, s: Needs(
        {"runs": column(plan.token_law_figure_runs(s))}, {"runs": plan.token_law_figure_runs(s)})),
    "claims_paper1_token_laws": (("points", "runs", "theory", "gd_point", "gd_runs"), lambda plan, s: Needs(
        {"runs": column(plan.token_law_amp_runs(s)), "theory": column(plan.token_law_theories(s)),
         "gd_runs": column(plan.token_law_gd_runs(s))},
        {"points": plan.token_law_points(s), "runs": plan.token_law_amp_runs(s), "theory": plan.token_law_theories(s),
         "gd_point": plan.token_law_gd_point(s), "gd_runs": plan.token_law_gd_runs(s)})),
    "claims_paper2_token_laws": (("runs",), lambda plan, s: Needs(
        {"runs": column(plan.token_law_sgd_runs(s))}, {"runs": plan.token_law_sgd_runs(s)})),
    "claims": (("not_measured",), lambda plan, s: Needs({"fragments": plan.claim_fragments(s)},
                                                        {"not_measured": plan.unmeasured_topics(s)})),
}
