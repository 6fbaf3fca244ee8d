"""aimrepro.figures.style: palette, theory lines with unconverged points, saving with provenance.

What each figure module draws is tested in test_figures_paper1.py and test_figures_paper2.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.figures import style as plotting
from aimrepro.figures.paper1 import SECurve, draw_figure2

META = {"commit": "a" * 40, "dirty": False, "config_hash": "b" * 64, "title": "test figure"}


def curve(channel, rho, n=6, unconverged=()):
    x = np.geomspace(0.1, 10, n)
    converged = np.ones(n, bool)
    converged[list(unconverged)] = False
    return SECurve(channel=channel, rho=rho, x=x, mmse=1 / (1 + x), converged=converged)


def test_paper_colours_follow_rho_order():
    # docs/paper1.md §7: Figure 1 (union of both panels) and Figure 2 palettes.
    figure1 = plotting.rho_colours([0.1, 0.2, 0.5, 1.0, 2.0, 0.05, 5.0])
    assert figure1[0.05] == "#577590" and figure1[0.1] == "#4d908e" and figure1[5.0] == "#f3722c"
    figure2 = plotting.rho_colours([0.1, 0.2, 0.3, 0.5, 1.0, 2.0])
    assert figure2[0.1] == "#577590" and figure2[0.3] == "#43aa8b" and figure2[2.0] == "#f8961e"
    with pytest.raises(ValueError, match="at most 7"):
        plotting.rho_colours(range(1, 9))


def test_plot_theory_breaks_the_line_at_unconverged_points():
    with plotting.figure_style():
        fig, (ax, _) = plotting.new_figure()
        n_bad = plotting.plot_theory(ax, [1, 2, 3, 4], [0.9, 0.8, 0.7, 0.6],
                                     [True, False, True, True], colour="k")
    assert n_bad == 1
    line, markers = ax.get_lines()
    assert math.isnan(line.get_ydata()[1]) and line.get_ydata()[0] == 0.9
    assert list(markers.get_xdata()) == [2.0] and markers.get_markerfacecolor() == "none"
    assert markers.get_markeredgecolor() == "red"
    assert fig.get_size_inches().tolist() == list(plotting.FIGSIZE)


def test_save_figure_is_atomic_and_embeds_provenance(tmp_path):
    fig, _ = draw_figure2([curve("softmax", 0.5), curve("softmax", math.inf)],
                          [curve("softmax", 0.5)])
    pdf, png = tmp_path / "f.pdf", tmp_path / "f.png"
    plotting.save_figure(fig, pdf, png, META)
    expected = {"commit": "a" * 40, "dirty": "False", "config_hash": "b" * 64}
    assert plotting.read_figure_metadata(pdf) == expected
    assert plotting.read_figure_metadata(png) == expected
    from PIL import Image

    with Image.open(png) as image:
        assert image.size == (round(6.8 * plotting.RASTER_DPI), round(2.35 * plotting.RASTER_DPI))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png"]
    # Same figure, same bytes: the PDF carries no creation date.
    first = pdf.read_bytes()
    plotting.save_figure(fig, pdf, png, META)
    assert pdf.read_bytes() == first


def test_save_figure_requires_commit_and_config_hash(tmp_path):
    fig, _ = plotting.new_figure()
    with pytest.raises(ValueError, match="config_hash"):
        plotting.save_figure(fig, tmp_path / "f.pdf", tmp_path / "f.png", {"commit": "x"})
    assert list(tmp_path.iterdir()) == []
