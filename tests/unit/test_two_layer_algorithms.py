"""Two-layer GAMP-RIE and gradient descent (aimrepro.paper1.two_layer.amp, .gd).

g_out is checked against finite differences of log Z_out, the GD gradient against
finite differences of the loss; runs are checked for determinism and for what
they report.  docs/paper1.md §14.7–13.8.
"""

import math

import numpy as np
import pytest

from aimrepro.paper1.amp import StoppingRule
from aimrepro.paper1.gd import GDSettings
from aimrepro.paper1.two_layer import amp as tamp
from aimrepro.paper1.two_layer import fibre as fb
from aimrepro.paper1.two_layer import gd as tgd
from aimrepro.paper1.two_layer import model as tm


def _dataset(skip=1.0, d=12, alpha=0.3, replicate=0):
    return tm.sample_dataset(tm.TwoLayerSpec(rho=0.5, d=d, alpha=alpha, skip=skip, replicate=replicate, n_test=4), 5)


@pytest.mark.parametrize("skip", [0.0, 10.0])
def test_output_function_is_the_gradient_of_log_z_out(skip):
    rng = np.random.default_rng(0)
    n = 3
    omega = rng.standard_normal((n, 2, 3))
    C = np.array([[0.5, 0.02], [0.02, 0.3]])
    truth = omega + 0.5 * rng.standard_normal((n, 2, 3))
    d = fb.differences_from_z(truth)
    u = fb.labels_from_differences(d[:, 0], d[:, 1], skip)
    rule = fb.FibreRule(nodes=40, newton_steps=10)
    g, P, _ = tamp.output_messages(u, omega, C, skip, rule=rule)
    assert np.allclose(P, np.einsum("nlz,nkz->nlk", g, g))

    def log_z(om):
        m = np.concatenate([om[:, 0] @ fb.Z_TO_DIFFERENCES.T, om[:, 1] @ fb.Z_TO_DIFFERENCES.T], axis=1)
        return fb.fibre_moments(u, m, C, skip, rule=rule).log_z

    step = 1e-2
    for layer in range(2):
        for k in range(3):
            shift = np.zeros((n, 2, 3))
            shift[:, layer, k] = step
            numeric = (log_z(omega + shift) - log_z(omega - shift)) / (2 * step)
            np.testing.assert_allclose(numeric, g[:, layer, k], atol=1e-2)


def test_gamp_runs_are_deterministic_and_report_their_state():
    data = _dataset()
    rule = StoppingRule(max_iter=6)
    first = tamp.run_on_dataset(data, stopping=rule)
    again = tamp.run_on_dataset(data, stopping=rule)
    assert np.array_equal(first.S_hat, again.S_hat)
    assert first.iterations == 6 and first.status in ("max_iter", "converged")
    assert first.trace["error1"].shape == (6,) and np.all(np.isfinite(first.trace["C11"]))
    assert first.C_hat[0, 1] == 0.0  # the default GAMP keeps the layers' priors apart (module notes)
    assert np.all(first.errors > 0) and math.isfinite(first.cross_error)
    summary = first.summary()
    assert set(summary) >= {"error1", "error2", "cross_error", "C11", "C22", "status"}


def test_gamp_run_round_trip(tmp_path):
    result = tamp.run_on_dataset(_dataset(skip=10.0), stopping=StoppingRule(max_iter=3))
    tamp.save_run(tmp_path / "a.npz", result)
    tamp.save_run(tmp_path / "b.npz", result)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    back = tamp.load_run_summary(tmp_path / "a.npz")
    assert back["error1"] == pytest.approx(result.errors[0]) and back["status"] == result.status


@pytest.mark.parametrize("bad", [{"rho": -1.0}, {"skip": -2.0}, {"damping": 1.0}, {"u": np.zeros((3, 3))}])
def test_gamp_refuses_bad_arguments(bad):
    data = _dataset()
    args = {"X": data.X, "u": data.u, "rho": 0.5, "skip": 1.0} | bad
    with pytest.raises(ValueError):
        tamp.two_layer_gamp(args.pop("X"), args.pop("u"), args.pop("rho"), args.pop("skip"), **args)


@pytest.mark.parametrize("skip", [0.0, 1.0, 10.0])
def test_gd_gradient_matches_finite_differences(skip):
    data = _dataset(skip=skip, d=8, alpha=0.5)
    rng = np.random.default_rng(1)
    W1, W2 = rng.standard_normal((8, 4)), rng.standard_normal((8, 4))
    _, g1, g2 = tgd.loss_and_gradient(W1, W2, data.X, data.y, skip)
    step = 1e-6
    for (i, j) in [(0, 0), (3, 2), (7, 3)]:
        E = np.zeros_like(W1)
        E[i, j] = step
        numeric1 = (tgd.loss_and_gradient(W1 + E, W2, data.X, data.y, skip)[0]
                    - tgd.loss_and_gradient(W1 - E, W2, data.X, data.y, skip)[0]) / (2 * step)
        numeric2 = (tgd.loss_and_gradient(W1, W2 + E, data.X, data.y, skip)[0]
                    - tgd.loss_and_gradient(W1, W2 - E, data.X, data.y, skip)[0]) / (2 * step)
        assert numeric1 == pytest.approx(g1[i, j], rel=1e-6, abs=1e-9)
        assert numeric2 == pytest.approx(g2[i, j], rel=1e-6, abs=1e-9)


def test_gd_teacher_is_a_zero_loss_stationary_point():
    data = _dataset(d=10, alpha=0.4)
    loss, g1, g2 = tgd.loss_and_gradient(data.W1, data.W2, data.X, data.y, 1.0)
    assert loss < 1e-10 and np.abs(g1).max() < 1e-6 and np.abs(g2).max() < 1e-6


def test_gd_runs_are_deterministic_and_average_their_students():
    data = _dataset(d=10, alpha=0.4)
    settings = GDSettings(lr=0.05, steps=20)
    first = tgd.run_on_dataset(data, 3, settings)
    again = tgd.run_on_dataset(data, 3, settings)
    assert first.summary() == again.summary()
    assert first.n_finished == 3 and first.n_diverged == 0
    # the error of the mean of K is A_inf + (single − A_inf)/K
    K = 3
    np.testing.assert_allclose(first.averaged, first.extrapolated + (first.single - first.extrapolated) / K)
    seeds = tgd.student_seeds(5, data, 2)
    assert seeds[1].spawn_key == tgd.student_seeds(5, data, 4)[1].spawn_key
