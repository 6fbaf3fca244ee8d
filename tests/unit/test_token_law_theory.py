"""Theory for tokens that are not Gaussian: paper 1's SE (docs/paper1.md §13) and paper 2's flows (docs/paper2.md §10).

Identities that can fail: the index variance of a law (an exact finite-d
formula) by Monte Carlo, the channel's information against its generic
Monte-Carlo estimate, two quadrature rules against each other, the finite-d
SE against the d → ∞ one, the flows against finite differences of the
potential, and GAMP-RIE on Rademacher data against the law's SE.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from aimrepro.model import GAUSSIAN, TokenLaw
from aimrepro.paper1 import channels
from aimrepro.paper1 import token_laws as tl
from aimrepro.paper1.channels import Hardmax2, Softmax
from aimrepro.paper1.state_evolution import solve_se
from aimrepro.paper1.token_law_runs import amp_replicates, paired_differences
from aimrepro.paper2.flows import (DirectODEParams, TiedFlowParams, direct_ode_rhs, reference_flow, solve_tied_flow,
                                   tied_flow_rhs)
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.matrices import DenseMatrix, FactoredMatrix, trace_products
from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.trajectory import OrderParameters

RADEMACHER, SPARSE, STUDENT = TokenLaw("rademacher"), TokenLaw("sparse", keep_prob=0.5), TokenLaw("student_t")


# ---------------------------------------------------------------------------
# the index variance a law implies (exact at every d)


@pytest.mark.parametrize("law", [GAUSSIAN, RADEMACHER, SPARSE, TokenLaw("student_t", dof=11.0)],
                         ids=lambda law: law.token)
def test_quadratic_form_variance_is_2_tr_s2_plus_kappa4_sum_of_squared_diagonal(law):
    """Var(xᵀSx) = 2 Tr S² + κ₄ Σ_i S_ii² for i.i.d. coordinates of mean 0, variance 1 (the basis of §13)."""
    d = 30
    rng = np.random.default_rng(3)
    W = rng.standard_normal((d, 12))
    S = W @ W.T / math.sqrt(12 * d)
    x = law.sample(np.random.default_rng(4), (200_000, d))
    G = np.einsum("ni,ij,nj->n", x, S, x)
    expected = 2 * np.sum(S * S) + law.excess_kurtosis * np.sum(np.diag(S) ** 2)
    centred = (G - G.mean()) ** 2
    assert abs(centred.mean() - expected) <= 5 * centred.std() / math.sqrt(G.size)
    assert abs(G.mean() - np.trace(S)) <= 5 * G.std() / math.sqrt(G.size)


# ---------------------------------------------------------------------------
# the channel with a diagonal excess


@pytest.mark.parametrize(("rho", "law", "fraction"), [
    (1.0, RADEMACHER, 0.0), (1.0, RADEMACHER, 0.02), (0.5, RADEMACHER, 0.4), (0.5, SPARSE, 0.3),
    (1.0, STUDENT, 0.7)])
def test_information_with_an_excess_against_its_monte_carlo(rho, law, fraction):
    """At q = ρ + f(Q0 − ρ), including the singular κ-law of Rademacher tokens at f = 0."""
    channel = tl.law_channel(Hardmax2(), law, rho)
    Q0 = 1.0 + rho
    q = rho + fraction * (Q0 - rho)
    mc, se = channel.q_hat_monte_carlo(q, Q0, 1.0, 200_000, np.random.default_rng(12))
    assert abs(channel.information(q, Q0) - mc) <= 4 * se


def test_no_excess_is_the_gaussian_channel_bit_for_bit():
    """Without an excess the information is the sum the channel computed before the laws existed, bit for bit."""
    channel = Hardmax2()
    for q in (0.0, 0.05, 0.3, 1.2):
        lam, r2 = q / (1.5 - q), 3.0 * (1.5 - q)
        before = 0.0
        for corr in (1.0 / 3.0, -1.0 / 3.0):
            if lam == 0.0:
                k1 = k2 = np.zeros(1)
                weights = np.ones(1)
            else:
                k1, k2, weights = channels._gaussian_rule_2d(lam, corr, channels.HARDMAX_NODES)
            before += np.sum(weights * channel._information_integrand(k1, k2, corr))
        assert channel.information(q, 1.5) == 8.0 * before / r2
        assert Hardmax2(diagonal_excess=0.0).information(q, 1.5) == channel.information(q, 1.5)
    assert tl.law_channel(Hardmax2(), GAUSSIAN, 0.5) == Hardmax2()


@pytest.mark.parametrize("excess", [-1.0, 0.6, 3.0])
def test_the_two_quadrature_rules_agree_where_the_channel_switches_between_them(excess):
    """Principal axes below PRINCIPAL_RULE_BELOW, the κ tensor rule above: both converged, both equal there."""
    channel = Hardmax2(diagonal_excess=excess)
    Q0 = 2.0
    # q where the minor variance (2q + e)/(3(Q0 - q)) equals the switch
    target = channels.PRINCIPAL_RULE_BELOW
    q = (3 * target * Q0 - excess) / (2 + 3 * target)
    values = []
    for rule in ("principal", "tensor"):
        for nodes in (channels.HARDMAX_NODES, 2 * channels.HARDMAX_NODES):
            total = 0.0
            for corr in (1 / 3, -1 / 3):
                r2 = 3 * (Q0 - q)
                if rule == "principal":
                    k1, k2, w = channels._principal_rule_2d((4 * q + excess) / r2, (2 * q + excess) / r2,
                                                            math.copysign(1, corr), nodes)
                else:
                    k1, k2, w = channels._gaussian_rule_2d((3 * q + excess) / r2, corr * 3 * q / (3 * q + excess),
                                                           nodes)
                total += np.sum(w * channel._information_integrand(k1, k2, corr))
            values.append(8 * total / (3 * (Q0 - q)))
    assert values[0] == pytest.approx(values[1], rel=1e-11)
    assert values[2] == pytest.approx(values[3], rel=1e-11)
    assert values[0] == pytest.approx(values[2], rel=1e-11)


def test_a_negative_diagonal_variance_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="below the uninformative overlap"):
        Hardmax2(diagonal_excess=-2.0).information(0.5, 2.0)
    with pytest.raises(ValueError, match="diagonal_excess must be a finite number"):
        Hardmax2(diagonal_excess=math.nan)


def test_law_channel_and_law_se():
    softmax = Softmax(T=3)
    assert tl.law_channel(softmax, STUDENT, 0.5) is softmax
    assert tl.law_se(softmax, 0.03, 0.5, STUDENT) == solve_se(softmax, 0.03, 0.5)
    assert tl.law_channel(Hardmax2(), SPARSE, 0.8).diagonal_excess == pytest.approx(3.0 * 0.8)
    with pytest.raises(ValueError, match="no token-law state evolution"):
        tl.law_channel(object(), SPARSE, 0.5)
    gaussian = solve_se(Hardmax2(), 0.6, 1.0).mmse
    errors = [tl.law_se(Hardmax2(), 0.6, 1.0, law).mmse for law in (RADEMACHER, GAUSSIAN, SPARSE, STUDENT)]
    assert errors[1] == gaussian
    assert errors == sorted(errors)  # the error grows with κ₄ = -2, 0, 3, 6
    assert errors[0] == pytest.approx(0.2051, abs=2e-4) and errors[3] == pytest.approx(0.3632, abs=2e-4)


# ---------------------------------------------------------------------------
# the finite-d SE


def test_known_part_draws():
    rademacher = tl.known_part(RADEMACHER, 40, 5000, seed=1)
    assert np.all(rademacher.c == 0.0)  # ‖x‖² = d exactly
    sparse = tl.known_part(SPARSE, 40, 5000, seed=1)
    assert np.array_equal(sparse.xi, rademacher.xi) and np.array_equal(sparse.eta, rademacher.eta)
    c = sparse.c.ravel()
    # Var c = E x⁴ - 1 = 2 + κ₄ at every d; s.e. from the sample's fourth moment
    assert abs(c.var() - 5.0) <= 5 * np.std(c * c) / math.sqrt(c.size)
    with pytest.raises(ValueError, match="n_samples must be an integer >= 100"):
        tl.known_part(SPARSE, 40, 10, seed=1)


def test_the_sampled_limit_reproduces_the_law_se():
    point = tl.finite_d_se(0.6, 1.0, STUDENT, None, n_samples=20_000, seed=3)
    assert point.converged and point.residual < 1e-9
    assert abs(point.mmse - tl.law_se(Hardmax2(), 0.6, 1.0, STUDENT).mmse) <= 4 * point.mmse_se
    assert 0 < point.mmse_se < 0.005


def test_finite_d_shift_of_rademacher_is_the_asymptotic_one_and_student_t_is_far_from_it():
    """Rademacher's known part is 0 at every d and the Gaussian one nearly Gaussian: the shift is the limit's.

    Student-t with ν = 5 (E x⁶ = ∞): at d = 100 its known part is far from
    Gaussian, and the finite-d shift is well below the d → ∞ one (§13.4).
    """
    asymptotic = {law.token: tl.law_se(Hardmax2(), 0.6, 1.0, law).mmse - solve_se(Hardmax2(), 0.6, 1.0).mmse
                  for law in (RADEMACHER, STUDENT)}
    shift, se, *_ = tl.finite_d_shift(0.6, 1.0, RADEMACHER, 100, n_samples=20_000, seed=5)
    assert abs(shift - asymptotic["rademacher"]) <= 4 * se + 1e-3
    shift, se, *_ = tl.finite_d_shift(0.6, 1.0, STUDENT, 100, n_samples=20_000, seed=5)
    assert shift < asymptotic["student_t_nu5"] - 0.03 and shift > 0.03 and se < 0.005


def test_law_table_columns():
    table = tl.law_table("hardmax", 2, 1.0, 0.6, [RADEMACHER], [60], n_samples=2000, seed=1)
    assert list(table["law"]) == ["rademacher", "rademacher"] and list(table["d"]) == [0, 60]
    assert table["shift"][0] == pytest.approx(table["law_se"][0] - table["gaussian_se"][0])
    soft = tl.law_table("softmax", 2, 0.5, 0.075, [STUDENT], [60, 80], beta=1.0)
    assert np.all(soft["shift"] == 0.0) and np.all(soft["law_se"] == soft["gaussian_se"])


def test_amp_on_rademacher_tokens_moves_by_the_law_se_shift_not_by_zero():
    """GAMP-RIE (unchanged) on Rademacher data, paired with Gaussian data: the law's SE predicts the shift."""
    point = dict(T=2, rho=1.0, alpha=0.6, d=60, replicates=[0, 1, 2], base_seed=11)
    law = amp_replicates("hardmax", law=RADEMACHER, **point)
    gaussian = amp_replicates("hardmax", law=GAUSSIAN, **point)
    diffs = paired_differences(law, gaussian, "error")
    predicted = tl.law_se(Hardmax2(), 0.6, 1.0, RADEMACHER).mmse - solve_se(Hardmax2(), 0.6, 1.0).mmse
    assert predicted == pytest.approx(-0.0529, abs=5e-4)
    assert diffs.size == 3 and abs(diffs.mean() - predicted) < 0.025 and diffs.mean() < -0.025


# ---------------------------------------------------------------------------
# paper 2: the flows with κ₄


def _h2_potential():
    return Potential(MSELoss(make_link("h2"), make_link("h2"), 0.5), 1)


@pytest.mark.parametrize("kurtosis", [0.0, -2.0, 3.0])
def test_tied_flow_is_minus_the_gradient_of_the_law_potential(kurtosis):
    """dW/dt = −(d/4) ∇_W Φ(q + (κ₄/2) D) (the time t = 4αn/d), by central differences."""
    rng = np.random.default_rng(2)
    d, r = 24, 8
    W = rng.standard_normal((d, r)) / (r * d) ** 0.25
    teacher = FactoredMatrix(rng.standard_normal((d, 6)), None, 0.7 / math.sqrt(6 * d), 0.05)
    potential = _h2_potential()

    def phi(Wm):
        _, q, _ = trace_products([FactoredMatrix(Wm), teacher])
        diag = np.stack([np.sum(Wm * Wm, axis=1), np.diag(teacher.dense())])
        return potential.tied(q + 0.5 * kurtosis * diag @ diag.T / d).value

    direction = rng.standard_normal((d, r))
    h = 1e-5
    numeric = (phi(W + h * direction) - phi(W - h * direction)) / (2 * h)
    rhs = tied_flow_rhs(0.0, W.ravel(), TiedFlowParams(teacher, potential, W.shape, 0.0, kurtosis)).reshape(d, r)
    assert np.sum(rhs * direction) == pytest.approx(-(d / 4) * numeric, rel=1e-6)


def test_direct_ode_with_kurtosis_is_the_matrix_drift_of_constant_diagonals():
    """On S with constant diagonals (D = t tᵀ exactly) the ODE is Tr of the matrix drift −2Σ[A(S_m + κ₄/2 t_m I) + B(...)]."""
    rng = np.random.default_rng(4)
    d, kurtosis = 20, 3.0
    mats = []
    for mean in (0.1, 0.4):
        A = rng.standard_normal((d, d)) / math.sqrt(d)
        A = 0.4 * (A + A.T)
        A[np.diag_indices(d)] = mean
        mats.append(A)
    S1, S2 = mats
    potential = _h2_potential()
    op = OrderParameters(*trace_products([DenseMatrix(S1), DenseMatrix(S2)]))
    rhs = OrderParameters.from_vector(direct_ode_rhs(0.0, op.as_vector(), DirectODEParams(potential, 0.0, kurtosis)))
    t = op.trace
    shift = 0.5 * kurtosis * np.outer(t, t)
    value = potential.evaluate(IndexLaw(1, np.zeros(2), op.Omega + shift, op.Psi + shift))
    A, B = value.d_Omega, value.d_Psi
    drift = -2 * sum(A[0, m] * (S + 0.5 * kurtosis * t[m] * np.eye(d)) + B[0, m] * (S.T + 0.5 * kurtosis * t[m] * np.eye(d))
                     for m, S in enumerate((S1, S2)))
    assert rhs.trace[0] == pytest.approx(np.trace(drift) / d, rel=1e-10)
    assert rhs.trace[1] == 0.0
    assert rhs.Psi[0, 1] == pytest.approx(np.trace(drift @ S2) / d, rel=1e-10)
    assert rhs.Psi[0, 0] == pytest.approx(2 * np.trace(drift @ S1) / d, rel=1e-10)


def test_a_flow_with_kurtosis_needs_one_token():
    potential = Potential(MSELoss(make_link("h2"), make_link("h2"), 0.5), 2)
    W = np.ones((4, 2))
    with pytest.raises(ValueError, match="one token"):
        solve_tied_flow(W, FactoredMatrix(W), potential, [0.0, 0.1], excess_kurtosis=1.0)
    with pytest.raises(ValueError, match="excess_kurtosis must be a finite number >= -2"):
        solve_tied_flow(W, FactoredMatrix(W), _h2_potential(), [0.0, 0.1], excess_kurtosis=-3.0)


def test_reference_flow_follows_the_spec_law_and_rademacher_removes_the_tied_symmetry_breaking():
    """Rademacher tokens hide the trace part t I of S: the tied start is uncorrelated and p₁₂ barely moves."""
    spec = ProblemSpec("tied", "h2", 1, 40, rho=0.5)
    times = np.linspace(0.0, 1.0, 11)
    gaussian = reference_flow(spec, 1, times)
    rademacher = reference_flow(replace(spec, tokens=RADEMACHER), 1, times)
    sparse = reference_flow(replace(spec, tokens=SPARSE), 1, times)
    assert gaussian.p12[0] == rademacher.p12[0] == sparse.p12[0]
    assert gaussian.weak_recovery_time(0.3) is not None and rademacher.weak_recovery_time(0.3) is None
    assert sparse.weak_recovery_time(0.3) < gaussian.weak_recovery_time(0.3)


def test_law_replicates_pair_sgd_with_both_flows_from_its_initial_state():
    from aimrepro.paper2.sgd import SGDSettings
    from aimrepro.paper2.token_law_runs import law_replicates

    spec = ProblemSpec("tied", "h2", 1, 30, rho=0.5, tokens=SPARSE)
    settings = SGDSettings(lr=0.02, batch=32, horizon=0.3, n_records=7, stop_overlap=0.5)
    summaries, trajectories = law_replicates(spec, settings, [0, 3], threshold=0.3)
    assert [s["seed"] for s in summaries] == [0, 3] and set(trajectories) == {0, 3}
    run, gaussian, law = trajectories[3]
    assert run.p12[0] == gaussian.p12[0] == law.p12[0]  # one initial state
    assert not np.array_equal(gaussian.order, law.order)  # kappa4 = 3 moves the law's flow
    again, _ = law_replicates(replace(spec, tokens=GAUSSIAN), settings, [3], threshold=0.3)
    assert again[0]["gaussian_flow_t_wr"] == again[0]["law_flow_t_wr"] or (
        math.isnan(again[0]["gaussian_flow_t_wr"]) and math.isnan(again[0]["law_flow_t_wr"]))
    with pytest.raises(ValueError, match="seeds must be distinct"):
        law_replicates(spec, settings, [1, 1], threshold=0.3)
