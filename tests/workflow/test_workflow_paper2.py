"""The paper-2 dynamics part of the workflow (paper2_dynamics.smk), on a tiny config in a repository copy.

(a) the default config plans paper 2's figures at both scales, with the
    paper's d and batch at paper scale;
(b) a tiny paper-2 config runs end to end: every SGD run, reference flow,
    table, figure and the claims fragment has its sidecar with diagnostics,
    and claims.md lists the paper-2 rows;
(c) a config whose stop overlap is below the recovery threshold fails with
    one line.
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from test_workflow import TINY_CONFIG, planned_jobs

from conftest import copy_repository, run_snakemake

pytestmark = pytest.mark.workflow

TINY_PAPER2 = {
    "seed": 0,
    "threshold": 0.3,
    "figure2": {"T": 1, "links": ["h1", "h2"], "rho": 0.5, "normalisation": "unit_variance",
                "weight_decay": 0.0, "horizon": 0.4},
    "figureS1": {"T": 2, "links": ["softmax", "linear"], "rho": 0.5, "beta": 1.0},
    "figureS2": {"T": 2, "links": ["softmax", "hardmax"], "rho": 0.5, "beta": 1.0},
    "figureS3": {"T": 1, "links": ["h1"], "rho": 0.5, "normalisation": "unit_variance",
                 "eta": 0.05, "horizon": {"tied": 0.6, "direct": 0.6}, "stop_overlap": 0.5},
}
TINY_SIZES = {
    "figure2": {"d": 20, "batch": 16, "seeds": 2, "records": 9,
                "lr": {"tied": {"h1": 0.01, "h2": 0.01}, "direct": {"h1": 0.02, "h2": 0.02}}},
    "figureS1": {"dims": [12, 24], "n_samples": 2000},
    "figureS2": {"n_grid": 7},
    "figureS3": {"dims": {"tied": [16, 24], "direct": [16, 24]}, "batch": 16, "seeds": 2,
                 "records": 9},
}
PAPER2_TARGETS = [f"figures/quick/paper2_{name}.pdf" for name in ("fig2", "figS1", "figS2", "figS3")]


def tiny_paper2_config() -> dict:
    config = copy.deepcopy(TINY_CONFIG)
    config["paper2"] = copy.deepcopy(TINY_PAPER2)
    for scale in ("quick", "paper"):
        config["scales"][scale]["paper2"] = copy.deepcopy(TINY_SIZES)
    return config


def test_default_config_plans_paper2_at_both_scales(repo_copy):
    done = run_snakemake(repo_copy, "-n", "--cores", "2")
    rules = [rule for rule, _ in planned_jobs(done.stdout)]
    assert {"sgd_run", "reference_flow", "theorem1", "landscape", "paper2_fig2", "paper2_figS1",
            "paper2_figS2", "paper2_figS3", "claims_paper2_dynamics"} <= set(rules)
    paper = run_snakemake(repo_copy, "-n", "--cores", "2", "--config", "scale=paper")
    outputs = [out for rule, out in planned_jobs(paper.stdout) if rule == "sgd_run"]
    # Figure 2 at the paper's settings (docs/paper2.md §6): d = 400, lr 0.005, batch 512
    assert "results/paper/sgd/tied_h3_T1_rho0.5_unit_variance_c0.5_d400/" \
           "lr0.005_B512_wd0_t3_n241_stopnone_seed4.csv" in outputs


@pytest.fixture(scope="module")
def tiny_paper2_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tiny_paper2") / "aimrepro"
    copy_repository(workdir, tiny_paper2_config())
    run_snakemake(workdir, "--cores", "2", *PAPER2_TARGETS, "results/quick/claims.md")
    return workdir


def test_tiny_paper2_run_writes_results_with_sidecars(tiny_paper2_run):
    root = tiny_paper2_run
    runs = sorted((root / "results/quick/sgd").glob("*/*.csv"))
    # Figure 2: 2 params x 2 links x 2 seeds; S3: 2 params x 1 link x 2 d x 2 seeds
    assert len(runs) == 8 + 8
    for run in runs:
        sidecar = json.loads(run.with_suffix(".json").read_text())
        assert sidecar["rule"] == "sgd_run"
        assert {"blew_up", "cpu_seconds", "weak_recovery_time", "n_steps"} <= set(
            sidecar["diagnostics"])
        assert sidecar["seed"] in (0, 1)
        assert "src/aimrepro/paper2/sgd.py" in sidecar["code"]
    flows = sorted((root / "results/quick/theory").glob("*_flow/*/*.csv"))
    assert len(flows) == 8 + 8  # one per SGD replicate of Figure 2 and of S3
    for flow in flows:
        assert json.loads(flow.with_suffix(".json").read_text())["diagnostics"]["converged"]
    for target in PAPER2_TARGETS:
        pdf = root / target
        assert pdf.exists() and pdf.with_suffix(".png").exists()
        sidecar = json.loads(pdf.with_suffix(".json").read_text())
        assert sidecar["inputs"], target
    claims = (root / "results/quick/claims.md").read_text()
    for claim_id in ("p2-thm1-gap-softmax", "p2-thm1-linear-exact", "p2-tied-initial-slope-h1",
                     "p2-tied-twr-flat-h1", "p2-direct-twr-grows-h1", "p2-fig2-both-recover-h1",
                     "p2-fig2-direct-uninformative-h2", "p2-tied-samples-d2logd-h1"):
        assert claim_id in claims, claim_id


def test_stop_overlap_below_the_threshold_is_rejected(repo_copy, tmp_path):
    config = tiny_paper2_config()
    config["paper2"]["figureS3"]["stop_overlap"] = 0.2
    # replace config.yaml rather than pass --configfile, which Snakemake merges into
    # config.yaml (the tiny config would then inherit keys that only fit the full one)
    original = (repo_copy / "config.yaml").read_text()
    (repo_copy / "config.yaml").write_text(yaml.safe_dump(config))
    try:
        done = run_snakemake(repo_copy, "-n", "--cores", "2", check=False)
    finally:
        (repo_copy / "config.yaml").write_text(original)
    assert done.returncode != 0
    messages = [line for line in done.stderr.splitlines() if "invalid config" in line]
    assert messages == ["aimrepro: invalid config: paper2.figureS3.stop_overlap = 0.2; allowed: "
                        "a number >= paper2.threshold (0.3)"]
