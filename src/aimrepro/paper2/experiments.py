"""The population-level experiments of paper 2: Theorem 1 at finite d (S1) and the landscape (S2).

Each function computes one result table (a dict of equal-length columns for
:func:`aimrepro.records.tables.write_table`) from explicit parameters and a seed;
the workflow scripts call them and write the tables.
"""

from __future__ import annotations

import math

import numpy as np

from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.matrices import FactoredMatrix
from aimrepro.paper2.population import IndexLaw, Potential, finite_d_loss, law_of_pair
from aimrepro.paper2.sgd import derive_seed

__all__ = ["aim_tied_limits", "landscape_table", "operator_to_frobenius", "theorem1_table"]


def aim_tied_limits(rho: float) -> dict[str, float]:
    """d → ∞ order parameters of an AIM tied matrix S = W Wᵀ/√(r d), r = ρ d (``docs/paper2.md`` §1).

    t = √ρ, q = 1 + ρ, p = q − t² = 1; two independent ones have q₁₂ = t₁t₂ = ρ,
    i.e. the tied uninformative cosine ρ/(1 + ρ) (``docs/paper2.md`` §3.4).
    """
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho}")
    return {"t": math.sqrt(rho), "q": 1.0 + rho, "p": 1.0, "q12_uninformative": rho,
            "cosine_uninformative": rho / (1.0 + rho)}


def operator_to_frobenius(matrix: FactoredMatrix) -> float:
    """‖S‖_op/‖S‖_F of a symmetric factored S = c L Lᵀ (the extensive-rank ratio of [P Ass. 1.1])."""
    if not matrix.symmetric or matrix.shift:
        raise ValueError("operator_to_frobenius needs S = c L Lᵀ")
    singular = np.linalg.svd(matrix.left, compute_uv=False)
    eig = abs(matrix.scale) * singular ** 2
    return float(eig.max() / math.sqrt(np.sum(eig ** 2)))


def theorem1_table(links, *, T: int, d: int, rho: float, beta: float, n_samples: int,
                   seed: int) -> tuple[dict[str, np.ndarray], dict]:
    """Finite-d population loss against Φ(q) for several links at one d (Figure S1).

    Teacher S* = W*W*ᵀ/√(r d) and an informative student
    S = [W*, W'][W*, W']ᵀ/√(2 r d) (AIM scalings, ``docs/paper2.md`` §1, with
    q₁₂ > t₁t₂), both tied and centered.  For each link: the Monte-Carlo loss
    over n_samples sequences (control-variate and plain estimates, see
    :func:`~aimrepro.paper2.population.finite_d_loss`) and Φ at the same
    finite-d order parameters; the gap is their difference (Theorem 1:
    → 0 as ‖S‖_op/‖S‖_F → 0).

    Returns
    -------
    columns : dict
        One row: ``d``, ``op_over_frob`` (of the student), ``q11``, ``q12``,
        ``q22``, and per link ``{link}_mc``, ``{link}_mc_stderr``,
        ``{link}_plain``, ``{link}_plain_stderr``, ``{link}_phi``.
    diagnostics : dict
    """
    r = max(1, int(round(rho * d)))
    rng = np.random.default_rng(derive_seed(seed, "theorem1", d, r))
    W_teacher = rng.standard_normal((d, r))
    W_extra = rng.standard_normal((d, r))
    teacher = FactoredMatrix(W_teacher, None, 1.0 / math.sqrt(r * d))
    student = FactoredMatrix(np.hstack([W_teacher, W_extra]), None, 1.0 / math.sqrt(2 * r * d))
    losses = [MSELoss(make_link(name, beta=beta), make_link(name, beta=beta)) for name in links]
    estimates = finite_d_loss(losses, student, teacher, T, n_samples, rng)
    law = law_of_pair(student, teacher, T, centered=True)
    columns: dict[str, np.ndarray] = {
        "d": np.array([d]), "op_over_frob": np.array([operator_to_frobenius(student)]),
        "q11": np.array([law.Omega[0, 0]]), "q12": np.array([law.Omega[0, 1]]),
        "q22": np.array([law.Omega[1, 1]])}
    methods = {}
    for name, loss, est in zip(links, losses, estimates):
        potential = Potential(loss, T)
        phi = potential.evaluate(law, gradient=False)
        methods[name] = phi.method
        columns[f"{name}_mc"] = np.array([est.value])
        columns[f"{name}_mc_stderr"] = np.array([est.stderr])
        columns[f"{name}_plain"] = np.array([est.plain_value])
        columns[f"{name}_plain_stderr"] = np.array([est.plain_stderr])
        columns[f"{name}_phi"] = np.array([phi.value])
    return columns, {"converged": True, "phi_methods": methods, "n_samples": n_samples}


def landscape_table(link: str, *, T: int, rho: float, beta: float, n_grid: int) -> tuple[
        dict[str, np.ndarray], dict]:
    """Φ over a grid of (q₁₁, q₁₂) at the AIM teacher norm q₂₂ = 1 + ρ (Figure S2).

    q₁₁ runs over n_grid points in (0, 2q₂₂] (the grid contains q₁₁ = q₂₂),
    q₁₂ over n_grid points of [−2q₂₂, 2q₂₂]; points outside the PSD set
    |q₁₂| ≤ √(q₁₁ q₂₂) have Φ = NaN.  Centered symmetric matrices, c = ½.
    """
    if not (isinstance(n_grid, (int, np.integer)) and n_grid >= 3 and n_grid % 2 == 1):
        raise ValueError(f"n_grid must be an odd integer >= 3, got {n_grid!r}")
    limits = aim_tied_limits(rho)
    q22 = limits["q"]
    q11_values = np.linspace(0.0, 2.0 * q22, n_grid)[1:]
    q11_values = np.union1d(q11_values, [q22])
    q12_values = np.linspace(-2.0 * q22, 2.0 * q22, n_grid)
    potential = Potential(MSELoss(make_link(link, beta=beta), make_link(link, beta=beta)), T)
    rows = {"q11": [], "q12": [], "q22": [], "cosine": [], "phi": []}
    for q11 in q11_values:
        bound = math.sqrt(q11 * q22)
        for q12 in q12_values:
            feasible = abs(q12) <= bound * (1 + 1e-12)
            q12c = float(np.clip(q12, -bound, bound))
            value = (potential.evaluate(IndexLaw.symmetric([[q11, q12c], [q12c, q22]], T),
                                        gradient=False).value if feasible else math.nan)
            rows["q11"].append(q11)
            rows["q12"].append(q12)
            rows["q22"].append(q22)
            rows["cosine"].append(q12 / bound)
            rows["phi"].append(value)
    columns = {name: np.asarray(values, dtype=float) for name, values in rows.items()}
    return columns, {"converged": True, "method": potential.method, **limits}
