"""AIM datasets (docs/paper1.md §1): seeding per dataset, the data model, storage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper1 import data
from aimrepro.paper1.data import DatasetSpec, dataset_seed, sample_dataset
from aimrepro.model import apply_link, indices


def spec(**changes):
    base = dict(link="softmax", T=3, rho=0.5, d=16, alpha=0.2, replicate=1, n_test=30, beta=1.0)
    return DatasetSpec(**{**base, **changes})


def test_seed_depends_on_the_scientific_parameters_only():
    reference = dataset_seed(7, spec()).generate_state(4)
    assert np.array_equal(dataset_seed(7, spec()).generate_state(4), reference)
    assert np.array_equal(dataset_seed(7, spec(n_test=999)).generate_state(4), reference)
    for changed in (spec(alpha=0.21), spec(replicate=2), spec(rho=0.6), spec(T=4), spec(d=17), spec(beta=2.0)):
        assert not np.array_equal(dataset_seed(7, changed).generate_state(4), reference)
    assert not np.array_equal(dataset_seed(8, spec()).generate_state(4), reference)


def test_test_set_size_changes_neither_teacher_nor_training_data():
    small, large = sample_dataset(spec(n_test=5), 3), sample_dataset(spec(n_test=50), 3)
    assert np.array_equal(small.W, large.W) and np.array_equal(small.X, large.X)
    assert np.array_equal(small.X_test, large.X_test[:5])


@pytest.mark.parametrize(("link", "beta"), [("softmax", 2.0), ("hardmax", None), ("linear", None)])
def test_labels_follow_the_teacher_through_the_stored_tokens(link, beta):
    ds = sample_dataset(spec(link=link, beta=beta), 5)
    s = ds.spec
    assert ds.X.dtype == np.float32 and ds.X.shape == (round(s.alpha * s.d ** 2), s.T, s.d)
    assert ds.W.shape == (s.d, round(s.rho * s.d)) and ds.X_test.shape == (s.n_test, s.T, s.d)
    expected = apply_link(indices(ds.X.astype(float), ds.S), link, beta=beta or 1.0)
    assert np.allclose(ds.y, expected, atol=1e-10)
    if link == "hardmax":
        assert np.all(ds.y.sum(axis=-1) == 1)
    if link == "softmax":
        assert np.allclose(ds.y_test.sum(axis=-1), 1.0)


def test_teacher_is_the_paper_normalisation():
    ds = sample_dataset(spec(d=200, rho=0.5, alpha=1e-4), 1)
    assert ds.S == pytest.approx(ds.W @ ds.W.T / math.sqrt(100 * 200))
    # ||S||_F^2/d -> Q0 = 1 + rho (docs/paper1.md §1.6)
    assert np.sum(ds.S ** 2) / 200 == pytest.approx(1.5, rel=0.05)


def test_save_and_load_round_trip_the_bits(tmp_path):
    ds = sample_dataset(spec(), 9)
    path = tmp_path / "set.npz"
    data.save_dataset(path, ds)
    back = data.load_dataset(path)
    assert back.spec == ds.spec and back.base_seed == 9
    for name in ("W", "X", "y", "X_test", "y_test"):
        assert getattr(back, name).tobytes() == getattr(ds, name).tobytes()
    # the arrays plus a few hundred bytes of zip and .npy headers per member
    assert 0 <= path.stat().st_size - data.dataset_bytes(ds.spec) < 4096


def test_link_tokens_round_trip():
    assert data.link_token("softmax", 1.0) == "softmax_beta1"
    assert data.parse_link_token("softmax_beta0.5") == ("softmax", 0.5)
    assert data.parse_link_token(data.link_token("hardmax_paper")) == ("hardmax_paper", None)
    with pytest.raises(ValueError, match="softmax link only"):
        data.link_token("hardmax", 2.0)


@pytest.mark.parametrize(("changes", "message"), [
    ({"link": "argmax"}, "link must be one of"), ({"T": 1}, "T must be an integer >= 2"),
    ({"alpha": 0.0}, "alpha must be a finite number > 0"), ({"rho": math.inf}, "rho"),
    ({"beta": None}, "beta must be a finite number > 0"), ({"link": "hardmax"}, "softmax link only"),
    ({"replicate": -1}, "replicate"), ({"n_test": 0}, "n_test"), ({"d": 10**5, "alpha": 1.0}, "beyond"),
])
def test_bad_specs_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        spec(**changes)
    with pytest.raises(ValueError, match="base_seed"):
        dataset_seed(-1, spec())
