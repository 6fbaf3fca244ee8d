"""Two-layer theory (aimrepro.paper1.two_layer.prior, .fisher, .state_evolution): identities, limits, solver.

The references are closed forms: the one-layer denoising error (``spectra.mmse``),
the Gaussian-prior coupled channel (I + Q̂)⁻¹, the tangent-plane identity
F₁₁⁰ + F₂₂⁰ = 2, the one-layer softmax F = 2 when the other layer is known or
c → ∞, and the one-layer softmax SE.  docs/paper1.md §14.4–13.6.
"""

import math

import numpy as np
import pytest

from aimrepro.paper1 import spectra
from aimrepro.paper1.amp import _denoise
from aimrepro.paper1.channels import Softmax
from aimrepro.paper1.state_evolution import se_curve
from aimrepro.paper1.two_layer import fisher as fi
from aimrepro.paper1.two_layer import prior
from aimrepro.paper1.two_layer import state_evolution as tse

RHO = 0.5


# ---------------------------------------------------------------------------
# prior channel


@pytest.mark.parametrize("delta", [1e-3, 0.1, 1.0, 10.0])
def test_divided_differences_give_the_denoising_error(delta):
    first, second = prior._divided_difference_moments(delta, RHO, 32)
    assert first == pytest.approx(float(spectra.mmse(np.array([delta]), RHO)[0]), rel=1e-9)
    assert first ** 2 <= second * (1 + 1e-12)  # τ(C²) >= τ(C)²


def test_second_moment_limits():
    D = spectra.degrees_of_freedom(RHO)
    for delta in (1e-6, 1e-4):
        assert prior.jacobian_second_moment(delta, RHO) / prior.mmse(delta, RHO) ** 2 == pytest.approx(1 / D, rel=1e-3)
    assert prior.jacobian_second_moment(1e5, RHO) / prior.mmse(1e5, RHO) ** 2 == pytest.approx(1.0, rel=1e-3)


def test_mmse_spline_matches_the_quadrature():
    delta = np.exp(np.random.default_rng(0).uniform(math.log(1e-9), math.log(1e5), 200))
    exact = spectra.mmse(delta, RHO)
    spline = np.array([prior.mmse(x, RHO) for x in delta])
    np.testing.assert_allclose(spline, exact, rtol=1e-8)


def test_error_matrix_without_cross_precision_is_two_one_layer_errors():
    q_hat = np.diag([3.0, 0.5])
    M = prior.error_matrix(q_hat, RHO)
    assert M[0, 1] == 0.0
    assert M[0, 0] == pytest.approx(prior.mmse(1 / 3.0, RHO)) and M[1, 1] == pytest.approx(prior.mmse(2.0, RHO))
    assert np.all(prior.error_matrix(np.diag([-1.0, 0.0]), RHO) == np.eye(2))


def test_error_matrix_is_the_gaussian_prior_inverse_to_second_order():
    """For a wide prior (ρ → ∞, Gaussian fluctuations) M = (I + Q̂)⁻¹; the expansion is exact to O(Q̂₁₂²)."""
    rho = 1e4
    for cross in (0.05, 0.1):
        q_hat = np.array([[2.0, cross], [cross, 1.0]])
        exact = np.linalg.inv(np.eye(2) + q_hat)
        M = prior.error_matrix(q_hat, rho)
        error = np.abs(M - exact).max()
        assert error < 5 * cross ** 3 + 0.02 * cross  # third order, plus the prior's O(ρ^−1/2) non-Gaussianity
    # and the first-order cross error alone misses the diagonal's second order
    q_hat = np.array([[2.0, 0.3], [0.3, 1.0]])
    exact = np.linalg.inv(np.eye(2) + q_hat)
    M = prior.error_matrix(q_hat, rho)
    first_order_only = 1.0 / (1.0 + np.diag(q_hat))
    assert abs(M[0, 0] - exact[0, 0]) < 0.5 * abs(first_order_only[0] - exact[0, 0])


def test_coupled_denoiser_errors_follow_the_error_matrix():
    """Sampled pair at d = 300: the first-order coupled RIE's errors match M, and its cross error is −Q̂₁₂ m₁ m₂."""
    rng = np.random.default_rng(3)
    d = 300
    from aimrepro.model import sample_teacher

    S = [sample_teacher(d, RHO, rng).S for _ in range(2)]
    q_hat = np.array([[4.0, 1.2], [1.2, 2.0]])
    noise_cov = np.linalg.inv(q_hat)
    L = np.linalg.cholesky(noise_cov)
    G = rng.standard_normal((2, d, d))
    Z = (G + np.swapaxes(G, 1, 2)) / math.sqrt(2 * d)
    N = np.einsum("ab,bij->aij", L, Z)
    S1, S2 = prior.coupled_denoiser(S[0] + N[0], S[1] + N[1], q_hat, RHO, denoise=_denoise)
    M = prior.error_matrix(q_hat, RHO)
    errors = [np.sum((S1 - S[0]) ** 2) / d, np.sum((S2 - S[1]) ** 2) / d]
    cross = np.sum((S1 - S[0]) * (S2 - S[1])) / d
    np.testing.assert_allclose(errors, np.diag(M), rtol=0.05)
    assert cross == pytest.approx(M[0, 1], abs=0.3 * abs(M[0, 1]))
    # ignoring the coupling is measurably worse on layer 1
    alone, _ = _denoise(S[0] + N[0], noise_cov[0, 0], RHO)
    assert np.sum((alone - S[0]) ** 2) / d > errors[0] * 1.02


# ---------------------------------------------------------------------------
# Fisher information


def test_tangent_limit_shares_two_numbers_between_the_layers():
    normals = fi.outer_normals(12, 0, 0)
    for skip in (0.0, 1.0, 10.0):
        F = fi.tangent_limit([-6.0, 0.0, 6.0], RHO, skip, normals)
        np.testing.assert_allclose(F[:, 0] + F[:, 1], 2.0, atol=1e-10)
        assert np.all(np.diff(F[:, 0]) > 0)  # the more uncertain layer takes more of the information


def test_fisher_layer_one_known_gives_the_one_layer_softmax():
    estimate = fi.fisher_estimate(fi.layer_covariance(1e-6, 0.4), RHO, 1.0, log2_samples=8, replicates=2)
    assert estimate.value[1] == pytest.approx(2.0, abs=2e-3)
    assert estimate.value[0] == pytest.approx(0.0, abs=5e-3)


def test_fisher_large_skip_gives_the_one_layer_softmax_for_layer_two():
    estimate = fi.fisher_estimate(fi.layer_covariance(0.5, 0.5), RHO, 1e3, log2_samples=8, replicates=2)
    assert estimate.value[1] == pytest.approx(2.0, abs=1e-3)
    assert abs(estimate.value[0]) < 1e-3


def test_fisher_at_small_v_approaches_the_tangent_limit():
    for skip in (0.0, 1.0):
        estimate = fi.fisher_estimate(fi.layer_covariance(3e-4, 1e-4), RHO, skip, log2_samples=9, replicates=2)
        limit = fi.tangent_limit([math.log(3.0)], RHO, skip, fi.outer_normals(14, 0, 0))[0]
        np.testing.assert_allclose(estimate.value, limit, atol=5e-3)
        assert estimate.value[0] + estimate.value[1] == pytest.approx(2.0, abs=3e-3)


def test_fisher_estimators_agree_and_are_deterministic():
    V = fi.layer_covariance(0.3, 0.2, -0.05)
    normals = fi.outer_normals(9, 4, 0)
    both = fi.fisher_samples(V, RHO, 1.0, normals, estimator="both")
    again = fi.fisher_samples(V, RHO, 1.0, normals)
    assert np.array_equal(both["rao_blackwell"], again)
    difference = both["rao_blackwell"] - both["direct"]
    assert np.all(np.abs(difference.mean(0)) < 4 * difference.std(0) / math.sqrt(difference.shape[0]) + 2e-3)
    assert both["rao_blackwell"].std(0)[0] < both["direct"].std(0)[0]


@pytest.mark.parametrize("bad", [
    {"V": np.array([[1.6, 0.0], [0.0, 0.5]])},     # above Q0: Q0 − V is no overlap
    {"V": np.array([[0.5, 0.6], [0.6, 0.5]])},     # not positive definite
    {"rho": -1.0}, {"replicates": 1},
])
def test_fisher_estimate_refuses_bad_arguments(bad):
    args = {"V": fi.layer_covariance(0.5, 0.5), "rho": RHO, "skip": 1.0, "replicates": 2} | bad
    with pytest.raises(ValueError):
        fi.fisher_estimate(args.pop("V"), args.pop("rho"), args.pop("skip"), log2_samples=4, **args)


# ---------------------------------------------------------------------------
# state evolution on synthetic interpolants


def _constant_interpolant(F, slope=(0.0, 0.0, 0.0), limit=None):
    """A table that returns F everywhere (and ``limit`` as its V → 0 law)."""
    log_v = fi.chebyshev_lobatto(3, math.log(1e-4), 0.0)
    grid = np.broadcast_to(np.asarray(F, float), (3, 3, 3)).copy()
    slopes = np.broadcast_to(np.asarray(slope, float), (3, 3, 3)).copy()
    log_r = fi.chebyshev_lobatto(3, -14.0, 14.0)
    lim = np.broadcast_to(np.asarray(F if limit is None else limit, float), (3, 3)).copy()
    return fi.FisherInterpolant(log_v, grid, slopes, log_r, lim)


def test_layer_two_alone_is_the_one_layer_softmax_se():
    """F = (0, 2, 0), the c → ∞ channel: MMSE₂ is the one-layer softmax curve, MMSE₁ stays 1."""
    interpolant = _constant_interpolant([0.0, 2.0, 0.0])
    alphas = [0.02, 0.08, 0.15]
    reference = [p.mmse for p in se_curve(Softmax(T=2), alphas, RHO)]
    for alpha, expected in zip(alphas, reference):
        point = tse.solve_point(interpolant, alpha, RHO)
        assert point.converged and point.residual < 1e-9
        assert point.mmse2 == pytest.approx(expected, rel=1e-7)
        assert point.mmse1 == pytest.approx(1.0)


def test_shared_information_gives_the_two_layer_threshold():
    """F₁ = F₂ = 1 (two numbers shared equally): zero error from α = D/2 on, positive below."""
    interpolant = _constant_interpolant([1.0, 1.0, 0.0])
    threshold = tse.two_layer_threshold(RHO)
    assert threshold == pytest.approx(2 * (2 * RHO - RHO ** 2) / 4)
    below = tse.solve_point(interpolant, 0.98 * threshold, RHO)
    above = tse.solve_point(interpolant, 1.02 * threshold, RHO)
    assert below.converged and not below.perfect and below.mmse1 > 1e-3
    assert above.perfect and above.mmse1 == 0.0 == above.mmse2


def test_conjugate_overlap_for_uncorrelated_layers():
    V = np.diag([0.5, 0.2])
    q_hat = tse.conjugate(V, np.array([0.8, 1.3, 0.1]), 0.3)
    assert q_hat[0, 0] == pytest.approx(2 * 0.3 * 0.8 / 0.5)
    assert q_hat[1, 1] == pytest.approx(2 * 0.3 * 1.3 / 0.2)
    assert q_hat[0, 1] == pytest.approx(2 * 0.3 * 0.1 / math.sqrt(0.1))


def test_large_skip_limit_curves():
    alphas = np.array([0.05, 0.15, 0.25, 0.3, 0.4])
    first, second = tse.large_skip_limit(alphas, RHO)
    start = tse.one_layer_threshold(RHO)
    one_layer = [p.mmse for p in se_curve(Softmax(T=2), alphas, RHO)]
    np.testing.assert_allclose(second, one_layer)
    assert np.all(first[alphas <= start] == 1.0)
    later = [p.mmse for p in se_curve(Softmax(T=2), alphas[alphas > start] - start, RHO)]
    np.testing.assert_allclose(first[alphas > start], later)
    assert first[-1] == 0.0  # beyond D/2


def test_solver_reports_convergence_and_refuses_bad_alpha():
    interpolant = _constant_interpolant([0.7, 1.2, 0.05], slope=[0.1, -0.1, 0.6])
    point = tse.solve_point(interpolant, 0.2, RHO)
    assert point.converged and point.iterations > 0 and point.residual < 1e-9
    assert point.corr < 0  # a positive cross Fisher makes the layers' errors anticorrelated
    with pytest.raises(ValueError):
        tse.solve_point(interpolant, -0.1, RHO)


def test_table_round_trip_and_its_interpolant(tmp_path):
    table = fi.fisher_table(RHO, 10.0, nodes=3, log2_samples=4, replicates=2, seed=1)
    fi.save_table(tmp_path / "a.npz", table)
    fi.save_table(tmp_path / "b.npz", table)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    back = fi.load_table(tmp_path / "a.npz")
    assert np.array_equal(back.F, table.F) and back.settings == table.settings and back.skip == 10.0
    interpolant = back.interpolant()
    # exact at the nodes; below the table the tangent limit takes over
    node = math.exp(back.log_v[1])
    value, outside = interpolant(node, node)
    assert not outside and np.allclose(value, back.F.mean(0)[1, 1])
    tiny, outside = interpolant(1e-9, 1e-9)
    assert outside and np.allclose(tiny, back.limit.mean(0)[(back.log_r.size - 1) // 2], atol=1e-6)
    check = back.quadrature_check()
    assert set(check) == {"F11", "F22", "F12"} and all(v["max_abs"] >= 0 for v in check.values())
