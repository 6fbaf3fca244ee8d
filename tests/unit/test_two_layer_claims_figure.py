"""Two-layer claims (aimrepro.claims.paper1_two_layer) and the two-layer figure (aimrepro.figures.paper1_two_layer).

Both are pure functions of tables: hand-made inputs, checked on their verdicts,
numbers and drawn artists.  docs/paper1.md §14.
"""

import numpy as np
import pytest

from aimrepro.claims import paper1_two_layer as claims
from aimrepro.claims.table import FAIL, INFORMATIONAL, PASS
from aimrepro.figures import paper1_two_layer as figure

RHO = 0.5
ALPHA = np.array([0.05, 0.1, 0.2, 0.3, 0.36, 0.4])


def _curve(mmse1, mmse2, *, perfect=None, converged=None):
    n = ALPHA.size
    perfect = np.zeros(n, bool) if perfect is None else np.asarray(perfect)
    return {"alpha": ALPHA, "mmse1": np.asarray(mmse1, float), "mmse2": np.asarray(mmse2, float),
            "mmse1_stderr": np.full(n, 1e-3), "mmse2_stderr": np.full(n, 1e-3),
            "mmse1_diagonal": np.asarray(mmse1, float) + 2e-4, "mmse2_diagonal": np.asarray(mmse2, float),
            "corr": np.full(n, -0.03), "kappa2": np.full(n, 2e-3), "F12": np.linspace(0.05, 0.02, n),
            "perfect": perfect, "converged": np.ones(n, bool) if converged is None else np.asarray(converged)}


LIMIT = {"alpha": ALPHA, "mmse1": np.array([1.0, 1.0, 0.95, 0.32, 0.05, 0.0]),
         "mmse2": np.array([0.72, 0.39, 0.0, 0.0, 0.0, 0.0])}


def _threshold(alpha_c, stderr=1e-5):
    return {"alpha_c": alpha_c, "alpha_c_stderr": stderr, "r_star": 11.0, "F11": 1.0, "F22": 1.0, "F12": 0.02,
            "v": 1e-4, "expected": 0.375}


def test_threshold_row_passes_at_the_counting_bound_and_fails_off_it():
    curve = _curve(np.linspace(0.9, 0.0, ALPHA.size), np.linspace(0.8, 0.0, ALPHA.size),
                   perfect=[False] * 5 + [True])
    good = claims.threshold_row(1.0, RHO, _threshold(0.37502), curve)
    assert good.verdict == PASS and good.measured == pytest.approx(0.37502)
    assert "first perfect-recovery alpha 0.4" in good.note and "last converged alpha with MMSE > 0 0.36" in good.note
    assert claims.threshold_row(1.0, RHO, _threshold(0.37)).verdict == FAIL
    # a large standard error widens the check (+ 2 s.e.)
    assert claims.threshold_row(1.0, RHO, _threshold(0.372, stderr=2e-3)).verdict == PASS


def test_large_skip_row_judges_the_rate_between_the_two_largest_skips():
    close = _curve(LIMIT["mmse1"] + [0, 0, -0.06, -0.01, 0, 0], LIMIT["mmse2"] + [0.01, 0.01, 0.03, 0, 0, 0])
    closer = _curve(LIMIT["mmse1"] + [0, 0, -0.01, 0, 0, 0], LIMIT["mmse2"] + [0.001, 0.001, 0.005, 0, 0, 0])
    row = claims.large_skip_row({0.0: close, 10.0: close, 30.0: closer}, LIMIT, RHO)
    assert row.verdict == PASS and row.measured == pytest.approx(0.01 / 0.06)
    assert "at alpha = 0.2" in row.note
    slow = _curve(LIMIT["mmse1"] + [0, 0, -0.04, 0, 0, 0], LIMIT["mmse2"])
    assert claims.large_skip_row({10.0: close, 30.0: slow}, LIMIT, RHO).verdict == FAIL
    single = claims.large_skip_row({0.0: close, 10.0: close}, LIMIT, RHO)
    assert single.verdict == INFORMATIONAL and single.measured == pytest.approx(0.06)


def test_large_skip_row_needs_the_limit_grid():
    with pytest.raises(ValueError):
        claims.large_skip_row({10.0: _curve(LIMIT["mmse1"], LIMIT["mmse2"]), 30.0: _curve(LIMIT["mmse1"], LIMIT["mmse2"])},
                              {**LIMIT, "alpha": ALPHA * 1.1}, RHO)


def _runs(excess1, excess2, n, spread, seed):
    rng = np.random.default_rng(seed)
    return [{"error1": 0.5 + excess1 + spread * rng.standard_normal(), "error2": 0.2 + excess2 + spread * rng.standard_normal(),
             "status": "converged"} for _ in range(n)] + [{"error1": 9.0, "error2": 9.0, "status": "diverged"}]


def test_amp_trend_rows_pass_a_vanishing_excess_and_fail_a_persistent_one():
    vanishing = {d: _runs(4.0 / d, 1.0 / d, 8, 0.004, d) for d in (40, 60, 80, 120)}
    rows = claims.amp_trend_rows(1.0, 0.2, RHO, (0.5, 0.2), (1e-3, 1e-3), vanishing)
    assert [r.verdict for r in rows] == [PASS, PASS]
    assert "d = 40" in rows[0].note and "8/9 usable" in rows[0].note
    persistent = {d: _runs(0.1 + 4.0 / d, 0.0, 8, 0.004, d) for d in (40, 60, 80, 120)}
    assert claims.amp_trend_rows(1.0, 0.2, RHO, (0.5, 0.2), (1e-3, 1e-3), persistent)[0].verdict == FAIL
    noisy = {d: _runs(0.0, 0.0, 3, 0.2, d) for d in (40, 60)}
    assert all(r.verdict == INFORMATIONAL for r in claims.amp_trend_rows(1.0, 0.2, RHO, (0.5, 0.2), (0, 0), noisy))
    assert claims.amp_trend_rows(1.0, 0.2, RHO, (0.5, 0.2), (0, 0), {})[0].measured == "too few usable sizes"


def test_cross_term_quadrature_and_gd_rows_are_informational_with_their_numbers():
    curve = _curve(np.linspace(0.9, 0.1, ALPHA.size), np.linspace(0.8, 0.05, ALPHA.size))
    row = claims.cross_term_row({0.0: curve}, RHO)
    assert row.verdict == INFORMATIONAL and row.measured == pytest.approx(2e-4)
    assert "F12 in [0.020, 0.050]" in row.note
    quadrature = claims.quadrature_row({1.0: {"F11": {"max_abs": 1e-3, "max_z": 2.0}}})
    assert quadrature.verdict == INFORMATIONAL and quadrature.measured == pytest.approx(1e-3)
    gd = [{"skip": 1.0, "alpha": 0.2, "d": 40, "n_inits": 8, "single1": 2.0, "single2": 1.0, "averaged1": 1.0,
           "averaged2": 0.5, "extrapolated1": 0.9 + k * 0.01, "extrapolated2": 0.4, "n_finished": 8,
           "n_diverged": 0, "final_loss": 0.01} for k in range(2)]
    rows = claims.gd_rows(gd, {1.0: curve})
    assert len(rows) == 1 and rows[0].verdict == INFORMATIONAL and rows[0].measured == pytest.approx(0.905)
    assert rows[0].expected == "SE 0.5800, 0.5000"


def test_two_layer_claims_have_unique_ids():
    curve = _curve(np.linspace(0.9, 0.0, ALPHA.size), np.linspace(0.8, 0.0, ALPHA.size), perfect=[False] * 5 + [True])
    rows = claims.two_layer_claims(rho=RHO, curves={0.0: curve, 1.0: curve, 10.0: curve}, limit=LIMIT,
                                   thresholds={c: _threshold(0.375) for c in (0.0, 1.0, 10.0)},
                                   quadrature={1.0: {"F11": {"max_abs": 1e-3, "max_z": 1.0}}})
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids)) and sum(i.startswith("p1x-two-layer-threshold") for i in ids) == 3


# ---------------------------------------------------------------------------
# figure


def _figure(curves, amp=()):
    alpha = np.linspace(0.01, 0.4, 20)
    return figure.draw_two_layer_figure(
        curves, one_layer_alpha=alpha, one_layer_mmse=np.clip(1 - 4 * alpha, 0, 1),
        one_layer_converged=np.ones(alpha.size, bool), limit_alpha=LIMIT["alpha"], limit_mmse1=LIMIT["mmse1"],
        limit_mmse2=LIMIT["mmse2"], thresholds=(0.1875, 0.375), amp=amp)


def test_figure_draws_both_layers_thresholds_and_hollow_unconverged_points():
    curves = [figure.curve_from_table(_curve(np.linspace(0.9, 0.1, ALPHA.size), np.linspace(0.8, 0.05, ALPHA.size),
                                             converged=[True, True, False, True, True, True]), skip=c)
              for c in (0.0, 1.0, 10.0)]
    fig, n_unconverged = _figure(curves)
    assert n_unconverged == 6  # one per curve and panel
    left, right = fig.axes[:2]
    assert left.get_ylabel().startswith("MMSE$_1$") and right.get_ylabel().startswith("MMSE$_2$")
    vertical = [line for line in left.get_lines() if np.allclose(line.get_xdata(), line.get_xdata()[0])
                and len(line.get_xdata()) == 2]
    assert sorted(float(line.get_xdata()[0]) for line in vertical) == [0.1875, 0.375]
    hollow = [line for line in left.get_lines() if line.get_markerfacecolor() == "none"]
    assert hollow and all(line.get_markeredgecolor() == "red" for line in hollow)
    # an unconverged point is never part of a line
    coloured = [line for line in left.get_lines() if line.get_color() == figure.SKIP_COLOURS[0]]
    assert any(np.isnan(line.get_ydata()[2]) for line in coloured)
    labels = [t.get_text() for t in right.get_legend().get_texts()]
    assert labels[:3] == ["c = 0", "c = 1", "c = 10"] and "one layer" in labels


def test_figure_amp_markers_and_their_unsettled_runs():
    curves = [figure.curve_from_table(_curve(np.linspace(0.9, 0.1, ALPHA.size), np.linspace(0.8, 0.05, ALPHA.size)),
                                      skip=1.0)]
    runs = {0.2: [{"error1": 0.6, "error2": 0.2, "status": "converged"},
                  {"error1": 0.62, "error2": 0.22, "status": "stationary"},
                  {"error1": 0.9, "error2": 0.5, "status": "max_iter"}]}
    points = figure.amp_points_from_runs(1.0, runs)
    assert points.mean[0] == pytest.approx([0.61, 0.21]) and points.n_unsettled == 1
    assert points.unsettled_mean[0] == pytest.approx([0.9, 0.5])
    fig, _ = _figure(curves, amp=[points])
    assert "1 unconverged simulation run(s)" in fig._suptitle.get_text()
    left = fig.axes[0]
    hollow = [line for line in left.get_lines() if line.get_markerfacecolor() == "none"
              and line.get_markeredgecolor() != "red"]
    assert len(hollow) == 1 and hollow[0].get_ydata()[0] == pytest.approx(0.9)


def test_an_amp_mean_beyond_the_axis_is_marked_at_its_edge_with_its_value():
    curves = [figure.curve_from_table(_curve(np.linspace(0.9, 0.1, ALPHA.size), np.linspace(0.8, 0.05, ALPHA.size)),
                                      skip=10.0)]
    runs = {0.3: [{"error1": 40.0, "error2": 0.1, "status": "converged"},
                  {"error1": 52.0, "error2": 0.12, "status": "converged"}]}
    fig, _ = _figure(curves, amp=[figure.amp_points_from_runs(10.0, runs)])
    left, right = fig.axes[:2]
    edge = [line for line in left.get_lines() if line.get_marker() == "^"]
    assert len(edge) == 1 and edge[0].get_ydata()[0] == pytest.approx(left.get_ylim()[1])
    assert [t.get_text() for t in left.texts] == ["46"]
    assert not [line for line in right.get_lines() if line.get_marker() == "^"]
    assert "GAMP-RIE off scale (mean)" in [t.get_text() for t in right.get_legend().get_texts()]


def test_figure_refuses_missing_columns_and_no_curve():
    with pytest.raises(ValueError):
        figure.curve_from_table({"alpha": ALPHA}, skip=0.0)
    with pytest.raises(ValueError):
        _figure([])
