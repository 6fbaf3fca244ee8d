"""AMP claims rows (aimrepro.claims.paper1_amp): verdict logic on synthetic summary tables and runs."""

from __future__ import annotations

import numpy as np
import pytest

from aimrepro.claims.paper1_amp import AMPInputs, paper1_amp_claims
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.state_evolution import solve_se


def table(alphas, means, stds, se, *, n_runs=4, n_converged=4, n_stationary=0, error_max=None, n_diverged=0):
    k = len(alphas)
    return {"alpha": np.array(alphas, float), "error_mean": np.array(means, float),
            "error_std": np.array(stds, float), "se_mmse": np.array(se, float),
            "n_runs": np.full(k, n_runs), "n_converged": np.full(k, n_converged),
            "n_stationary": np.full(k, n_stationary), "n_diverged": np.full(k, n_diverged),
            "error_max": np.array(error_max if error_max is not None else means, float)}


def curve(channel, T=2, rho=0.5):
    return {"channel": channel, "T": T, "rho": rho, "d": 50, "seeds": [0, 1, 2, 3]}


def test_rows_pass_when_amp_follows_se_and_the_erratum_carries_its_evidence():
    se_corr = solve_se(make_channel("hardmax", T=2), 0.3122, 0.5).mmse
    curves = [curve("hardmax"), curve("softmax"), curve("hardmax_paper")]
    tables = [table([0.3122], [se_corr + 0.01], [0.02], [se_corr]),
              table([0.1, 0.25], [0.40, 5e-5], [0.02, 1e-5], [0.39, 0.0]),
              table([0.3122], [np.nan], [np.nan], [0.62], n_converged=0, n_diverged=4, error_max=[0.7])]
    rows = {row.id: row for row in paper1_amp_claims(AMPInputs(curves, tables))}
    assert set(rows) == {"p1-amp-se-hardmax", "p1-amp-se-softmax", "p1-amp-softmax-perfect-recovery",
                         "p1-amp-se-hardmax_paper", "p1-amp-beats-published-hardmax"}
    for channel in ("hardmax", "softmax"):  # one small d: described, the trend rows judge
        assert rows[f"p1-amp-se-{channel}"].verdict == "informational"
        assert rows[f"p1-amp-se-{channel}"].measured == 1.0
    assert rows["p1-amp-softmax-perfect-recovery"].measured == 5e-5
    # the published g_out owes no agreement: informational, whatever its numbers
    assert rows["p1-amp-se-hardmax_paper"].verdict == "informational"
    assert "4 of 4 runs diverged" in rows["p1-amp-se-hardmax_paper"].measured
    erratum = rows["p1-amp-beats-published-hardmax"]
    assert erratum.verdict == "erratum"
    assert f"corrected SE {se_corr:.4f}" in erratum.note and "beats" in erratum.note
    assert erratum.expected == pytest.approx(solve_se(make_channel("hardmax_paper", T=2), 0.3122, 0.5).mmse)


def test_rows_fail_honestly():
    curves = [curve("hardmax"), curve("softmax")]
    tables = [table([0.3122], [0.7], [0.01], [0.37]),
              table([0.25], [0.02], [0.01], [0.0], error_max=[0.05])]
    rows = {row.id: row for row in paper1_amp_claims(AMPInputs(curves, tables))}
    # one small d against the seed spread judges nothing: reported, the trend rows are the verdict
    assert rows["p1-amp-se-hardmax"].verdict == "informational" and rows["p1-amp-se-hardmax"].measured == 0.0
    assert "trend rows (p1-amp-trend-*) settle the claim" in rows["p1-amp-se-hardmax"].note
    assert rows["p1-amp-softmax-perfect-recovery"].failed
    # AMP above the published curve: the erratum's evidence is missing, which is a FAIL
    assert rows["p1-amp-beats-published-hardmax"].failed
    assert "NOT" in rows["p1-amp-beats-published-hardmax"].note


def test_stationary_runs_count_as_usable_and_points_without_usable_runs_are_skipped():
    se_value = solve_se(make_channel("hardmax", T=2), 0.3, 1.0).mmse
    usable = paper1_amp_claims(AMPInputs([curve("hardmax", rho=1.0)],
                               [table([0.3], [se_value], [0.01], [se_value], n_converged=0, n_stationary=3)]))
    assert next(r for r in usable if r.id == "p1-amp-se-hardmax").measured == 1.0
    rows = paper1_amp_claims(AMPInputs([curve("hardmax", rho=1.0)],
                             [table([0.3], [np.nan], [np.nan], [0.49], n_converged=0)]))
    row = next(r for r in rows if r.id == "p1-amp-se-hardmax")
    assert row.failed and "skipped" in row.note


def test_points_next_to_alpha_pr_are_left_out_and_named():
    alpha_pr = 0.1875  # softmax T = 2, rho = 0.5
    rows = {r.id: r for r in paper1_amp_claims(AMPInputs(
        [curve("softmax")], [table([0.1, 0.99 * alpha_pr, 1.01 * alpha_pr, 0.25], [0.40, 0.3, 0.02, 5e-5],
                                   [0.02, 0.001, 0.001, 1e-5], [0.39, 0.005, 0.0, 0.0])]))}
    assert rows["p1-amp-se-softmax"].measured == 1.0 and "left out within 2%" in rows["p1-amp-se-softmax"].note
    assert rows["p1-amp-se-softmax"].measured == 1.0  # 2 points counted, both inside
    assert rows["p1-amp-softmax-perfect-recovery"].passed


def trend(name="softmax_T3", dims=(50, 100, 150)):
    return {"name": name, "channel": "softmax", "T": 3, "rho": 0.5, "beta": 1.0, "alpha": 0.06,
            "points": [{"d": d, "seeds": list(range(8)), "runs": []} for d in dims]}


def runs_with_excess(excess_of_d, dims=(50, 100, 150), n=8, spread=0.004, seed=0):
    rng = np.random.default_rng(seed)
    se_value = solve_se(make_channel("softmax", T=3, beta=1.0), 0.06, 0.5).mmse
    out = []
    for d in dims:
        noise = rng.standard_normal(n)
        noise = (noise - noise.mean()) / noise.std(ddof=1) * spread  # sem exactly spread/sqrt(n)
        out.append([{"error": se_value + excess_of_d(d) + x, "status": "converged"} for x in noise])
    return out


def trend_row(trends, runs):
    return next(r for r in paper1_amp_claims(AMPInputs([], [], trends=trends, trend_runs=runs))
                if r.id.startswith("p1-amp-trend"))


def test_the_held_out_generalisation_error_is_judged_on_its_own_trend():
    from aimrepro.paper1.generalisation import generalisation_curve

    gen = float(generalisation_curve(make_channel("softmax", T=3, beta=1.0), [0.06], 0.5).bayes[0])
    rng = np.random.default_rng(1)
    runs = [[{"error": 0.2, "status": "converged",
              "bayes_generalisation_error": gen + 0.5 / d + 0.003 * rng.standard_normal()} for _ in range(8)]
            for d in (50, 100, 150)]
    rows = {r.id: r for r in paper1_amp_claims(AMPInputs([], [], trends=[trend()], trend_runs=[runs]))}
    row = rows["p1-amp-gen-trend-softmax_T3"]
    assert row.passed and f"SE {gen:.4f}" in row.claim and "d = 150" in row.note
    # the error itself (0.2 everywhere, far above the SE) fails on its own row
    assert rows["p1-amp-trend-softmax_T3"].failed


def test_a_vanishing_one_over_d_excess_passes_and_prints_every_size():
    row = trend_row([trend()], [runs_with_excess(lambda d: 0.8 / d)])
    assert row.passed and abs(row.measured) < 1e-3
    for d in (50, 100, 150):
        assert f"d = {d}: " in row.note
    assert "fit e∞ + b/d" in row.note and "8/8 usable" in row.note


def test_an_excess_that_does_not_vanish_fails_and_an_imprecise_one_is_not_decisive():
    row = trend_row([trend()], [runs_with_excess(lambda d: 0.05 + 0.8 / d)])
    assert row.failed and row.measured == pytest.approx(0.05, abs=2e-3)
    noisy = trend_row([trend()], [runs_with_excess(lambda d: 0.8 / d, spread=0.05)])
    assert noisy.verdict == "informational" and "not decisive" in noisy.note


def test_a_trend_without_sizes_at_the_scale_says_so():
    row = trend_row([trend("hardmax_rho0.2", dims=())], [[]])
    assert row.verdict == "informational" and row.measured == "not measured at this scale"
    with pytest.raises(ValueError, match="trend_runs"):
        paper1_amp_claims(AMPInputs([], [], trends=[trend()], trend_runs=[]))


def test_amp_below_the_bayes_optimal_error_beyond_the_spread_fails_even_at_one_d():
    se_corr = solve_se(make_channel("hardmax", T=2), 0.3122, 0.5).mmse
    rows = {row.id: row for row in paper1_amp_claims(AMPInputs(
        [curve("hardmax")], [table([0.3122], [se_corr - 0.1], [0.001], [se_corr])]))}
    row = rows["p1-amp-se-hardmax"]
    assert row.verdict == "FAIL" and "cannot beat it" in row.note
