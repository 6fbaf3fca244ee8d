"""Hardmax with T ≥ 2 tokens (aimrepro.paper1.hardmax_tokens): label map, Nishimori estimator, table, SE, g_out.

The exact references are the T = 2 channel ``channels.Hardmax2`` (quadrature,
docs/paper1.md §3.4 with the B1 correction) and, at T = 3, Genz CDFs with the
facet identity (``exact_posterior_mean``).  Statistical comparisons use
4 standard errors of the estimator (false-alarm rate ~6e−5 per check); all
seeds are fixed.
"""

import math
from dataclasses import replace

import numpy as np
import pytest

from aimrepro.paper1 import hardmax_tokens as ht
from aimrepro.paper1.channels import Hardmax2, from_z_scale, n_components, tau_vector, to_z_scale
from aimrepro.model import apply_link
from aimrepro.paper1.state_evolution import solve_se as generic_solve_se

Z_TOL = 4.0


def _exact_table_fit(T=2, n_nodes=17, degree=ht.FIT_DEGREE, rel_err=1e-3):
    """A FisherFit of the exact T = 2 values with a nominal relative standard error."""
    x = ht.table_grid(n_nodes)
    F = ht.exact_fisher_t2(1.0 - x * x)
    table = ht.FisherTable(T, x, F, rel_err * F, np.full(x.size, 0), np.zeros(x.size), np.zeros(x.size), 0, 2)
    return ht.fit_fisher_table(table, degree)


# ---------------------------------------------------------------------------
# label map


def test_winners_match_the_hardmax_link_and_ignore_scale_and_shift():
    rng = np.random.default_rng(0)
    for T in (2, 3, 4):
        z = rng.standard_normal((500, n_components(T)))
        w = ht.winners_from_z(z, T)
        y = apply_link(from_z_scale(z, T), "hardmax")
        assert np.array_equal(ht.onehot_from_winners(w, T), y)
        assert np.array_equal(ht.winners_from_onehot(y), w)
        assert np.array_equal(ht.winners_from_z(3.7 * z + 2.5 * tau_vector(T), T), w)


@pytest.mark.parametrize("T,count", [(2, 4), (3, 25), (4, 218)])
def test_possible_labels_are_exactly_those_that_occur(T, count):
    labels = ht.possible_labels(T)
    assert labels.shape == (count, T)
    z = np.random.default_rng(T).standard_normal((400_000, n_components(T)))
    seen = set(np.unique(ht.label_codes(ht.winners_from_z(z, T), T)).tolist())
    assert seen == set(ht.label_codes(labels, T).tolist())


def test_t3_cyclic_labels_are_impossible():
    codes = set(ht.label_codes(ht.possible_labels(3), 3).tolist())
    for cyclic in ([1, 2, 0], [2, 0, 1]):
        assert int(ht.label_codes(np.array(cyclic), 3)) not in codes


@pytest.mark.parametrize("T", [2, 3])
def test_label_constraints_describe_the_label_event(T):
    rng = np.random.default_rng(10 + T)
    M = n_components(T)
    z = 1.5 * rng.standard_normal((3000, M))
    codes = ht.label_codes(ht.winners_from_z(z, T), T)
    for w in ht.possible_labels(T):
        L = ht.label_constraints(w, T)
        assert L.shape == (T * (T - 1), M)
        assert np.linalg.matrix_rank(L) == M - 1
        assert np.allclose(L @ tau_vector(T), 0.0)
        inside = np.all(z @ L.T > 0, axis=1)
        assert np.array_equal(inside, codes == ht.label_codes(w, T))
        # the ordering pieces are full-rank and partition the event
        pieces = ht.exact._ordered_constraints(T, tuple(int(a) for a in w))
        hits = sum(np.all(z @ P.T > 0, axis=1).astype(int) for P in pieces)
        assert all(np.linalg.matrix_rank(P) == P.shape[0] == M - 1 for P in pieces)
        assert np.array_equal(hits, inside.astype(int))


# ---------------------------------------------------------------------------
# sampler and estimator


def test_se_pairs_have_the_scaled_law():
    rng = np.random.default_rng(2)
    pairs = ht.sample_se_pairs(3, 0.8, 40_000, rng)
    lam = ht.scaled_variance(0.8)
    assert lam == pytest.approx(4.0)
    assert np.allclose(pairs.u.var(axis=0), lam, rtol=0.05)
    assert np.allclose(pairs.zeta.var(axis=0), 1.0, rtol=0.05)
    assert np.array_equal(pairs.winners, ht.winners_from_z(pairs.u + pairs.zeta, 3))


def test_posterior_draws_give_the_exact_t2_posterior_mean():
    """At T = 2, E[ζ | y, u] from rejection sampling equals Hardmax2's g_out·√V (exact)."""
    rng = np.random.default_rng(3)
    pairs = ht.sample_se_pairs(2, 0.7, 6, rng)
    draws = ht.posterior_draws(2, pairs.u, pairs.winners, rng, first_block=1, min_draws=40_000)
    mean = draws.draw_sum / draws.count[:, None]
    V = 0.9
    exact = Hardmax2().g_out(ht.onehot_from_winners(pairs.winners, 2), math.sqrt(V) * pairs.u, V) * math.sqrt(V)
    # the projected draws have per-component variance <= 1
    assert np.all(np.abs(mean - exact) < Z_TOL / np.sqrt(draws.count)[:, None])


@pytest.mark.parametrize("m", [0.0, 0.5, 0.9, 0.999])
def test_nishimori_estimator_matches_the_exact_t2_information(m):
    est = ht.estimate_fisher(2, m, 100_000, np.random.default_rng(int(1000 * m)))
    exact = ht.exact_fisher_t2(m)[0]
    assert abs(est.value - exact) < Z_TOL * est.stderr
    assert est.stderr < 0.05 * exact  # the comparison resolves a 20 % error


def test_exact_t2_fisher_is_independent_of_q0():
    channel = Hardmax2()
    for m in (0.2, 0.95):
        values = [channel.information(m * Q0, Q0) * (Q0 - m * Q0) / 2 for Q0 in (1.0, 1.5, 3.0)]
        assert np.allclose(values, values[0], rtol=1e-10)


def test_control_variate_reduces_the_error_near_m_one():
    est = ht.estimate_fisher(3, 0.999, 50_000, np.random.default_rng(4))
    assert est.stderr < 0.7 * est.raw_stderr


def test_estimator_is_reproducible_from_its_seed():
    a = ht.estimate_fisher(3, 0.6, 5_000, np.random.default_rng(7))
    b = ht.estimate_fisher(3, 0.6, 5_000, np.random.default_rng(7))
    assert (a.value, a.stderr) == (b.value, b.stderr)


# ---------------------------------------------------------------------------
# table, fit and SE


def test_fit_of_the_exact_t2_table_is_accurate_beyond_its_range():
    fit = _exact_table_fit()
    m = 1.0 - np.linspace(0.003, 1.0, 60) ** 2
    assert np.max(np.abs(fit.F(m) / ht.exact_fisher_t2(m) - 1.0)) < 1e-5
    # nominal 0.1 % node errors: inside the table the fit's error is below the nodes', beyond it grows
    inside = np.sqrt(1.0 - m) >= fit.x_min
    relative = fit.F_stderr(m) / fit.F(m)
    assert np.all(relative > 0) and np.all(relative[inside] < 1e-3)
    assert relative[0] > relative[inside].max()


def test_tabulated_channel_reproduces_the_t2_se_exactly():
    fit = _exact_table_fit()
    for alpha in (0.1, 3.0):
        new = ht.solve_se(fit, alpha, 0.5, scan=False)
        old = generic_solve_se(Hardmax2(), alpha, 0.5)
        assert new.converged and old.converged
        assert new.mmse == pytest.approx(old.mmse, rel=1e-5)


def test_t2_se_through_the_estimated_table():
    """The corrected T = 2 SE (ρ = 0.5: MMSE ≈ 0.745 at α = 0.1, 0.374 at α = 0.3) from an estimated table."""
    table = ht.fisher_table(2, ht.table_grid(9), 60_000, seed=11)
    fit = ht.fit_fisher_table(table, 5)
    for alpha in (0.1, 0.3):
        new = ht.solve_se(fit, alpha, 0.5)
        old = generic_solve_se(Hardmax2(), alpha, 0.5)
        assert new.n_fixed_points == 1
        assert 0 < new.mmse_stderr < 0.01 * new.mmse
        assert abs(new.mmse - old.mmse) < Z_TOL * new.mmse_stderr


def test_delta_method_error_matches_a_direct_perturbation():
    fit = _exact_table_fit(rel_err=1e-2)
    point = ht.solve_se(fit, 0.3, 0.5, scan=False)
    shifted = replace(fit, coef=fit.coef * (1.0 + point.F_stderr / point.F))
    moved = ht.solve_se(shifted, 0.3, 0.5, scan=False).mmse
    assert abs(moved - point.mmse) == pytest.approx(point.mmse_stderr, rel=0.05)


@pytest.mark.parametrize("alpha", [0.03, 10.0])
def test_fixed_point_is_unique_on_exact_t2(alpha):
    fit = _exact_table_fit()
    roots = ht.fixed_points(fit, alpha, 0.5, n_grid=120)
    assert roots.size == 1
    assert roots[0] == pytest.approx(generic_solve_se(Hardmax2(), alpha, 0.5).mmse, rel=1e-5)


def test_se_iteration_from_several_starts_reaches_the_root():
    fit = _exact_table_fit()
    target = ht.solve_se(fit, 0.3, 0.5, scan=False).mmse
    for q_start in (0.0, 0.5, 0.999 * 1.5):
        mmse, iterations, converged = ht.iterate_se(fit, 0.3, 0.5, q_start)
        assert converged and iterations > 1
        assert mmse == pytest.approx(target, rel=1e-7)


def test_table_read_back_from_its_columns_gives_the_same_fit(tmp_path):
    from aimrepro.records.tables import read_table, write_table

    table = ht.fisher_table(3, ht.table_grid(8), 2_000, seed=4)
    write_table(tmp_path / "table.csv", table.columns())
    again = ht.FisherTable.from_columns(read_table(tmp_path / "table.csv"), T=3, seed=4)
    first, second = ht.fit_fisher_table(table, 4), ht.fit_fisher_table(again, 4)
    assert np.array_equal(first.coef, second.coef) and np.array_equal(first.cov, second.cov)
    with pytest.raises(ValueError, match="missing \\['F_stderr'\\]"):
        ht.FisherTable.from_columns({"x": [0.5], "F": [1.0], "n_samples": [3]}, T=3, seed=4)


def test_curve_columns_hold_one_row_per_point_with_its_error():
    fit = _exact_table_fit()
    points = ht.se_curve(fit, [0.1, 0.3], 0.5)
    columns = ht.curve_columns(points)
    assert list(columns["alpha"]) == [0.1, 0.3]
    assert np.array_equal(columns["mmse_stderr"], [p.mmse_stderr for p in points])
    assert columns["converged"].dtype == bool and list(columns["n_fixed_points"]) == [-1, -1]
    with pytest.raises(ValueError, match="points must hold"):
        ht.curve_columns([])


# ---------------------------------------------------------------------------
# exact T = 3 references (Genz CDFs)


def test_exact_posterior_mean_reduces_to_hardmax2_at_t2():
    rng = np.random.default_rng(5)
    pairs = ht.sample_se_pairs(2, 0.6, 8, rng)
    Z, g = ht.exact_posterior_mean(2, pairs.u, pairs.winners)
    y = ht.onehot_from_winners(pairs.winners, 2)
    assert np.allclose(Z, np.exp(Hardmax2().log_z_out(y, pairs.u, 1.0)), rtol=1e-12)
    assert np.allclose(g, Hardmax2().g_out(y, pairs.u, 1.0), atol=1e-12)


def test_exact_t3_z_sums_to_one_over_labels():
    u = 0.8 * np.random.default_rng(6).standard_normal(6)
    labels = ht.possible_labels(3)
    Z, _ = ht.exact_posterior_mean(3, np.repeat(u[None], labels.shape[0], 0), labels, gradient=False)
    assert Z.sum() == pytest.approx(1.0, abs=1e-4)


def test_exact_t3_posterior_mean_matches_rejection_sampling():
    rng = np.random.default_rng(7)
    pairs = ht.sample_se_pairs(3, 0.7, 3, rng)
    _, exact = ht.exact_posterior_mean(3, pairs.u, pairs.winners)
    draws = ht.posterior_draws(3, pairs.u, pairs.winners, rng, first_block=1, min_draws=8_000)
    mean = draws.draw_sum / draws.count[:, None]
    assert np.all(np.abs(mean - exact) < Z_TOL / np.sqrt(draws.count)[:, None])


def test_pair_mean_of_posterior_draws_is_the_exact_squared_gradient_at_t3():
    """Per sample, the Nishimori pair mean over many posterior draws estimates |∇_u log Z|² (Genz-exact)."""
    rng = np.random.default_rng(14)
    pairs = ht.sample_se_pairs(3, 0.8, 5, rng)
    _, exact = ht.exact_posterior_mean(3, pairs.u, pairs.winners)
    draws = ht.posterior_draws(3, pairs.u, pairs.winners, rng, first_block=1, min_draws=4000)
    pair_mean = ht.fisher._pair_mean(draws.draw_sum, draws.draw_sq, draws.count)
    # Var of the pair mean over k draws ≈ 2(tr Σ² + 2 gᵀΣg)/k ≤ 2(5 + 2|g|²)/k, Σ the posterior covariance (≤ I)
    bound = np.sqrt(2.0 * (5.0 + 2.0 * np.sum(exact**2, axis=1)) / draws.count)
    assert np.all(np.abs(pair_mean - np.sum(exact**2, axis=1)) < Z_TOL * bound)


@pytest.mark.slow
@pytest.mark.parametrize("m", [0.5, 0.9])
def test_t3_nishimori_estimate_matches_the_exact_gradient_average(m):
    """Spot check of F_3(m): Genz-exact |∇ log Z|² averaged over 100 SE pairs against the estimator (~5 s CPU each).

    A z-test on both errors; the table's own accuracy is checked against the exact T = 2 channel above.
    """
    rng = np.random.default_rng(int(100 * m))
    exact, exact_err, _ = ht.exact_fisher_average(3, m, 100, rng)
    est = ht.estimate_fisher(3, m, 50_000, rng)
    assert abs(exact - est.value) < Z_TOL * math.hypot(exact_err, est.stderr)


# ---------------------------------------------------------------------------
# the channel for GAMP-RIE


def test_sampled_g_out_and_precision_match_hardmax2():
    """g_out (importance sampling) against the exact T = 2 channel; precision against −tr ∂g/∂ω by finite differences."""
    rng = np.random.default_rng(8)
    V = 0.8
    pairs = ht.sample_se_pairs(2, 0.6, 3000, rng)
    omega = math.sqrt(V) * pairs.u
    y = ht.onehot_from_winners(pairs.winners, 2)
    channel = ht.HardmaxTokens(T=2, proposals=64, rng=np.random.default_rng(9))
    g = channel.g_out(y, omega, V)
    exact = Hardmax2().g_out(y, omega, V)
    err = g - exact
    signal = np.mean(np.sum(exact * exact, axis=-1))
    assert np.mean(np.sum(err * err, axis=-1)) < 0.02 * signal
    assert np.all(np.abs(err.mean(axis=0)) < Z_TOL * err.std(axis=0) / math.sqrt(err.shape[0]))
    step = 1e-5
    curvature = np.zeros(omega.shape[0])
    for j in range(3):
        e = np.zeros(3)
        e[j] = step
        curvature -= (Hardmax2().g_out(y, omega + e, V)[:, j] - Hardmax2().g_out(y, omega - e, V)[:, j]) / (2 * step)
    p = channel.precision(y, omega, V)
    assert abs(p.mean() - curvature.mean()) < Z_TOL * (p - curvature).std() / math.sqrt(p.size)
    assert abs(curvature.mean() - np.mean(np.sum(exact * exact, axis=-1))) < 0.05 * signal  # Nishimori


def test_t3_posterior_moments_match_the_exact_posterior_mean():
    rng = np.random.default_rng(12)
    pairs = ht.sample_se_pairs(3, 0.8, 6, rng)
    _, exact = ht.exact_posterior_mean(3, pairs.u, pairs.winners)
    runs = np.array([ht.posterior_moments(3, pairs.u, pairs.winners, rng, proposals=128).mean for _ in range(12)])
    err = runs - exact
    # noise of a 128-proposal estimate: ~1 % of |g|² (report); bias of the self-normalised ratio is O(1/128)
    assert np.mean(np.sum(err * err, axis=-1)) < 0.05 * np.mean(np.sum(exact * exact, axis=-1))
    assert np.all(np.abs(err.mean(axis=0)) < Z_TOL * err.std(axis=0) / math.sqrt(12) + 0.02)


def test_posterior_moments_reach_labels_that_contradict_the_mean():
    """Labels with Z between 1e−9 and 1e−3 (an AMP estimate far from a sample): shifted proposals, error < 10 % of |g|."""
    rng = np.random.default_rng(21)
    u = 3.0 * rng.standard_normal((40, 6))
    winners = ht.possible_labels(3)[rng.integers(0, 25, 40)]
    Z, exact = ht.exact_posterior_mean(3, u, winners)
    rare = np.flatnonzero((Z < 1e-3) & (Z > 1e-9))[:4]
    assert rare.size == 4
    moments = ht.posterior_moments(3, u[rare], winners[rare], rng, proposals=512)
    assert moments.redrawn == rare.size
    assert np.all(np.max(np.abs(moments.mean - exact[rare]), axis=1) < 0.1 * np.linalg.norm(exact[rare], axis=1))


def test_rejection_posterior_mean_is_unbiased_at_t2():
    rng = np.random.default_rng(13)
    pairs = ht.sample_se_pairs(2, 0.6, 3000, rng)
    g = ht.posterior_mean_rejection(2, pairs.u, pairs.winners, rng, draws=8)
    err = g - Hardmax2().g_out(ht.onehot_from_winners(pairs.winners, 2), pairs.u, 1.0)
    assert np.all(np.abs(err.mean(axis=0)) < Z_TOL * err.std(axis=0) / math.sqrt(err.shape[0]))


def test_channel_information_is_the_scaled_fit():
    fit = _exact_table_fit()
    channel = ht.HardmaxTokens(T=2, fisher=fit)
    assert channel.information(0.6, 1.5) == pytest.approx(Hardmax2().information(0.6, 1.5), rel=1e-5)


# ---------------------------------------------------------------------------
# argument checks


def test_bad_arguments_raise_value_errors_naming_them():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="T must"):
        ht.possible_labels(1)
    with pytest.raises(ValueError, match="m = q/Q0"):
        ht.estimate_fisher(3, 1.0, 10, rng)
    with pytest.raises(ValueError, match="n_samples"):
        ht.estimate_fisher(3, 0.5, 1, rng)
    with pytest.raises(ValueError, match="rng"):
        ht.sample_se_pairs(3, 0.5, 10, 0)
    with pytest.raises(ValueError, match="u must"):
        ht.posterior_draws(3, np.zeros((2, 3)), np.zeros((2, 3), int), rng)
    with pytest.raises(ValueError, match="degree"):
        ht.fit_fisher_table(ht.FisherTable(3, np.array([0.5, 1.0]), np.ones(2), np.ones(2), np.ones(2),
                                           np.ones(2), np.ones(2), 0, 2), 2)
    with pytest.raises(ValueError, match="x_min"):
        ht.table_grid(5, 0.0)
    with pytest.raises(ValueError, match="proposals"):
        ht.HardmaxTokens(T=3, proposals=1)
    with pytest.raises(ValueError, match="FisherFit"):
        ht.HardmaxTokens(T=3).information(0.5, 1.5)
    with pytest.raises(ValueError, match="the Fisher table is for T=2"):
        ht.HardmaxTokens(T=3, fisher=_exact_table_fit())
    assert to_z_scale(np.eye(2)).shape == (3,)


def test_estimated_table_cost_grows_with_samples_and_tokens():
    costs = [ht.estimated_table_seconds(T, 50_000) for T in (2, 3, 4, 5)]
    assert all(a < b for a, b in zip(costs, costs[1:]))
    assert ht.estimated_table_seconds(3, 100_000) == pytest.approx(2 * costs[1], rel=1e-3)
    # the default table holds ~140 n_reference samples; T = 3 costs 1.6 us each (measured)
    assert costs[1] == pytest.approx(140 * 50_000 * 1.6e-6, rel=0.1)
