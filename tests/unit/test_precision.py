"""Single precision (``backend.dtype``): float32 kernels agree with float64 to float32 accuracy.

For each kernel family with a float32 path (GD, online SGD, GAMP-RIE's
GEMMs): one step agrees with the float64 reference to the accuracy of
single precision on a small problem, a short run stays as close, the state
and every reported number stay float64, one seed gives the same bits twice
(and, for GD, whatever the threads and blocks), and float32 and float64 runs
of one seed see the same data.  The config side: one float type per family,
validated with a one-line error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro import backends
from aimrepro.model import apply_link, indices, indices_from_factor
from aimrepro.paper1 import amp, gd
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.data import DatasetSpec, sample_dataset
from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings, _numpy_gradients, initial_problem, run_sgd

from conftest import REPO, assert_usage_error, repository_config, run_cli, validated

SINGLE = backends.Backend("numpy", "float32")
DOUBLE = backends.NUMPY
#: float32's unit roundoff is 6e-8; sums of a few hundred terms lose a few digits more
STEP_TOL = 2e-5


def relative(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


# --- GD ---------------------------------------------------------------------------------------


def softmax_problem(T: int, d: int = 12, r: int = 6, n: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, T, d)).astype(np.float32).astype(np.float64)
    W_star = rng.standard_normal((d, r))
    y = apply_link(indices_from_factor(X, W_star, 1 / math.sqrt(r * d)), "softmax", beta=1.3)
    return X, y, W_star @ W_star.T / math.sqrt(r * d)


@pytest.mark.parametrize("T", [2, 4])
def test_the_float32_gd_kernel_agrees_with_float64_to_single_precision(T):
    X, y, _ = softmax_problem(T)
    n, _, d = X.shape
    W0 = gd.initial_factors(d, 6, [1, 2, 3])
    single = gd._block_kernel(SINGLE, X.reshape(n * T, d), y, n, T, 1.3)
    loss, W_sq, grad = single(W0, True)
    loss_ref, grad_ref = gd.loss_and_gradient(W0, X, y, beta=1.3)
    assert grad.dtype == np.float32 and loss.dtype == np.float64 and W_sq.dtype == np.float64
    assert relative(loss, loss_ref) < STEP_TOL and relative(grad, grad_ref) < STEP_TOL
    # and not to float64 accuracy: the kernel really computed in float32
    assert relative(grad, grad_ref) > 1e-12


def test_a_float32_gd_run_follows_the_float64_run_and_keeps_a_float64_state():
    X, y, S_true = softmax_problem(3, seed=1)
    W0 = gd.initial_factors(12, 6, [4, 5, 6, 7])
    settings = gd.GDSettings(lr=0.05, steps=40, trace_every=10)
    reference = gd.train_students(X, y, W0, settings, beta=1.3, S_true=S_true)
    single = gd.train_students(X, y, W0, settings, beta=1.3, S_true=S_true, backend=SINGLE)
    assert single.W.dtype == np.float64 and single.loss_curve.dtype == np.float64
    assert relative(single.W, reference.W) < 1e-4
    assert relative(single.loss_curve, reference.loss_curve) < 1e-4
    assert relative(single.trace_single, reference.trace_single) < 1e-4
    assert single.settings["dtype"] == "float32" and reference.settings["dtype"] == "float64"
    # the run moved: the agreement is not that of the initial state
    assert relative(reference.W, W0) > 0.1


def gd_run_arrays(dataset, **options) -> dict[str, np.ndarray]:
    run = gd.run_on_dataset(dataset, 5, gd.GDSettings(lr=0.1, steps=20, trace_every=5), backend=SINGLE,
                            **options)
    return {"W": run.result.W, "loss": run.result.loss_curve, "errors": run.single_errors,
            "averaged": np.array([run.averaged_error])}


def test_float32_gd_gives_the_same_bits_twice_and_whatever_the_threads_and_blocks():
    dataset = sample_dataset(DatasetSpec("softmax", 3, 0.5, 16, 0.4, 0, 40, beta=1.0), 5)
    first = gd_run_arrays(dataset, chunk=2, threads=1)
    for options in ({"chunk": 2, "threads": 1}, {"chunk": 2, "threads": 2}, {"chunk": 5}, {"chunk": 1, "threads": 3}):
        again = gd_run_arrays(dataset, **options)
        assert all(np.array_equal(first[key], again[key], equal_nan=True) for key in first), options


def test_float32_and_float64_gd_students_start_from_the_same_factors():
    dataset = sample_dataset(DatasetSpec("softmax", 2, 0.5, 14, 0.3, 0, 30, beta=1.0), 2)
    settings = gd.GDSettings(lr=0.1, steps=1, trace_every=1)
    single = gd.run_on_dataset(dataset, 3, settings, backend=SINGLE)
    double = gd.run_on_dataset(dataset, 3, settings)
    # step 0's errors are the initial factors' against the teacher, computed in float64 in both runs
    assert np.array_equal(single.result.trace_single[:, 0], double.result.trace_single[:, 0])


# --- online SGD -------------------------------------------------------------------------------


CASES = [("tied", "softmax", 2, {}), ("tied", "h2", 1, {}), ("direct", "h2", 2, {}), ("direct", "softmax", 3, {}),
         ("untied", "h2", 1, {"teacher_mean": 1.0}), ("untied", "h3", 2, {})]


@pytest.mark.parametrize("param, link, T, extra", CASES)
def test_one_float32_sgd_step_agrees_with_float64_to_single_precision(param, link, T, extra):
    spec = ProblemSpec(param, link, T, 24, **extra)
    student, teacher, rng = initial_problem(spec, 4)
    X = rng.standard_normal((64, T, 24))
    losses, grads = _numpy_gradients(student, teacher, spec.loss(), X)
    losses32, grads32 = _numpy_gradients(student, teacher, spec.loss(), X.astype(np.float32))
    assert losses32.dtype == np.float64 and all(g.dtype == np.float32 for g in grads32)
    assert relative(losses32, losses) < STEP_TOL
    assert len(grads32) == len(grads) and all(relative(a, b) < STEP_TOL for a, b in zip(grads32, grads))
    assert max(relative(a, b) for a, b in zip(grads32, grads)) > 1e-12


def test_a_float32_sgd_run_keeps_a_float64_state_and_reports_float64_losses():
    # the trajectory's agreement with float64: tests/unit/test_backends.py (numpy-float32)
    spec = ProblemSpec("tied", "softmax", 2, 20)
    settings = SGDSettings(lr=0.05, batch=32, horizon=0.5, n_records=6)
    student, teacher, rng = initial_problem(spec, 2)
    single = run_sgd(student, teacher, spec.loss(), 2, settings, rng, backend=SINGLE)
    assert all(theta.dtype == np.float64 for theta in student.parameters())
    assert single.order.dtype == np.float64 and single.extra["batch_loss"].dtype == np.float64
    reference = SGDRun(spec, settings, 2).run()
    assert relative(single.extra["batch_loss"], reference.extra["batch_loss"]) < 1e-5


def test_float32_sgd_gives_the_same_bits_twice_and_draws_the_same_tokens():
    spec = ProblemSpec("untied", "h2", 1, 16, teacher_mean=0.5)
    settings = SGDSettings(lr=0.05, batch=16, horizon=0.3, n_records=4)
    first = SGDRun(spec, settings, 7).run(backend=SINGLE)
    again = SGDRun(spec, settings, 7).run(backend=SINGLE)
    assert np.array_equal(first.order, again.order) and np.array_equal(first.extra["batch_loss"],
                                                                       again.extra["batch_loss"])
    # the data stream is left where the float64 run leaves it: the same normals were drawn
    streams = []
    for backend in (SINGLE, DOUBLE):
        student, teacher, rng = initial_problem(spec, 7)
        run_sgd(student, teacher, spec.loss(), 1, settings, rng, backend=backend)
        streams.append(rng.standard_normal(4))
    assert np.array_equal(*streams)


# --- GAMP-RIE ---------------------------------------------------------------------------------


def test_the_float32_amp_gemms_agree_with_float64_and_return_float64():
    dataset = sample_dataset(DatasetSpec("softmax", 3, 0.5, 20, 0.5, 0, 10, beta=1.0), 3)
    X = np.asarray(dataset.X, dtype=np.float64)
    ops32, ops64 = amp._NumpyOps(X, np.float32), amp._NumpyOps(X)
    S = dataset.S
    G = np.random.default_rng(0).standard_normal((X.shape[0], 3, 3))
    G = G + np.swapaxes(G, 1, 2)
    assert np.array_equal(ops64.indices(S), indices(X, S))
    for method, argument in (("indices", S), ("backproject", G)):
        single, double = getattr(ops32, method)(argument), getattr(ops64, method)(argument)
        assert single.dtype == np.float64 and STEP_TOL > relative(single, double) > 1e-12


def test_a_float32_amp_run_keeps_float64_iterates_close_to_the_reference():
    dataset = sample_dataset(DatasetSpec("softmax", 2, 0.5, 20, 1.0, 0, 10, beta=1.0), 3)
    options = {"max_iter": 8, "S_true": dataset.S}
    channel = make_channel("softmax", T=2, beta=1.0)
    reference = amp.gamp_rie(dataset.X, dataset.y, channel, 0.5, **options)
    single = amp.gamp_rie(dataset.X, dataset.y, channel, 0.5, backend=SINGLE, **options)
    assert single.S_hat.dtype == np.float64 and single.settings["dtype"] == "float32"
    assert relative(single.S_hat, reference.S_hat) < 1e-4
    assert relative(single.trace["error"], reference.trace["error"]) < 1e-4


def test_a_float32_amp_run_beyond_perfect_recovery_stops_at_its_resolution(monkeypatch):
    """Softmax T = 3 beyond alpha_PR = 0.075: float32 follows float64 to an error of 1e-7, then its
    steps stop falling at the GEMMs' rounding; it stops there, converged, with float64's error."""
    dataset = sample_dataset(DatasetSpec("softmax", 3, 0.5, 20, 0.09, 0, 10, beta=1.0), 3)
    channel = make_channel("softmax", T=3, beta=1.0)
    options = {"S_true": dataset.S, "max_iter": 1500}
    reference = amp.gamp_rie(dataset.X, dataset.y, channel, 0.5, **options)
    single = amp.gamp_rie(dataset.X, dataset.y, channel, 0.5, backend=SINGLE, **options)
    assert reference.converged and reference.message.startswith("settled")
    assert single.converged and single.message.startswith("at the float32 resolution")
    assert single.iterations < reference.iterations
    assert abs(single.error - reference.error) < 1e-3 * reference.error < 1e-9
    # without the resolution test the float32 run never settles: its steps stay at the rounding floor
    monkeypatch.setattr(amp, "RESOLUTION_EPS", 0.0)
    unchecked = amp.gamp_rie(dataset.X, dataset.y, channel, 0.5, backend=SINGLE, **options)
    assert not unchecked.converged
    assert np.min(unchecked.trace["change"][-20:]) > 1e-16


def test_steps_are_rounding_only_below_the_resolution_and_above_the_predicted_error():
    resolution = 3.6e-12
    floor = np.full(20, 3.5e-14)
    rule = amp.StoppingRule()
    assert rule.window == 20
    assert rule.at_resolution(floor, np.geomspace(1e-14, 1e-20, 20), resolution)  # C_hat fell below the steps
    assert not rule.at_resolution(floor, np.full(20, 0.013), resolution)  # a slow mode: C_hat far above
    assert not rule.at_resolution(np.append(floor[:-1], 1e-11), np.full(20, 1e-20), resolution)
    assert not rule.at_resolution(floor[:19], np.full(19, 1e-20), resolution)  # fewer steps than the window
    assert not rule.at_resolution(floor, np.full(20, 1e-20), 0.0)  # float64: no resolution test
    assert amp._step_resolution(backends.NUMPY, 1.5) == 0.0  # float64 is never resolution-limited
    assert amp._step_resolution(SINGLE, 1.5) == pytest.approx((13 * np.finfo(np.float32).eps) ** 2 * 1.5)


# --- the config: one float type per kernel family ---------------------------------------------


def test_each_family_gets_its_own_float_type():
    spec = {"name": "numpy", "dtype": {"gd": "float32", "sgd": "float32"}}
    assert backends.family_backend(spec, "gd") == {"name": "numpy", "dtype": "float32"}
    assert backends.family_backend(spec, "amp") == {"name": "numpy", "dtype": "float64"}
    assert backends.family_backend({"name": "torch", "dtype": "float32"}, "amp")["dtype"] == "float32"
    assert backends.make_backend(backends.family_backend(spec, "sgd")) == SINGLE
    with pytest.raises(ValueError, match="family must be one of"):
        backends.family_backend(spec, "flows")
    with pytest.raises(ValueError, match="unknown families"):
        backends.family_backend({"name": "numpy", "dtype": {"sdg": "float32"}}, "gd")


def test_the_repository_config_computes_in_float64_and_a_bad_float_type_is_named():
    config = validated(repository_config())
    assert config["backend"]["dtype"] == {"gd": "float64", "sgd": "float64", "amp": "float64"}
    bad = repository_config()
    bad["backend"]["dtype"]["sgd"] = "float16"
    with pytest.raises(ValueError, match=r"backend\.dtype\.sgd = 'float16'; allowed: one of 'float64', 'float32'"):
        validated(bad)
    bad = repository_config()
    bad["backend"]["dtype"] = "float32"
    with pytest.raises(ValueError, match=r"backend\.dtype"):
        validated(bad)


def test_the_command_line_passes_the_float_type_through():
    import json

    common = ("gd", "--T", "2", "--rho", "0.5", "--alpha", "0.1", "--d", "20", "--inits", "3", "--steps", "50",
              "--lr", "0.1", "--seed", "1")
    double, single = (run_cli(*common, *extra) for extra in ((), ("--dtype", "float32")))
    assert double.returncode == single.returncode == 0, single.stderr
    a, b = json.loads(double.stdout), json.loads(single.stdout)
    assert a["single_error"] != b["single_error"] and relative(b["single_error"], a["single_error"]) < 1e-5
    assert_usage_error(run_cli(*common, "--dtype", "float16"), ["--dtype", "float16"])


def _bench_job(case: dict) -> tuple[str, dict[str, str]]:
    """The rule and wildcards of the job whose step a bench_precision.py case times."""
    if case["family"] == "gd":
        return "gd_run", {"scale": "quick", "link": "softmax_beta1", "T": str(case["T"]), "rho": "0.5",
                          "d": str(case["d"]), "inits": str(case["K"]), "alpha": str(case["alpha"]), "seed": "0"}
    common = {"scale": "quick", "link": case["link"], "T": str(case["T"]), "normalisation": "unit_variance",
              "d": str(case["d"]), "lr": "0.001", "B": str(case["B"]), "wd": "0", "horizon": "1", "stop": "none",
              "seed": "0"}
    if case["param"] == "untied":
        return "untied_sgd_run", {**common, "rho": "1", "sU": "1", "sV": "0.9", "m2": "0", "m0": "none",
                                  "records": "2", "fh": "0", "nf": "0"}
    return "sgd_run", {**common, "param": case["param"], "rho": "0.5", "c": "0.5", "records": "2"}


def test_the_cost_model_prices_a_float32_step_as_the_benchmark_measured_it():
    """The model's float64/float32 ratio per step within 25 % of bench_precision.py's, GD and SGD cases."""
    import json

    from aimrepro_workflow.costs import CostModel

    double = validated(repository_config())
    single = validated(repository_config())
    single["backend"]["dtype"] = {"gd": "float32", "sgd": "float32", "amp": "float32"}
    models = CostModel(double), CostModel(single)
    measured = json.loads((REPO / "benchmarks" / "results" / "precision.json").read_text())["cases"]
    misses = []
    for case in (c for c in measured if c["family"] in ("gd", "sgd")):
        rule, wildcards = _bench_job(case)
        step = [model.job(rule, wildcards, loop=1).cpu_seconds - model.job(rule, wildcards, loop=0).cpu_seconds
                for model in models]
        ratio = (step[0] / step[1]) / case["speedup"]
        if not 0.8 <= ratio <= 1.25:
            misses.append(f"{case['case']}: model x{step[0] / step[1]:.2f}, measured x{case['speedup']:.2f}")
    assert not misses, misses
