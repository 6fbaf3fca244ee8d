"""The AIM (docs/paper1.md §1): indices by contraction against their definition, plug-in test error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro import model


def test_indices_equal_their_definition_and_the_factor_form():
    rng = np.random.default_rng(0)
    n, T, d = 4, 3, 9
    X = rng.standard_normal((n, T, d))
    W = rng.standard_normal((d, 4))
    S = W @ W.T / math.sqrt(4 * d)
    direct = np.array([[[(X[m, a] @ S @ X[m, b] - (a == b) * np.trace(S)) / math.sqrt(d) for b in range(T)]
                        for a in range(T)] for m in range(n)])
    assert np.allclose(model.indices(X, S), direct, atol=1e-12)
    assert np.allclose(model.indices_from_factor(X, W, 1 / math.sqrt(4 * d)), direct, atol=1e-12)


def test_tokens_come_in_the_requested_precision():
    rng = np.random.default_rng(1)
    assert model.sample_tokens(3, 2, 5, rng, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="float32 or float64"):
        model.sample_tokens(3, 2, 5, rng, dtype=np.int64)


@pytest.mark.parametrize("link", ["softmax", "hardmax"])
def test_plug_in_error_vanishes_at_the_teacher_only(link):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 2, 12))
    teacher = model.sample_teacher(12, 0.5, rng)
    y = model.apply_link(model.indices(X, teacher.S), link)
    assert model.plug_in_test_error(X, y, teacher.S, link) == 0.0
    wrong = model.plug_in_test_error(X, y, np.eye(12), link)
    assert wrong > 0.05
    if link == "hardmax":
        # each wrong row costs 2: the error is twice the wrong rows per sequence
        predicted = model.apply_link(model.indices(X, np.eye(12)), link)
        assert wrong == pytest.approx(2 * np.mean(np.sum(np.any(predicted != y, axis=-1), axis=-1)))
    with pytest.raises(ValueError, match="y must have shape"):
        model.plug_in_test_error(X, y[:, :1], teacher.S, link)
