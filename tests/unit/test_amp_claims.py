"""AMP claims rows (aimrepro.claims.paper1_amp): pass/fail logic on synthetic summary tables."""

from __future__ import annotations

import numpy as np

from aimrepro.claims.paper1_amp import paper1_amp_claims
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.state_evolution import solve_se


def table(alphas, means, stds, se, *, n_runs=4, n_converged=4, error_max=None, n_diverged=0):
    k = len(alphas)
    return {"alpha": np.array(alphas, float), "error_mean": np.array(means, float),
            "error_std": np.array(stds, float), "se_mmse": np.array(se, float),
            "n_runs": np.full(k, n_runs), "n_converged": np.full(k, n_converged),
            "n_diverged": np.full(k, n_diverged),
            "error_max": np.array(error_max if error_max is not None else means, float)}


def curve(channel, T=2, rho=0.5):
    return {"channel": channel, "T": T, "rho": rho, "d": 50, "seeds": [0, 1, 2, 3]}


def test_rows_pass_when_amp_follows_se_and_beats_the_published_curve():
    se_corr = solve_se(make_channel("hardmax", T=2), 0.3122, 0.5).mmse
    curves = [curve("hardmax"), curve("softmax"), curve("hardmax_paper")]
    tables = [table([0.3122], [se_corr + 0.01], [0.02], [se_corr]),
              table([0.1, 0.25], [0.40, 5e-5], [0.02, 1e-5], [0.39, 0.0]),
              table([0.3122], [0.62], [0.03], [0.62])]
    rows = {row.id: row for row in paper1_amp_claims(curves, tables)}
    assert set(rows) == {"p1-amp-se-hardmax", "p1-amp-se-softmax", "p1-amp-softmax-perfect-recovery",
                         "p1-amp-se-hardmax_paper", "p1-amp-beats-published-hardmax",
                         "p1-amp-published-style-dot"}
    assert all(row.passed for row in rows.values()), [r for r in rows.values() if not r.passed]
    assert rows["p1-amp-softmax-perfect-recovery"].measured == 5e-5


def test_rows_fail_honestly():
    curves = [curve("hardmax"), curve("softmax")]
    tables = [table([0.3122], [0.7], [0.01], [0.37]),
              table([0.25], [0.02], [0.01], [0.0], error_max=[0.05])]
    rows = {row.id: row for row in paper1_amp_claims(curves, tables)}
    assert not rows["p1-amp-se-hardmax"].passed and rows["p1-amp-se-hardmax"].measured == 0.0
    assert not rows["p1-amp-softmax-perfect-recovery"].passed
    assert not rows["p1-amp-beats-published-hardmax"].passed
    assert "published formula SE" in rows["p1-amp-beats-published-hardmax"].note


def test_points_without_converged_runs_are_not_counted_as_agreement():
    rows = paper1_amp_claims([curve("hardmax", rho=1.0)],
                             [table([0.3], [np.nan], [np.nan], [0.49], n_converged=0)])
    row = next(r for r in rows if r.id == "p1-amp-se-hardmax")
    assert not row.passed and "skipped" in row.note
