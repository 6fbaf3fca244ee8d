"""Figure 1 of paper 1 (docs/paper1.md §7): corrected curves and AMP markers visible, off-axis points marked."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_hex

from aimrepro.figures.paper1 import MarkerSeries, SECurve, draw_figure1, unconverged_runs


def curve(channel, rho, low):
    x = np.geomspace(0.03, 10, 30)
    return SECurve(channel, rho, x, np.geomspace(0.9, low, 30), np.ones(30, bool))


def test_corrected_curves_and_markers_below_the_papers_axis_are_drawn_and_off_axis_points_marked():
    left = [curve("hardmax_paper", 0.5, 0.2), curve("hardmax", 0.5, 0.005)]
    markers = [MarkerSeries(np.array([0.3, 2.7]), np.array([0.38, 0.012]), np.array([0.01, 0.002]),
                            None, None, "s", rho=0.5),
               MarkerSeries(np.array([8.0]), np.array([2e-4]), None, None, None, "s", rho=0.5)]
    fig, n_unconverged = draw_figure1(left, [curve("hardmax", 0.0, 0.01)],
                                      {"hardmax_paper": 0.5633, "hardmax": 0.4034},
                                      left_markers=markers, marker_legend={"AMP, corrected": "s"})
    ax_left, ax_right = fig.axes[:2]
    assert n_unconverged == 0
    low, high = ax_left.get_ylim()
    assert low <= 1e-3 and high >= 1.0  # the corrected curve (down to 0.005) and the 0.012 marker fit
    # the point at 2e-4 is below the axis: a down-triangle on the bottom edge, counted in the title
    edge = [line for line in ax_left.get_lines() if line.get_marker() == "v"]
    assert len(edge) == 1 and edge[0].get_ydata()[0] == low and edge[0].get_xdata()[0] == 8.0
    assert "1 AMP point(s) outside the left panel" in fig._suptitle.get_text()
    # one legend handle per weak-recovery line, in its channel's line style
    legend = ax_right.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    thresholds = [t for t in texts if "alpha_c" in t]
    assert len(thresholds) == 2 and any("0.403" in t for t in thresholds) and any("0.563" in t for t in thresholds)
    styles = {t.get_text(): h.get_linestyle() for t, h in zip(legend.get_texts(), legend.legend_handles)}
    assert {styles[t] for t in thresholds} == {"-", "--"}
    # the markers are coloured as the curves of their rho
    square = next(line for line in ax_left.get_lines() if line.get_marker() == "s")
    solid = next(line for line in ax_left.get_lines() if line.get_linestyle() == "-" and line.get_marker() == "None")
    assert to_hex(square.get_color()) == to_hex(solid.get_color())


def test_stationary_runs_are_usable_not_unconverged():
    table = {"n_runs": np.array([4, 4]), "n_converged": np.array([1, 4]), "n_stationary": np.array([2, 0])}
    assert unconverged_runs(table) == 1
    assert unconverged_runs({"n_runs": np.array([4]), "n_converged": np.array([3])}) == 1


def test_runs_the_erratum_explains_are_said_in_grey_not_as_a_warning():
    from aimrepro.figures.paper1 import published_gout_note
    from aimrepro.figures.style import EXPLAINED_NOTE_COLOUR

    left = [curve("hardmax_paper", 0.5, 0.2), curve("hardmax", 0.5, 0.005)]
    note = published_gout_note(30, 36)
    assert note.startswith("30 of 36 AMP runs with the published g_out diverged, as erratum B1 predicts")
    fig, _ = draw_figure1(left, [curve("hardmax", 0.0, 0.01)], explained_runs=[note])
    grey = [t for t in fig.texts if t.get_text() == note]
    assert len(grey) == 1 and to_hex(grey[0].get_color()) == to_hex(EXPLAINED_NOTE_COLOUR)
    assert "unconverged" not in fig._suptitle.get_text()
    # a real warning stays red, beside the grey note
    fig, _ = draw_figure1(left, [curve("hardmax", 0.0, 0.01)], n_unconverged_runs=1, explained_runs=[note])
    assert fig._suptitle.get_text() == "1 unconverged simulation run(s): hollow markers"
    assert to_hex(fig._suptitle.get_color()) == to_hex("red")
    assert [t.get_text() for t in fig.texts if t.get_text() == note] == [note]
