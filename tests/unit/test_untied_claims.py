"""The untied claim rows on synthetic trajectories (``docs/paper2.md`` §5.3).

The figures drawn from such inputs: test_figures_paper2.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import untied_trajectory

from aimrepro.claims import paper2_untied
from aimrepro.paper2 import analysis


def _s4(d, seed_shift=0.0):
    tau = np.union1d(np.linspace(0, 0.2, 41), np.linspace(0, 6.0 / d, 31))
    mean = lambda t: 0.5 + 0.1 * np.minimum(t * d, 6.0) + 1.0 / d   # noqa: E731 -- on t
    overlap = lambda t: np.minimum(5 * t, 0.9) + seed_shift / d      # noqa: E731 -- on τ
    return untied_trajectory(d, tau, overlap, mean, flow_mean=mean)


def test_measures_on_synthetic_runs():
    run = untied_trajectory(100, np.linspace(0, 1, 11), lambda t: -t, lambda t: 0.5 + 0 * t)
    assert analysis.escape_time(run, 0.3) == pytest.approx(0.3)
    assert math.isnan(analysis.escape_time(run, 2.0))
    assert analysis.mean_at(run, 50.0) == pytest.approx(0.5)
    assert math.isnan(analysis.mean_at(run, 101.0))
    trend = paper2_untied.escape_trend({50: [1 + math.log(50)], 200: [1 + math.log(200), math.nan]},
                            horizon=10.0)
    assert trend["n_censored"] == 1 and trend["means"][50] == pytest.approx(1 + math.log(50))
    exact = paper2_untied.escape_trend({50: [2 * math.log(50)] * 2, 100: [2 * math.log(100)] * 2,
                             200: [2 * math.log(200)] * 2}, horizon=10.0)
    assert exact["slope"] == pytest.approx(2.0) and exact["stderr"] == pytest.approx(0, abs=1e-8)


def test_collapse_errors_separate_the_two_axes():
    groups = {d: [_s4(d)] for d in (100, 200, 400)}
    fast = paper2_untied.collapse_errors(groups, axis="fast", quantity="mean", window=6.0)
    wrong = paper2_untied.collapse_errors(groups, axis="slow", quantity="mean", window=0.06)
    assert fast[100] == pytest.approx(1 / 100 - 1 / 400, abs=1e-9)
    assert fast[200] < fast[100] and wrong[100] > 10 * fast[100]
    slow = paper2_untied.collapse_errors(groups, axis="slow", quantity="overlap", window=0.2)
    assert slow[100] == pytest.approx(0.0, abs=1e-2)


def _s5(m2, d, seed):
    """Escape at τ = 0.3 + 0.2 ln(1/|s(0)|) for m2 = 0, else at 0.05; sign of the mean = (−1)^seed.

    |s(0)| = (1 + seed/4)/√d at m2 = 0: its escape is set by the initial overlap and grows
    like 0.1 ln d; m2 ≠ 0 starts at |s(0)| = (1 + seed/4)/100 at every d.
    """
    s0 = (1 + 0.25 * seed) / math.sqrt(d) if m2 == 0 else 0.01 * (1 + 0.25 * seed)
    escape = 0.3 + 0.2 * math.log(1 / s0) if m2 == 0 else 0.05 + 0.001 * seed
    sign = (-1) ** seed
    tau = np.union1d(np.linspace(0, escape, 21), np.linspace(0, 4.0 / d, 11))
    overlap = lambda t: sign * (s0 + (0.5 - s0) * t / escape)            # noqa: E731
    star = math.sqrt(max(m2 ** 2 - 2, 0.0))
    mean = lambda t: sign * (0.05 + star * (1 - np.exp(-10 * t * d)))    # noqa: E731
    return untied_trajectory(d, tau, overlap, mean)


def _fast_states():
    m2 = np.linspace(0, 2, 21)
    star = np.sqrt(np.clip(m2 ** 2 - 2, 0, None))
    return {"m2": m2, "m_star_plus": star, "m_star_minus": -star,
            "curvature_zero": 2 - m2 ** 2, "threshold": np.full(m2.size, math.sqrt(2))}


def test_untied_claims_pass_on_an_ideal_synthetic_experiment():
    s4 = {d: [_s4(d)] for d in (100, 200, 400)}
    s5 = {(m2, d): [_s5(m2, d, seed) for seed in range(3)]
          for m2 in (0.0, 1.0, 2.0) for d in (50, 100, 200)}
    figure3 = {link: [untied_trajectory(100, np.linspace(0, 1.5, 31), lambda t, k=k: np.minimum(t / k, 0.9),
                           lambda t: 0 * t)] for link, k in (("h1", 0.1), ("h2", 1.0), ("h3", 9.0))}
    rows = paper2_untied.paper2_untied_claims(paper2_untied.UntiedInputs(
        figure3=figure3,
        collapse=paper2_untied.Collapse(s4, s4, s4[400], link="h2", fast_horizon=6.0, horizon=0.2),
        dichotomy=paper2_untied.Dichotomy(s5, s5, _fast_states(), link="h2", horizon=2.0,
                                          fast_horizon=4.0),
        threshold=0.3))
    verdicts = {row.id: row.passed for row in rows}
    assert set(verdicts) == {
        "p2-untied-fast-collapse-h2", "p2-untied-slow-collapse-h2",
        "p2-untied-fast-phase-theory-h2", "p2-untied-slow-phase-theory-h2",
        "p2-untied-escape-grows-symmetric-h2", "p2-untied-escape-flat-broken-h2",
        "p2-untied-only-symmetric-stalls-h2", "p2-untied-fast-state-h2", "p2-untied-sign-h2",
        "p2-untied-flow-escape-h2", "p2-untied-fig3-order"}
    # m2 = 1 (below √2) escapes early, as m2 = 2 does: only m2 = 0 stalls
    assert all(verdicts.values()), [k for k, v in verdicts.items() if not v]
    sign_row = next(row for row in rows if row.id == "p2-untied-sign-h2")
    assert sign_row.measured == "9/9"


def _shrinking(run, tau_zero):
    """``run`` with a student variance (Ω₁₁ = Ψ₁₁) shrinking on τ: m = 0 loses stability at some τ_inst."""
    from aimrepro.paper2.trajectory import Trajectory

    columns = dict(run.columns())
    variance = 0.5 * np.maximum(1.0 - np.asarray(columns["t_ode"]) / tau_zero, 0.05)
    columns["Omega11"], columns["Psi11"] = variance, variance.copy()
    return Trajectory.from_columns(columns, run.d)


def _overlap_run(d, scale):
    """S4-like run with overlap scale·min(5τ, 0.9) (negative scale: the other branch)."""
    tau = np.union1d(np.linspace(0, 0.2, 41), np.linspace(0, 6.0 / d, 31))
    mean = lambda t: 0.5 + 0.1 * np.minimum(t * d, 6.0) + 1.0 / d   # noqa: E731 -- on t
    return untied_trajectory(d, tau, lambda t: scale * np.minimum(5 * t, 0.9), mean,
                             flow_mean=mean)


def test_fast_collapse_window_ends_before_the_slow_instability():
    from aimrepro.paper2.losses import MSELoss, make_link
    from aimrepro.paper2.population import Potential

    runs = {d: [_shrinking(_s4(d), 0.2)] for d in (100, 200, 400)}
    potential = Potential(MSELoss(make_link("h2"), make_link("h2"), 0.5), 1)
    tau_inst = analysis.instability_time(runs[100][0], potential, 0.5)
    assert 0 < tau_inst < 0.2
    window = paper2_untied.FAST_WINDOW_FRACTION * 100 * tau_inst
    for fast_horizon, expected in ((2 * window, window), (0.5 * window, 0.5 * window)):
        rows = paper2_untied.collapse_rows(runs, runs, runs[400], link="h2",
                                           fast_horizon=fast_horizon, horizon=0.2,
                                           teacher_mean=0.5)
        fast = next(row for row in rows if row.id == "p2-untied-fast-collapse-h2")
        assert f"on t ≤ {expected:g}:" in fast.measured
        theory = next(row for row in rows if row.id == "p2-untied-slow-phase-theory-h2")
        assert f"τ ≤ {tau_inst:.3g}" in theory.note
    # without the teacher mean, or above the threshold (m = 0 unstable from the start): the
    # whole windows
    for teacher_mean in (None, 2.0):
        rows = paper2_untied.collapse_rows(runs, runs, runs[400], link="h2",
                                           fast_horizon=2 * window, horizon=0.2,
                                           teacher_mean=teacher_mean)
        assert f"on t ≤ {2 * window:g}:" in rows[0].measured
        assert "τ ≤ 0.2 at d = 400" in rows[3].note


def test_slow_collapse_uses_the_overlap_magnitude_and_flags_the_escape():
    """Replicates escaping on opposite branches collapse in |s|; a failing window past τ_inst is overstated."""
    mixed = {d: [_overlap_run(d, 1.0), _overlap_run(d, 1.0 if d < 400 else -1.0)]
             for d in (100, 200, 400)}
    signed = paper2_untied.collapse_errors(mixed, axis="slow", quantity="overlap", window=0.2)
    magnitude = paper2_untied.collapse_errors(mixed, axis="slow", quantity="abs_overlap",
                                              window=0.2)
    assert signed[100] > 0.8 and magnitude[100] < 1e-9
    with pytest.raises(ValueError, match="quantity"):
        paper2_untied.collapse_errors(mixed, axis="slow", quantity="m", window=0.2)
    # overlap curves that do not collapse on τ: FAIL before τ_inst, overstated past it
    late = {d: [_shrinking(_overlap_run(d, 0.5 if d < 400 else 1.0), 0.2)] for d in (100, 200, 400)}
    potential = paper2_untied.Potential(paper2_untied.MSELoss(
        paper2_untied.make_link("h2"), paper2_untied.make_link("h2"), 0.5), 1)
    tau_inst = analysis.instability_time(late[400][0], potential, 0.5)
    verdicts = {}
    for horizon in (0.5 * tau_inst, 0.2):
        rows = paper2_untied.collapse_rows(late, late, late[400], link="h2", fast_horizon=1.0,
                                           horizon=horizon, teacher_mean=0.5)
        verdicts[horizon] = next(r for r in rows if r.id == "p2-untied-slow-collapse-h2")
    assert verdicts[0.5 * tau_inst].verdict == "FAIL"
    assert verdicts[0.2].verdict == "overstated" and "[P Ass. 5]" in verdicts[0.2].note
