"""Figure S2 of paper 1 (beyond the paper): SE generalisation errors beside AMP's held-out errors."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_hex

from aimrepro.figures.paper1_generalisation import (T_COLOURS, draw_figureS2, gen_curve_from_table,
                                                    gen_markers_from_table)
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.generalisation import generalisation_curve


def se_table(channel, T, alphas):
    beta = 1.0 if channel == "softmax" else None
    return generalisation_curve(make_channel(channel, T=T, beta=beta), alphas, 0.5).columns()


def amp_table(alphas, bayes, plugin):
    n = len(alphas)
    return {"alpha": np.asarray(alphas, float), "gen_bayes_mean": np.asarray(bayes, float),
            "gen_bayes_std": np.full(n, 0.01), "gen_mean": np.asarray(plugin, float), "gen_std": np.full(n, 0.01)}


def test_the_figure_draws_both_se_errors_per_curve_and_the_amp_markers_at_their_abscissae():
    soft = gen_curve_from_table(se_table("softmax", 3, np.linspace(0.001, 0.09, 12)), channel="softmax", T=3)
    hard = gen_curve_from_table(se_table("hardmax", 2, np.geomspace(0.03, 3, 12)), channel="hardmax", T=2)
    # the softmax abscissa is alpha (T^2 + T - 2)
    assert soft.x[-1] == pytest.approx(0.09 * 10)
    assert np.all(soft.plugin >= soft.bayes - 1e-12) and np.all(hard.plugin >= hard.bayes - 1e-12)
    markers = [gen_markers_from_table(amp_table([0.06], [0.14], [0.15]), channel="softmax", T=3, d=50),
               gen_markers_from_table(amp_table([0.3122, 1.0], [0.45, np.nan], [0.65, 0.4]),
                                      channel="hardmax", T=2, d=50)]
    fig, n_unconverged, n_points = draw_figureS2([soft, hard], markers)
    assert n_unconverged == 0 and n_points == 5  # the NaN Bayes point is not drawn
    ax_soft, ax_hard = fig.axes[:2]
    soft_lines = [line for line in ax_soft.get_lines() if line.get_marker() == "None"]
    # Bayes (solid) and plug-in (dashed) in the colour of T = 3, exactly the SE values
    solid = next(line for line in soft_lines if line.get_linestyle() == "-")
    dashed = next(line for line in soft_lines if line.get_linestyle() == "--")
    assert to_hex(solid.get_color()) == to_hex(T_COLOURS[3])
    np.testing.assert_allclose(solid.get_ydata(), soft.bayes)
    np.testing.assert_allclose(dashed.get_ydata(), soft.plugin)
    # AMP markers: filled Bayes and hollow plug-in at alpha_T = 0.6
    points = [line for line in ax_soft.get_lines() if line.get_marker() == "s"]
    assert sorted(float(p.get_ydata()[0]) for p in points) == [0.14, 0.15]
    assert all(float(p.get_xdata()[0]) == pytest.approx(0.6) for p in points)
    assert {p.get_markerfacecolor() == "none" for p in points} == {True, False}
    assert ax_hard.get_xscale() == "log"
    hard_points = [line for line in ax_hard.get_lines() if line.get_marker() == "o"]
    assert sorted(y for p in hard_points for y in p.get_ydata()) == [0.4, 0.45, 0.65]
    legend = [t.get_text() for t in ax_soft.get_legend().get_texts()]
    assert "T = 3" in legend and "SE, plug-in g(ĥ)" in legend and "AMP, Bayes prediction" in legend
    assert ax_soft.get_legend().get_title().get_text() == "held-out, d = 50"


def test_a_table_without_the_generalisation_columns_is_refused():
    with pytest.raises(ValueError, match="gen_bayes"):
        gen_curve_from_table({"alpha": np.ones(2)}, channel="softmax", T=2)
