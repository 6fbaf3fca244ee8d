"""Token laws (docs/paper1.md §13): validation, moments by Monte Carlo, determinism, and the Gaussian bits.

The Gaussian law must draw exactly the numbers the samplers drew before the
laws existed (``rng.standard_normal`` of the tokens' shape and dtype), so a
default configuration rebuilds identical datasets and SGD runs.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import integrate, stats

from aimrepro.model import GAUSSIAN, TOKEN_LAWS, TokenLaw, sample_teacher, sample_tokens, token_law
from aimrepro.paper1 import data
from aimrepro.paper1.data import DatasetSpec, dataset_seed, sample_dataset
from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings, initial_problem, run_sgd

LAWS = [TokenLaw(), TokenLaw("rademacher"), TokenLaw("sparse", keep_prob=0.3), TokenLaw("student_t"),
        TokenLaw("student_t", dof=9.0)]


def dataset_spec(**changes):
    base = dict(link="hardmax", T=2, rho=0.5, d=12, alpha=0.4, replicate=2, n_test=20)
    return DatasetSpec(**{**base, **changes})


# ---------------------------------------------------------------------------
# the spec


@pytest.mark.parametrize(("fields", "message"), [
    (dict(name="cauchy"), "tokens must be one of"),
    (dict(name="sparse"), "keep_prob must be a number in \\(0, 1\\]"),
    (dict(name="sparse", keep_prob=0.0), "keep_prob must be a number in \\(0, 1\\]"),
    (dict(name="sparse", keep_prob=1.5), "keep_prob must be a number in \\(0, 1\\]"),
    (dict(name="gaussian", keep_prob=0.5), "keep_prob applies to sparse tokens only"),
    (dict(name="student_t", dof=4.0), "dof must be a finite number > 4"),
    (dict(name="student_t", dof=math.inf), "dof must be a finite number > 4"),
    (dict(name="rademacher", dof=5.0), "dof applies to student_t tokens only"),
])
def test_a_bad_law_is_refused_with_its_field_and_range(fields, message):
    with pytest.raises(ValueError, match=message):
        token_law(**fields)


def test_defaults_names_and_path_tokens():
    assert TOKEN_LAWS == ("gaussian", "rademacher", "sparse", "student_t")
    assert TokenLaw("student_t").dof == 5.0
    assert [law.token for law in LAWS] == ["gaussian", "rademacher", "sparse_p0.3", "student_t_nu5",
                                          "student_t_nu9"]
    for law in LAWS:
        assert TokenLaw.parse(law.token) == law
        assert TokenLaw(**law.to_dict()) == law
    assert GAUSSIAN.is_gaussian and not TokenLaw("rademacher").is_gaussian
    assert [law.path_suffix for law in LAWS[:3]] == ["", "_tok-rademacher", "_tok-sparse_p0.3"]
    assert [law.sixth_moment_finite for law in LAWS] == [True, True, True, False, True]


@pytest.mark.parametrize(("law", "kurtosis"), [
    (TokenLaw(), 0.0), (TokenLaw("rademacher"), -2.0), (TokenLaw("sparse", keep_prob=0.25), 9.0),
    (TokenLaw("student_t"), 6.0), (TokenLaw("student_t", dof=10.0), 1.0)])
def test_excess_kurtosis_closed_forms(law, kurtosis):
    assert law.excess_kurtosis == pytest.approx(kurtosis, rel=1e-15)


# ---------------------------------------------------------------------------
# moments by Monte Carlo


def continuous_part(law: TokenLaw):
    """(weight, density) of the law's continuous part (Rademacher has none; sparse has an atom at 0)."""
    if law.name == "gaussian":
        return 1.0, stats.norm.pdf
    if law.name == "sparse":
        return law.keep_prob, stats.norm(scale=1 / math.sqrt(law.keep_prob)).pdf
    nu = law.dof
    return 1.0, stats.t(nu, scale=math.sqrt((nu - 2) / nu)).pdf


def moment_integral(law: TokenLaw, k: int, lo: float, hi: float) -> float:
    """∫ x^k over lo <= |x| <= hi of the law (the atom at 0 adds nothing for k >= 1)."""
    if law.name == "rademacher":
        return 1.0 if lo <= 1 <= hi and k % 2 == 0 else 0.0
    weight, density = continuous_part(law)
    value, _ = integrate.quad(lambda x: 2 * x ** k * density(x), lo, hi, epsabs=1e-13, epsrel=1e-12, limit=200)
    return weight * value


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.token)
def test_mean_zero_variance_one_and_the_fourth_moment(law):
    """Mean, variance and the truncated fourth moment within 5 standard errors of their exact values.

    The fourth moment of the Student-t law with ν = 5 has no finite variance
    (E x⁸ = ∞), so every law is checked on E[x⁴; |x| <= 6], whose sample mean
    has a finite error, against the integral of its density; that integral
    plus the tail beyond 6 is the law's closed-form fourth moment.
    """
    x = law.sample(np.random.default_rng(11), 2_000_000)
    n = x.size
    assert abs(x.mean()) <= 5 * x.std() / math.sqrt(n)
    second = x * x
    assert abs(second.mean() - 1.0) <= 5 * second.std() / math.sqrt(n)
    cut = 6.0
    fourth = np.where(np.abs(x) <= cut, second * second, 0.0)
    expected = moment_integral(law, 4, 0.0, cut)
    assert abs(fourth.mean() - expected) <= 5 * fourth.std() / math.sqrt(n) + 1e-12
    assert expected + moment_integral(law, 4, cut, np.inf) == pytest.approx(law.fourth_moment, rel=1e-8)
    assert moment_integral(law, 2, 0.0, np.inf) == pytest.approx(1.0, rel=1e-8)


@pytest.mark.parametrize("law", [law for law in LAWS if law.name in ("sparse", "student_t")],
                         ids=lambda law: law.token)
def test_the_whole_law_by_kolmogorov_smirnov(law):
    x = law.sample(np.random.default_rng(5), 200_000)
    if law.name == "student_t":
        nu = law.dof
        cdf = stats.t(nu, scale=math.sqrt((nu - 2) / nu)).cdf
    else:
        p = law.keep_prob
        cdf = lambda v: (1 - p) * (np.asarray(v) >= 0) + p * stats.norm.cdf(np.asarray(v) * math.sqrt(p))  # noqa: E731
        x = x[x != 0]  # the atom: its mass is tested below, the continuous part here
        cdf_continuous = lambda v: stats.norm.cdf(np.asarray(v) * math.sqrt(p))  # noqa: E731
        assert stats.kstest(x, cdf_continuous).pvalue > 1e-3
        kept = x.size / 200_000
        assert abs(kept - p) <= 5 * math.sqrt(p * (1 - p) / 200_000)
        return
    assert stats.kstest(x, cdf).pvalue > 1e-3


# ---------------------------------------------------------------------------
# determinism, coupling and the Gaussian bits


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.token)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_seed_same_bits_and_the_requested_dtype(law, dtype):
    a = sample_tokens(7, 3, 11, np.random.default_rng(4), dtype=dtype, law=law)
    b = sample_tokens(7, 3, 11, np.random.default_rng(4), dtype=dtype, law=law)
    assert a.dtype == np.dtype(dtype) and a.shape == (7, 3, 11)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, sample_tokens(7, 3, 11, np.random.default_rng(5), dtype=dtype, law=law))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_gaussian_law_draws_exactly_the_numbers_drawn_before_the_laws(dtype):
    # the code path before token laws existed: rng.standard_normal((n, T, d), dtype=dtype)
    before = np.random.default_rng(3).standard_normal((9, 2, 13), dtype=dtype)
    assert np.array_equal(sample_tokens(9, 2, 13, np.random.default_rng(3), dtype=dtype), before)
    assert np.array_equal(GAUSSIAN.sample(np.random.default_rng(3), (9, 2, 13), dtype), before)


def test_the_laws_are_coupled_through_the_same_normals():
    g = GAUSSIAN.sample(np.random.default_rng(8), (5, 2, 40))
    assert np.array_equal(TokenLaw("rademacher").sample(np.random.default_rng(8), g.shape), np.where(g >= 0, 1.0, -1.0))
    p = 0.4
    sparse = TokenLaw("sparse", keep_prob=p).sample(np.random.default_rng(8), g.shape)
    kept = sparse != 0
    assert np.allclose(sparse[kept], g[kept] / math.sqrt(p), rtol=1e-15)
    student = TokenLaw("student_t").sample(np.random.default_rng(8), g.shape)
    assert np.array_equal(np.sign(student), np.sign(g))


def test_a_gaussian_dataset_is_the_dataset_of_the_code_before_the_laws():
    """Teacher, tokens, labels and file bytes of the default law equal the pre-law code path."""
    spec = dataset_spec()
    ds = sample_dataset(spec, 21)
    teacher_ss, train_ss, test_ss = dataset_seed(21, spec).spawn(3)
    assert np.array_equal(ds.W, sample_teacher(spec.d, spec.rho, np.random.default_rng(teacher_ss)).W)
    assert np.array_equal(ds.X, np.random.default_rng(train_ss).standard_normal((spec.n, 2, spec.d), dtype=np.float32))
    assert np.array_equal(ds.X_test, np.random.default_rng(test_ss).standard_normal((20, 2, spec.d), dtype=np.float32))
    assert "tokens" not in data.spec_metadata(spec)


def test_laws_share_the_seed_the_teacher_and_the_normals_but_not_the_path_fields(tmp_path):
    gaussian = sample_dataset(dataset_spec(), 21)
    law = TokenLaw("sparse", keep_prob=0.5)
    other = sample_dataset(dataset_spec(tokens=law), 21)
    assert np.array_equal(dataset_seed(21, dataset_spec()).generate_state(4),
                          dataset_seed(21, dataset_spec(tokens=law)).generate_state(4))
    assert np.array_equal(gaussian.W, other.W)
    kept = other.X != 0
    assert np.allclose(other.X[kept], gaussian.X[kept] / np.float32(math.sqrt(0.5)), rtol=1e-6)
    assert data.spec_metadata(other.spec)["tokens"] == {"name": "sparse", "keep_prob": 0.5}
    path = tmp_path / "law.npz"
    data.save_dataset(path, other)
    back = data.load_dataset(path)
    assert back.spec == other.spec and back.spec.tokens == law
    assert np.array_equal(back.X, other.X) and np.array_equal(back.y, other.y)


def test_a_dataset_spec_refuses_a_token_law_that_is_not_one():
    with pytest.raises(ValueError, match="tokens must be a model.TokenLaw"):
        dataset_spec(tokens="rademacher")


def test_sgd_data_streams_draw_the_law_and_the_gaussian_one_is_unchanged():
    spec = ProblemSpec("tied", "h2", 1, 20, rho=0.5)
    settings = SGDSettings(lr=0.01, batch=8, horizon=0.02, n_records=3)
    student, teacher, rng = initial_problem(spec, 4)
    before = run_sgd(student, teacher, spec.loss(), 1, settings, rng)  # the default law
    again = SGDRun(spec, settings, 4).run()
    assert np.array_equal(before.order, again.order)
    # the pre-law loop drew rng.standard_normal((B, T, d)) per step: same first batch
    _, _, rng_a = initial_problem(spec, 4)
    _, _, rng_b = initial_problem(spec, 4)
    assert np.array_equal(GAUSSIAN.sample(rng_a, (8, 1, 20)), rng_b.standard_normal((8, 1, 20)))
    rademacher = SGDRun(replace(spec, tokens=TokenLaw("rademacher")), settings, 4).run()
    assert rademacher.order[0].tolist() == before.order[0].tolist()  # same initial state
    assert not np.array_equal(rademacher.order[-1], before.order[-1])
    with pytest.raises(ValueError, match="tokens must be a model.TokenLaw"):
        ProblemSpec("tied", "h2", 1, 20, tokens="gaussian")
