"""Generalisation error (docs/paper1.md §2): the SE prediction at an overlap against plain Monte Carlo over
full GOE_T index matrices, its limits and quadrature convergence, the posterior-mean prediction of a
new label, and the errors of an estimate on held-out sequences."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper1 import generalisation as gen
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.thresholds import alpha_perfect_recovery
from aimrepro.model import apply_link, indices, sample_teacher, sample_tokens
from aimrepro.paper1.state_evolution import solve_se

#: Monte-Carlo agreement: |quadrature − MC| within this many standard errors of the MC mean.
MC_SIGMAS = 4.0


def goe(rng, shape, T):
    """Symmetric T×T matrices with N(0, 1) off the diagonal and N(0, 2) on it (docs/paper1.md §1.6)."""
    G = rng.standard_normal(shape + (T, T))
    return (G + np.swapaxes(G, -1, -2)) / math.sqrt(2.0)


def monte_carlo_errors(link, T, q, Q0, *, beta=1.0, n_outer=20000, n_inner=8, seed=0):
    """Plain MC of §2's definition on full T×T matrices: ω = √q ξ, K draws h = ω + √V z per ω.

    Bayes: the unbiased within-ω variance Σ_k ‖g(h_k) − ḡ‖²/(K − 1) (ĝ(ω) is the mean over z);
    plug-in: ‖g(h) − g(ω)‖².  Returns (bayes, its standard error, plug-in, its standard error).
    """
    rng = np.random.default_rng(seed)
    omega = math.sqrt(q) * goe(rng, (n_outer, 1), T)
    h = omega + math.sqrt(Q0 - q) * goe(rng, (n_outer, n_inner), T)
    y = apply_link(h, link, beta=beta)
    spread = np.sum((y - y.mean(axis=1, keepdims=True)) ** 2, axis=(1, 2, 3)) / (n_inner - 1)
    miss = np.sum((y - apply_link(omega, link, beta=beta)) ** 2, axis=(2, 3)).mean(axis=1)
    se = (lambda a: a.std(ddof=1) / math.sqrt(a.size))
    return spread.mean(), se(spread), miss.mean(), se(miss)


@pytest.mark.parametrize(("T", "rho", "fraction"), [
    (2, 0.5, 0.0), (2, 0.5, 0.5), (2, 2.0, 0.9), (2, 0.1, 0.99),
    (3, 0.5, 0.0), (3, 0.5, 1 / 3), (3, 0.5, 0.95), (3, 2.0, 0.9),
])
def test_softmax_errors_match_plain_monte_carlo(T, rho, fraction):
    channel = make_channel("softmax", T=T)
    Q0 = 1.0 + rho
    q = fraction * Q0
    mc_bayes, se_bayes, mc_plugin, se_plugin = monte_carlo_errors("softmax", T, q, Q0)
    assert abs(gen.bayes_generalisation_error(channel, q, Q0) - mc_bayes) < MC_SIGMAS * se_bayes
    assert abs(gen.plugin_generalisation_error(channel, q, Q0) - mc_plugin) < MC_SIGMAS * se_plugin


@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.7, 0.97])
def test_hardmax_closed_forms_match_plain_monte_carlo(fraction):
    channel = make_channel("hardmax", T=2)
    Q0 = 1.5
    q = fraction * Q0
    mc_bayes, se_bayes, mc_plugin, se_plugin = monte_carlo_errors("hardmax", 2, q, Q0, n_outer=40000)
    assert abs(gen.bayes_generalisation_error(channel, q, Q0) - mc_bayes) < MC_SIGMAS * se_bayes
    assert abs(gen.plugin_generalisation_error(channel, q, Q0) - mc_plugin) < MC_SIGMAS * se_plugin


def test_beta_changes_the_softmax_error_as_monte_carlo_does():
    channel = make_channel("softmax", T=2, beta=3.0)
    mc_bayes, se_bayes, _, _ = monte_carlo_errors("softmax", 2, 0.8, 1.5, beta=3.0)
    assert abs(gen.bayes_generalisation_error(channel, 0.8, 1.5) - mc_bayes) < MC_SIGMAS * se_bayes


@pytest.mark.parametrize("name", ["softmax", "hardmax"])
def test_limits_perfect_recovery_and_constant_prediction(name):
    channel = make_channel(name, T=2)
    Q0 = 1.5
    assert gen.bayes_generalisation_error(channel, Q0, Q0) == 0.0
    assert gen.plugin_generalisation_error(channel, Q0, Q0) == 0.0
    # at q = 0 the Bayes prediction is the constant E g(h): hardmax (1/2, 1/2) per row, error 1
    if name == "hardmax":
        assert gen.bayes_generalisation_error(channel, 0.0, Q0) == pytest.approx(1.0, abs=1e-15)
        assert gen.plugin_generalisation_error(channel, 0.0, Q0) == pytest.approx(2.0, abs=1e-15)


@pytest.mark.parametrize(("name", "T"), [("softmax", 2), ("softmax", 3), ("hardmax", 2)])
def test_errors_decrease_with_the_overlap_and_plug_in_is_never_better(name, T):
    channel = make_channel(name, T=T)
    Q0 = 1.5
    q = np.linspace(0.0, Q0, 7 if T == 2 else 4)
    bayes = gen.bayes_generalisation_error(channel, q, Q0)
    plugin = gen.plugin_generalisation_error(channel, q, Q0)
    assert bayes.shape == q.shape
    assert np.all(np.diff(bayes) < 0)
    assert np.all(plugin >= bayes - gen.QUADRATURE_TOLERANCE)


def test_softmax_bayes_and_plug_in_meet_linearly_near_perfect_recovery():
    # V → 0: both errors ≈ V · E‖∇g‖² (delta method); their gap is O(V²)
    channel = make_channel("softmax", T=2)
    Q0 = 1.5
    V = np.array([1e-2, 1e-3, 1e-4])
    bayes = gen.bayes_generalisation_error(channel, Q0 - V, Q0)
    plugin = gen.plugin_generalisation_error(channel, Q0 - V, Q0)
    slopes = bayes / V
    assert abs(slopes[2] - slopes[1]) < 0.02 * slopes[2]
    assert np.all(np.diff((plugin - bayes) / bayes) < 0)
    assert (plugin[2] - bayes[2]) / bayes[2] < 1e-3


@pytest.mark.parametrize(("T", "rho", "fraction"), [(2, 2.0, 0.5), (2, 0.1, 0.999), (3, 0.5, 0.1), (3, 0.5, 0.9)])
def test_refining_the_trapezoid_step_moves_the_errors_below_the_stated_tolerance(T, rho, fraction):
    channel = make_channel("softmax", T=T)
    Q0 = 1.0 + rho
    q = fraction * Q0
    coarse = gen._errors_at_overlaps(channel, q, Q0, gen.TRAPEZOID_STEP)
    fine = gen._errors_at_overlaps(channel, q, Q0, 0.6 * gen.TRAPEZOID_STEP)
    assert abs(coarse[0] - fine[0]) < gen.QUADRATURE_TOLERANCE
    assert abs(coarse[1] - fine[1]) < gen.QUADRATURE_TOLERANCE


@pytest.mark.parametrize(("name", "T"), [("softmax", 2), ("softmax", 3), ("hardmax", 2)])
def test_curve_follows_the_state_evolution_overlap(name, T):
    channel = make_channel(name, T=T)
    rho = 0.5
    alphas = np.array([1e-9, 0.02, 0.05]) if name == "softmax" else np.array([1e-9, 0.1, 1.0])
    curve = gen.generalisation_curve(channel, alphas, rho)
    # α → 0: the SE overlap is ρ (the prior mean predicts the indices), not 0
    assert curve.q[0] == pytest.approx(rho, abs=1e-6)
    assert curve.bayes[0] == pytest.approx(gen.bayes_generalisation_error(channel, rho, 1.0 + rho), abs=1e-6)
    assert curve.bayes[0] < gen.bayes_generalisation_error(channel, 0.0, 1.0 + rho)
    point = solve_se(channel, alphas[2], rho)
    assert curve.bayes[2] == pytest.approx(gen.bayes_generalisation_error(channel, point.q, 1.0 + rho), abs=1e-12)
    assert np.all(np.diff(curve.bayes) < 0)
    assert set(curve.columns()) == {"alpha", "q", "mmse", "gen_bayes", "gen_plugin", "se_converged"}


def test_softmax_curve_vanishes_beyond_perfect_recovery():
    channel = make_channel("softmax", T=3)
    curve = gen.generalisation_curve(channel, [1.1 * alpha_perfect_recovery(0.5, 3)], 0.5)
    assert curve.bayes[0] == 0.0 and curve.plugin[0] == 0.0


@pytest.mark.parametrize(("name", "T"), [("softmax", 2), ("softmax", 3), ("hardmax", 2)])
def test_bayes_prediction_is_the_mean_label_and_reaches_the_se_error(name, T):
    # ω ~ √q GOE, y = g(ω + √V z): the prediction's mean squared error is E_gen(q) (§2)
    channel = make_channel(name, T=T)
    Q0, q = 1.5, 0.9
    rng = np.random.default_rng(3)
    n = 20000 if name == "hardmax" else 4000
    omega = math.sqrt(q) * goe(rng, (n,), T)
    y = apply_link(omega + math.sqrt(Q0 - q) * goe(rng, (n,), T), name)
    predicted = gen.bayes_prediction(channel, omega, Q0 - q)
    assert np.allclose(predicted.sum(axis=-1), 1.0, atol=1e-12)
    errors = np.sum((y - predicted) ** 2, axis=(1, 2))
    theory = gen.bayes_generalisation_error(channel, q, Q0)
    assert abs(errors.mean() - theory) < MC_SIGMAS * errors.std(ddof=1) / math.sqrt(errors.size)


@pytest.mark.parametrize(("name", "T"), [("softmax", 3), ("hardmax", 2)])
def test_bayes_prediction_matches_an_average_over_sampled_indices(name, T):
    channel = make_channel(name, T=T)
    rng = np.random.default_rng(5)
    h_mean = goe(rng, (3,), T)
    V = 0.4
    draws = apply_link(h_mean[:, None] + math.sqrt(V) * goe(rng, (3, 200000), T), name)
    mc, mc_se = draws.mean(axis=1), draws.std(axis=1) / math.sqrt(draws.shape[1])
    assert np.all(np.abs(gen.bayes_prediction(channel, h_mean, V) - mc) < MC_SIGMAS * mc_se + 1e-12)


def test_bayes_prediction_is_equivariant_and_plug_in_at_zero_variance():
    channel = make_channel("softmax", T=3)
    rng = np.random.default_rng(8)
    h_mean = goe(rng, (4,), 3)
    perm = [2, 0, 1]
    permuted = gen.bayes_prediction(channel, h_mean[:, perm][:, :, perm], 0.3)
    assert np.allclose(permuted, gen.bayes_prediction(channel, h_mean, 0.3)[:, perm][:, :, perm], atol=1e-12)
    assert np.array_equal(gen.bayes_prediction(channel, h_mean, 0.0), apply_link(h_mean, "softmax"))


def test_held_out_errors_of_the_teacher_and_of_a_noisy_estimate():
    rng = np.random.default_rng(2)
    d, T = 40, 2
    S = sample_teacher(d, 0.5, rng).S
    X = sample_tokens(300, T, d, rng)
    y = apply_link(indices(X, S), "softmax")
    channel = make_channel("softmax", T=T)
    exact = gen.held_out_errors(channel, X, y, S, 0.0)
    assert exact.plugin < 1e-25 and exact.bayes == exact.plugin and exact.n_test == 300
    noise = rng.standard_normal((d, d))
    estimate = gen.held_out_errors(channel, X, y, S + 0.1 * (noise + noise.T) / math.sqrt(2 * d), 0.01)
    assert 0 < estimate.bayes < estimate.plugin + 1e-3


def test_arguments_are_checked():
    softmax = make_channel("softmax", T=2)
    with pytest.raises(ValueError, match="overlap q"):
        gen.bayes_generalisation_error(softmax, 1.6, 1.5)
    with pytest.raises(ValueError, match="Q0"):
        gen.bayes_generalisation_error(softmax, 0.5, -1.0)
    with pytest.raises(ValueError, match="T in"):
        gen.bayes_generalisation_error(make_channel("softmax", T=4), 0.5, 1.5)
    with pytest.raises(ValueError, match="step"):
        gen.bayes_generalisation_error(softmax, 0.5, 1.5, step=0.0)
    with pytest.raises(ValueError, match="hardmax_paper"):
        gen.generalisation_curve(make_channel("hardmax_paper", T=2), [0.1], 0.5)
    with pytest.raises(ValueError, match="h_mean"):
        gen.bayes_prediction(softmax, np.zeros((3, 3, 3)), 0.1)
    with pytest.raises(ValueError, match="V must"):
        gen.bayes_prediction(softmax, np.zeros((3, 2, 2)), -0.1)
