"""aimrepro.numerics.softmax: scipy's log-softmax, bit for bit, without importing scipy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import special

from aimrepro.numerics.softmax import log_softmax


@pytest.mark.parametrize("shape, axis", [((7,), -1), ((5, 4, 3), -1), ((5, 4, 3), 1), ((6, 2), 0)])
def test_the_same_bits_as_scipy(shape, axis):
    x = np.random.default_rng(3).standard_normal(shape) * 40.0
    np.testing.assert_array_equal(log_softmax(x, axis=axis), special.log_softmax(x, axis=axis))


def test_infinite_entries_as_scipy():
    x = np.array([[0.0, -np.inf, 2.0], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 0.0]])
    with np.errstate(invalid="ignore"):
        ours, theirs = log_softmax(x), special.log_softmax(x, axis=-1)
    np.testing.assert_array_equal(ours, theirs)
    assert ours[0, 1] == -np.inf and np.isnan(ours[1]).all()


def test_rows_are_normalised_far_beyond_exp_overflow():
    x = np.array([[1000.0, 999.0, -1000.0]])
    assert np.isclose(np.exp(log_softmax(x)).sum(), 1.0)


def test_sampling_and_sgd_jobs_do_not_import_scipy_special():
    """The reason for the module: each such job is a process, and scipy.special costs ~0.1 s."""
    code = ("import sys, aimrepro.paper1.data, aimrepro.paper2.sgd, aimrepro.paper2.losses; "
            "print('scipy.special' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
