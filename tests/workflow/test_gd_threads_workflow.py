"""The same bits from the same config through Snakemake: rule gd_run with 2 threads and with 1.

``scales.quick.gd.threads: 2`` with ``block: 1`` (three blocks of one student),
run once with ``--cores 2`` (the jobs get 2 threads) and once with
``--cores 1`` (Snakemake lowers them to 1): the .npz results are the same bytes.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import copy_repository, run_snakemake, tiny_paper1_config

pytestmark = pytest.mark.workflow

CONFIG = tiny_paper1_config()
CONFIG["scales"]["quick"]["gd"] = {"d": 12, "seeds": 1, "inits": 3, "alpha_stride": 16, "alphaT_max": 3.2,
                                   "threads": 2, "block": 1}
CONFIG["paper1"]["figure2"]["right"]["gd"]["Ts"] = [2]


def gd_results(workdir):
    runs = sorted((workdir / "results/quick/gd").rglob("alpha*.npz"))
    return {str(p.relative_to(workdir)): hashlib.sha256(p.read_bytes()).hexdigest() for p in runs}


def test_two_threads_and_one_give_the_same_bytes(tmp_path):
    workdir = copy_repository(tmp_path / "aimrepro", CONFIG)
    run_snakemake(workdir, "--cores", "2", "--until", "gd_run")
    with_two = gd_results(workdir)
    assert len(with_two) == 2  # two alphas, one draw
    for path in with_two:
        sidecar = json.loads((workdir / path).with_suffix(".json").read_text())
        assert sidecar["diagnostics"]["threads"] == 2
        assert sidecar["params"]["block"] == 1 and sidecar["params"]["backend"]["name"] == "numpy"
        (workdir / path).unlink()
    run_snakemake(workdir, "--cores", "1", "--until", "gd_run")
    assert gd_results(workdir) == with_two
    for path in with_two:
        assert json.loads((workdir / path).with_suffix(".json").read_text())["diagnostics"]["threads"] == 1
