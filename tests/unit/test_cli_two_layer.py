"""``aimrepro se --layers 2`` (docs/paper1.md §14): arguments checked before any table is computed.

A full run tabulates the Fisher information (~10–40 s CPU), so the run itself is
exercised in-process on a tiny table (the CLI's table settings patched).
"""

import json

import pytest
from conftest import assert_usage_error, run_cli

from aimrepro import cli

BASE = ("se", "--channel", "softmax", "--T", "2", "--rho", "0.5", "--alpha", "0.1")


@pytest.mark.parametrize("extra,names", [
    (("--layers", "2"), ["--skip", "required"]),
    (("--layers", "2", "--skip", "-1"), ["--skip"]),
    (("--skip", "1"), ["--skip", "--layers 2"]),
    (("--layers", "3", "--skip", "1"), ["--layers"]),
])
def test_two_layer_arguments_are_checked(extra, names):
    assert_usage_error(run_cli(*BASE, *extra), names)


def test_two_layer_needs_softmax_with_two_tokens():
    assert_usage_error(run_cli("se", "--channel", "hardmax", "--T", "2", "--rho", "0.5", "--alpha", "0.1",
                               "--layers", "2", "--skip", "1"), ["--channel", "softmax"])
    assert_usage_error(run_cli("se", "--channel", "softmax", "--T", "3", "--rho", "0.5", "--alpha", "0.1",
                               "--layers", "2", "--skip", "1"), ["--T", "T = 2"])


def test_two_layer_refuses_a_table_beyond_the_time_limit():
    assert_usage_error(run_cli(*BASE, "--layers", "2", "--skip", "0", "--max-table-seconds", "0.01"),
                       ["--skip", "--max-table-seconds"])


def test_two_layer_se_prints_one_json_line_per_alpha(monkeypatch, capsys):
    monkeypatch.setattr(cli, "_TWO_LAYER_TABLE", {"nodes": 3, "log2_samples": 5, "replicates": 2})
    status = cli.main(["se", "--channel", "softmax", "--T", "2", "--rho", "0.5", "--alpha", "0.3", "0.05",
                       "--layers", "2", "--skip", "10"])
    assert status == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["alpha"] for line in lines] == [0.05, 0.3]
    assert all(0.0 <= line["mmse2"] <= line["mmse1"] <= 1.0 for line in lines)
    assert set(lines[0]) == {"alpha", "mmse1", "mmse2", "mmse1_stderr", "mmse2_stderr", "corr", "perfect",
                             "converged", "iterations", "residual"}
