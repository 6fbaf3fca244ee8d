"""aimrepro.figures.paper1 on synthetic curves and tables: what each panel draws (docs/paper1.md §7).

Each test draws from small hand-made inputs and checks the artists: the data
and style of every theory line, the simulation markers and their error bars,
axis scales, limits and labels, legend entries and the notes in the title.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import legend_texts, plain_lines, same_colour

from aimrepro.figures.paper1 import (AMP_MARKERS, GD_AVERAGED_COLOURS, GD_SINGLE_COLOURS,
                                     SECurve, amp_marker_series, diverged_students,
                                     draw_figure1, draw_figure2, gd_marker_series,
                                     se_curve_from_table, unconverged_runs)
from aimrepro.figures.style import LINE_WIDTH, RHO_PALETTE

ERROR_LABEL = "Estimation error"


def curve(channel, rho, n=6, unconverged=(), lo=0.1, hi=10):
    x = np.geomspace(lo, hi, n)
    converged = np.ones(n, bool)
    converged[list(unconverged)] = False
    return SECurve(channel=channel, rho=rho, x=x, mmse=1 / (1 + x), converged=converged)


def assert_curve_line(line, curve_, colour, linestyle):
    """A theory line: the curve's x, its error with NaN at unconverged points, its style."""
    np.testing.assert_array_equal(line.get_xdata(), curve_.x)
    np.testing.assert_array_equal(line.get_ydata(), np.where(curve_.converged, curve_.mmse, np.nan))
    assert same_colour(line.get_color(), colour) and line.get_linestyle() == linestyle


def assert_unconverged_markers(line, curve_):
    """Hollow red circles at exactly the unconverged points, no line between them."""
    bad = ~curve_.converged
    np.testing.assert_array_equal(line.get_xdata(), curve_.x[bad])
    np.testing.assert_array_equal(line.get_ydata(), curve_.mmse[bad])
    assert line.get_marker() == "o" and line.get_linestyle() == "None"
    assert line.get_markerfacecolor() == "none" and line.get_markeredgecolor() == "red"


def amp_table(alpha, mean, std, stalled):
    n = len(alpha)
    return {"alpha": np.asarray(alpha, float), "error_mean": np.asarray(mean, float),
            "error_std": np.asarray(std, float), "unconverged_mean": np.asarray(stalled, float),
            "n_runs": np.full(n, 4), "n_converged": np.array([4 - int(np.isfinite(s)) for s in stalled])}


def gd_table(single, averaged, unclean, n_diverged, alphaT=None):
    n = len(single)
    return {"alphaT": np.linspace(0.1, 0.9, n) if alphaT is None else np.asarray(alphaT, float),
            "single_mean": np.asarray(single, float), "single_std": np.full(n, 0.05),
            "averaged_mean": np.asarray(averaged, float), "averaged_std": np.full(n, 0.02),
            "averaged_unclean_mean": np.asarray(unclean, float), "n_diverged": np.asarray(n_diverged)}


# --- Figure 1 -------------------------------------------------------------------------


def test_figure1_draws_each_curve_in_its_channels_style_with_unconverged_points_apart():
    left = [curve("hardmax_paper", 0.5), curve("hardmax", 0.5, unconverged=[2]),
            curve("hardmax_paper", 2.0)]
    right = [curve("hardmax_paper", 0.5, unconverged=[0, 1]), curve("hardmax", 0.0)]
    thresholds = {"hardmax_paper": 0.563, "hardmax": 0.403}
    fig, n_bad = draw_figure1(left, right, thresholds)
    assert n_bad == 3
    assert fig.get_suptitle() == "3 unconverged SE point(s): hollow red circles"
    ax_left, ax_right = fig.axes
    # rho colours in increasing rho, shared by both panels; rho -> 0 in black
    lines = plain_lines(ax_left)
    assert len(lines) == 3 + 1
    assert_curve_line(lines[0], left[0], RHO_PALETTE[0], "-")
    assert_curve_line(lines[1], left[1], RHO_PALETTE[0], "--")
    assert lines[1].get_linewidth() == pytest.approx(0.9 * LINE_WIDTH)  # corrected: thinner
    assert lines[0].get_linewidth() == pytest.approx(LINE_WIDTH)
    assert_unconverged_markers(lines[2], left[1])
    assert_curve_line(lines[3], left[2], RHO_PALETTE[1], "-")
    lines = plain_lines(ax_right)
    # two curves, one set of unconverged markers, two threshold lines
    assert len(lines) == 2 + 1 + 2
    assert_curve_line(lines[0], right[0], RHO_PALETTE[0], "-")
    assert_unconverged_markers(lines[1], right[0])
    assert_curve_line(lines[2], right[1], "black", "--")
    for line, (channel, value) in zip(lines[3:], thresholds.items()):
        assert list(line.get_xdata()) == [value, value]
        assert line.get_linestyle() == {"hardmax_paper": "-", "hardmax": "--"}[channel]
    assert ax_left.containers == [] and ax_right.containers == []
    # axes as in the paper
    assert (ax_left.get_xscale(), ax_left.get_yscale()) == ("log", "log")
    assert ax_left.get_xlim() == pytest.approx((0.03, 10)) and ax_left.get_ylim() == pytest.approx((1e-3, 1.1))
    assert (ax_right.get_xscale(), ax_right.get_yscale()) == ("log", "linear")
    assert ax_right.get_xlim() == pytest.approx((0.1, 20)) and ax_right.get_ylim() == pytest.approx((0, 1.05))
    assert ax_left.get_xlabel() == r"$\alpha = n/d^2$"
    assert ax_right.get_xlabel() == r"$\bar\alpha = \alpha/\rho = n/(dr)$"
    assert ax_left.get_ylabel() == ax_right.get_ylabel() == ERROR_LABEL
    # one legend, on the right: rho, the limit, each channel, the thresholds
    assert ax_left.get_legend() is None
    assert legend_texts(ax_right) == [r"$\rho = 0.5$", r"$\rho = 2$", r"$\rho \to 0$",
                                      "published formula (B1)", "corrected derivative"] + [
        rf"$\bar\alpha_c = {value:.3f}$, {label}" for value, label in
        ((thresholds["hardmax_paper"], "published formula (B1)"), (thresholds["hardmax"], "corrected derivative"))]


def test_figure1_amp_markers_filled_for_converged_runs_hollow_for_stalled_ones():
    table = amp_table([0.1, 0.5, 2.0], [0.8, 0.4, np.nan], [0.05, 0.02, np.nan], [np.nan, 0.6, 0.3])
    series = amp_marker_series(table, rho=0.5, marker=AMP_MARKERS["hardmax"], label="AMP")
    assert [s.filled for s in series] == [True, False]
    assert unconverged_runs(table) == 2
    fig, n_bad = draw_figure1([curve("hardmax", 0.5)], [curve("hardmax", 0.5)], left_markers=series,
                              marker_legend={"AMP, corrected $g_{out}$": "s"}, n_unconverged_runs=2)
    assert n_bad == 0 and fig.get_suptitle() == "2 unconverged simulation run(s): hollow markers"
    ax_left, ax_right = fig.axes
    filled, hollow = ax_left.containers
    line = filled.lines[0]
    assert list(line.get_xdata()) == [0.1, 0.5] and list(line.get_ydata()) == [0.8, 0.4]
    assert line.get_marker() == "s" and same_colour(line.get_color(), RHO_PALETTE[0])
    [bars] = filled.lines[2]
    np.testing.assert_allclose([segment[:, 1] for segment in bars.get_segments()],
                               [[0.75, 0.85], [0.38, 0.42]])
    line = hollow.lines[0]
    assert list(line.get_xdata()) == [0.5, 2.0] and list(line.get_ydata()) == [0.6, 0.3]
    assert line.get_markerfacecolor() == "none" and not hollow.has_yerr
    assert legend_texts(ax_right)[-1] == "AMP, corrected $g_{out}$"
    # no thresholds given: no vertical lines, no legend entry for them
    assert len(plain_lines(ax_right)) == 1
    # a marker series without colour needs a curve of its rho
    with pytest.raises(ValueError, match="rho=1.0"):
        draw_figure1([curve("hardmax", 0.5)], [], left_markers=amp_marker_series(table, rho=1.0))


# --- Figure 2 -------------------------------------------------------------------------


def test_figure2_left_one_line_per_rho_and_the_dashed_infinite_width_line():
    left = [curve("softmax", 0.1), curve("softmax", 1.0, unconverged=[5]), curve("softmax", math.inf)]
    right = [curve("softmax", 0.5, lo=0.01, hi=1)]
    fig, n_bad = draw_figure2(left, right)
    assert n_bad == 1 and fig.get_suptitle() == "1 unconverged SE point(s): hollow red circles"
    ax_left, ax_right = fig.axes
    lines = plain_lines(ax_left)
    assert len(lines) == 3 + 1
    assert_curve_line(lines[0], left[0], RHO_PALETTE[0], "-")
    assert_curve_line(lines[1], left[1], RHO_PALETTE[1], "-")
    assert_unconverged_markers(lines[2], left[1])
    assert_curve_line(lines[3], left[2], "black", "--")
    assert legend_texts(ax_left) == [r"$\rho = 0.1$", r"$\rho = 1$", r"$\rho = \infty$"]
    [line] = plain_lines(ax_right)
    assert_curve_line(line, right[0], "black", "-")
    assert ax_right.get_legend() is None  # no markers, no key
    assert (ax_left.get_xscale(), ax_left.get_yscale()) == ("linear", "linear")
    assert ax_left.get_xlim() == pytest.approx((0, 0.28)) and ax_left.get_ylim() == pytest.approx((0, 1.1))
    assert ax_right.get_xlim() == pytest.approx((0.01, 1.0)) and ax_right.get_ylim() == pytest.approx((0, 2.1))
    assert ax_left.get_xlabel() == r"$\alpha = n/d^2$"
    assert ax_right.get_xlabel() == r"$\bar\alpha_T = \alpha\,(T^2+T-2)$"
    assert ax_left.get_ylabel() == ax_right.get_ylabel() == ERROR_LABEL


def test_figure2_has_no_annotation_when_everything_converged():
    fig, n_bad = draw_figure2([curve("softmax", 0.1), curve("softmax", math.inf)],
                              [curve("softmax", 0.5)])
    assert n_bad == 0 and fig.get_suptitle() == ""


def test_gd_markers_use_the_papers_colours_and_keep_diverged_draws_apart():
    table = gd_table([1.6, 1.0, 0.3], [0.9, 0.5, np.nan], [np.nan, np.nan, 0.2], [0, 0, 2])
    single, averaged, unclean = gd_marker_series(table, 4)
    assert (single.marker, single.colour) == ("+", GD_SINGLE_COLOURS[4]) and single.x.size == 3
    assert (averaged.marker, averaged.colour) == ("x", GD_AVERAGED_COLOURS[4]) and averaged.x.size == 2
    assert not unclean.filled and unclean.y.tolist() == [0.2] and unclean.colour == GD_AVERAGED_COLOURS[4]
    assert diverged_students(table) == 2
    # no unclean draw: two series only; a T without a paper colour is grey
    assert [s.colour for s in gd_marker_series(gd_table([1.0], [0.5], [np.nan], [0]), 7)] == ["0.5", "0.5"]


def test_figure2_right_draws_gd_and_amp_markers_with_a_key_and_marks_points_above_the_panel():
    se = SECurve("softmax", 0.5, np.linspace(0.01, 1, 20), np.linspace(1, 0, 20), np.ones(20, bool))
    table = gd_table([19.0, 1.0], [1.1, 0.5], [np.nan, 0.7], [0, 1], alphaT=[0.2, 0.6])
    amp = amp_marker_series(amp_table([0.1, 0.2], [0.3, 0.0], [0.01, 0.0], [np.nan, np.nan]),
                            x_scale=4.0, colour="k", marker="o", label="AMP, T = 2")
    fig, n_unconverged = draw_figure2(
        [se], [se], right_markers=[*amp, *gd_marker_series(table, 2)], gd_Ts=[2],
        gd_note="GD: + single, x mean of K = 8 (d = 50)", n_diverged_students=1)
    assert n_unconverged == 0
    assert fig.get_suptitle() == ("1 diverged GD student(s): left out, their draws' means hollow; "
                                  "1 point(s) above the panel: triangles at its top edge")
    ax_right = fig.axes[1]
    amp_points, single, averaged, unclean = ax_right.containers
    assert list(amp_points.lines[0].get_xdata()) == pytest.approx([0.4, 0.8])
    assert (single.lines[0].get_marker(), averaged.lines[0].get_marker()) == ("+", "x")
    assert same_colour(single.lines[0].get_color(), GD_SINGLE_COLOURS[2])
    assert same_colour(averaged.lines[0].get_color(), GD_AVERAGED_COLOURS[2])
    assert list(single.lines[0].get_ydata()) == [19.0, 1.0]
    assert unclean.lines[0].get_markerfacecolor() == "none" and list(unclean.lines[0].get_ydata()) == [0.7]
    # the single-GD mean 19 > 2.1 is drawn as a hollow triangle on the top edge
    se_line, triangle = plain_lines(ax_right)
    assert triangle.get_marker() == "^" and triangle.get_markerfacecolor() == "none"
    assert list(triangle.get_xdata()) == [0.2] and list(triangle.get_ydata()) == [2.1]
    legend = ax_right.get_legend()
    assert legend_texts(ax_right) == ["AMP, T = 2", "GD, T = 2"]
    assert legend.get_title().get_text() == "GD: + single, x mean of K = 8 (d = 50)"


def test_figure2_right_draws_the_gd_trend_at_its_largest_d_and_against_one_over_d():
    from aimrepro.figures.paper1 import GDTrend

    se = SECurve("softmax", 0.5, np.linspace(0.01, 1, 20), np.linspace(1, 0, 20), np.ones(20, bool))
    trend = GDTrend(T=4, alphaT=0.153, K=32, se=0.8, d=(75, 100, 150), excess=(0.05, 0.04, 0.03),
                    sem=(0.01, 0.008, 0.006))
    fig, _ = draw_figure2([se], [se], gd_trend=trend)
    ax_right = fig.axes[1]
    (marker,) = ax_right.containers
    # the largest d, at the mean of K: (1 + 1/K) SE + its excess
    assert list(marker.lines[0].get_xdata()) == [0.153]
    assert marker.lines[0].get_ydata()[0] == pytest.approx(0.8 * (1 + 1 / 32) + 0.03)
    assert same_colour(marker.lines[0].get_color(), GD_AVERAGED_COLOURS[4])
    assert "d = 150 (trend)" in legend_texts(ax_right)[0]
    (inset,) = ax_right.child_axes
    (points,) = inset.containers
    assert list(points.lines[0].get_xdata()) == pytest.approx([1 / 75, 1 / 100, 1 / 150])
    assert list(points.lines[0].get_ydata()) == pytest.approx([0.05, 0.04, 0.03])
    zero = [line for line in inset.get_lines() if line.get_linestyle() == "--"]
    assert len(zero) == 1 and list(zero[0].get_ydata()) == [0.0, 0.0]
    assert inset.get_xlabel() == "$1/d$"
    # no trend at a scale without one: no inset
    fig, _ = draw_figure2([se], [se])
    assert not fig.axes[1].child_axes


def test_se_curve_from_table_checks_columns():
    table = {"alphabar": np.array([1.0]), "alpha": np.array([np.nan]),
             "mmse": np.array([0.5]), "converged": np.array([True])}
    built = se_curve_from_table(table, channel="hardmax", rho=0.0, x_column="alphabar")
    assert built.is_limit and built.x.tolist() == [1.0] and built.converged.dtype == bool
    assert not se_curve_from_table(table, channel="softmax", rho=0.5, x_column="alphabar").is_limit
    with pytest.raises(ValueError, match="lacks columns"):
        se_curve_from_table(table, channel="hardmax", rho=0.5, x_column="alphaT")
