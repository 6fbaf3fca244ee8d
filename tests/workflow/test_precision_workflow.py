"""The float type of a kernel family through Snakemake: in each run's sidecar, and a change reruns that family.

``backend.dtype.gd: float32`` with the other families in float64: the GD runs'
sidecars record float32 (the rule's param, the backend the job used, the
solver settings), the AMP runs' float64; switching GD back to float64 makes
Snakemake plan the GD runs again (a param changed) and leaves the AMP runs
and the datasets alone.
"""

from __future__ import annotations

import json

import pytest

from conftest import copy_repository, edited_config, run_snakemake, snakemake_plan, tiny_paper1_config

pytestmark = pytest.mark.workflow

CONFIG = tiny_paper1_config()
CONFIG["backend"] = {"name": "numpy", "dtype": {"gd": "float32"}}
CONFIG["paper1"]["figure2"]["right"]["gd"]["Ts"] = [2]


def sidecars(workdir, kind):
    return {path: json.loads(path.with_suffix(".json").read_text())
            for path in sorted((workdir / "results/quick" / kind).rglob("alpha*.npz"))}


def test_the_float_type_reaches_the_sidecar_and_a_change_reruns_only_its_family(tmp_path):
    workdir = copy_repository(tmp_path / "aimrepro", CONFIG)
    run_snakemake(workdir, "--cores", "2", "--until", "gd_run", "amp_run")
    gd_runs, amp_runs = sidecars(workdir, "gd"), sidecars(workdir, "amp")
    assert gd_runs and amp_runs
    for sidecar in gd_runs.values():
        assert sidecar["params"]["backend"] == {"name": "numpy", "dtype": "float32"}
        assert sidecar["diagnostics"]["backend"]["dtype"] == "float32"
        assert sidecar["params"]["solver_settings"]["dtype"] == "float32"
    for sidecar in amp_runs.values():
        assert sidecar["params"]["backend"] == {"name": "numpy", "dtype": "float64"}
        assert sidecar["params"]["solver_settings"]["dtype"] == "float64"
    targets = [str(path.relative_to(workdir)) for path in [*gd_runs, *amp_runs]]
    assert not snakemake_plan(workdir, *targets).pending()
    with edited_config(workdir, lambda config: config["backend"]["dtype"].update(gd="float64")):
        plan = snakemake_plan(workdir, *targets)
    assert {job.rule for job in plan.pending()} == {"gd_run"}
    assert {job.output for job in plan.pending()} == {target for target in targets if "/gd/" in target}
