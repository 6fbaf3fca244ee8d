"""The ``aimrepro`` command line, run as a user would: in a subprocess.

Both entry points are exercised: the installed ``aimrepro`` script and
``python -m aimrepro.cli``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import pytest

from aimrepro.paper1 import thresholds
from aimrepro.records.sidecars import write_sidecar

from conftest import assert_usage_error, run_cli


def json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


# --- threshold -------------------------------------------------------------------


@pytest.mark.parametrize(("rho", "T"), [(0.5, 2), (0.1, 2), (2.0, 2), (0.5, 4)])
def test_threshold_prints_alpha_pr(rho, T):
    done = run_cli("threshold", "--T", str(T), "--rho", str(rho))
    assert done.returncode == 0, done.stderr
    assert json_lines(done.stdout) == [
        {"rho": rho, "T": T, "alpha_pr": thresholds.alpha_perfect_recovery(rho, T)}]


def test_threshold_values_of_paper1_section4():
    done = run_cli("threshold", "--T", "2", "--rho", "0.5", module=True)
    assert json.loads(done.stdout)["alpha_pr"] == pytest.approx(0.1875, abs=1e-15)


# --- bad input: exit 2, one line naming the argument and its range ------------------


@pytest.mark.parametrize(("args", "names"), [
    (["se", "--channel", "argmax", "--T", "2", "--rho", "1", "--alpha", "1"],
     ["--channel", "softmax", "hardmax", "hardmax_paper"]),
    (["se", "--channel", "softmax", "--T", "1", "--rho", "1", "--alpha", "1"],
     ["--T", "[2, 1000000]"]),
    (["se", "--channel", "softmax", "--T", "two", "--rho", "1", "--alpha", "1"],
     ["--T", "[2, 1000000]"]),
    (["se", "--channel", "hardmax_paper", "--T", "3", "--rho", "1", "--alpha", "1"],
     ["--T", "must be 2"]),
    (["se", "--channel", "hardmax", "--T", "5", "--rho", "1", "--alpha", "1"],
     ["--T = 5", "--max-table-seconds 300", "--table-samples 50000"]),
    (["se", "--channel", "hardmax", "--T", "3", "--rho", "1", "--alpha", "1",
      "--table-samples", "10"], ["--table-samples", ">= 1000"]),
    (["se", "--channel", "softmax", "--T", "2", "--rho", "0", "--alpha", "1"],
     ["--rho", "> 0"]),
    (["se", "--channel", "softmax", "--T", "2", "--rho", "-1", "--alpha", "1"],
     ["--rho", "> 0"]),
    (["se", "--channel", "softmax", "--T", "2", "--rho", "1", "--alpha", "0.1", "0"],
     ["--alpha", ">= 1e-100"]),
    (["se", "--channel", "softmax", "--T", "2", "--rho", "1", "--alpha", "-0.1"],
     ["--alpha", ">= 1e-100"]),
    (["se", "--channel", "hardmax", "--T", "2", "--rho", "1", "--alpha", "1", "--beta", "2"],
     ["--beta", "softmax"]),
    (["se", "--channel", "softmax", "--T", "2", "--rho", "1"], ["--alpha"]),
    (["threshold", "--T", "1", "--rho", "0.5"], ["--T", "[2, 1000000]"]),
    (["threshold", "--T", "2", "--rho", "inf"], ["--rho", "finite"]),
    (["threshold", "--T", "2", "--rho", "nan"], ["--rho", "> 0"]),
    (["provenance", "no/such/file.pdf"], ["FILE", "no such file"]),
    ([], ["se", "threshold", "provenance"]),
])
def test_bad_arguments_exit_2_with_one_line(args, names):
    done = run_cli(*args, module=True)
    assert_usage_error(done, names)


# --- provenance ------------------------------------------------------------------


def test_provenance_prints_the_lineage_tree(tmp_path):
    start = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
    (tmp_path / "results").mkdir()
    (tmp_path / "figures").mkdir()
    csv = tmp_path / "results" / "curve.csv"
    csv.write_text("alpha,mmse\n0.1,0.9\n")
    pdf = tmp_path / "figures" / "fig.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    common = dict(params={}, code=[], started=start, ended=start, repo=tmp_path)
    write_sidecar(csv, rule="se_curve", inputs=[], diagnostics={"converged": True}, **common)
    write_sidecar(pdf, rule="paper1_fig1", inputs=[csv], diagnostics={}, **common)
    done = run_cli("provenance", str(pdf))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(str(pdf)) and "rule paper1_fig1" in lines[0]
    assert lines[1].startswith("└── " + str(csv)) and "rule se_curve" in lines[1]


def test_provenance_of_a_file_without_sidecar(tmp_path):
    lonely = tmp_path / "raw.txt"
    lonely.write_text("x")
    done = run_cli("provenance", str(lonely), module=True)
    assert done.returncode == 0
    assert "[no sidecar]" in done.stdout


# --- se ---------------------------------------------------------------------------


def test_se_softmax_prints_one_json_line_per_alpha_in_increasing_order():
    alpha_pr = thresholds.alpha_perfect_recovery(0.5, 2)
    done = run_cli("se", "--channel", "softmax", "--T", "2", "--rho", "0.5",
                   "--alpha", "0.1", "0.02", "0.3")
    assert done.returncode == 0, done.stderr
    records = json_lines(done.stdout)
    assert [r["alpha"] for r in records] == [0.02, 0.1, 0.3]
    for record in records:
        assert set(record) == {"alpha", "mmse", "q", "qhat", "converged", "iterations",
                               "residual"}
        assert record["converged"] is True
        assert isinstance(record["iterations"], int)
        assert 0 <= record["mmse"] <= 1.5 + 1e-12  # Q0 = 1 + rho bounds the error
    assert records[0]["mmse"] > records[1]["mmse"] > 0
    # Beyond the perfect-recovery threshold the softmax error vanishes (§4).
    assert records[2]["alpha"] > alpha_pr and records[2]["mmse"] == pytest.approx(0, abs=1e-8)


def test_se_softmax_does_not_depend_on_beta():
    base = ["se", "--channel", "softmax", "--T", "3", "--rho", "0.5", "--alpha", "0.03"]
    beta1 = json_lines(run_cli(*base, module=True).stdout)
    beta5 = json_lines(run_cli(*base, "--beta", "5", module=True).stdout)
    assert beta1[0]["mmse"] == pytest.approx(beta5[0]["mmse"], rel=1e-12)


def test_se_hardmax_three_tokens_tabulates_and_reports_the_error():
    args = ["se", "--channel", "hardmax", "--T", "3", "--rho", "0.5", "--alpha", "0.3", "0.1",
            "--table-samples", "2000", "--table-seed", "7"]
    done = run_cli(*args, module=True)
    assert done.returncode == 0, done.stderr
    records = json_lines(done.stdout)
    assert [r["alpha"] for r in records] == [0.1, 0.3]
    for record in records:
        assert record["converged"] is True and record["extrapolated"] is False
        assert 0 < record["mmse_stderr"] < 0.05 * record["mmse"]
    # T = 3 beats T = 2 at the same alpha (more labels per sequence), and the error falls with alpha
    assert records[1]["mmse"] < records[0]["mmse"] < 0.7
    assert done.stderr == ""  # ~0.3 s of table: too short to announce (cli.ANNOUNCE_SECONDS)
    assert json_lines(run_cli(*args, module=True).stdout) == records  # the seed fixes every bit


def test_se_hardmax_paper_point():
    done = run_cli("se", "--channel", "hardmax_paper", "--T", "2", "--rho", "0.5", "--alpha", "1.0",
                   module=True)
    assert done.returncode == 0, done.stderr
    [record] = json_lines(done.stdout)
    assert record["converged"] is True
    assert 0 < record["mmse"] < 1.5 and math.isfinite(record["residual"])
