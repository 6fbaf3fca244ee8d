"""Memory and step estimates of the jobs (``aimrepro.resources``)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from aimrepro import resources as R


def traced_peak(run) -> float:
    """Peak bytes traced (numpy buffers and Python objects) while ``run()`` executes."""
    tracemalloc.start()
    try:
        run()
        return float(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def arrays(estimate: R.Estimate) -> float:
    """An estimate without the interpreter's share: what tracemalloc can see."""
    return estimate.bytes - R.BASE_BYTES


# --- estimates against what the kernels allocate ------------------------------------
#
# Sizes are chosen so that the job's arrays (a few MB) dominate Python's own small
# objects; the estimate must land within a factor of two of the traced peak (at these
# sizes it is within 0.9-1.2, see the module notes).


def _dataset_case():
    from aimrepro.paper1.data import DatasetSpec, sample_dataset

    params = dict(T=3, d=60, rho=0.5, alpha=0.5, n_test=800)
    spec = DatasetSpec(link="softmax", replicate=0, beta=1.0, **params)
    return R.dataset_job(**params), lambda: sample_dataset(spec, 1)


def _gd_case():
    from aimrepro.paper1.data import DatasetSpec, sample_dataset
    from aimrepro.paper1.gd import GDSettings, run_on_dataset

    params = dict(T=4, d=40, rho=1.0, alpha=0.5, n_test=200)
    dataset = sample_dataset(DatasetSpec(link="softmax", replicate=0, beta=1.0, **params), 1)
    # the job loads its dataset: count the arrays it holds as the estimate does
    held = sum(a.nbytes for a in (dataset.W, dataset.X, dataset.y, dataset.X_test, dataset.y_test))
    estimate = R.gd_job(**params, inits=40, steps=2, trace=False)
    return (R.Estimate(estimate.bytes - held, estimate.steps),
            lambda: run_on_dataset(dataset, 40, GDSettings(steps=2, trace_every=0)))


def _sgd_case(param, d):
    from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings

    args = dict(param=param, T=1, d=d, rho=0.5, batch=512, lr=0.05, horizon=0.01, records=3)
    spec = ProblemSpec(param, "h2", 1, d, rho=0.5)
    settings = SGDSettings(lr=0.05, batch=512, horizon=0.01, n_records=3)
    return R.sgd_job(**args), lambda: SGDRun(spec, settings, 0).run()


def _theorem1_case():
    from aimrepro.paper2.experiments import theorem1_table

    return (R.theorem1_job(T=2, d=60, rho=0.5, n_samples=5000),
            lambda: theorem1_table(["h2", "linear"], T=2, d=60, rho=0.5, beta=1.0,
                                   n_samples=5000, seed=0))


def _riccati_case():
    from aimrepro.paper2.moment_experiments import riccati_table
    from aimrepro.paper2.sgd import ProblemSpec

    spec = ProblemSpec("tied", "linear", 1, 100, rho=0.5, normalisation="aim", loss_prefactor=1.0)
    return (R.riccati_job(d=100, rho=0.5, records=31),
            lambda: riccati_table(spec, 0, np.linspace(0.0, 0.1, 31)))


@pytest.mark.parametrize("case", [
    _dataset_case, _gd_case, lambda: _sgd_case("tied", 150), lambda: _sgd_case("direct", 200),
    lambda: _sgd_case("untied", 150), _theorem1_case, _riccati_case,
], ids=["dataset", "gd", "sgd-tied", "sgd-direct", "sgd-untied", "theorem1", "riccati"])
def test_estimate_is_within_a_factor_two_of_the_traced_peak(case):
    estimate, run = case()
    peak = traced_peak(run)
    assert 0.5 * peak <= arrays(estimate) <= 2.0 * peak


# --- the formulas' ingredients ------------------------------------------------------


@pytest.mark.parametrize("max_order", [2, 3, 5, 8, 10])
def test_word_count_is_the_size_of_the_word_basis(max_order):
    from aimrepro.paper2.moments import WordBasis

    basis = WordBasis(max_order)
    words, letters = R.word_count(max_order)
    assert words == len(basis)
    assert letters == sum(len(w) for w in basis.words)


@pytest.mark.parametrize(("param", "d", "lr", "horizon"), [
    ("tied", 100, 0.05, 3.0), ("direct", 100, 0.05, 3.0), ("untied", 200, 0.01, 0.1),
    ("tied", 50, 0.002, 2.0), ("tied", 100, 10.0, 0.1),
])
def test_sgd_steps_are_those_the_run_takes(param, d, lr, horizon):
    from aimrepro.paper2.sgd import SGDSettings, step_time

    settings = SGDSettings(lr=lr, batch=1, horizon=horizon)
    assert R.sgd_steps(param=param, d=d, lr=lr, horizon=horizon) == \
        settings.n_steps(step_time(param, lr, d))


def test_absurd_sizes_give_absurd_estimates_not_errors():
    assert R.sgd_steps(param="tied", d=100, lr=1e-320, horizon=3.0) == math.inf
    assert R.sgd_job(param="tied", T=1, d=100, rho=0.5, batch=256, lr=1e-300, horizon=3.0,
                     records=101).bytes > 1e290
    assert R.gd_job(T=2, d=60, rho=0.5, alpha=0.1, n_test=1000, inits=8,
                    steps=10**12).gib > 1e4


@pytest.mark.parametrize(("estimate", "params", "grows"), [
    (R.dataset_job, dict(T=2, d=100, rho=0.5, alpha=0.3, n_test=1000), ["T", "d", "alpha", "n_test"]),
    (R.amp_job, dict(T=2, d=100, rho=0.5, alpha=0.3, n_test=1000, max_iter=500),
     ["T", "d", "alpha", "n_test", "max_iter"]),
    (R.gd_job, dict(T=2, d=100, rho=0.5, alpha=0.3, n_test=1000, inits=8, steps=1000),
     ["T", "d", "alpha", "n_test", "inits", "steps"]),
    (R.sgd_job, dict(param="tied", T=1, d=100, rho=0.5, batch=256, lr=0.05, horizon=3.0,
                     records=101), ["T", "d", "rho", "batch", "horizon", "records"]),
    (R.theorem1_job, dict(T=2, d=100, rho=0.5, n_samples=200_000), ["T", "d", "rho"]),
    (R.moment_truncations_job, dict(d=100, rho=0.5, records=41, max_order=8),
     ["d", "records", "max_order"]),
    (R.untied_flow_job, dict(d=100, rho=1.0, records=31), ["d", "rho", "records"]),
])
def test_estimates_grow_with_each_size(estimate, params, grows):
    base = estimate(**params)
    for name in grows:
        bigger = estimate(**{**params, name: params[name] * 1000})
        assert bigger.bytes > base.bytes, name


def test_implicit_untied_flows_hold_a_dense_jacobian():
    explicit = R.untied_flow_job(d=800, rho=1.0, records=61, method="ROS2")
    implicit = R.untied_flow_job(d=800, rho=1.0, records=61, method="Radau")
    assert explicit.gib < 2 and implicit.gib > 1e4  # n = 2 d r = 1.28e6: n² floats


@pytest.mark.parametrize(("estimate", "params", "absurd"), [
    (R.gd_job, dict(T=2, d=60, rho=0.5, alpha=0.1, n_test=1000, inits=8, steps=10**9), "steps"),
    (R.gd_job, dict(T=2, d=60, rho=0.5, alpha=0.1, n_test=10**9, inits=8, steps=1000), "n_test"),
    (R.gd_job, dict(T=2, d=60, rho=0.5, alpha=0.1, n_test=1000, inits=10**6, steps=1000), "inits"),
    (R.gd_job, dict(T=2, d=3000, rho=0.5, alpha=1.0, n_test=1000, inits=8, steps=1000), "d"),
    (R.amp_job, dict(T=2, d=100, rho=0.5, alpha=1e4, n_test=1000, max_iter=500), "alpha"),
    (R.sgd_job, dict(param="tied", T=1, d=100, rho=0.5, batch=256, lr=1e-300, horizon=3.0,
                     records=101), "lr"),
    (R.sgd_job, dict(param="tied", T=1, d=100, rho=0.5, batch=256, lr=0.05, horizon=1e12,
                     records=101), "horizon"),
    (R.sgd_job, dict(param="direct", T=1, d=100_000, rho=0.5, batch=256, lr=0.05, horizon=3.0,
                     records=101), "d"),
    (R.sgd_job, dict(param="tied", T=10**6, d=100, rho=0.5, batch=256, lr=0.05, horizon=3.0,
                     records=101), "T"),
])
def test_driver_names_the_absurd_parameter(estimate, params, absurd):
    assert R.driver(estimate, params, list(params)[::-1]) == absurd


def test_driver_names_nothing_when_the_sizes_are_ordinary():
    params = dict(T=2, d=100, rho=0.5, alpha=0.1, n_test=1000, inits=8, steps=1000)
    assert R.driver(R.gd_job, params, list(params)) is None


def test_available_memory_respects_the_address_space_limit():
    import subprocess
    import sys

    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, "
            "resource.getrlimit(resource.RLIMIT_AS)[1])); "
            "from aimrepro.resources import available_memory; print(available_memory())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert 0 < float(done.stdout) < 2e9


@pytest.mark.parametrize(("call", "name"), [
    (lambda: R.dataset_job(T=1, d=100, rho=0.5, alpha=0.1, n_test=10), "T"),
    (lambda: R.dataset_job(T=2, d=100, rho=0.0, alpha=0.1, n_test=10), "rho"),
    (lambda: R.gd_job(T=2, d=100, rho=0.5, alpha=math.nan, n_test=10, inits=1, steps=1), "alpha"),
    (lambda: R.gd_job(T=2, d=100, rho=0.5, alpha=0.1, n_test=10, inits=1.5, steps=1), "inits"),
    (lambda: R.sgd_job(param="lowrank", T=1, d=10, rho=0.5, batch=1, lr=1, horizon=1,
                       records=2), "param"),
    (lambda: R.sgd_steps(param="tied", d=10, lr=math.inf, horizon=1.0), "lr"),
    (lambda: R.se_curve_job(channel="softmax", n_points=True), "n_points"),
])
def test_bad_arguments_raise_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_available_memory_is_positive():
    assert R.available_memory() > 0


def test_the_time_estimate_is_linear_in_the_steps_and_never_raises():
    """Estimate.seconds: the main loop's iterations times a per-iteration cost (R._loop_seconds)."""
    base = dict(param="tied", T=1, d=100, rho=0.5, batch=64, lr=0.05, records=11)
    one, two = (R.sgd_job(**base, horizon=h).seconds for h in (1.0, 2.0))
    assert 0 < one and two == pytest.approx(2 * one)
    assert R.sgd_job(**{**base, "param": "direct"}, horizon=1.0).seconds > one  # d² work a step
    gd = dict(T=2, d=60, rho=0.5, alpha=0.1, n_test=100, trace=False)
    assert R.gd_job(**gd, inits=8, steps=200).seconds == pytest.approx(
        2 * R.gd_job(**gd, inits=8, steps=100).seconds, rel=1e-12)
    assert R.sgd_job(**base, horizon=1e300).seconds > 1e290  # absurd, and a number
    assert R.sgd_job(**{**base, "d": 10**400}, horizon=1.0).seconds == math.inf
    both = R.Estimate.peak(R.Estimate(1.0, 2.0, 3.0), R.Estimate(5.0, 1.0, 1.0))
    assert both == R.Estimate(5.0, 3.0, 4.0)
