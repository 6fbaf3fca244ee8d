"""``aimrepro sgd``: online SGD of paper 2 from the command line, run in a subprocess."""

from __future__ import annotations

import json

import pytest

from conftest import assert_usage_error, changed, run_cli

BASE = ["sgd", "--param", "tied", "--link", "h2", "--T", "1", "--d", "30", "--lr", "0.01",
        "--batch", "32", "--horizon", "0.4", "--seed", "2", "--records", "5"]


def _with(**changes) -> list[str]:
    return changed(BASE, **changes)


def test_sgd_prints_records_and_a_summary_line_reproducibly():
    done = run_cli(*BASE, module=True)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    records, summary = lines[:-1], lines[-1]
    assert len(records) == 5
    assert [r["t_ode"] for r in records] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert {"t_ode", "n_steps", "n_samples", "t1", "q11", "q12", "q22", "p12", "Psi12",
            "Omega12", "m1", "m2", "overlap_ratio", "batch_loss"} <= set(records[0])
    assert records[-1]["n_samples"] == 32 * records[-1]["n_steps"]
    assert set(summary) == {"weak_recovery_time", "threshold", "blew_up", "t_blowup", "n_steps"}
    assert summary["blew_up"] is False and summary["threshold"] == 0.3
    assert summary["weak_recovery_time"] is None or 0 < summary["weak_recovery_time"] <= 0.4
    again = run_cli(*BASE, module=True)
    assert again.stdout == done.stdout


def test_sgd_untied_reports_factor_traces():
    done = run_cli(*_with(param="untied", link="h1", horizon="0.05", records="2"), module=True)
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout.splitlines()[0])
    assert {"tA", "tB"} <= set(first)


def test_sgd_reports_a_blow_up():
    done = run_cli(*_with(link="h3", lr="5", batch="4", horizon="20"), module=True)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["blew_up"] is True and summary["t_blowup"] > 0
    # the steps run reach the one that blew up (tied: 4 lr/d of paper time per step), past the last record
    step = 4 * 5 / 30
    assert summary["n_steps"] == round(summary["t_blowup"] / step) >= 1
    assert summary["weak_recovery_time"] is None or summary["weak_recovery_time"] < summary["t_blowup"]


@pytest.mark.parametrize(("changes", "names"), [
    ({"link": "hardmax", "T": "2"}, ["--link", "piecewise constant"]),
    ({"link": "softmax"}, ["--T", ">= 2"]),
    ({"param": "lowrank"}, ["--param", "direct", "tied", "untied"]),
    ({"lr": "0"}, ["--lr", "> 0"]),
    ({"batch": "0"}, ["--batch", ">= 1"]),
    ({"teacher_link": "softmax"}, ["--teacher-link", "row-wise"]),
    ({"beta": "2"}, ["--beta", "softmax"]),
    ({"weight_decay": "-1"}, ["--weight-decay", ">= 0"]),
])
def test_sgd_bad_arguments_exit_2_with_one_line(changes, names):
    done = run_cli(*_with(**changes), module=True)
    assert_usage_error(done, names)
