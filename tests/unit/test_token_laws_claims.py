"""Token-law claims and figures (docs/paper1.md §13, docs/paper2.md §10) on hand-made tables."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from aimrepro.claims.paper1_token_laws import paper1_token_laws_claims
from aimrepro.claims.paper2_token_laws import paper2_token_laws_claims
from aimrepro.figures.paper1_token_laws import draw_token_laws_figure, marker_point
from aimrepro.figures.paper2_token_laws import draw_token_laws_dynamics
from aimrepro.model import TokenLaw
from aimrepro.paper1.channels import Hardmax2
from aimrepro.paper1.state_evolution import solve_se
from aimrepro.paper1.token_laws import law_se
from aimrepro.paper2.trajectory import ORDER_NAMES, Trajectory

LAWS = ["gaussian", "rademacher", "sparse_p0.5", "student_t_nu5"]
HARDMAX = dict(name="hm", channel="hardmax", T=2, rho=1.0, alpha=0.6, laws=LAWS, dims=[50, 100, 200])
SOFTMAX = dict(name="sm", channel="softmax", T=2, rho=0.5, alpha=0.075, beta=1.0, laws=LAWS, dims=[50, 100, 200])


def amp_table(errors, statuses=None):
    n = len(errors)
    return {"replicate": np.arange(n), "error": np.asarray(errors, float), "C_hat": np.full(n, 0.3),
            "iterations": np.full(n, 50), "converged": np.ones(n, bool),
            "status": np.array(statuses or ["converged"] * n)}


def tables_for(point, shift_of, *, spread=0.01, paired_noise=0.002, n=8, broken=None):
    """Gaussian errors with a seed spread; each law = Gaussian + its shift + small paired noise (shrinking like 1/d)."""
    rng = np.random.default_rng(1)
    out = {}
    for d in point["dims"]:
        base = 0.3 + spread * rng.standard_normal(n)
        out[("gaussian", d)] = amp_table(base)
        for token in point["laws"][1:]:
            errors = base + shift_of.get(token, 0.0) + 0.5 / d + paired_noise * rng.standard_normal(n)
            statuses = None
            if broken and broken[0] == token and d == broken[1]:
                statuses = ["converged"] * (n - 1) + ["diverged"]
            out[(token, d)] = amp_table(errors, statuses)
    return out


def shifts(point):
    gaussian = solve_se(Hardmax2(), point["alpha"], point["rho"]).mmse
    return {t: law_se(Hardmax2(), point["alpha"], point["rho"], TokenLaw.parse(t)).mmse - gaussian for t in LAWS[1:]}


def by_id(rows):
    return {row.id: row for row in rows}


def test_hardmax_rows_fail_the_gaussian_se_and_pass_the_law_se():
    shift = shifts(HARDMAX)
    theory = {"law": np.array([t for t in LAWS[1:] for _ in range(3)]), "d": np.array([50, 100, 200] * 3),
              "shift": np.array([shift[t] for t in LAWS[1:] for _ in range(3)]), "shift_se": np.full(9, 0.001)}
    rows = by_id(paper1_token_laws_claims([HARDMAX], [tables_for(HARDMAX, shift)], [theory]))
    for token in ("rademacher", "sparse_p0.5"):
        assert rows[f"p1-tokens-amp-hm-{token}-gaussian-se"].verdict == "FAIL"
        note = rows[f"p1-tokens-amp-hm-{token}-gaussian-se"].note
        assert "beyond the tolerance" in note and "from the smallest to the largest d" in note
        law_row = rows[f"p1-tokens-amp-hm-{token}-law-se"]
        assert law_row.verdict == "pass" and law_row.expected == pytest.approx(shift[token])
        assert rows[f"p1-tokens-amp-hm-{token}-law-se-finite-d"].verdict == "pass"
    # E x^6 = inf: the d -> infinity row is not judged on a 1/d trend
    heavy = rows["p1-tokens-amp-hm-student_t_nu5-law-se"]
    assert heavy.verdict == "informational" and "E x^6 = inf" in heavy.note
    assert "p1-tokens-amp-hm-gaussian-gaussian-se" not in rows


def test_softmax_rows_pass_with_zero_shift_and_have_no_law_se_row():
    rows = by_id(paper1_token_laws_claims([SOFTMAX], [tables_for(SOFTMAX, {})]))
    assert {r.verdict for r in rows.values()} == {"pass"}
    assert set(rows) == {f"p1-tokens-amp-sm-{t}-gaussian-se" for t in LAWS[1:]}


def test_a_breakdown_fails_the_row_whatever_the_usable_runs_say():
    rows = by_id(paper1_token_laws_claims([SOFTMAX], [tables_for(SOFTMAX, {}, broken=("student_t_nu5", 100))]))
    row = rows["p1-tokens-amp-sm-student_t_nu5-gaussian-se"]
    assert row.verdict == "FAIL" and "breaks down" in row.note and "d=100: 1 of 8" in row.note


def test_a_noisy_trend_is_informational_and_missing_sizes_are_said():
    rows = by_id(paper1_token_laws_claims([SOFTMAX], [tables_for(SOFTMAX, {}, paired_noise=0.2)]))
    assert rows["p1-tokens-amp-sm-rademacher-gaussian-se"].verdict == "informational"
    assert "not decisive" in rows["p1-tokens-amp-sm-rademacher-gaussian-se"].note
    empty = by_id(paper1_token_laws_claims([SOFTMAX], [{}]))
    assert empty["p1-tokens-amp-sm-sparse_p0.5-gaussian-se"].measured == "not measured at this scale"
    with pytest.raises(ValueError, match="one entry per point"):
        paper1_token_laws_claims([SOFTMAX], [])


def test_two_sizes_leave_the_trend_untested_whatever_its_extrapolation_says():
    two = dict(SOFTMAX, dims=[50, 100])
    rows = by_id(paper1_token_laws_claims([two], [tables_for(two, {})]))
    assert {r.verdict for r in rows.values()} == {"informational"}
    assert all("no degree of freedom" in r.note for r in rows.values())
    runs = {}
    for d in (50, 100):
        runs[("tied", "h2", "gaussian", d)] = [summary(s, 0.5, 0.6, 0.6) for s in range(3)]
        # the law's flow off by 0.05 at d = 50 and 0.08 at d = 100: e∞ + b/d extrapolates to -0.11
        runs[("tied", "h2", "sparse_p0.5", d)] = [summary(s, 0.25 - (0.02 + 3 / d) + 0.001 * s, 0.6, 0.25)
                                                  for s in range(3)]
    law_row = by_id(paper2_token_laws_claims(runs, threshold=0.3))["p2-tokens-tied-h2-sparse_p0.5-law-flow"]
    assert law_row.verdict == "informational" and "no degree of freedom" in law_row.note
    runs.update({("tied", "h2", "sparse_p0.5", 200): [summary(s, 0.25 - (0.02 + 3 / 200) + 0.001 * s, 0.6, 0.25)
                                                      for s in range(3)],
                 ("tied", "h2", "gaussian", 200): [summary(s, 0.5, 0.6, 0.6) for s in range(3)]})
    assert by_id(paper2_token_laws_claims(runs, threshold=0.3))[
        "p2-tokens-tied-h2-sparse_p0.5-law-flow"].verdict != "informational"


def test_gd_rows():
    point = dict(T=4, rho=0.5, alpha=0.153 / 18, alphaT=0.153, beta=1.0, inits=32, laws=LAWS, dims=[50, 75, 100])
    rng = np.random.default_rng(3)
    tables = {}
    for d in point["dims"]:
        base = 0.9 + 0.1 * rng.standard_normal(6)
        for token in LAWS:
            tables[(token, d)] = {"replicate": np.arange(6), "averaged_error": base + 0.004 * rng.standard_normal(6),
                                  "single_error": base + 0.5, "n_diverged": np.zeros(6, int)}
    rows = by_id(paper1_token_laws_claims(gd_point=point, gd_tables=tables))
    assert {r.verdict for r in rows.values()} == {"pass"} and len(rows) == 3


# ---------------------------------------------------------------------------
# paper 2


def summary(seed, sgd, gauss, law, *, end=8.0, blew_up=False):
    return {"seed": seed, "sgd_t_wr": sgd, "sgd_end": end, "blew_up": blew_up, "t_blowup": 0.01 if blew_up else math.nan,
            "gaussian_flow_t_wr": gauss, "gaussian_flow_end": 8.0, "law_flow_t_wr": law, "law_flow_end": 8.0}


def test_paper2_rows():
    runs = {}
    for d in (50, 100, 200):
        runs[("tied", "h2", "gaussian", d)] = [summary(s, 0.5, 0.6, 0.6) for s in range(3)]
        # sparse: SGD follows the law's flow (gap shrinking like 1/d), far from the Gaussian flow
        runs[("tied", "h2", "sparse_p0.5", d)] = [summary(s, 0.25 - 2 / d + 0.001 * s, 0.6, 0.25 + 0.001 * (s % 2))
                                                  for s in range(3)]
        # Rademacher: no SGD run crosses by the horizon, the law's flow neither
        runs[("tied", "h2", "rademacher", d)] = [summary(s, math.nan, 0.6 + 0.01 * s, math.nan, end=2.0)
                                                 for s in range(3)]
        runs[("tied", "h2", "student_t_nu5", d)] = [summary(s, math.nan, 0.6, 0.2, end=0.01, blew_up=True)
                                                    for s in range(3)]
        # a run that blew up after crossing keeps its T_wr: no blow-up verdict
        runs[("direct", "h2", "sparse_p0.5", d)] = [summary(s, 0.6 + 0.002 * s + 1 / d, 0.6, 0.6, blew_up=s == 0)
                                                    for s in range(3)]
        # trapped (direct S): an escape time growing like ln d
        runs[("direct", "h2", "rademacher", d)] = [summary(s, 0.4 * math.log(d) + 0.01 * s, 0.6, 0.6)
                                                   for s in range(3)]
    rows = by_id(paper2_token_laws_claims(runs, threshold=0.3))
    # where the law's flow is trapped, SGD's T_wr must grow with d
    assert rows["p2-tokens-direct-h2-rademacher-trapped"].verdict == "pass"
    assert rows["p2-tokens-direct-h2-rademacher-trapped"].measured.startswith("dT_wr/d ln d = 0.400")
    assert rows["p2-tokens-direct-h2-sparse_p0.5-trapped"].verdict == "FAIL"
    assert rows["p2-tokens-tied-h2-rademacher-trapped"].verdict == "informational"  # every run censored alike
    assert "no replicate spread" in rows["p2-tokens-tied-h2-rademacher-trapped"].note
    assert not any(key.endswith("-trapped") for key in rows if "-tied-h2-sparse" in key or "student_t" in key)
    assert "T_wr does not grow" in rows["p2-tokens-direct-h2-sparse_p0.5-trapped"].note
    noisy = {("direct", "h2", "rademacher", d): [summary(s, 2.0 + (-1) ** (s + d // 50), 0.6, 0.6) for s in range(3)]
             for d in (50, 100, 200)}
    undecided = by_id(paper2_token_laws_claims(noisy, threshold=0.3))["p2-tokens-direct-h2-rademacher-trapped"]
    assert undecided.verdict == "informational" and "not decisive" in undecided.note
    two_sizes = {key: v for key, v in runs.items() if key[3] != 200}
    short = by_id(paper2_token_laws_claims(two_sizes, threshold=0.3))["p2-tokens-direct-h2-rademacher-trapped"]
    assert short.verdict == "informational" and "three sizes" in short.note
    assert rows["p2-tokens-tied-h2-sparse_p0.5-gaussian-flow"].verdict == "FAIL"
    assert rows["p2-tokens-tied-h2-sparse_p0.5-law-flow"].verdict == "pass"
    rademacher = rows["p2-tokens-tied-h2-rademacher-gaussian-flow"]
    assert rademacher.verdict == "FAIL" and "a lower bound" in rademacher.note and "order one" in rademacher.note
    assert rows["p2-tokens-tied-h2-rademacher-law-flow"].verdict == "informational"
    assert rows["p2-tokens-tied-h2-student_t_nu5-gaussian-flow"].verdict == "FAIL"
    assert "E x^8 = inf" in rows["p2-tokens-tied-h2-student_t_nu5-gaussian-flow"].note
    assert rows["p2-tokens-tied-h2-student_t_nu5-law-flow"].verdict == "informational"
    assert not any("gaussian-gaussian" in key for key in rows)
    assert rows["p2-tokens-direct-h2-sparse_p0.5-gaussian-flow"].verdict == "informational"  # trapped: no claim


# ---------------------------------------------------------------------------
# figures


def test_marker_point_drops_unusable_runs():
    mean, sem, n, total = marker_point(amp_table([0.2, 0.4, 9.0], ["converged", "stationary", "diverged"]))
    assert (n, total) == (2, 3) and mean == pytest.approx(0.3) and sem == pytest.approx(0.1)


def test_paper1_figure_draws_curves_markers_and_the_dropped_runs():
    curves = {t: {"alpha": np.geomspace(0.1, 3, 20), "mmse": np.linspace(0.9, 0.05, 20) + 0.02 * i,
                  "converged": np.ones(20, bool)} for i, t in enumerate(LAWS)}
    soft = {"alphaT": np.linspace(0.01, 1, 30), "mmse": np.linspace(1, 0, 30), "converged": np.ones(30, bool)}
    gd_point = dict(T=4, alphaT=0.153, inits=32, laws=LAWS)
    gd_tables = {(t, 100): {"replicate": np.arange(3), "averaged_error": np.full(3, 0.9), "n_diverged": np.zeros(3)}
                 for t in LAWS}
    fig, n_unconverged = draw_token_laws_figure(
        hardmax_point=HARDMAX, hardmax_curves=curves, hardmax_tables=tables_for(HARDMAX, shifts(HARDMAX)),
        softmax_curve=soft, softmax_points=[SOFTMAX], softmax_tables=[tables_for(SOFTMAX, {}, broken=("student_t_nu5", 200))],
        gd_point=gd_point, gd_tables=gd_tables)
    left, right = fig.axes[:2]
    assert n_unconverged == 0
    assert len(left.get_lines()) >= len(LAWS)  # one SE per law
    dashed = [line for line in left.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 3  # the three laws' corrected SEs
    assert "Student-t" in fig._suptitle.get_text() and "1 of 8" in fig._suptitle.get_text()
    labels = [t.get_text() for t in right.get_legend().get_texts()]
    assert "SE with the law's diagonal variance (ours)" in labels and "Rademacher" in labels
    with pytest.raises(ValueError, match="Gaussian SE curve"):
        draw_token_laws_figure(hardmax_point=HARDMAX, hardmax_curves={}, hardmax_tables={}, softmax_curve=soft,
                               softmax_points=[], softmax_tables=[])


def trajectory(times, overlap, *, blew_up=False):
    n = times.size
    order = np.zeros((n, len(ORDER_NAMES)))
    names = list(ORDER_NAMES)
    order[:, names.index("t1")] = 0.4
    order[:, names.index("t2")] = 0.4
    q22 = 0.5
    p22 = q22 - 0.16
    order[:, names.index("Psi22")] = order[:, names.index("Omega22")] = q22
    order[:, names.index("Psi11")] = order[:, names.index("Omega11")] = q22
    order[:, names.index("Psi12")] = order[:, names.index("Omega12")] = 0.16 + overlap * p22
    return Trajectory(times, order, 100, blew_up, times[-1] if blew_up else math.nan, {})


def test_a_gap_far_beyond_the_tolerance_fails_even_when_its_extrapolation_is_not_precise():
    # tied W (its flows not trapped): a gap growing away from 0 with d, too noisy for s.e.(e∞) <= tolerance/2,
    # and within the tolerance at d = 50 (so the order-one rule does not apply)
    gap = {50: -0.05, 100: -0.20, 150: -0.25}
    runs = {("tied", "h2", "sparse_p0.5", d): [summary(s, 0.6 + g + 0.05 * (-1) ** s, 0.6, 0.6 + g) for s in range(6)]
            for d, g in gap.items()}
    gaussian = by_id(paper2_token_laws_claims(runs, threshold=0.3))["p2-tokens-tied-h2-sparse_p0.5-gaussian-flow"]
    assert gaussian.verdict == "FAIL" and "beyond the tolerance by more than two s.e." in gaussian.note
    assert "order one" not in gaussian.note and "not decisive" not in gaussian.note


def test_the_gaps_to_a_trapped_flow_are_reported_without_a_verdict():
    # direct S: both flows trapped; a gap far beyond the tolerance is still no claim (the -trapped row is)
    runs = {("direct", "h2", "sparse_p0.5", d): [summary(s, 0.4 + 0.02 * s + 1.0 / d, 1.05, 0.45) for s in range(6)]
            for d in (50, 100, 150)}
    rows = by_id(paper2_token_laws_claims(runs, threshold=0.3))
    for flow in ("gaussian-flow", "law-flow"):
        row = rows[f"p2-tokens-direct-h2-sparse_p0.5-{flow}"]
        assert row.verdict == "informational" and "no claim" in row.note and "fit e∞ + b/d" in row.note
    assert rows["p2-tokens-direct-h2-sparse_p0.5-trapped"].verdict == "FAIL"  # flat T_wr: not trapped after all


def test_a_size_where_most_runs_blow_up_leaves_the_trend():
    runs = {("tied", "h2", "sparse_p0.5", d): [summary(s, 0.25 + 0.001 * s + 0.5 / d, 0.6, 0.25) for s in range(4)]
            for d in (100, 150, 200)}
    # d = 50: three of four runs blow up; the survivor is far off (a selected sample)
    runs[("tied", "h2", "sparse_p0.5", 50)] = [summary(0, 0.9, 0.6, 0.25)] + [
        summary(s, math.nan, 0.6, 0.25, end=0.01, blew_up=True) for s in range(1, 4)]
    row = by_id(paper2_token_laws_claims(runs, threshold=0.3))["p2-tokens-tied-h2-sparse_p0.5-law-flow"]
    assert row.verdict == "pass" and "left out of the trend" in row.note and "d=50" in row.note
    assert "d = 50:" not in row.note  # no gap at d = 50 in the fit
    two = {key: v for key, v in runs.items() if key[3] in (50, 100)}
    one_left = by_id(paper2_token_laws_claims(two, threshold=0.3))["p2-tokens-tied-h2-sparse_p0.5-law-flow"]
    assert one_left.verdict == "informational" and one_left.measured == "fewer than two sizes"
    assert "horizon" not in one_left.note
    # at the largest d the same blow-ups fail the row instead (SGD follows no flow)
    runs[("tied", "h2", "sparse_p0.5", 200)] = runs[("tied", "h2", "sparse_p0.5", 50)]
    assert by_id(paper2_token_laws_claims(runs, threshold=0.3))[
        "p2-tokens-tied-h2-sparse_p0.5-gaussian-flow"].verdict == "FAIL"


def test_a_run_away_state_is_a_blow_up_and_its_crossing_does_not_count():
    from aimrepro.paper2.analysis import law_run_summary, recovery_before_runaway, runaway_time

    t = np.linspace(0, 1, 11)
    sane = trajectory(t, 0.6 * t)
    wild = trajectory(t, 0.01 + 0 * t)
    wild.order[5:, list(ORDER_NAMES).index("Psi11")] = 1e4  # the student's norm explodes at t = 0.5
    wild.order[5:, list(ORDER_NAMES).index("Psi12")] = 1e3  # ... and drags |p12|/p22 over any threshold
    assert math.isnan(runaway_time(sane)) and runaway_time(wild) == pytest.approx(0.5)
    summary_wild = law_run_summary(0, wild, sane, sane, 0.3)
    assert summary_wild["blew_up"] and math.isnan(summary_wild["sgd_t_wr"])
    summary_sane = law_run_summary(0, sane, sane, sane, 0.3)
    assert not summary_sane["blew_up"] and summary_sane["sgd_t_wr"] == pytest.approx(0.5)
    # the helper `aimrepro sgd` reports with: the plain first crossing would be the runaway itself
    assert 0.4 < wild.weak_recovery_time(0.3) <= 0.5
    t_wr, away = recovery_before_runaway(wild, 0.3)
    assert math.isnan(t_wr) and away == pytest.approx(0.5)
    assert recovery_before_runaway(sane, 0.3)[0] == pytest.approx(0.5)
    late = trajectory(t, 0.6 * t)
    late.order[8:, list(ORDER_NAMES).index("Psi11")] = 1e4  # recovered at 0.5, ran away at 0.8: a valid T_wr
    assert recovery_before_runaway(late, 0.3) == pytest.approx((0.5, 0.8))


def test_paper2_figure_draws_sgd_flows_and_blowups():
    t = np.linspace(0, 2, 21)
    sgd = {("tied", "rademacher"): [trajectory(t, 0.01 * t)], ("tied", "student_t_nu5"): [trajectory(t[:2], 0 * t[:2], blew_up=True)],
           ("direct", "sparse_p0.5"): [trajectory(t, 0.3 * t)]}
    law_flows = {("tied", "rademacher"): [trajectory(t, 0.005 * t)], ("direct", "sparse_p0.5"): [trajectory(t, 0.25 * t)]}
    fig = draw_token_laws_dynamics(sgd, law_flows, {"tied": [trajectory(t, 0.4 * t)]},
                                   dims={"tied": 100, "direct": 50}, threshold=0.3)
    tied, direct = fig.axes[:2]
    styles = [line.get_linestyle() for line in tied.get_lines()]
    assert ":" in styles and "--" in styles  # the Gaussian flow, the law's flow
    assert any(line.get_marker() == "x" for line in tied.get_lines())  # the blow-up
    assert fig._suptitle.get_text() == r"SGD runs that blew up or ran away (×): tied Student-t, $\nu$ = 5: 1/1"
    assert np.allclose(direct.get_lines()[0].get_ydata(), 0.3 * t[1:])
    assert tied.get_title().endswith("d = 100") and direct.get_title().endswith("d = 50")
    # log time from the first record after 0 (t = 0.1 here); the t = 0 record is not drawn
    assert tied.get_xscale() == direct.get_xscale() == "log" and "log" in tied.get_xlabel()
    assert direct.get_xlim() == pytest.approx((0.05, 2.0))
    drawn = [line for line in tied.get_lines() + direct.get_lines() if list(line.get_ydata()) != [0.3, 0.3]]
    assert drawn and all(min(line.get_xdata()) > 0 for line in drawn if len(line.get_xdata()))
    # a blow-up before the first record (Student-t within a few steps) widens the axis to show its cross
    early = dataclasses.replace(trajectory(np.array([0.0]), np.array([0.0]), blew_up=True), t_blowup=0.004)
    fig = draw_token_laws_dynamics({**sgd, ("tied", "student_t_nu5"): [early]}, law_flows,
                                   {"tied": [trajectory(t, 0.4 * t)]}, dims={"tied": 100, "direct": 50}, threshold=0.3)
    tied, direct = fig.axes[:2]
    assert tied.get_xlim()[0] == pytest.approx(0.002) and direct.get_xlim()[0] == pytest.approx(0.05)
    # a trapped law flow that runs past every SGD run sets the axis' end
    late = trajectory(np.linspace(0, 3, 31), 0.001 * np.linspace(0, 3, 31))
    fig = draw_token_laws_dynamics(sgd, {**law_flows, ("tied", "rademacher"): [late]},
                                   {"tied": [trajectory(t, 0.4 * t)]}, dims={"tied": 100, "direct": 50}, threshold=0.3)
    assert fig.axes[0].get_xlim()[1] == pytest.approx(3.0)
