# Plan of the pipeline: config -> result paths and target lists.
#
# Only path helpers and lists live here; rules are in the other .smk files and
# science in src/aimrepro.  Every path a rule produces is spelled by one
# helper below, so that the rule patterns and the target lists cannot drift
# apart.

import math
import os
import sys
from pathlib import Path

from aimrepro.numerics import grids as grids_module
from aimrepro.paper1.thresholds import n_softmax_measurements

SCALE = config["scale"]


# ---------------------------------------------------------------------------
# Code inputs.  Snakemake reruns a job when its script changes but does not
# follow imports, so each rule declares as `code` inputs the import closure
# of its script (workflow/lib/codeinputs.py), derived from the imports
# themselves: editing the SE code reruns the SE curves and their figures,
# and nothing else.
# ---------------------------------------------------------------------------

sys.path.insert(0, os.path.join(workflow.basedir, "workflow", "lib"))

from codeinputs import CodeLayout, import_closure

CODE_LAYOUT = CodeLayout(
    package_root=Path(workflow.basedir) / "src",
    package="aimrepro",
    helper_dir=Path(workflow.basedir) / "workflow" / "scripts",
)


def repo_file(relative):
    """A file of the repository, as a path relative to the working directory."""
    return os.path.relpath(os.path.join(workflow.basedir, relative))


def script_code(name):
    """The workflow script ``name`` and every source file it runs (its import closure)."""
    return [os.path.relpath(path) for path in import_closure(CODE_LAYOUT.helper_dir / name, CODE_LAYOUT)]


# ---------------------------------------------------------------------------
# Result paths
# ---------------------------------------------------------------------------


def fmt_number(value):
    """Numbers in paths: Python's ``:g`` (0.5, 1, 2, 0.05, 1e-05), ``inf`` for infinity."""
    value = float(value)
    return "inf" if math.isinf(value) else f"{value:g}"


def se_curve_path(scale, channel, T, rho, axis, grid, n_points):
    """Result path of one SE curve (rule se_curve in theory.smk).

    ``rho`` is a float; 0 means the rho -> 0 limit, inf rho -> infinity.
    ``grid`` is a config mapping with ``spacing``, ``lo`` and ``hi``.
    """
    return (
        f"results/{scale}/se/{channel}_T{int(T)}_rho{fmt_number(rho)}/"
        f"{axis}_{grid['spacing']}_{fmt_number(grid['lo'])}_{fmt_number(grid['hi'])}"
        f"_n{int(n_points)}.csv"
    )


def _curve(scale, panel, channel, T, rho, axis, grid, n_points):
    return {
        "panel": panel,
        "channel": channel,
        "T": int(T),
        # The value the job computes: it parses rho back from the path, which
        # keeps 6 significant digits.
        "rho": float(fmt_number(rho)),
        "axis": axis,
        "path": se_curve_path(scale, channel, T, rho, axis, grid, n_points),
    }


def figure1_curves(scale):
    """SE curves of paper 1, Figure 1 (hardmax), in drawing order."""
    figure = config["paper1"]["figure1"]
    n_points = config["scales"][scale]["se_points"]
    T = figure["T"]
    curves = []
    for channel in figure["channels"]:
        for rho in figure["left"]["rhos"]:
            curves.append(_curve(scale, "left", channel, T, rho, "alpha",
                                 figure["left"]["alpha"], n_points["hardmax"]))
        for rho in figure["right"]["rhos"]:
            curves.append(_curve(scale, "right", channel, T, rho, "alphabar",
                                 figure["right"]["alphabar"], n_points["hardmax"]))
        if figure["right"]["small_width_limit"]:
            curves.append(_curve(scale, "right", channel, T, 0.0, "alphabar",
                                 figure["right"]["alphabar"], n_points["small_width"]))
    return curves


def figure2_curves(scale):
    """SE curves of paper 1, Figure 2 (softmax, beta = 1), in drawing order."""
    figure = config["paper1"]["figure2"]
    n_points = config["scales"][scale]["se_points"]["softmax"]
    left, right = figure["left"], figure["right"]
    curves = [
        _curve(scale, "left", "softmax", left["T"], rho, "alphapr", left["alphapr"], n_points)
        for rho in left["rhos"]
    ]
    if left["rho_infinity"]:
        curves.append(_curve(scale, "left", "softmax", left["T"], math.inf, "alpha",
                             left["rho_infinity_alpha"], n_points))
    curves.append(_curve(scale, "right", "softmax", right["T"], right["rho"], "alphaT",
                         right["alphaT"], n_points))
    return curves


def curve_paths(curves):
    return [curve["path"] for curve in curves]


# ---------------------------------------------------------------------------
# Simulations: datasets and GAMP-RIE runs (rules in amp.smk).
#
# A dataset is one teacher with its training and test sequences, one per
# (link, beta, T, rho, d, alpha, seed); AMP (and later GD) read it.  Paths:
#   results/{scale}/data/hardmax_T2_rho0.5_d100/alpha0.312_seed3.npz
#   results/{scale}/data/softmax_beta1_T2_rho0.5_d150/alpha0.1_seed3.npz
#   results/{scale}/amp/hardmax_paper_T2_rho0.5_d100/alpha0.312_seed3.npz
#   results/{scale}/amp/hardmax_T2_rho0.5_d100/summary_seeds16.csv
# "seed" in a path is the index of the draw; its random numbers come from the
# config's `seed` and the dataset's parameters (aimrepro.paper1.data.dataset_seed).
# ---------------------------------------------------------------------------

from aimrepro.paper1.data import link_token



def dataset_path(scale, link, T, rho, d, alpha, seed, beta=None):
    """A dataset (rule aim_dataset); beta for the softmax link only."""
    return (f"results/{scale}/data/{link_token(link, beta)}_T{int(T)}_rho{fmt_number(rho)}_d{int(d)}/"
            f"alpha{fmt_number(alpha)}_seed{int(seed)}.npz")


def amp_run_path(scale, channel, T, rho, d, alpha, seed, beta=None):
    """One GAMP-RIE run (rule amp_run)."""
    return (f"results/{scale}/amp/{link_token(channel, beta)}_T{int(T)}_rho{fmt_number(rho)}_d{int(d)}/"
            f"alpha{fmt_number(alpha)}_seed{int(seed)}.npz")


def amp_summary_path(scale, channel, T, rho, d, n_seeds, beta=None):
    """Mean and spread over seeds of one AMP curve (rule amp_summary)."""
    return (f"results/{scale}/amp/{link_token(channel, beta)}_T{int(T)}_rho{fmt_number(rho)}_d{int(d)}/"
            f"summary_seeds{int(n_seeds)}.csv")


def strided_indices(first, last, stride):
    """Every stride-th index from last down to first, in increasing order (last is always run)."""
    return sorted(range(int(last), int(first) - 1, -int(stride)))


def amp_size(scale, family):
    """scales.<scale>.amp.<family> ({d, seeds, alpha_stride}), or None: no AMP for it at this scale."""
    return config["scales"][scale].get("amp", {}).get(family)


def _amp_curve(scale, channel, T, rho, size, alphas, beta=None, **extra):
    alphas = [float(fmt_number(a)) for a in alphas]  # what the jobs parse back from the paths
    seeds = list(range(int(size["seeds"])))
    return {
        "channel": channel, "T": int(T), "rho": float(fmt_number(rho)), "d": int(size["d"]),
        "beta": beta, "alphas": alphas, "seeds": seeds,
        "path": amp_summary_path(scale, channel, T, rho, size["d"], len(seeds), beta),
        "runs": [[amp_run_path(scale, channel, T, rho, size["d"], a, s, beta) for s in seeds] for a in alphas],
        **extra,
    }


def figure1_amp_curves(scale):
    """AMP marker curves of Figure 1 left (one per channel and rho), or [] if not configured."""
    plan = config["paper1"]["figure1"].get("amp")
    size = amp_size(scale, "hardmax")
    if not plan or not size:
        return []
    grid = grids_module.grid_values(plan["alpha"]["spacing"], plan["alpha"]["lo"], plan["alpha"]["hi"],
                                    plan["alpha"]["n"])
    curves = []
    for channel in plan["channels"]:
        for entry in plan["first_index"]:
            picked = strided_indices(entry["index"], plan["last_index"], size.get("alpha_stride", 1))
            curves.append(_amp_curve(scale, channel, config["paper1"]["figure1"]["T"], entry["rho"], size,
                                     [grid[i] for i in picked], panel="left"))
    return curves


def figure2_amp_curves(scale):
    """AMP marker curves of Figure 2 right (one per T), or [] if not configured."""
    right = config["paper1"]["figure2"]["right"]
    plan = right.get("amp")
    size = amp_size(scale, "softmax")
    if not plan or not size:
        return []
    curves = []
    for run in plan["runs"]:
        spec = run["alpha"]
        grid = grids_module.grid_values(spec["spacing"], spec["lo"], spec["hi"], spec["n"])
        last = run.get("last_index", spec["n"] - 1)
        picked = strided_indices(0, last, size.get("alpha_stride", 1))
        curves.append(_amp_curve(scale, "softmax", run["T"], right["rho"], size, [grid[i] for i in picked],
                                 beta=float(plan["beta"]), panel="right"))
    return curves


def amp_curves(scale):
    return figure1_amp_curves(scale) + figure2_amp_curves(scale)


def amp_curve_params(curves):
    """Curves as rule params: everything but the list of run paths (those are inputs)."""
    return [{k: v for k, v in curve.items() if k != "runs"} for curve in curves]


# ---------------------------------------------------------------------------
# Simulations: gradient descent on the tied student (rules in gd.smk, paper 1 §6).
#
# One run trains K students (initialisations) on one dataset of rule
# aim_dataset; a summary gives mean and spread over draws per alpha.  Paths:
#   results/{scale}/gd/softmax_beta1_T2_rho0.5_d200_inits32/alpha0.3_seed3.npz
#   results/{scale}/gd/softmax_beta1_T2_rho0.5_d200_inits32/summary_seeds16.csv
# ---------------------------------------------------------------------------



def gd_dir(scale, T, rho, d, n_inits, beta):
    return f"results/{scale}/gd/{link_token('softmax', beta)}_T{int(T)}_rho{fmt_number(rho)}_d{int(d)}_inits{int(n_inits)}"


def gd_run_path(scale, T, rho, d, n_inits, alpha, seed, beta):
    """One GD run: K = n_inits students on one dataset (rule gd_run)."""
    return f"{gd_dir(scale, T, rho, d, n_inits, beta)}/alpha{fmt_number(alpha)}_seed{int(seed)}.npz"


def gd_summary_path(scale, T, rho, d, n_inits, n_seeds, beta):
    """Mean and spread over draws of one GD marker curve (rule gd_summary)."""
    return f"{gd_dir(scale, T, rho, d, n_inits, beta)}/summary_seeds{int(n_seeds)}.csv"


def gd_size(scale):
    """scales.<scale>.gd ({d, seeds, inits, alpha_stride, alphaT_max, threads}), or None: no GD at this scale."""
    return config["scales"][scale].get("gd")


def figure2_gd_curves(scale):
    """GD marker curves of Figure 2 right, one per T, or [] if not configured.

    The alphas are every alpha_stride-th point of the grid counted back from
    its last point, then those with alpha (T^2+T-2) <= alphaT_max (if set).
    """
    right = config["paper1"]["figure2"]["right"]
    plan = right.get("gd")
    size = gd_size(scale)
    if not plan or not size:
        return []
    spec = plan["alpha"]
    grid = grids_module.grid_values(spec["spacing"], spec["lo"], spec["hi"], spec["n"])
    picked = [grid[i] for i in strided_indices(0, spec["n"] - 1, size.get("alpha_stride", 1))]
    beta = float(plan["beta"])
    d, n_inits = int(size["d"]), int(size["inits"])
    seeds = list(range(int(size["seeds"])))
    curves = []
    for T in plan["Ts"]:
        measurements = n_softmax_measurements(T)
        alphas = [float(fmt_number(a)) for a in picked
                  if size.get("alphaT_max") is None or a * measurements <= size["alphaT_max"]]
        if not alphas:
            continue
        curves.append({
            "T": int(T), "rho": float(fmt_number(right["rho"])), "d": d, "inits": n_inits, "beta": beta,
            "alphas": alphas, "seeds": seeds,
            "path": gd_summary_path(scale, T, right["rho"], d, n_inits, len(seeds), beta),
            "runs": [[gd_run_path(scale, T, right["rho"], d, n_inits, a, s, beta) for s in seeds]
                     for a in alphas],
        })
    return curves


# ---------------------------------------------------------------------------
# Claims: one TSV fragment per topic, merged by rule `claims` (report.smk).
# A topic's rule is named claims_<topic> and writes
# results/{scale}/claims/<topic>.tsv.  Add new topics here.
# ---------------------------------------------------------------------------

CLAIM_TOPICS = [
    # Rule claims_paper1_theory (theory.smk, lead): alpha_PR table, alphabar_c
    # for both hardmax channels, rho -> infinity line, softmax collapse in T.
    "paper1_theory",
    # Rule claims_paper1_amp (amp.smk, issue 3): AMP against SE, softmax
    # recovery beyond alpha_PR, corrected AMP below the published hardmax MMSE.
    # Defined only at a scale with AMP configured (else listed as pending).
    "paper1_amp",
    # Rule claims_paper1_gd (gd.smk, issue 4): averaged GD near the SE curve,
    # single GD ~ 2 x MMSE at small alpha, zero error beyond alpha_T ~ 1.0-1.2.
    # Defined only at a scale with GD configured (else listed as pending).
    "paper1_gd",
]
if "paper2" in config:
    # Rule claims_paper2_dynamics (dynamics.smk, issue 5): Theorem-1 gap, initial
    # slope of p12, weak-recovery times of tied and direct attention.
    CLAIM_TOPICS.append("paper2_dynamics")
if all(name in config.get("paper2", {}) for name in ("figure3", "figureS4", "figureS5")):
    # Rule claims_paper2_untied (untied.smk, issue 7): the fast and slow collapses,
    # escape time against d on both sides of the threshold, the sign of the overlap.
    CLAIM_TOPICS.append("paper2_untied")


def claim_fragment_path(scale, topic):
    return f"results/{scale}/claims/{topic}.tsv"


def claim_topics_with_rule():
    """Topics whose rule exists.  A topic listed before its rule is written
    is reported as pending in claims.md instead of breaking the DAG."""
    return [topic for topic in CLAIM_TOPICS if workflow.is_rule(f"claims_{topic}")]


def pending_claim_topics():
    return [topic for topic in CLAIM_TOPICS if not workflow.is_rule(f"claims_{topic}")]


def claim_fragments(scale):
    return [claim_fragment_path(scale, topic) for topic in claim_topics_with_rule()]


# ---------------------------------------------------------------------------
# Targets of `rule all`
# ---------------------------------------------------------------------------

FIGURES = ["paper1_fig1", "paper1_fig2"]
# Paper 2 dynamics, part 1 (dynamics.smk): drawn when the config has a paper2 section.
PAPER2_FIGURES = ["paper2_fig2", "paper2_figS1", "paper2_figS2", "paper2_figS3"]
if "paper2" in config:
    FIGURES += PAPER2_FIGURES
# Paper 2, part 2 (moments.smk): the moment hierarchy, planned when the paper2
# section has figure1, figure4 and figureS6.
PAPER2_MOMENT_FIGURES = ["paper2_fig1", "paper2_fig4", "paper2_figS6"]
if all(key in config.get("paper2", {}) for key in ("figure1", "figure4", "figureS6")):
    FIGURES += PAPER2_MOMENT_FIGURES
    # Rule claims_paper2_moments (moments.smk, issue 6): exponential decay of the
    # truncation error in M, its horizon, matrix flow and Riccati against SGD.
    CLAIM_TOPICS.append("paper2_moments")
# Paper 2 untied attention (untied.smk, issue 7): drawn when its three sections are configured.
PAPER2_UNTIED_FIGURES = ["paper2_fig3", "paper2_figS4", "paper2_figS5"]
if all(name in config.get("paper2", {}) for name in ("figure3", "figureS4", "figureS5")):
    FIGURES += PAPER2_UNTIED_FIGURES


def figure_files(scale, name):
    return [f"figures/{scale}/{name}.{ext}" for ext in ("pdf", "png", "json")]


def all_targets(scale):
    targets = []
    for name in FIGURES:
        targets += figure_files(scale, name)
    targets.append(f"results/{scale}/claims.md")
    return targets
