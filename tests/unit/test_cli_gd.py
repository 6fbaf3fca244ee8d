"""``aimrepro gd``: one JSON object per run; bad hyperparameters exit 2 with one line."""

from __future__ import annotations

import json

import pytest

from conftest import assert_usage_error, run_cli

ARGS = {"--T": "2", "--rho": "0.5", "--alpha": "0.3", "--d": "16", "--inits": "3", "--steps": "200",
        "--lr": "0.1", "--seed": "5"}


def test_gd_prints_one_json_object_with_the_documented_keys():
    args = ["gd", *[x for item in ARGS.items() for x in item], "--test-samples", "50"]
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    record = json.loads(line)
    assert set(record) == {"single_error", "averaged_error", "train_loss", "generalisation_error", "se_mmse",
                           "n_diverged"}
    # alpha (T^2 + T - 2) = 1.2, beyond the threshold 0.75: SE error 0, GD well on its way there
    assert record["se_mmse"] == 0.0 and record["n_diverged"] == 0
    assert 0 <= record["averaged_error"] <= record["single_error"] < 0.2
    assert run_cli(*args).stdout == done.stdout  # same seed, same numbers


@pytest.mark.parametrize(("changed", "names"), [
    ({"--lr": "0"}, ["--lr", "> 0"]),
    ({"--lr": "-0.1"}, ["--lr", "> 0"]),
    ({"--steps": "0"}, ["--steps", ">= 1"]),
    ({"--inits": "0"}, ["--inits", ">= 1"]),
    ({"--T": "1"}, ["--T", ">= 2"]),
    ({"--d": "3"}, ["--d", ">= 4"]),
    ({"--alpha": "1e-9"}, ["--alpha", "at least one sequence"]),
    ({"--seed": "x"}, ["--seed", "integer"]),
])
def test_bad_gd_arguments_exit_2_with_one_line(changed, names):
    full = ["gd", *[x for item in (ARGS | changed).items() for x in item]]
    done = run_cli(*full, module=True)
    assert_usage_error(done, names)


def test_gd_runs_on_a_saved_dataset_like_on_the_same_sample(tmp_path):
    from aimrepro.paper1.data import DatasetSpec, sample_dataset, save_dataset

    spec = DatasetSpec(link="softmax", T=2, rho=0.5, d=16, alpha=0.3, replicate=0, n_test=50, beta=1.0)
    path = tmp_path / "alpha0.3_seed0.npz"
    save_dataset(path, sample_dataset(spec, 5))
    training = ["--inits", "3", "--steps", "200", "--lr", "0.1"]
    from_file = run_cli("gd", "--dataset", str(path), *training)
    assert from_file.returncode == 0, from_file.stderr
    sampled = run_cli("gd", *[x for item in ARGS.items() for x in item], "--test-samples", "50")
    assert from_file.stdout == sampled.stdout
    assert_usage_error(run_cli("gd", "--dataset", str(path), "--d", "16", *training), ["--dataset", "--d"])
