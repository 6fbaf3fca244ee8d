"""Two attention layers through the Snakemake command line (docs/paper1.md §14), on a tiny config.

conftest's ``tiny_two_layer_config``: three skips, 3 x 3 tables, four SE points, markers and
a trend at d = 12, 16, GD with three students.  One run builds the figure and the claims
fragment; every result has a complete sidecar, the figure reads the drawn skips' curves and
the markers, and the fragment carries a row per threshold, the c -> infinity row, the AMP
trend rows and the GD row.
"""

from __future__ import annotations

import csv
import json

import pytest

from conftest import TINY_SEED, copy_repository, run_snakemake, sha256, tiny_two_layer_config

pytestmark = pytest.mark.workflow

TARGETS = ("figures/quick/paper1_two_layer.pdf", "results/quick/claims/paper1_two_layer.tsv")


@pytest.fixture(scope="module")
def two_layer_run(tmp_path_factory):
    workdir = copy_repository(tmp_path_factory.mktemp("two_layer") / "aimrepro", tiny_two_layer_config())
    run_snakemake(workdir, "--cores", "2", *TARGETS)
    return workdir


def test_every_two_layer_result_has_a_complete_sidecar(two_layer_run):
    results = sorted(p for pattern in ("fisher/two_layer_*/*.npz", "se/two_layer_*/*.csv", "amp/two_layer_*/*.npz",
                                       "gd/two_layer_*/*.npz")
                     for p in (two_layer_run / "results/quick").glob(pattern))
    # tables, curves, AMP (the trend's d = 12 runs are the c = 10 markers), GD
    assert len(results) == 3 + 3 + (4 + 4 - 2) + 2
    for path in results:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        assert sidecar["outputs"][str(path.relative_to(two_layer_run))] == sha256(path)
        assert sidecar["cpu_seconds"] > 0
        assert any(code.startswith("src/aimrepro/paper1/two_layer/") for code in sidecar["code"])
        if "/amp/" in str(path) or "/gd/" in str(path):
            assert sidecar["seed"] == TINY_SEED


def test_the_figure_reads_the_drawn_curves_and_the_markers(two_layer_run):
    sidecar = json.loads((two_layer_run / "figures/quick/paper1_two_layer.json").read_text())
    inputs = sidecar["inputs"]
    assert sorted(p.split("/")[3] for p in inputs if "/se/" in p) == ["two_layer_rho0.5_c0", "two_layer_rho0.5_c10"]
    assert sum("/amp/" in p for p in inputs) == 4
    assert (two_layer_run / "figures/quick/paper1_two_layer.png").stat().st_size > 0


def test_the_claims_fragment_has_the_topics_rows(two_layer_run):
    with open(two_layer_run / "results/quick/claims/paper1_two_layer.tsv", newline="") as handle:
        rows = {row["id"]: row for row in csv.DictReader(handle, delimiter="\t")}
    assert {"p1x-two-layer-threshold-c0", "p1x-two-layer-threshold-c10", "p1x-two-layer-large-skip-limit",
            "p1x-two-layer-amp-trend-c10-layer1", "p1x-two-layer-amp-trend-c10-layer2",
            "p1x-two-layer-cross-term", "p1x-two-layer-fisher-quadrature",
            "p1x-two-layer-gd-c10-alpha0.3"} == set(rows)
    for skip in (0, 10):
        assert abs(float(rows[f"p1x-two-layer-threshold-c{skip}"]["measured"]) - 0.375) < 0.01
    # every trend size is reported, usable or not (30 iterations rarely settle)
    assert "d=12:" in rows["p1x-two-layer-amp-trend-c10-layer2"]["note"]
    assert "d=16:" in rows["p1x-two-layer-amp-trend-c10-layer2"]["note"]
