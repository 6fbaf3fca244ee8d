"""Paper 2's figure modules on synthetic trajectories and tables: what each panel draws (docs/paper2.md §6).

aimrepro.figures.paper2_dynamics (Figures 2, S1–S3), paper2_moments (Figures
1, 4, S6) and paper2_untied (Figures 3, S4, S5).  The inputs are built by hand
so that every drawn value is known: the tests check the data of the lines
and markers, their error bars, where runs that blew up or left the PSD cone
are marked, axis scales and labels, legend entries and the notes in the title.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.collections import QuadMesh

from conftest import (legend_texts, plain_lines, same_colour, tied_trajectory, untied_trajectory, xdata,
                      xy, ydata, yerr_of)

from aimrepro.figures.paper2_dynamics import (LINK_COLOURS, PARAM_TITLES, draw_figure2, draw_figure_s1,
                                              draw_figure_s2, draw_figure_s3, mean_over_runs)
from aimrepro.figures.paper2_moments import draw_figure_s6, draw_truncation_figure, order_colours
from aimrepro.figures.paper2_untied import draw_figure3, draw_figure_s4, draw_figure_s5
from aimrepro.figures.style import RHO_PALETTE
from aimrepro.paper2.trajectory import Trajectory

#: tied_trajectory's overlap ratio is p12 / (q22 - t2^2) = p12 / 0.34
P22 = 0.34


# --- paper2_dynamics -------------------------------------------------------------------


def test_mean_over_runs_uses_the_runs_that_reached_each_record():
    t = np.linspace(0, 1.0, 11)
    good = tied_trajectory(t, 0.5 * t)
    blown = tied_trajectory(t[:4], 0.5 * t[:4], blew_up=True)
    t_mean, mean, std, count = mean_over_runs([good, blown])
    assert count.tolist() == [2] * 4 + [1] * 7 and mean[-1] == pytest.approx(0.5 / P22, rel=1e-9)
    np.testing.assert_array_equal(t_mean, t)
    with pytest.raises(ValueError, match="share their time grid"):
        mean_over_runs([good, tied_trajectory(t + 0.05, 0.5 * t)])


def test_figure2_sgd_markers_flow_lines_and_blowups_per_parametrisation():
    t = np.linspace(0, 1.0, 11)
    fast, slow = tied_trajectory(t, P22 * t), tied_trajectory(t, P22 * 0.5 * t)  # overlaps t, t/2
    blown = tied_trajectory(t[:4], P22 * t[:4], blew_up=True)                     # blows up at 0.31
    runs = {("tied", "h1"): [fast, slow], ("tied", "h2"): [fast, blown], ("direct", "h1"): [slow]}
    flows = {("tied", "h1"): [fast], ("direct", "h1"): [fast, slow], ("direct", "h2"): [fast, blown]}
    fig, diagnostics = draw_figure2(runs, flows, ["h1", "h2"], threshold=0.3, n_markers=5)
    assert diagnostics == {"n_blowups": 1, "n_flow_blowups": 1}
    assert fig.get_suptitle() == "1 SGD run(s) blew up: red crosses at the last finite value"
    tied, direct = fig.axes
    every_other = t[::2]  # 11 records, about 5 markers: every second one
    # tied: mean and sample s.d. of the overlaps over replicates
    h1, h2 = tied.containers
    assert [c.get_label() for c in (h1, h2)] == ["h1 SGD", "h2 SGD"]
    x, y = xy(h1.lines[0])
    np.testing.assert_allclose(x, every_other)
    np.testing.assert_allclose(y, 0.75 * every_other)
    np.testing.assert_allclose(yerr_of(h1), np.std([every_other, every_other / 2], axis=0, ddof=1),
                               atol=1e-12)
    assert same_colour(h1.lines[0].get_color(), LINK_COLOURS["h1"])
    assert same_colour(h2.lines[0].get_color(), LINK_COLOURS["h2"])
    flow, cross, threshold = plain_lines(tied)
    assert xy(cross) == ([pytest.approx(0.31)], [pytest.approx(0.3)])
    assert cross.get_marker() == "x" and cross.get_color() == "red"
    np.testing.assert_allclose(ydata(flow), t)
    assert list(threshold.get_ydata()) == [0.3, 0.3] and threshold.get_linestyle() == "--"
    # direct: one SGD curve; the h2 flows are drawn only where both reached
    [h1] = direct.containers
    np.testing.assert_allclose(ydata(h1.lines[0]), every_other / 2)
    flow_h1, flow_h2, _ = plain_lines(direct)
    np.testing.assert_allclose(ydata(flow_h1), 0.75 * t)
    np.testing.assert_allclose(xdata(flow_h2), t[:4])
    assert same_colour(flow_h2.get_color(), LINK_COLOURS["h2"])
    assert [ax.get_title() for ax in (tied, direct)] == [PARAM_TITLES["tied"], PARAM_TITLES["direct"]]
    assert tied.get_ylabel() == r"overlap $|p_{12}|/p_{22}$" and direct.get_ylabel() == ""
    assert tied.get_xlabel() == direct.get_xlabel() == r"time $t$ (ODE units)"
    assert tied.get_ylim() == pytest.approx((-0.03, 1.1))
    assert tied.get_legend() is None and legend_texts(direct) == ["h1", "h2", "SGD",
                                                                  r"flow ($d\to\infty$ eqs.)"]


def theorem1_row(d):
    return {"d": d, "op_over_frob": 0.3 / math.sqrt(d / 50), "softmax_mc": 0.1 - 1e-3 * 50 / d,
            "softmax_mc_stderr": 1e-5 if d < 200 else 1e-3, "softmax_phi": 0.1, "linear_plain": 2.0 + 1e-3,
            "linear_plain_stderr": 1e-3, "linear_phi": 2.0}


def test_figure_s1_loss_ratio_and_the_gap_against_d():
    dims = [50, 100, 200]
    fig = draw_figure_s1([theorem1_row(d) for d in reversed(dims)], ["softmax", "linear"])
    left, right = fig.axes
    softmax, linear = left.containers
    assert [c.get_label() for c in (softmax, linear)] == ["softmax", "linear"]
    np.testing.assert_allclose(xdata(softmax.lines[0]), dims)        # sorted by d
    np.testing.assert_allclose(ydata(softmax.lines[0]), [0.99, 0.995, 0.9975])
    np.testing.assert_allclose(ydata(linear.lines[0]), 1.0005)
    np.testing.assert_allclose(yerr_of(linear), 5e-4)
    [one] = plain_lines(left)
    assert list(one.get_ydata()) == [1.0, 1.0]
    # the gap of the linear link is Monte-Carlo noise only: not drawn on the right
    [gap] = right.containers
    np.testing.assert_allclose(ydata(gap.lines[0]), [1e-2, 5e-3, 2.5e-3])
    # an error bar longer than the gap would reach below zero on the log axis: clipped
    np.testing.assert_allclose(yerr_of(gap), [1e-4, 1e-4, 0.99 * 2.5e-3])
    np.testing.assert_allclose(yerr_of(softmax), [1e-4, 1e-4, 1e-2])
    [guide] = plain_lines(right)
    np.testing.assert_allclose(ydata(guide), 1e-2 * np.sqrt(50 / np.array(dims)))
    assert guide.get_linestyle() == "--"
    assert right.get_yscale() == "log"
    for ax in (left, right):
        assert ax.get_xscale() == "log" and ax.get_xlabel() == "$d$"
        assert list(ax.get_xticks()) == dims
        assert [label.get_text() for label in ax.get_xticklabels()] == ["50", "100", "200"]
    assert left.get_ylabel() == r"finite-$d$ loss / $\Phi(q)$"
    assert right.get_ylabel() == r"$|L_d - \Phi(q)|/\Phi(q)$"
    assert legend_texts(left) == ["softmax", "linear"]
    assert legend_texts(right) == [r"$\propto \|S\|_{op}/\|S\|_F$", "softmax"]  # lines first


def landscape(phi_of, q22=1.0):
    """A landscape table on a 3 x 5 grid of (q11, q12); NaN outside |q12| <= sqrt(q11 q22)."""
    q11, q12 = (a.ravel() for a in np.meshgrid([0.5, 1.0, 1.5], [-1.0, -0.5, 0.0, 0.5, 1.0]))
    phi = np.where(np.abs(q12) <= np.sqrt(q11 * q22) + 1e-12, phi_of(q11, q12), np.nan)
    return {"q11": q11, "q12": q12, "q22": np.full(q11.size, q22),
            "cosine": q12 / np.sqrt(q11 * q22), "phi": phi}


def test_figure_s2_profiles_at_equal_norms_and_the_heatmap_with_its_special_points():
    tables = {"linear": landscape(lambda a, b: 2 + a - 2 * b),
              "softmax": landscape(lambda a, b: 1 + (a - b) ** 2)}
    fig = draw_figure_s2(tables, rho=0.5, heatmap_link="linear")
    left, right, colourbar = fig.axes
    linear, softmax, tied, direct = plain_lines(left)
    np.testing.assert_allclose(xdata(linear), [-1, -0.5, 0, 0.5, 1])
    np.testing.assert_allclose(ydata(linear), (3 - 2 * np.array([-1, -0.5, 0, 0.5, 1])) / 3)
    np.testing.assert_allclose(ydata(softmax), (1 + (1 - np.array([-1, -0.5, 0, 0.5, 1])) ** 2) / 2)
    assert same_colour(softmax.get_color(), LINK_COLOURS["softmax"])
    assert list(tied.get_xdata()) == [pytest.approx(1 / 3)] * 2 and tied.get_linestyle() == "--"
    assert list(direct.get_xdata()) == [0, 0] and direct.get_linestyle() == ":"
    assert [text.get_text() for text in left.texts] == [" tied init", " direct init"]
    assert legend_texts(left) == ["linear", "softmax"]
    [mesh] = [c for c in right.collections if isinstance(c, QuadMesh)]
    drawn = mesh.get_array()
    # rows q12 = -1 .. 1, columns q11 = 0.5, 1, 1.5; |q12| > sqrt(q11 q22) is left blank
    assert drawn.shape == (5, 3) and np.ma.count_masked(drawn) == 2
    assert drawn.mask[0, 0] and drawn.mask[4, 0]
    assert drawn[2, 1] == pytest.approx(3.0)                  # q11 = 1, q12 = 0
    assert colourbar.get_ylabel() == r"$\Phi$ (linear)"
    upper, lower, tied_point, direct_point, minimum = plain_lines(right)
    np.testing.assert_allclose(ydata(upper), -np.asarray(lower.get_ydata()))
    assert upper.get_ydata()[-1] == pytest.approx(math.sqrt(1.5))
    assert xy(tied_point) == ([1.0], [0.5]) and xy(direct_point) == ([1.0], [0.0])
    assert xy(minimum) == ([1.0], [1.0]) and minimum.get_marker() == "*"
    assert legend_texts(right) == ["tied init", "direct init", "minimum"]
    assert (right.get_xlabel(), right.get_ylabel()) == (r"$q_{11}$", r"$q_{12}$")


def test_figure_s3_recovery_times_trapped_runs_and_flows_against_d():
    points = [{"param": "tied", "link": "h2", "d": d, "times": np.array([0.5, 0.7]),
               "samples_scaled": np.array([1.0, 1.2]), "flow_times": np.array([0.6]),
               "flow_samples_scaled": np.array([1.1])} for d in (50, 100)]
    points += [{"param": "direct", "link": "h2", "d": d, "times": np.array([t, np.nan]),
                "samples_scaled": np.array([s, np.nan]), "flow_times": np.array([1.5]),
                "flow_samples_scaled": np.array([2.0])} for d, t, s in ((50, 0.9, 3.0), (100, 1.8, 4.0))]
    fig = draw_figure_s3(points, horizon={"tied": 2.0, "direct": 2.5})
    left, right = fig.axes
    tied, direct = left.containers
    np.testing.assert_allclose(ydata(tied.lines[0]), [0.6, 0.6])
    np.testing.assert_allclose(yerr_of(tied), np.std([0.5, 0.7], ddof=1))
    np.testing.assert_allclose(ydata(direct.lines[0]), [0.9, 1.8])
    np.testing.assert_allclose(yerr_of(direct), 0.0)   # one replicate recovered: no spread
    assert (tied.lines[0].get_marker(), direct.lines[0].get_marker()) == ("o", "s")
    tied_flow, trapped, direct_flow = plain_lines(left)
    assert xy(trapped) == ([50.0, 100.0], [2.5, 2.5]) and trapped.get_markerfacecolor() == "none"
    assert xy(tied_flow) == ([50.0, 100.0], [0.6, 0.6]) and tied_flow.get_linestyle() == "-"
    assert xy(direct_flow) == ([50.0, 100.0], [1.5, 1.5]) and direct_flow.get_linestyle() == "--"
    # right: the samples, no hollow markers (a run that did not recover has no sample count)
    tied, direct = right.containers
    np.testing.assert_allclose(ydata(direct.lines[0]), [3.0, 4.0])
    assert len(plain_lines(right)) == 2
    assert sorted(legend_texts(left)) == ["direct, h2 SGD", "direct, h2 flow", "tied, h2 SGD",
                                          "tied, h2 flow"]
    assert left.get_ylabel() == r"$T_{wr}$ (ODE units)" and right.get_ylabel() == r"$N_{wr}/(d^2 \ln d)$"
    for ax in (left, right):
        assert ax.get_xscale() == "log" and list(ax.get_xticks()) == [50, 100]
        assert ax.get_ylim()[0] == 0


# --- paper2_moments ----------------------------------------------------------------------


def with_extra(trajectory, **extra) -> Trajectory:
    return Trajectory(trajectory.t_ode, trajectory.order, trajectory.d, trajectory.blew_up,
                      trajectory.t_blowup, extra)


def truncation(times, overlap, *, t_left_psd=math.nan, blow_up_after=None):
    """A truncation with signed overlap ``overlap(t)`` and loss 1 - overlap, cut by a blow-up."""
    n = times.size if blow_up_after is None else blow_up_after
    run = tied_trajectory(times[:n], P22 * overlap(times[:n]), blew_up=blow_up_after is not None,
                          dt=0.05)
    return with_extra(run, loss=1 - overlap(times[:n]), t_left_psd=np.full(n, t_left_psd))


def test_truncation_figure_cuts_each_order_where_it_stops_being_admissible():
    times = np.linspace(0, 1, 11)
    references = [with_extra(tied_trajectory(times, P22 * 0.5 * times))] * 2
    truncations = [{2: truncation(times, lambda t: 0.4 * t),
                    3: truncation(times, lambda t: 0.5 * t + 0.01, t_left_psd=0.55),
                    4: truncation(times, lambda t: 0.5 * t, blow_up_after=8)}] * 2
    sgd = [with_extra(tied_trajectory(times, P22 * 0.5 * times), batch_loss=1 - 0.5 * times + s)
           for s in (0.01, -0.01)]
    fig, diagnostics = draw_truncation_figure(
        sgd, references, [1 - 0.5 * times] * 2, truncations, [4, 2, 3],
        reference_label="matrix flow", error_floor=1e-12)
    assert diagnostics["orders"] == {
        "2": {"cut": "none", "t_blowup": None, "t_left_psd": None},
        "3": {"cut": "left the PSD cone", "t_blowup": None, "t_left_psd": 0.55},
        "4": {"cut": "blow-up", "t_blowup": pytest.approx(0.75), "t_left_psd": None}}
    # order 4 matches the reference until it blows up after t = 0.7: t_c is the next record
    assert diagnostics["t_c"] == pytest.approx(0.8)
    assert (diagnostics["n_sgd_blowups"], diagnostics["n_reference_blowups"]) == (0, 0)
    assert fig.get_suptitle() == ""
    colours = order_colours([2, 3, 4])
    left, right = fig.axes
    for ax, value in ((left, lambda t: t), (right, lambda t: 1 - t)):
        m2, m3, psd_exit, m4, blowup, reference, t_c = plain_lines(ax)
        np.testing.assert_allclose(ydata(m2), value(0.4 * times))
        np.testing.assert_allclose(xdata(m3), times[:6])          # admissible for t < 0.55
        np.testing.assert_allclose(xdata(m4), times[:8])
        for line, m in ((m2, 2), (m3, 3), (m4, 4)):
            assert same_colour(line.get_color(), colours[m]) and line.get_label() == f"$M = {m}$"
        assert xy(psd_exit) == ([0.5], [pytest.approx(value(0.26))])
        assert psd_exit.get_markerfacecolor() == "none" and psd_exit.get_markeredgecolor() == "red"
        assert xy(blowup) == ([pytest.approx(0.7)], [pytest.approx(value(0.35))])
        assert blowup.get_marker() == "x" and blowup.get_color() == "red"
        np.testing.assert_allclose(ydata(reference), value(0.5 * times))
        assert reference.get_linestyle() == "--" and reference.get_color() == "black"
        assert list(t_c.get_xdata()) == [pytest.approx(0.8)] * 2 and t_c.get_linestyle() == ":"
        assert ax.get_xlim() == (0.0, 1.0) and ax.get_xlabel() == r"time $t$ (ODE units)"
    [overlap] = left.containers
    np.testing.assert_allclose(ydata(overlap.lines[0]), 0.5 * times)
    [loss] = right.containers  # the loss from the first record on
    np.testing.assert_allclose(xdata(loss.lines[0]), times[1:])
    np.testing.assert_allclose(yerr_of(loss), np.std([0.01, -0.01], ddof=1))
    assert left.get_ylabel() == r"overlap $p_{12}/p_{22}$"
    assert right.get_ylabel() == r"loss: SGD batch, theory $\Phi(q)$"
    assert legend_texts(right) == ["$M = 2$", "$M = 3$", "$M = 4$", "matrix flow", "SGD",
                                   r"$t_c$: larger $M$ stops helping", "blew up", "q left PSD cone"]
    # an SGD run that blew up is counted on the figure
    sgd[1] = with_extra(tied_trajectory(times[:5], P22 * 0.5 * times[:5], blew_up=True),
                        batch_loss=np.ones(5))
    fig, diagnostics = draw_truncation_figure(sgd, references, [1 - 0.5 * times] * 2, truncations,
                                              [2, 3, 4], reference_label="flow", error_floor=1e-12)
    assert diagnostics["n_sgd_blowups"] == 1 and fig.get_suptitle() == "1 SGD run(s) blew up"


def error_table(errors, left_psd):
    """A Figure S6 table: errors[order index, time index] on orders 2..4, times 0, 0.01, 0.1, 1."""
    grid = [0.0, 0.01, 0.1, 1.0]
    rows = [(m, t, errors[i][j], left_psd[i][j]) for i, m in enumerate((2, 3, 4))
            for j, t in enumerate(grid)]
    order, t_ode, err, psd = zip(*rows)
    return {"order": np.array(order), "t_ode": np.array(t_ode), "err_q12": np.array(err, float),
            "left_psd": np.array(psd)}


def test_figure_s6_one_panel_per_weight_decay_with_one_line_per_time():
    converging = error_table([[0, 1e-3, 1e-2, 1e-1], [0, 1e-5, 1e-3, 1e-2], [0, 1e-20, 1e-4, 1e-3]],
                             [[False] * 4] * 3)
    breaking = error_table([[0, 1e-3, 1e-2, 1e-1], [0, 1e-5, 1e-3, 1e-2], [0, 1e-7, 1e-4, np.nan]],
                           [[False] * 4, [False, False, True, True], [False] * 4])
    fig, diagnostics = draw_figure_s6({4.0: breaking, 0.0: converging}, times=[0.01, 0.1, 0.9],
                                      matrix_scale=0.3)
    assert diagnostics == {"0": {"t_c": None, "times_drawn": [0.01, 0.1, 1.0]},
                           "4": {"t_c": 1.0, "times_drawn": [0.01, 0.1, 1.0]}}
    assert fig.get_size_inches() == pytest.approx((6.8, 2.35 * 1.1))
    assert fig.get_suptitle().startswith("linear case, S and S* scaled by 0.3:")
    decay0, decay4 = fig.axes
    assert decay0.get_title() == r"$\gamma = 0$: $t_c$ = beyond grid"
    assert decay4.get_title() == r"$\gamma = 4$: $t_c$ = 1"
    for ax in (decay0, decay4):
        assert ax.get_yscale() == "log" and ax.get_ylim() == pytest.approx((1e-16 / 3, 30))
        assert ax.get_xlabel() == "truncation order $M$" and len(ax.get_lines()) == 3 * 3
    # per time: errors against M (floored at 1e-16), hollow where q left the PSD cone,
    # a cross at the top where the truncation blew up
    line, hollow, crosses = decay0.get_lines()[:3]
    assert xy(line) == ([2.0, 3.0, 4.0], [1e-3, 1e-5, 1e-16]) and line.get_label() == "$t = 0.01$"
    assert xy(hollow) == ([], []) and xy(crosses) == ([], [])
    line, hollow, crosses = decay4.get_lines()[6:]
    assert xy(line) == ([2.0, 3.0], [1e-1, 1e-2])
    assert xy(hollow) == ([3.0], [1e-2]) and hollow.get_markeredgecolor() == "red"
    assert xy(crosses) == ([4.0], [10.0]) and crosses.get_marker() == "x"
    assert same_colour(crosses.get_color(), line.get_color())
    assert decay0.get_ylabel() == r"$|q_{12}^{(M)}(t) - q_{12}(t)|$"
    assert decay0.get_legend() is None
    assert legend_texts(decay4) == ["$t = 0.01$", "$t = 0.1$", "$t = 1$"]


# --- paper2_untied ------------------------------------------------------------------------


def test_figure3_every_replicate_and_its_flow_on_linear_and_log_axes():
    tau = np.linspace(0, 1, 11)
    runs = {"h1": [untied_trajectory(100, tau, lambda t: t, lambda t: 0 * t),
                   untied_trajectory(100, tau, lambda t: -0.5 * t, lambda t: 0 * t)],
            "h2": [untied_trajectory(100, tau[:3], lambda t: t, lambda t: 0 * t, blew_up=True)]}
    flows = {"h1": [untied_trajectory(100, tau, lambda t: 0.9 * t, lambda t: 0 * t)]}
    fig, diagnostics = draw_figure3(runs, flows, ["h1", "h2"], threshold=0.3, n_markers=30)
    assert diagnostics == {"n_blowups": 1, "n_flow_blowups": 0}
    assert fig.get_suptitle() == "1 run(s) blew up and stop there"
    left, right = fig.axes
    for ax in (left, right):
        first, second, flow, blown, cross, threshold = ax.get_lines()
        assert xy(first) == (list(tau), list(tau)) and first.get_marker() == "o"
        assert same_colour(first.get_markerfacecolor(), LINK_COLOURS["h1"])
        np.testing.assert_allclose(ydata(second), 0.5 * tau)        # |s|
        assert second.get_marker() == "s" and second.get_markerfacecolor() == "none"
        assert same_colour(blown.get_color(), LINK_COLOURS["h2"]) and len(blown.get_xdata()) == 3
        assert xy(cross) == ([0.2], [pytest.approx(0.2)]) and cross.get_color() == "red"
        np.testing.assert_allclose(ydata(flow), 0.9 * tau)
        assert flow.get_linestyle() == "-" and same_colour(flow.get_color(), LINK_COLOURS["h1"])
        assert list(threshold.get_ydata()) == [0.3, 0.3]
        assert ax.get_xlabel() == r"slow time $\tau = \alpha n/d$"
    assert left.get_yscale() == "linear" and left.get_ylim() == pytest.approx((-0.03, 1.05))
    assert right.get_yscale() == "log" and right.get_ylim() == pytest.approx((1e-4, 1.5))
    assert left.get_ylabel() == r"symmetric overlap $|s|$"
    assert left.get_title() == r"untied $S = UV^\top$, one token"
    assert legend_texts(right) == ["h1", "h2", "SGD (one marker per seed)",
                                   "population flow, same start"]


def test_figure_s4_mean_on_the_fast_time_overlap_on_the_slow_time_and_the_limits():
    def run(d, shift, end=0.2, sign=1.0):
        tau = np.linspace(0, end, 41)
        return untied_trajectory(d, tau, lambda t: sign * (4 * t + shift),
                                 lambda t: 0.5 + 0.1 * np.minimum(t * d, 5),
                                 flow_mean=lambda t: 0.55 + 0.1 * np.minimum(t * d, 5))
    # one replicate on the other branch (s < 0): the panel shows |s|
    runs = {d: [run(d, 0.0), run(d, 0.02, sign=-1.0 if d == 100 else 1.0)] for d in (100, 200)}
    flows = {100: [run(100, 0.0), run(100, 0.02, end=0.1)], 200: runs[200]}  # one flow stops early
    fig = draw_figure_s4(runs, flows, runs[200], fast_horizon=5.0, horizon=0.2, n_markers=6)
    left, right = fig.axes
    small, large = left.containers
    assert [c.get_label() for c in (small, large)] == ["d = 100", "d = 200"]
    assert same_colour(small.lines[0].get_color(), RHO_PALETTE[0])
    assert same_colour(large.lines[0].get_color(), RHO_PALETTE[1])
    np.testing.assert_allclose(xdata(small.lines[0]), np.linspace(0, 5, 6))
    np.testing.assert_allclose(ydata(small.lines[0]), 0.5 + 0.1 * np.linspace(0, 5, 6))
    overlap_small, _ = right.containers
    np.testing.assert_allclose(xdata(overlap_small.lines[0]), np.linspace(0, 0.2, 6))
    np.testing.assert_allclose(ydata(overlap_small.lines[0]), 4 * np.linspace(0, 0.2, 6) + 0.01)
    np.testing.assert_allclose(yerr_of(overlap_small), 0.01)           # population s.d. of two runs
    # left: one flow per d, then the d -> infinity fast flow (dashed black)
    flow_small, flow_large, fast_limit = plain_lines(left)
    np.testing.assert_allclose(ydata(flow_small)[[0, -1]], [0.55, 1.05])
    assert fast_limit.get_linestyle() == "--" and fast_limit.get_color() == "black"
    assert len(fast_limit.get_xdata()) == 300
    # right: the flows, drawn only where every replicate has a value, then the slaved limit
    flow_small, _, slow_limit = plain_lines(right)
    both = np.linspace(0, 0.2, 300) <= 0.1
    np.testing.assert_allclose(ydata(flow_small)[both], 4 * np.linspace(0, 0.2, 300)[both] + 0.01)
    assert np.isnan(ydata(flow_small)[~both]).all()
    assert slow_limit.get_linestyle() == "--"
    np.testing.assert_allclose(ydata(slow_limit)[[0, -1]], [0.01, 0.81])
    assert left.get_xlabel() == r"fast time $t = \alpha n$"
    assert right.get_xlabel() == r"slow time $\tau = \alpha n/d$"
    assert left.get_ylabel() == r"student mean $m = \mathrm{Tr}\,UV^\top/\sqrt{d}$"
    assert right.get_ylabel() == r"symmetric overlap $|s|$"
    assert legend_texts(left) == ["d = 100", "d = 200"]
    assert legend_texts(right) == ["SGD", "population flow", r"$d\to\infty$: eq. 28 / slaved flow"]
    assert fig.get_suptitle() == ""


def test_figure_s5_escape_times_against_the_teacher_mean_and_the_fast_states():
    def run(d, escape, mean, stop=None):
        tau = np.linspace(0, 1.0 if stop is None else stop, 101)
        return untied_trajectory(d, tau, lambda t: 0.3 * t / escape, lambda t: mean + 0 * t)
    runs = {(0.0, 50): [run(50, 0.5, 0.0), run(50, 0.7, 0.0)],
            (0.0, 100): [run(100, 0.6, 0.0), run(100, 2.0, 0.0)],        # one never escapes
            (2.0, 50): [run(50, 0.1, 1.4), run(50, 0.008, -1.4, stop=0.01)],  # stops at t = 0.5
            (2.0, 100): [run(100, 0.2, 1.4), run(100, 0.2, -1.4)]}
    m2 = np.linspace(0, 2, 5)
    star = np.sqrt(np.clip(m2 ** 2 - 2, 0, None))
    fast_states = {"m2": m2, "m_star_plus": star, "m_star_minus": -star,
                   "threshold": np.full(m2.size, math.sqrt(2))}
    fig = draw_figure_s5(runs, runs, fast_states, threshold=0.3, horizon=1.0, fast_horizon=2.0)
    left, right = fig.axes
    offset = 0.06 * 2.0 / 2                                  # half the spacing of two d, 6 % of it
    small, large = left.containers
    assert [c.get_label() for c in (small, large)] == ["d = 50", "d = 100"]
    np.testing.assert_allclose(xdata(small.lines[0]), [-offset, 2 - offset])
    np.testing.assert_allclose(ydata(small.lines[0]), [0.6, 0.054])
    np.testing.assert_allclose(yerr_of(small), [0.1, 0.046])       # population s.d.
    np.testing.assert_allclose(xdata(large.lines[0]), [2 + offset])  # m2 = 0 is censored
    flow_small, censored, flow_large = plain_lines(left)  # no threshold line: only m2 = 0 stalls
    assert xy(censored) == ([pytest.approx(offset)], [pytest.approx(0.8)])  # (0.6 + horizon) / 2
    assert censored.get_markerfacecolor() == "none"
    np.testing.assert_allclose(ydata(flow_small), [0.6, 0.054])
    assert math.isnan(flow_large.get_ydata()[0])  # a flow that never escaped: no mean
    assert left.get_yscale() == "log"
    assert left.get_ylabel() == r"escape time $\tau_{esc}$ ($|s| \geq 0.3$)"
    assert legend_texts(left) == ["d = 50", "d = 100", "population flow",
                                  r"$\tau_{inst}$: $m = 0$ unstable"]
    # right: every replicate's mean at t = 2 (hollow if it stopped earlier), the fast fixed points
    points = plain_lines(right)[:8]
    assert [p.get_ydata()[0] for p in points] == pytest.approx([0.0, 0.0, 1.4, -1.4, 0.0, 0.0, 1.4, -1.4])
    assert [p.get_markerfacecolor() == "none" for p in points] == [False] * 3 + [True] + [False] * 4
    plus, minus = plain_lines(right)[8:]
    np.testing.assert_allclose(ydata(plus), star)
    np.testing.assert_allclose(ydata(minus), -star)
    assert right.get_ylabel() == "student mean at $t = 2$"
    assert len(right.texts) == 0
    # the instability times of the flows: dashed, one line per d, NaN where m = 0 is unstable at 0
    fig = draw_figure_s5(runs, runs, fast_states, threshold=0.3, horizon=1.0, fast_horizon=2.0,
                         instability={(0.0, 50): [0.4, 0.5], (2.0, 50): [0.0, 0.0],
                                      (0.0, 100): [0.45, 0.45], (2.0, 100): [0.0, 0.0]})
    dashed = [line for line in plain_lines(fig.axes[0]) if line.get_linestyle() == "--"]
    assert len(dashed) == 2 and ydata(dashed[0])[0] == pytest.approx(0.45)
    assert math.isnan(ydata(dashed[0])[1])
    assert left.get_xlabel() == right.get_xlabel() == r"teacher mean $m_2$"
