"""The same bits from the same config through Snakemake: rule gd_run with 2 threads and with 1.

``scales.quick.gd.threads: 2`` with ``block: 1`` (three blocks of one student),
run once with ``--cores 2`` (the jobs get 2 threads) and once with
``--cores 1`` (Snakemake lowers them to 1): the .npz results are the same bytes
(``aimrepro diff``).
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import copy_repository, run_cli, run_snakemake, tiny_paper1_config

pytestmark = pytest.mark.workflow

CONFIG = tiny_paper1_config()
CONFIG["scales"]["quick"]["gd"] = {"d": 12, "seeds": 1, "inits": 3, "alpha_stride": 16, "alphaT_max": 3.2,
                                   "threads": 2, "block": 1}
CONFIG["paper1"]["figure2"]["right"]["gd"]["Ts"] = [2]


def test_two_threads_and_one_give_the_same_bytes(tmp_path):
    workdir = copy_repository(tmp_path / "aimrepro", CONFIG)
    run_snakemake(workdir, "--cores", "2", "--until", "gd_run")
    runs = sorted((workdir / "results/quick/gd").rglob("alpha*.npz"))
    assert len(runs) == 2  # two alphas, one draw
    with_two = tmp_path / "with_two_threads"
    shutil.copytree(workdir / "results/quick/gd", with_two)
    for path in runs:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        assert sidecar["diagnostics"]["threads"] == 2
        assert sidecar["params"]["block"] == 1 and sidecar["params"]["backend"]["name"] == "numpy"
        path.unlink()
    run_snakemake(workdir, "--cores", "1", "--until", "gd_run")
    compared = run_cli("diff", "--json", str(with_two), str(workdir / "results/quick/gd"))
    assert compared.returncode == 0, compared.stdout
    assert json.loads(compared.stdout)["counts"]["same"] == 2
    for path in runs:
        assert json.loads(path.with_suffix(".json").read_text())["diagnostics"]["threads"] == 1
