"""The two-layer model at T = 2 (aimrepro.paper1.two_layer.model, .fibre): reduction, determinant, fibre posterior.

References: the full model's logits (the reduction must reproduce them), finite
differences (Jacobian of e ↦ u, derivative of log Z_out), and a dense uniform
grid in the branch coordinates (``fibre.posterior_grid``), checked in turn
against a dense grid in d itself.  docs/paper1.md §14.1–13.3.
"""

import math

import numpy as np
import pytest
from scipy.special import expit

from aimrepro.paper1.two_layer import fibre as fb
from aimrepro.paper1.two_layer import model as tm

SKIPS = (0.0, 0.5, 1.0, 10.0)


def _symmetric(rng, n):
    h = rng.standard_normal((n, 2, 2))
    return h + np.swapaxes(h, 1, 2)


@pytest.mark.parametrize("skip", SKIPS)
def test_row_log_odds_of_the_full_model_are_K_of_d_times_e(skip):
    rng = np.random.default_rng(1)
    h1, h2 = _symmetric(rng, 200), _symmetric(rng, 200)
    u = tm.row_log_odds(tm.logits(h1, h2, skip))
    d, e = fb.differences(h1), fb.differences(h2)
    np.testing.assert_allclose(fb.labels_from_differences(d, e, skip), u, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fb.solve_e(d, u, skip), e, rtol=1e-9, atol=1e-9)
    # the labels are the row softmax of the same logits, so their log-odds agree where nothing saturates
    y = tm.labels(h1, h2, skip)
    unsaturated = y[:, 0].min(axis=1) > 1e-8
    assert unsaturated.sum() >= 5  # at c = 10 the logits are ~100 times the indices: most rows saturate
    np.testing.assert_allclose(np.log(y[unsaturated, 0, 0] / y[unsaturated, 0, 1]), u[unsaturated, 0], rtol=1e-7,
                               atol=1e-7)


@pytest.mark.parametrize("skip", SKIPS)
def test_determinant_of_e_to_u_is_c_plus_one_kappa_cubed(skip):
    rng = np.random.default_rng(2)
    d, e = 2.0 * rng.standard_normal((50, 2)), rng.standard_normal((50, 2))
    step = 1e-6
    jac = np.stack([(fb.labels_from_differences(d, e + step * np.eye(2)[k], skip)
                     - fb.labels_from_differences(d, e - step * np.eye(2)[k], skip)) / (2 * step) for k in range(2)], -1)
    s = expit(d)
    kappa = skip + s[:, 0] + s[:, 1] - 1.0
    np.testing.assert_allclose(np.linalg.det(jac), (skip + 1.0) * kappa ** 3, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(fb.log_abs_det(d, skip), np.log(np.abs((skip + 1.0) * kappa ** 3)), rtol=1e-12)


def test_z_scale_differences_have_covariance_sigma():
    L = fb.Z_TO_DIFFERENCES
    np.testing.assert_allclose(2.0 * L @ L.T, fb.SIGMA, atol=1e-15)
    z = np.array([[1.0, math.sqrt(2.0) * 0.3, -2.0]])
    np.testing.assert_allclose(fb.differences_from_z(z), [[0.7, -2.3]], atol=1e-15)


def _case(skip, V, n, seed):
    """Prior means m, teacher (d, e) and labels u drawn as in the SE at layer covariance V, ρ = 0.5."""
    from aimrepro.paper1.two_layer.fisher import _outer_points, outer_normals, prior_overlap

    V = np.asarray(V, dtype=float)
    m, truth = _outer_points(V, prior_overlap(0.5) - V, outer_normals(int(math.log2(n)), seed, 0))
    return m, truth, fb.labels_from_differences(truth[:, :2], truth[:, 2:], skip)


@pytest.mark.parametrize("skip", (0.0, 1.0, 10.0))
def test_fibre_moments_match_a_dense_grid(skip):
    V = np.array([[0.3, 0.05], [0.05, 0.4]])
    m, truth, u = _case(skip, V, 4, 3)
    moments = fb.fibre_moments(u, m, V, skip, rule=fb.FibreRule(nodes=32), truth=truth)
    for k in range(4):
        log_z, mean = fb.posterior_grid(u[k:k + 1], m[k:k + 1], V, skip, n=500)
        assert moments.log_z[k] == pytest.approx(log_z, abs=1e-2)
        np.testing.assert_allclose(moments.mean[k], mean, atol=1e-2)


def test_branch_coordinates_agree_with_a_grid_in_d():
    """The (η, θ) change of variables and its Jacobian: both dense grids give the same Z_out and mean."""
    skip, V = 0.0, np.array([[0.3, 0.0], [0.0, 0.3]])
    m, truth, u = _case(skip, V, 2, 5)
    problem = fb._check_problem(u[:1], m[:1], V, skip)
    grid = np.linspace(-10.0, 10.0, 1001) + 1e-3 * math.pi  # never exactly on κ = 0
    D1, D2 = np.meshgrid(grid, grid, indexing="ij")
    d = np.stack([D1.ravel(), D2.ravel()], axis=1)
    e = fb.solve_e(d, np.broadcast_to(u[0], d.shape), skip)
    x, r = d - m[0, :2], e - m[0, 2:]
    log_p = (problem.log_const - 0.5 * np.einsum("ni,ij,nj->n", x, fb.SIGMA_INV, x) / V[0, 0]
             - 0.5 * np.einsum("ni,ij,nj->n", r, fb.SIGMA_INV, r) / V[1, 1] - 3.0 * np.log(np.abs(
                 skip + expit(d).sum(axis=1) - 1.0)))
    top = log_p.max()
    w = np.exp(log_p - top)
    log_z = math.log(w.sum() * (grid[1] - grid[0]) ** 2) + top
    reference_z, reference_mean = fb.posterior_grid(u[:1], m[:1], V, skip, n=600)
    assert log_z == pytest.approx(reference_z, abs=1e-5)
    np.testing.assert_allclose((w[:, None] * d).sum(0) / w.sum(), reference_mean[:2], atol=1e-5)


@pytest.mark.parametrize("skip", (0.0, 1.0))
def test_derivative_of_log_z_out_is_the_posterior_mean_shift(skip):
    """∂ log Z_out/∂m = (V ⊗ Σ)⁻¹ E[δ], the identity behind g_out, by central differences.

    Both sides carry the quadrature's error: up to ~1 % on the derivative of one skewed c = 1
    posterior at 40 nodes (it moves by that much between 40, 60 and 100 nodes, measured), 1e−4 on
    the others.  A wrong constant or Jacobian would be off by O(1).
    """
    V = np.array([[0.4, 0.0], [0.0, 0.3]])
    m, truth, u = _case(skip, V, 4, 7)
    rule = fb.FibreRule(nodes=40, newton_steps=10)
    moments = fb.fibre_moments(u, m, V, skip, rule=rule, truth=truth)
    expected = (moments.mean - m).reshape(-1, 2, 2) @ fb.SIGMA_INV / np.diag(V)[None, :, None]
    step = 1e-2
    for k in range(4):
        shift = np.zeros(4)
        shift[k] = step
        plus = fb.fibre_moments(u, m + shift, V, skip, rule=rule, truth=truth).log_z
        minus = fb.fibre_moments(u, m - shift, V, skip, rule=rule, truth=truth).log_z
        np.testing.assert_allclose((plus - minus) / (2 * step), expected.reshape(-1, 4)[:, k], atol=1.5e-2)


def test_fibre_moments_are_deterministic_and_warm_starts_agree():
    V = np.array([[0.2, 0.0], [0.0, 0.5]])
    m, truth, u = _case(1.0, V, 16, 9)
    first = fb.fibre_moments(u, m, V, 1.0)
    again = fb.fibre_moments(u, m, V, 1.0)
    assert np.array_equal(first.mean, again.mean) and np.array_equal(first.log_z, again.log_z)
    warm = fb.fibre_moments(u, m, V, 1.0, start=first.modes)
    np.testing.assert_allclose(warm.mean, first.mean, atol=1e-4)


@pytest.mark.parametrize("bad", [
    {"skip": -1.0}, {"skip": math.inf}, {"V": np.array([[1.0, 2.0], [2.0, 1.0]])},
    {"u": np.zeros((3, 3))}, {"m": np.zeros((2, 4))},
])
def test_fibre_moments_refuse_bad_arguments(bad):
    args = {"u": np.zeros((3, 2)), "m": np.zeros((3, 4)), "V": np.eye(2), "skip": 1.0} | bad
    with pytest.raises(ValueError):
        fb.fibre_moments(**args)


def test_branches_split_the_sign_of_kappa_below_c_equal_one():
    assert [b.sign for b in fb.branches(0.0)] == [1, -1]
    assert [b.sign for b in fb.branches(0.5)] == [1, -1]
    assert [b.sign for b in fb.branches(1.0)] == [1]
    assert fb.branches(10.0)[0].lo == 9.0


def test_dataset_is_reproducible_and_its_labels_are_the_model():
    spec = tm.TwoLayerSpec(rho=0.5, d=12, alpha=0.5, skip=1.0, replicate=2, n_test=5)
    first, again = tm.sample_dataset(spec, 7), tm.sample_dataset(spec, 7)
    for name in ("W1", "W2", "X", "y", "u", "X_test", "u_test"):
        assert np.array_equal(getattr(first, name), getattr(again, name))
    other = tm.sample_dataset(tm.TwoLayerSpec(rho=0.5, d=12, alpha=0.5, skip=0.0, replicate=2, n_test=5), 7)
    assert not np.array_equal(first.W1, other.W1)
    from aimrepro.model import indices

    h1, h2 = indices(first.X, first.S1), indices(first.X, first.S2)
    np.testing.assert_allclose(first.u, tm.row_log_odds(tm.logits(h1, h2, 1.0)), atol=1e-9)
    np.testing.assert_allclose(first.y, tm.labels(h1, h2, 1.0), atol=1e-12)


def test_dataset_round_trip(tmp_path):
    spec = tm.TwoLayerSpec(rho=0.5, d=10, alpha=0.3, skip=10.0, replicate=0, n_test=3)
    data = tm.sample_dataset(spec, 1)
    tm.save_dataset(tmp_path / "a.npz", data)
    tm.save_dataset(tmp_path / "b.npz", data)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    back = tm.load_dataset(tmp_path / "a.npz")
    assert back.spec == spec and np.array_equal(back.u, data.u)


@pytest.mark.parametrize("bad", [{"skip": -0.5}, {"T": 3}, {"rho": 0.0}, {"d": 1}])
def test_two_layer_spec_refuses_bad_fields(bad):
    with pytest.raises(ValueError):
        tm.TwoLayerSpec(**({"rho": 0.5, "d": 10, "alpha": 0.2, "skip": 1.0, "replicate": 0} | bad))
