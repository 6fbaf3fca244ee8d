"""Radius of convergence of the tied truncations in the linear case (ours; [P App. D.3])."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper2 import truncation_radius as tr


def test_without_teacher_the_radius_is_one_over_four_lambda_max():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((8, 5)) / 2
    result = tr.riccati_radius(W, np.zeros((8, 8)), prefactor=1.0)
    lam_max = np.linalg.eigvalsh(W.T @ W)[-1]
    assert result.converged
    assert result.radius == pytest.approx(1.0 / (4 * lam_max), rel=1e-10)
    assert result.singularity.real < 0 and abs(result.singularity.imag) < 1e-12
    assert result.no_teacher_radius == pytest.approx(result.radius)


@pytest.mark.parametrize(("lam0", "c_star", "prefactor"), [(3.0, 1.0, 1.0), (2.0, 0.5, 0.5)])
def test_rank_one_student_against_a_multiple_of_identity_has_the_logistic_pole(lam0, c_star,
                                                                               prefactor):
    """λ(t) = aλ₀/(bλ₀ + (a − bλ₀)e^{−at}), a = 4c c*, b = 4c ([P eq. 347]): pole at
    t = −ln(bλ₀/(bλ₀ − a))/a for bλ₀ > a."""
    d = 5
    W = np.zeros((d, 1))
    W[0, 0] = math.sqrt(lam0)
    result = tr.riccati_radius(W, c_star * np.eye(d), prefactor=prefactor)
    a, b = 4 * prefactor * c_star, 4 * prefactor
    pole = -math.log(b * lam0 / (b * lam0 - a)) / a
    assert result.converged
    assert result.singularity.real == pytest.approx(pole, rel=1e-9)
    assert result.radius == pytest.approx(abs(pole), rel=1e-9)
    assert abs(tr.riccati_determinant(W, c_star * np.eye(d), result.singularity,
                                      prefactor=prefactor)) < 1e-9
    # the teacher pushes the singularity out, beyond 1/(b λ₀)
    assert result.radius > result.no_teacher_radius


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="symmetric"):
        tr.riccati_radius(np.ones((3, 1)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="prefactor"):
        tr.riccati_radius(np.ones((3, 1)), np.eye(3), prefactor=0.0)
