"""The figures and the claims: kinds that read results and write fixed outputs.

A figure or claims job's parameters are what it reads: its :class:`~..plans.Needs`
(the results by input name, and the planned records its script draws or judges).
Its work is a start-up (matplotlib for figures), reading small tables and,
for a claims topic, its own checks (some recompute a theory curve), priced per
topic where measured; Figure S5 of paper 2 finds the instability time of each
of its untied flows.
"""

from __future__ import annotations

from ..paths import ResultPath, choice, figure_paths
from ..prices import PRICES, SIDECAR_BYTES, Work
from . import Job, Kind, register

#: Every figure of both papers, in the order of the plan (which ones a config draws: Plan.figures).
FIGURES = ("paper1_fig1", "paper1_fig2", "paper1_figS1", "paper1_figS2", "paper1_two_layer",
           "paper2_fig1", "paper2_fig2", "paper2_fig3", "paper2_fig4",
           "paper2_figS1", "paper2_figS2", "paper2_figS3", "paper2_figS4", "paper2_figS5",
           "paper2_figS6",
           # beyond both papers: tokens that are not Gaussian
           "paper1_token_laws", "paper2_token_laws")
#: Every claims topic: module aimrepro.claims.<topic>, rule claims_<topic>.
TOPICS = ("paper1_theory", "paper1_amp", "paper1_gd", "paper1_hardmax_tokens",
          "paper1_hardmax_tokens_amp", "paper1_two_layer", "paper2_dynamics", "paper2_moments", "paper2_untied",
          # beyond both papers: tokens that are not Gaussian
          "paper1_token_laws", "paper2_token_laws")

#: One topic's claim rows, merged into results/{scale}/claims.md.
CLAIM_FRAGMENT = ResultPath("claims", "{topic}", ".tsv", {"topic": choice(TOPICS)})


def _figure_work(job: Job) -> Work:
    fixed = {}
    if job.kind.name == "paper2_figS5":
        fixed["instability_time"] = float(len(job.plan.figureS5_runs(job.scale)))
    return Work("figure", fixed=fixed, memory=250e6, disk=SIDECAR_BYTES + 200_000.0)


def _topic_work(job: Job) -> Work:
    unit = job.kind.name
    fixed = {unit: 1.0} if unit in PRICES else {}
    if unit == "claims_paper1_two_layer":
        # the threshold measured on the fibre integral per skip (state_evolution.threshold_estimate)
        # and the SE at the trend's point
        plan = job.plan
        threshold = plan.two_layer_size(job.scale)["threshold"]
        fixed["two_layer_threshold_integral"] = (len(plan.config["paper1"]["two_layer"]["figure_skips"])
                                                 * threshold["replicates"] * 2.0 ** threshold["log2_samples"])
        fixed["two_layer_se_point"] = 1.0
    return Work("claims_topic", fixed=fixed, memory=200e6, disk=SIDECAR_BYTES + 200_000.0)


def _needs(job: Job):
    return job.plan.needs(job.kind.name, job.scale)


for _name in FIGURES:
    register(Kind(_name, None, params=_needs, work=_figure_work, group="figures",
                  outputs=lambda scale, name=_name: list(figure_paths(scale, name).values())))

for _topic in TOPICS:
    register(Kind(f"claims_{_topic}", None, params=_needs, work=_topic_work, group="claims",
                  outputs=lambda scale, topic=_topic: [
                      CLAIM_FRAGMENT.format(scale, topic=topic),
                      CLAIM_FRAGMENT.pattern(".json", scale=scale, topic=topic)]))

#: The claims table: every planned fragment merged, with what is not measured and why.
CLAIMS = register(Kind(
    "claims", None, params=_needs,
    work=lambda job: Work("claims", memory=110e6, disk=SIDECAR_BYTES + 200_000.0), group="claims",
    outputs=lambda scale: [f"results/{scale}/claims.md", f"results/{scale}/claims.json"]))
