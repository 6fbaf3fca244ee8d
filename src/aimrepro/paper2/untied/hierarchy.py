"""Untied attention: the moment hierarchy of the slow flow over words in the factors.

Normalised traces of words of the slow matrix flow obey a hierarchy
[P eq. 32]; the substitutions of [P eq. 31] (transposes lost in our copy of
the text) are re-derived in :func:`hierarchy_velocity` (``docs/paper2.md``
§2.3) and tested against finite differences of the moments.
"""

from __future__ import annotations

import numpy as np

#: Letters of the alphabet of [P eq. 26] for K = 2: M, Mᵀ, A = U Uᵀ, B = V Vᵀ of index k.
LETTERS = ("M1", "M1T", "A1", "B1", "M2", "M2T", "A2", "B2")


def hierarchy_velocity(word, matrices: dict[str, np.ndarray], *, bias: float, a: np.ndarray,
                       b: np.ndarray, weight_decay: float = 0.0) -> float:
    """d μ_α/dτ of the slow flow for a word α of letters ([P eq. 32]), with dense matrices.

    Each trainable letter (index 1) of the word is replaced, one at a time, by
    its velocity under the slow flow,

        M  → −β̄ (A + B) − 2 Σ_l [a_l (M_l B + A M_l) + b_l (M_lᵀ B + A M_lᵀ)],
        Mᵀ → −β̄ (A + B) − 2 Σ_l [a_l (B M_lᵀ + M_lᵀ A) + b_l (B M_l + M_l A)],
        A  → −β̄ (M + Mᵀ) − 2 Σ_l [a_l (M_l Mᵀ + M M_lᵀ) + b_l (M_lᵀ Mᵀ + M M_l)],
        B  → −β̄ (M + Mᵀ) − 2 Σ_l [a_l (M_lᵀ M + Mᵀ M_l) + b_l (M_l M + Mᵀ M_lᵀ)],

    minus 2γ times the letter, and the normalised traces are summed.  These
    are [P eq. 31]'s T^bias and T^diff with the transposes restored: for the
    letter Mᵀ the coefficient of q⁽ʳ⁾ multiplies M_l^(r̄) (the paper's
    r̄, 1̄ = 2, 2̄ = 1), for A and B it is M_l^(r) M_kᵀ + M_k (M_l^(r))ᵀ and
    (M_l^(r))ᵀ M_k + M_kᵀ M_l^(r) (``docs/paper2.md`` §2.3).

    Parameters
    ----------
    word : sequence of str
        Letters of :data:`LETTERS`, e.g. ``("M1", "M2T")`` for q⁽¹⁾₁₂.
    matrices : dict
        ``M1, A1, B1, M2, A2, B2``: dense d×d matrices (transposes are taken here).
    bias, a, b, weight_decay
        β̄, ∇_{q⁽¹⁾}Φ, ∇_{q⁽²⁾}Φ (2×2, symmetric convention) and γ.

    Notes
    -----
    Dense d×d products: for tests and small d only (O(w² d³) per word).
    """
    unknown = [z for z in word if z not in LETTERS]
    if unknown:
        raise ValueError(f"letters must be among {LETTERS}, got {unknown}")
    M = {1: matrices["M1"], 2: matrices["M2"]}
    A, B, Mt = matrices["A1"], matrices["B1"], M[1].T
    full = dict(matrices, M1T=M[1].T, M2T=M[2].T)
    velocity = {
        "M1": -bias * (A + B) - 2.0 * sum(a[0, l - 1] * (M[l] @ B + A @ M[l])
                                          + b[0, l - 1] * (M[l].T @ B + A @ M[l].T)
                                          for l in (1, 2)),
        "M1T": -bias * (A + B) - 2.0 * sum(a[0, l - 1] * (B @ M[l].T + M[l].T @ A)
                                           + b[0, l - 1] * (B @ M[l] + M[l] @ A)
                                           for l in (1, 2)),
        "A1": -bias * (M[1] + Mt) - 2.0 * sum(a[0, l - 1] * (M[l] @ Mt + M[1] @ M[l].T)
                                              + b[0, l - 1] * (M[l].T @ Mt + M[1] @ M[l])
                                              for l in (1, 2)),
        "B1": -bias * (M[1] + Mt) - 2.0 * sum(a[0, l - 1] * (M[l].T @ M[1] + Mt @ M[l])
                                              + b[0, l - 1] * (M[l] @ M[1] + Mt @ M[l].T)
                                              for l in (1, 2)),
    }
    d = M[1].shape[0]
    total = 0.0
    for i, letter in enumerate(word):
        if letter not in velocity:
            continue
        product = np.eye(d)
        for j, other in enumerate(word):
            product = product @ (velocity[letter] - 2.0 * weight_decay * full[letter]
                                 if j == i else full[other])
        total += np.trace(product) / d
    return float(total)
