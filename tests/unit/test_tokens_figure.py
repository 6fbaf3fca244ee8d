"""Figure S1 of paper 1 (aimrepro.figures.paper1_tokens): what is drawn, checked on the artists."""

import numpy as np
import pytest
from matplotlib.collections import PolyCollection

from aimrepro.figures.paper1 import SECurve
from aimrepro.figures.paper1_tokens import (TokensCurve, draw_figure_s1, t2_deviation,
                                            tokens_curve_from_table)

ALPHA = np.geomspace(0.03, 10, 6)


def _curves():
    exact = SECurve("hardmax", 0.5, ALPHA, 1.0 / (1.0 + 3 * ALPHA), np.ones(6, bool))
    stderr = 0.01 * exact.mmse
    offsets = np.array([0.5, -1.0, 0.0, 1.5, -0.5, 3.0])  # in standard errors
    t2 = TokensCurve(2, 0.5, ALPHA, exact.mmse + offsets * stderr, stderr, np.zeros(6, bool), np.ones(6, bool))
    t3_mmse = 0.5 / (1.0 + 8 * ALPHA)
    t3 = TokensCurve(3, 0.5, ALPHA, t3_mmse, 0.02 * t3_mmse, np.array([0, 0, 0, 0, 1, 1], bool),
                     np.ones(6, bool))
    return exact, t2, t3, offsets


def test_figure_s1_draws_curves_bands_extrapolated_points_and_the_t2_check():
    exact, t2, t3, offsets = _curves()
    fig, n_unconverged = draw_figure_s1([t2, t3], [exact])
    ax, ax_check = fig.axes
    assert n_unconverged == 0
    lines = ax.get_lines()
    # exact T = 2 line, T = 2 table dots, T = 3 dashed line, T = 3 extrapolated hollow markers
    assert len(lines) == 4
    exact_line, dots, dashed, hollow = lines
    assert np.allclose(exact_line.get_ydata(), exact.mmse) and exact_line.get_linestyle() == "-"
    assert dots.get_linestyle() == "None" and np.allclose(dots.get_ydata(), t2.mmse)
    assert dashed.get_linestyle() == "--" and np.allclose(dashed.get_ydata(), t3.mmse)
    assert np.allclose(hollow.get_xdata(), ALPHA[4:]) and hollow.get_markerfacecolor() == "none"
    # one ±2 s.e. band per tabulated curve, spanning exactly mmse ± 2 stderr
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2
    vertices = bands[1].get_paths()[0].vertices
    assert vertices[:, 1].max() == pytest.approx(np.max(t3.mmse + 2 * t3.mmse_stderr))
    assert vertices[:, 1].min() == pytest.approx(np.min(t3.mmse - 2 * t3.mmse_stderr))
    # right panel: the T = 2 deviations in standard errors
    [check] = [line for line in ax_check.get_lines() if len(line.get_xdata()) == ALPHA.size]
    assert np.allclose(check.get_ydata(), offsets)
    labels = [text.get_text() for text in ax_check.get_legend().get_texts()]
    assert "T = 3" in labels and "fit extrapolated" in labels and any("exact" in label for label in labels)


def test_t2_deviation_needs_matching_curves():
    exact, t2, t3, offsets = _curves()
    assert np.allclose(t2_deviation(t2, exact), offsets)
    with pytest.raises(ValueError, match="T = 2 table curve"):
        t2_deviation(t3, exact)
    shifted = SECurve("hardmax", 0.5, ALPHA * 1.1, exact.mmse, exact.converged)
    with pytest.raises(ValueError, match="share their alpha grid"):
        t2_deviation(t2, shifted)


def test_unconverged_points_are_counted_and_tables_checked():
    exact, t2, t3, _ = _curves()
    bad = TokensCurve(3, 0.5, ALPHA, t3.mmse, t3.mmse_stderr, t3.extrapolated, np.array([1, 1, 0, 1, 1, 1], bool))
    _, n_unconverged = draw_figure_s1([bad], [])
    assert n_unconverged == 1
    with pytest.raises(ValueError, match="lacks columns \\['mmse_stderr'\\]"):
        tokens_curve_from_table({"alpha": ALPHA, "mmse": t3.mmse, "extrapolated": t3.extrapolated,
                                 "converged": t3.converged}, T=3, rho=0.5)
    with pytest.raises(ValueError, match="at least one"):
        draw_figure_s1([], [exact])


def test_long_curves_show_at_most_max_markers():
    from aimrepro.figures.paper1_tokens import MAX_MARKERS

    alpha = np.geomspace(0.03, 10, 128)
    mmse = 1.0 / (1.0 + 3 * alpha)
    exact = SECurve("hardmax", 0.5, alpha, mmse, np.ones(128, bool))
    t2 = TokensCurve(2, 0.5, alpha, mmse, 0.01 * mmse, alpha > 1.0, np.ones(128, bool))
    fig, _ = draw_figure_s1([t2], [exact])
    _, dots, hollow = fig.axes[0].get_lines()
    assert len(dots.get_xdata()) <= MAX_MARKERS and len(hollow.get_xdata()) <= MAX_MARKERS
    assert np.all(np.asarray(hollow.get_xdata()) > 1.0)
