"""Claims on hardmax attention with T >= 3 tokens (aimrepro.claims.paper1_hardmax_tokens)."""

import numpy as np
import pytest

from aimrepro.claims import paper1_hardmax_tokens as claims
from aimrepro.paper1 import hardmax_tokens as ht
from aimrepro.paper1.channels import Hardmax2
from aimrepro.paper1.state_evolution import se_curve as exact_se_curve

ALPHAS = np.array([0.1, 0.3, 1.0])


def _exact_fit(T=2, rel_err=1e-3):
    x = ht.table_grid(17)
    F = ht.exact_fisher_t2(1.0 - x * x)
    table = ht.FisherTable(T, x, F, rel_err * F, np.zeros(x.size, int), np.zeros(x.size), np.zeros(x.size), 0, 2)
    return ht.fit_fisher_table(table)


def _exact_columns(rho):
    return {"alpha": ALPHAS, "mmse": np.array([p.mmse for p in exact_se_curve(Hardmax2(), ALPHAS, rho)])}


def test_t2_rows_pass_within_and_fail_beyond_the_standard_error():
    fit = _exact_fit()
    columns = ht.curve_columns(ht.se_curve(fit, ALPHAS, 0.5))
    exact = {0.5: _exact_columns(0.5)}
    [row] = claims.t2_rows([{"T": 2, "rho": 0.5, "columns": columns}], exact)
    assert row.passed and row.measured < 0.1  # an exact table: the fit's error only
    shifted = dict(columns, mmse=columns["mmse"] + 4.0 * columns["mmse_stderr"])
    [row] = claims.t2_rows([{"T": 2, "rho": 0.5, "columns": shifted}], exact)
    assert row.failed and row.measured == pytest.approx(4.0, abs=0.1)
    with pytest.raises(ValueError, match="differ in their alpha grid"):
        claims.t2_rows([{"T": 2, "rho": 0.5, "columns": dict(columns, alpha=2 * ALPHAS)}], exact)


def test_uniqueness_row_counts_roots_and_checks_the_starts():
    row = claims.uniqueness_row(_exact_fit(), [0.5], [0.1, 3.0])
    assert row.passed and row.measured == 1 and "2 (rho, alpha) points" in row.note


def test_ordering_row_needs_a_gap_beyond_the_errors():
    low = {"mmse": np.array([0.5, 0.2]), "mmse_stderr": np.array([0.01, 0.01])}
    high = {"mmse": np.array([0.4, 0.19]), "mmse_stderr": np.array([0.01, 0.01])}
    curves = [{"T": 2, "rho": 0.5, "columns": low}, {"T": 3, "rho": 0.5, "columns": high}]
    row = claims.ordering_row(curves)
    assert row.failed and row.measured == pytest.approx(0.01 / np.hypot(0.01, 0.01))
    assert claims.ordering_row(curves[:1]) is None


def test_large_alpha_law_matches_the_exact_t2_channel():
    fit = _exact_fit()
    for rho in (0.5, 2.0):
        mmse = exact_se_curve(Hardmax2(), [300.0], rho)[0].mmse
        assert mmse / claims.large_alpha_law(300.0, rho, float(fit.G(0.0))) == pytest.approx(1.0, abs=0.01)
    assert claims.denoising_dof(0.5) == 0.75 and claims.denoising_dof(2.0) == 1.0


def _se_point(mmse=0.14, stderr=0.0005):
    return ht.HardmaxSEPoint(3, 0.3, 0.5, 1.5 - mmse, 4.0, mmse, stderr, 2.0, 0.01, 0.9, False, True, 10, 0.0, 1)


def _runs(limit, slope, dims=(40, 80, 160), seeds=6, spread=0.004):
    rng = np.random.default_rng(3)
    return [{"d": d, "status": "stationary", "error": 0.14 + limit + slope / d + spread * rng.standard_normal()}
            for d in dims for _ in range(seeds)]


def test_amp_trend_row_passes_when_the_excess_vanishes_like_one_over_d():
    from aimrepro.claims.paper1_hardmax_tokens_amp import amp_trend_row

    row = amp_trend_row(_runs(0.0, 0.4, spread=0.0005), _se_point())
    assert row.passed and abs(row.measured) < 0.001 and "d = 40" in row.note
    row = amp_trend_row(_runs(0.03, 0.4, spread=0.0005), _se_point())
    assert row.failed and row.measured == pytest.approx(0.03, abs=0.001)
    # the tolerance of every AMP trend row, max(0.1 SE, 0.005) = 0.014, + 2 s.e.(SE) = 0.001
    assert row.tolerance.startswith("|e_inf| <= 0.015 + 2 se(e_inf)")
    row = amp_trend_row(_runs(0.01, 0.4, spread=0.0005), _se_point())
    assert row.passed
    # runs too noisy to resolve that tolerance (s.e.(e∞) > 0.0075): not judged
    row = amp_trend_row(_runs(0.0, 0.4, spread=0.05), _se_point())
    assert row.verdict == "informational" and "not decisive" in row.note


def test_amp_trend_row_ignores_unusable_runs_and_needs_two_sizes():
    from aimrepro.claims.paper1_hardmax_tokens_amp import amp_trend_row

    runs = _runs(0.0, 0.4, spread=0.0005) + [{"d": 40, "status": "max_iter", "error": 9.0}]
    row = amp_trend_row(runs, _se_point())
    assert row.passed and "1 runs neither converged nor stationary" in row.note
    row = amp_trend_row(_runs(0.0, 0.4, dims=(40,)), _se_point())
    assert row.failed and row.measured == "n/a"
