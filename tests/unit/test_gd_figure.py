"""GD markers of Figure 2 right (docs/paper1.md §7): colours per T, diverged draws apart, off-scale points shown."""

from __future__ import annotations

import numpy as np

from aimrepro.figures.paper1 import (GD_AVERAGED_COLOURS, GD_SINGLE_COLOURS, SECurve,
                                     diverged_students, draw_figure2, gd_marker_series)


def gd_table(single, averaged, unclean, n_diverged):
    n = len(single)
    return {"alphaT": np.linspace(0.1, 0.9, n), "single_mean": np.asarray(single, float),
            "single_std": np.full(n, 0.05), "averaged_mean": np.asarray(averaged, float),
            "averaged_std": np.full(n, 0.02), "averaged_unclean_mean": np.asarray(unclean, float),
            "n_diverged": np.asarray(n_diverged)}


def test_gd_markers_use_the_papers_colours_and_keep_diverged_draws_apart():
    table = gd_table([1.6, 1.0, 0.3], [0.9, 0.5, np.nan], [np.nan, np.nan, 0.2], [0, 0, 2])
    single, averaged, unclean = gd_marker_series(table, 4)
    assert (single.marker, single.colour) == ("+", GD_SINGLE_COLOURS[4]) and single.x.size == 3
    assert (averaged.marker, averaged.colour) == ("x", GD_AVERAGED_COLOURS[4]) and averaged.x.size == 2
    assert not unclean.filled and unclean.y.tolist() == [0.2] and unclean.colour == GD_AVERAGED_COLOURS[4]
    assert diverged_students(table) == 2


def test_figure_2_writes_diverged_students_and_points_above_the_panel():
    se = SECurve("softmax", 0.5, np.linspace(0.01, 1, 20), np.linspace(1, 0, 20), np.ones(20, bool))
    table = gd_table([19.0, 1.0], [1.1, 0.5], [np.nan, np.nan], [0, 1])
    fig, n_unconverged = draw_figure2([se], [se], right_markers=gd_marker_series(table, 2), gd_Ts=[2],
                                      gd_note="GD: + single, x mean of K = 8 (d = 50)", n_diverged_students=1)
    title = fig._suptitle.get_text()
    assert n_unconverged == 0
    assert "1 diverged GD student(s)" in title and "1 point(s) above the panel" in title
    legend = fig.axes[1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["GD, T = 2"]
    assert legend.get_title().get_text().startswith("GD: + single")
