# Plan of the pipeline: config -> result paths and target lists.
#
# Only path helpers and lists live here; rules are in the other .smk files and
# science in src/aimrepro.  Every path a rule produces is spelled by one
# helper below, so that the rule patterns and the target lists cannot drift
# apart.

import math
import os

SCALE = config["scale"]


# ---------------------------------------------------------------------------
# Code inputs.  Snakemake reruns a job when its script changes but does not
# follow imports, so each rule lists the package modules it runs as inputs
# (DESIGN.md, "Reruns"): editing the SE code reruns the SE curves and their
# figures, and nothing else.
# ---------------------------------------------------------------------------


def repo_file(relative):
    """A file of the repository, as a path relative to the working directory."""
    return os.path.relpath(os.path.join(workflow.basedir, relative))


def package_modules(*names):
    return [repo_file(f"src/aimrepro/{name}.py") for name in names]


def script_code(name):
    """A workflow script and the job glue every script imports."""
    return [repo_file(f"workflow/scripts/{name}"), repo_file("workflow/scripts/_job.py")]


# The state evolution and everything it imports.
SE_MODULES = package_modules("spectra", "channels", "_gauss", "state_evolution", "grids")
# Tables, sidecars and atomic writes: every rule writes through them.
RECORD_MODULES = package_modules("provenance")
PLOT_MODULES = package_modules("plotting", "paper1_figures")
CLAIM_MODULES = package_modules("claims")


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
# Claims: one TSV fragment per topic, merged by rule `claims` (report.smk).
# A topic's rule is named claims_<topic> and writes
# results/{scale}/claims/<topic>.tsv.  Add new topics here.
# ---------------------------------------------------------------------------

CLAIM_TOPICS = [
    # Rule claims_paper1_theory (theory.smk, lead): alpha_PR table, alphabar_c
    # for both hardmax channels, rho -> infinity line, softmax collapse in T.
    "paper1_theory",
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
