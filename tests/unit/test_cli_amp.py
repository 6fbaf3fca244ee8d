"""``aimrepro amp``: one JSON object per run; bad arguments exit 2 with one line."""

from __future__ import annotations

import json

import pytest

from conftest import assert_usage_error, run_cli


def test_amp_prints_one_json_object_with_the_documented_keys():
    args = ["amp", "--channel", "softmax", "--T", "2", "--rho", "0.5", "--alpha", "0.3", "--d", "24",
            "--seed", "5", "--test-samples", "50"]
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    record = json.loads(line)
    assert set(record) == {"error", "generalisation_error", "plugin_generalisation_error",
                           "bayes_generalisation_error", "iterations", "status", "converged", "se_mmse"}
    assert record["converged"] is True and record["status"] == "converged" and isinstance(record["iterations"], int)
    assert record["generalisation_error"] == record["plugin_generalisation_error"]
    assert 0 <= record["bayes_generalisation_error"] < 1e-3  # beyond alpha_PR both predictions are exact
    # beyond alpha_PR = 0.1875 the softmax error vanishes (SE and AMP)
    assert record["se_mmse"] == 0.0 and record["error"] < 1e-3
    assert run_cli(*args).stdout == done.stdout  # same seed, same numbers


@pytest.mark.parametrize(("args", "names"), [
    (["--channel", "hardmax", "--T", "3"], ["--T", "must be 2"]),
    (["--channel", "hardmax", "--T", "2", "--beta", "2"], ["--beta", "softmax"]),
    (["--channel", "softmax", "--T", "2", "--d", "3"], ["--d", ">= 4"]),
    (["--channel", "softmax", "--T", "2", "--seed", "-1"], ["--seed", ">= 0"]),
    (["--channel", "softmax", "--T", "2", "--alpha", "0"], ["--alpha", "> 0"]),
    (["--channel", "softmax", "--T", "2", "--alpha", "1e-9"], ["--alpha", "at least one sequence"]),
    (["--channel", "softmax", "--T", "2", "--alpha", "1e6"], ["--alpha/--d", "sequences", "1e+08"]),
    (["--channel", "softmax", "--T", "2", "--alpha", "0.3", "--d", "200000"],
     ["--alpha/--d", "d=200000", "1e+08"]),
    (["--channel", "relu", "--T", "2"], ["--channel", "softmax"]),
])
def test_bad_amp_arguments_exit_2_with_one_line(args, names):
    defaults = {"--rho": "0.5", "--alpha": "0.1", "--d": "20", "--seed": "0"}
    given = {args[i] for i in range(0, len(args), 2)}
    full = ["amp", *args] + [x for k, v in defaults.items() if k not in given for x in (k, v)]
    done = run_cli(*full, module=True)
    assert_usage_error(done, names)


def test_amp_reruns_a_saved_dataset_bit_for_bit(tmp_path):
    from aimrepro.paper1.data import DatasetSpec, sample_dataset, save_dataset

    spec = DatasetSpec(link="softmax", T=2, rho=0.5, d=20, alpha=0.1234567, replicate=3, n_test=40, beta=1.0)
    path = tmp_path / "alpha0.123457_seed3.npz"
    save_dataset(path, sample_dataset(spec, 11))
    from_file = run_cli("amp", "--channel", "softmax", "--dataset", str(path))
    assert from_file.returncode == 0, from_file.stderr
    sampled = run_cli("amp", "--channel", "softmax", "--T", "2", "--rho", "0.5", "--alpha", "0.1234567",
                      "--d", "20", "--seed", "11", "--replicate", "3", "--test-samples", "40")
    assert from_file.stdout == sampled.stdout  # the file's spec and seeds, exactly
    # the file fixes the sampling options: giving one is refused, as is data of another link
    assert_usage_error(run_cli("amp", "--channel", "softmax", "--dataset", str(path), "--alpha", "0.2"),
                       ["--dataset", "--alpha"])
    assert_usage_error(run_cli("amp", "--channel", "hardmax", "--dataset", str(path)), ["--dataset", "hardmax"])
    assert_usage_error(run_cli("amp", "--channel", "softmax", "--dataset", str(tmp_path / "none.npz")),
                       ["--dataset", "no such file"])
    assert_usage_error(run_cli("amp", "--channel", "softmax", "--T", "2"), ["required", "--rho"])
