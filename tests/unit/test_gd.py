"""Full-batch Adam on the tied softmax student (docs/paper1.md §6): loss against the model's own
indices, gradient against finite differences for every T, replica batching bit for bit,
training on a realisable problem, divergence records, error helpers, summaries, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper1 import gd
from aimrepro.paper1.data import DatasetSpec, sample_dataset
from aimrepro.model import apply_link, indices, indices_from_factor


def teacher_problem(T, n, d, r, beta=1.0, seed=0):
    """Tokens and softmax labels of a random tied teacher of width r (float64)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, T, d))
    W_star = rng.standard_normal((d, r))
    y = apply_link(indices_from_factor(X, W_star, 1 / math.sqrt(r * d)), "softmax", beta=beta)
    return X, y, W_star @ W_star.T / math.sqrt(r * d)


@pytest.mark.parametrize("T", [2, 3, 4, 5, 6])
def test_loss_is_the_papers_loss_on_the_models_indices(T):
    X, y, _ = teacher_problem(T, n=9, d=7, r=3, beta=1.7)
    W = np.random.default_rng(1).standard_normal((2, 7, 3))
    loss, _ = gd.loss_and_gradient(W, X, y, beta=1.7)
    for k in range(2):
        S = W[k] @ W[k].T / math.sqrt(3 * 7)
        expected = np.sum((apply_link(indices(X, S), "softmax", beta=1.7) - y) ** 2) / 7
        assert loss[k] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("T", [2, 3, 4, 5, 6])
def test_gradient_matches_central_finite_differences(T):
    d, r = 6, 3
    X, y, _ = teacher_problem(T, n=5, d=d, r=r, beta=1.3, seed=T)
    W = np.random.default_rng(10 + T).standard_normal((d, r))
    _, grad = gd.loss_and_gradient(W, X, y, beta=1.3)
    step = 1e-6
    numeric = np.zeros_like(W)
    for index in np.ndindex(W.shape):
        plus, minus = W.copy(), W.copy()
        plus[index] += step
        minus[index] -= step
        numeric[index] = (gd.loss_and_gradient(plus, X, y, beta=1.3)[0]
                          - gd.loss_and_gradient(minus, X, y, beta=1.3)[0]) / (2 * step)
    # central differences: O(step²) truncation, O(1e-16/step) round-off, on gradients of order 0.1–1
    assert np.max(np.abs(numeric - grad)) <= 1e-7 * np.max(np.abs(grad))


def test_a_batched_run_equals_separate_runs_bit_for_bit_for_any_chunk():
    d, r, K = 12, 6, 5
    X, y, S_true = teacher_problem(3, n=40, d=d, r=r)
    seeds = [np.random.SeedSequence(99, spawn_key=(k,)) for k in range(K)]
    W0 = gd.initial_factors(d, r, seeds)
    settings = gd.GDSettings(lr=0.05, steps=15, trace_every=5)
    batched = gd.train_students(X, y, W0, settings, S_true=S_true)
    assert batched.settings["chunk"] == K
    chunked = gd.train_students(X, y, W0, settings, S_true=S_true, chunk=2)
    for k in range(K):
        alone = gd.train_students(X, y, gd.initial_factors(d, r, [seeds[k]]), settings, S_true=S_true)
        for run in (batched, chunked):
            assert np.array_equal(run.W[k], alone.W[0])
            assert np.array_equal(run.loss_curve[k], alone.loss_curve[0])
            assert np.array_equal(run.trace_single[k], alone.trace_single[0])
    assert np.array_equal(batched.trace_averaged, chunked.trace_averaged)
    # and the run moved: the equality is not that of untouched initial factors
    assert not np.array_equal(batched.W, W0)


def test_a_students_initialisation_depends_on_its_index_only():
    spec = DatasetSpec("softmax", 2, 0.5, 10, 0.2, 3, 5, beta=1.0)
    few = gd.initial_factors(10, 5, gd.student_seeds(7, spec, 2))
    many = gd.initial_factors(10, 5, gd.student_seeds(7, spec, 6))
    assert np.array_equal(few, many[:2])
    assert not np.array_equal(many[0], many[1])
    other = gd.initial_factors(10, 5, gd.student_seeds(7, DatasetSpec("softmax", 2, 0.5, 10, 0.2, 4, 5, beta=1.0), 1))
    assert not np.array_equal(other[0], many[0])


def test_the_loss_decreases_on_a_small_realisable_problem():
    d, r = 10, 5
    X, y, S_true = teacher_problem(2, n=300, d=d, r=r, seed=4)
    W0 = gd.initial_factors(d, r, [1, 2])
    result = gd.train_students(X, y, W0, gd.GDSettings(lr=0.05, steps=400), S_true=S_true)
    curve = result.loss_curve
    assert np.all(np.isfinite(curve)) and list(result.status) == ["finished", "finished"]
    assert np.all(curve[:, -1] < 1e-3 * curve[:, 0])
    # Adam is not monotone step by step; over blocks of 50 steps the loss falls every time
    assert np.all(np.diff(curve[:, ::50], axis=1) < 0)
    # n = 3 d²: far beyond the perfect-recovery threshold, the teacher itself is found
    assert np.all(result.trace_single[:, -1] < 1e-2) and result.trace_single[0, 0] > 1.0


def test_error_helpers_equal_their_definitions():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((4, 8, 3))
    S_true = rng.standard_normal((8, 8))
    S = np.einsum("kir,kjr->kij", W, W) / math.sqrt(3 * 8)
    assert np.allclose(gd.averaged_matrix(W), S.mean(axis=0), atol=1e-13)
    assert gd.averaged_error(W, S_true) == pytest.approx(np.sum((S.mean(0) - S_true) ** 2) / 8, rel=1e-12)
    assert np.allclose(gd.single_errors(W, S_true), np.sum((S - S_true) ** 2, axis=(1, 2)) / 8, rtol=1e-12)


def test_a_diverging_replica_is_recorded_frozen_and_left_out_of_the_average():
    d, r = 8, 4
    X, y, S_true = teacher_problem(2, n=30, d=d, r=r, seed=5)
    W0 = gd.initial_factors(d, r, [11, 12, 13])
    W0[1] *= 1e3  # trace 1e6 times the prior's: beyond DIVERGENCE_TRACE_FACTOR from the start
    settings = gd.GDSettings(lr=0.05, steps=10, trace_every=5)
    result = gd.train_students(X, y, W0, settings, S_true=S_true)
    assert list(result.status) == ["finished", "diverged", "finished"]
    assert list(result.diverged_step) == [-1, 0, -1] and result.n_diverged == 1
    assert np.all(np.isnan(result.loss_curve[1])) and np.array_equal(result.W[1], W0[1])
    assert np.isnan(result.trace_single[1]).all()
    expected = gd.averaged_error(result.W[[0, 2]], S_true)
    assert result.trace_averaged[-1] == expected
    alone = gd.train_students(X, y, W0[[2]], settings, S_true=S_true)
    assert np.array_equal(alone.W[0], result.W[2])
    assert "1 of 3 replicas diverged (first at step 0)" in result.message()


def test_a_huge_learning_rate_diverges_and_is_reported():
    X, y, _ = teacher_problem(2, n=20, d=8, r=4, seed=6)
    result = gd.train_students(X, y, gd.initial_factors(8, 4, [1]), gd.GDSettings(lr=1e4, steps=5))
    assert list(result.status) == ["diverged"] and result.diverged_step[0] == 1


def test_run_on_dataset_measures_the_students_against_teacher_and_test_set():
    spec = DatasetSpec("softmax", 2, 0.5, 12, 0.5, 0, 60, beta=1.0)
    dataset = sample_dataset(spec, 8)
    run = gd.run_on_dataset(dataset, 3, gd.GDSettings(lr=0.1, steps=30))
    summary = run.summary()
    assert summary["n_inits"] == 3 and summary["n_diverged"] == 0
    assert summary["single_error"] == pytest.approx(np.mean(run.single_errors))
    assert summary["averaged_error"] == pytest.approx(gd.averaged_error(run.result.W, dataset.S))
    assert summary["train_loss"] == pytest.approx(np.mean(run.result.final_loss))
    # the average of students is closer to the teacher than a typical student (convexity)
    assert summary["averaged_error"] <= summary["single_error"]
    assert 0 < summary["generalisation_error"] < 2 * spec.T
    # same dataset, same settings: the same bits
    again = gd.run_on_dataset(dataset, 3, gd.GDSettings(lr=0.1, steps=30))
    assert np.array_equal(again.result.W, run.result.W)


def test_summary_table_keeps_diverged_runs_apart():
    def summary(singles, averaged, n_diverged):
        singles = np.asarray(singles, float)
        return {"single_errors": singles, "single_generalisation": np.ones_like(singles),
                "final_loss": np.zeros_like(singles), "averaged_error": averaged,
                "generalisation_error": 1.0, "n_diverged": n_diverged}

    runs = [[summary([1.0, 3.0], 0.5, 0), summary([2.0, np.nan], 0.9, 1), summary([2.0, 2.0], 0.7, 0)]]
    table = gd.summary_table(2, 0.5, [0.01], runs)
    assert table["n_runs"][0] == 3 and table["n_clean"][0] == 2 and table["n_diverged"][0] == 1
    assert table["single_mean"][0] == pytest.approx(2.0)  # the five finished students
    assert table["averaged_mean"][0] == pytest.approx(0.6)  # clean draws only
    assert table["averaged_unclean_mean"][0] == pytest.approx(0.9)
    assert table["alphaT"][0] == pytest.approx(0.04)
    assert 0.9 < table["se_mmse"][0] < 1.0


@pytest.mark.parametrize(("make", "words"), [
    (lambda: gd.GDSettings(lr=0.0), ["lr", "> 0"]),
    (lambda: gd.GDSettings(lr=-0.1), ["lr", "> 0"]),
    (lambda: gd.GDSettings(lr=math.inf), ["lr", "finite"]),
    (lambda: gd.GDSettings(steps=0), ["steps", ">= 1"]),
    (lambda: gd.GDSettings(init_scale=0.0), ["init_scale", "> 0"]),
    (lambda: gd.GDSettings(adam_beta2=1.0), ["adam_beta2", "[0, 1)"]),
    (lambda: gd.initial_factors(8, 0, [1]), ["width", ">= 1"]),
    (lambda: gd.initial_factors(8, 4, []), ["initialisations", ">= 1"]),
    (lambda: gd.train_students(np.ones((3, 2, 8)), np.ones((3, 2, 2)) / 2, np.ones((2, 8, 0)), gd.GDSettings()),
     ["width", ">= 1"]),
    (lambda: gd.train_students(np.ones((3, 2, 8)), np.ones((3, 2, 2)) / 2, np.ones((0, 8, 2)), gd.GDSettings()),
     ["initialisations", ">= 1"]),
    (lambda: gd.loss_and_gradient(np.ones((8, 2)), np.ones((3, 2, 8)), np.ones((3, 2, 2)), beta=0.0),
     ["beta", "> 0"]),
    (lambda: gd.student_seeds(1, DatasetSpec("softmax", 2, 0.5, 8, 0.1, 0, 5, beta=1.0), 0),
     ["n_inits", ">= 1"]),
])
def test_bad_hyperparameters_fail_with_a_message_naming_them(make, words):
    with pytest.raises(ValueError) as caught:
        make()
    for word in words:
        assert word in str(caught.value)


def test_run_on_dataset_rejects_bad_counts_and_non_softmax_data():
    dataset = sample_dataset(DatasetSpec("softmax", 2, 0.5, 8, 0.2, 0, 5, beta=1.0), 1)
    with pytest.raises(ValueError, match="n_inits must be an integer >= 1"):
        gd.run_on_dataset(dataset, 0, gd.GDSettings())
    with pytest.raises(ValueError, match="width must be an integer >= 1"):
        gd.run_on_dataset(dataset, 2, gd.GDSettings(), width=0)
    hardmax = sample_dataset(DatasetSpec("hardmax", 2, 0.5, 8, 0.2, 0, 5), 1)
    with pytest.raises(ValueError, match="link must be softmax"):
        gd.run_on_dataset(hardmax, 2, gd.GDSettings())


def test_a_saved_run_reads_back_and_is_byte_reproducible(tmp_path):
    dataset = sample_dataset(DatasetSpec("softmax", 3, 0.5, 10, 0.3, 1, 20, beta=1.0), 4)
    run = gd.run_on_dataset(dataset, 2, gd.GDSettings(steps=10, trace_every=5))
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    gd.save_run(first, run)
    gd.save_run(second, gd.run_on_dataset(dataset, 2, gd.GDSettings(steps=10, trace_every=5)))
    assert first.read_bytes() == second.read_bytes()
    summary = gd.load_run_summary(first)
    assert np.array_equal(summary["single_errors"], run.single_errors)
    assert summary["averaged_error"] == run.averaged_error and summary["n_diverged"] == 0
    with np.load(first) as archive:
        assert np.array_equal(archive["S_bar"], gd.averaged_matrix(run.result.W))
        assert archive["loss_curve"].shape == (2, 11) and list(archive["trace_steps"]) == [0, 5, 10]
