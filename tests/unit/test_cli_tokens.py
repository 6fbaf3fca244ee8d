"""``--tokens`` of ``aimrepro amp``, ``gd`` and ``sgd`` (docs/paper1.md §13): the law reaches the data, errors name the option."""

from __future__ import annotations

import json

import pytest

from conftest import assert_usage_error, run_cli

AMP = ["amp", "--channel", "hardmax", "--T", "2", "--rho", "1", "--alpha", "0.6", "--d", "24", "--seed", "3",
       "--test-samples", "20"]


def test_amp_with_a_law_reports_it_and_its_corrected_se():
    gaussian = json.loads(run_cli(*AMP).stdout)
    done = run_cli(*AMP, "--tokens", "rademacher")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["tokens"] == {"name": "rademacher"}
    # the Gaussian SE, as before, and the SE with the law's diagonal variance (lower for Rademacher)
    assert record["se_mmse"] == gaussian["se_mmse"]
    assert record["se_mmse_tokens"] < record["se_mmse"] - 0.03
    assert record["error"] != gaussian["error"]  # other tokens, other run
    assert "tokens" not in gaussian and "se_mmse_tokens" not in gaussian  # the default output is unchanged


def test_the_explicit_gaussian_law_is_the_default():
    assert run_cli(*AMP, "--tokens", "gaussian").stdout == run_cli(*AMP).stdout


@pytest.mark.parametrize(("args", "names"), [
    (["--tokens", "sparse"], ["--keep-prob", "required"]),
    (["--tokens", "sparse", "--keep-prob", "1.5"], ["--keep-prob", "(0, 1]"]),
    (["--tokens", "sparse", "--keep-prob", "0"], ["--keep-prob", "> 0"]),
    (["--tokens", "rademacher", "--keep-prob", "0.5"], ["--keep-prob", "sparse only"]),
    (["--dof", "6"], ["--dof", "student_t"]),
    (["--tokens", "student_t", "--dof", "4"], ["--dof", "> 4"]),
    (["--tokens", "gaussian", "--dof", "6"], ["--dof", "student_t only"]),
    (["--tokens", "cauchy"], ["--tokens", "invalid choice"]),
])
def test_a_bad_law_is_a_one_line_usage_error(args, names):
    assert_usage_error(run_cli(*AMP, *args), names)


def test_gd_and_sgd_take_the_law():
    gd = run_cli("gd", "--T", "2", "--rho", "0.5", "--alpha", "0.05", "--d", "16", "--seed", "1", "--inits", "2",
                 "--steps", "5", "--lr", "0.1", "--test-samples", "10", "--tokens", "student_t", "--dof", "9")
    assert gd.returncode == 0, gd.stderr
    assert json.loads(gd.stdout)["tokens"] == {"name": "student_t", "dof": 9.0}
    sgd = ["sgd", "--param", "tied", "--link", "h2", "--T", "1", "--d", "20", "--lr", "0.05", "--batch", "8",
           "--horizon", "0.04", "--seed", "2", "--records", "2"]
    law = run_cli(*sgd, "--tokens", "sparse", "--keep-prob", "0.5")
    assert law.returncode == 0, law.stderr
    summary = json.loads(law.stdout.splitlines()[-1])
    assert summary["tokens"] == {"name": "sparse", "keep_prob": 0.5}
    default = run_cli(*sgd).stdout.splitlines()
    assert "tokens" not in json.loads(default[-1])
    first_default, first_law = json.loads(default[0]), json.loads(law.stdout.splitlines()[0])
    for key in ("q11", "q12", "q22", "t1", "t2"):  # same initial state (the first batch's loss differs)
        assert first_default[key] == first_law[key]


def test_a_dataset_file_fixes_the_law(tmp_path):
    from aimrepro.model import TokenLaw
    from aimrepro.paper1.data import DatasetSpec, sample_dataset, save_dataset

    path = tmp_path / "law.npz"
    spec = DatasetSpec(link="hardmax", T=2, rho=1.0, d=20, alpha=0.6, replicate=0, n_test=10,
                       tokens=TokenLaw("rademacher"))
    save_dataset(path, sample_dataset(spec, 3))
    done = run_cli("amp", "--channel", "hardmax", "--dataset", str(path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tokens"] == {"name": "rademacher"}
    assert_usage_error(run_cli("amp", "--channel", "hardmax", "--dataset", str(path), "--tokens", "gaussian"),
                       ["--dataset", "--tokens"])
