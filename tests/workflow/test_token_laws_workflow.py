"""The token-law study end to end (workflow/rules/token_laws.smk): both figures and claims fragments on a tiny config.

Tiny sizes (d = 10-24, two replicates, a few hundred theory draws): the rules, scripts,
sidecars and the claims' row ids, not the science (tests/unit/test_token_laws*.py).
"""

from __future__ import annotations

import json

import pytest

from conftest import copy_repository, run_snakemake, tiny_paper1_config, tiny_paper2_config

pytestmark = pytest.mark.workflow

TARGETS = ["figures/quick/paper1_token_laws.pdf", "figures/quick/paper2_token_laws.pdf",
           "results/quick/claims/paper1_token_laws.tsv", "results/quick/claims/paper2_token_laws.tsv"]


def tiny_token_laws_config() -> dict:
    config = tiny_paper2_config()
    simulations = tiny_paper1_config()
    config["seed"] = simulations["seed"]
    config["paper1"]["figure2"]["right"]["gd"] = simulations["paper1"]["figure2"]["right"]["gd"]
    config["paper1"]["amp_solver"] = simulations["paper1"]["amp_solver"]
    config["paper1"]["token_laws"] = {
        "laws": ["gaussian", "rademacher", "student_t_nu5"],
        "amp": [{"name": "hardmax_T2", "channel": "hardmax", "T": 2, "rho": 0.5, "alpha": 0.6},
                {"name": "softmax_T2", "channel": "softmax", "T": 2, "rho": 0.5, "alpha": 0.075, "beta": 1}],
        "gd": {"T": 2, "alphaT": 0.3}, "theory": {"seed": 0}}
    config["scales"]["quick"]["token_laws"] = {
        "amp": {"hardmax_T2": {"dims": [12, 16], "seeds": 2}, "softmax_T2": {"dims": [12, 16], "seeds": 2}},
        "gd": {"dims": [10, 12], "seeds": 2, "inits": 3}, "theory_samples": 200}
    config["paper2"]["token_laws"] = {"link": "h2", "horizon": {"tied": 0.6, "direct": 0.6},
                                      "laws": ["rademacher", "student_t_nu5"]}
    config["scales"]["quick"]["paper2"]["token_laws"] = {"dims": {"tied": [16, 24], "direct": [16]}, "batch": 16,
                                                         "seeds": 2, "records": 9}
    return config


@pytest.fixture(scope="module")
def token_laws_run(tmp_path_factory):
    workdir = copy_repository(tmp_path_factory.mktemp("token_laws") / "aimrepro", tiny_token_laws_config())
    run_snakemake(workdir, "--cores", "2", *TARGETS)
    return workdir


def test_every_result_names_its_law_and_has_a_sidecar(token_laws_run):
    root = token_laws_run / "results/quick/token_laws"
    found = {}
    for result in sorted(root.glob("*/*/*")):
        if result.suffix == ".json":
            continue
        sidecar = json.loads(result.with_suffix(".json").read_text())
        found.setdefault(sidecar["rule"], []).append(result.name)
        law = sidecar["params"]["law"] if "law" in sidecar["params"] else sidecar["params"]["spec"]["tokens"]
        assert law["name"] in str(result.relative_to(root)), result  # the law is in the path
    # per d and law: 2 x 3 hardmax, 2 x 3 softmax, 2 x 3 GD; the theory and curves of two laws; SGD 3 x 2
    assert {rule: len(names) for rule, names in found.items()} == {
        "token_law_amp": 12, "token_law_gd": 6, "token_law_theory": 2, "token_law_se_curve": 2, "token_law_sgd": 6}


def test_the_figures_and_the_claims_fragments_are_written(token_laws_run):
    for target in TARGETS:
        assert (token_laws_run / target).stat().st_size > 0, target
    rows = {}
    for topic in ("paper1_token_laws", "paper2_token_laws"):
        lines = (token_laws_run / f"results/quick/claims/{topic}.tsv").read_text().splitlines()
        header = lines[0].split("\t")
        rows.update({line.split("\t")[0]: dict(zip(header, line.split("\t"))) for line in lines[1:]})
    assert {"p1-tokens-amp-hardmax_T2-rademacher-gaussian-se", "p1-tokens-amp-hardmax_T2-rademacher-law-se",
            "p1-tokens-amp-hardmax_T2-student_t_nu5-law-se-finite-d", "p1-tokens-amp-softmax_T2-rademacher-gaussian-se",
            "p1-tokens-gd-student_t_nu5-gaussian-se", "p2-tokens-tied-h2-rademacher-gaussian-flow",
            "p2-tokens-direct-h2-student_t_nu5-law-flow"} <= set(rows)
    assert not any(row["id"].startswith(("p1-tokens-amp-hardmax_T2-gaussian", "p2-tokens-tied-h2-gaussian"))
                   for row in rows.values())
