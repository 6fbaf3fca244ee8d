"""The two-layer attention-indexed model and its datasets (``docs/paper1.md`` §14.1).

Paper 1 writes a deep attention network as X_ℓ = [c I + σ(X_{ℓ−1} S_ℓ X_{ℓ−1}ᵀ/√d)] X_{ℓ−1}
(σ the row softmax, c the skip strength).  Read literally the indices are not
centred, and Tr S/√d = √(ρ d) diverges: layer 1's softmax tends to the identity
and layer 2's logits carry √d (Tr S₂/d) A Aᵀ, which is not constant along rows.
The reading that is an AIM in the paper's own sense centres every layer, as its
one-layer index does (§1.2):

    H_ℓ = (X S_ℓ Xᵀ − Tr(S_ℓ) I)/√d,   A = c I + softmax(H₁),   y = softmax(A H₂ Aᵀ),

S_ℓ = W_ℓW_ℓᵀ/√(r d) with independent W₁, W₂ of width r = ρ d.  The label is a
function of the two index arrays only (layer 2 sees the tokens A X).

For T = 2 the label is stored both as y and as its row log-odds
u = (M₁₁ − M₁₂, M₂₂ − M₂₁), M = A H₂ Aᵀ, computed from the logits themselves:
u is what the theory and GAMP-RIE use (``fibre``), and log(y₁₁/y₁₂) would lose
its digits where a softmax row saturates.

Datasets (:func:`sample_dataset`) follow ``paper1.data``: a SeedSequence keyed
by the base seed and a hash of (T, ρ, d, α, c, replicate); the two teachers, the
training set and the test set come from four independent child streams; tokens
are drawn as float32 and the labels computed from exactly those numbers.
Costs: O(n T d r) per layer (indices from the factors), O(n T³) for the labels.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass

import numpy as np

from aimrepro.model import indices_from_factor, sample_teacher, sample_tokens
from aimrepro.numerics.softmax import log_softmax
from aimrepro.paper1.data import DatasetSpec, keyed_seed, write_npz
from aimrepro.paper1.two_layer.fibre import check_skip

__all__ = ["DATASET_FORMAT", "TwoLayerDataset", "TwoLayerSpec", "attention", "dataset_seed", "labels",
           "load_dataset", "logits", "row_log_odds", "sample_dataset", "save_dataset"]

DATASET_FORMAT = "aimrepro.two_layer_dataset/1"


def attention(h1: np.ndarray, skip: float) -> np.ndarray:
    """A = c I + softmax(H₁) row-wise: (..., T, T)."""
    c = check_skip(skip)
    h1 = np.asarray(h1, dtype=float)
    return c * np.eye(h1.shape[-1]) + np.exp(log_softmax(h1, axis=-1))


def logits(h1: np.ndarray, h2: np.ndarray, skip: float) -> np.ndarray:
    """M = A H₂ Aᵀ, the layer-2 logits seen by the output softmax: (..., T, T)."""
    A = attention(h1, skip)
    return A @ np.asarray(h2, dtype=float) @ np.swapaxes(A, -1, -2)


def labels(h1: np.ndarray, h2: np.ndarray, skip: float) -> np.ndarray:
    """y = softmax(A H₂ Aᵀ) row-wise (module notes)."""
    return np.exp(log_softmax(logits(h1, h2, skip), axis=-1))


def row_log_odds(M: np.ndarray) -> np.ndarray:
    """u = (M₁₁ − M₁₂, M₂₂ − M₂₁) of T = 2 logits: (..., 2, 2) → (..., 2)."""
    M = np.asarray(M, dtype=float)
    if M.shape[-2:] != (2, 2):
        raise ValueError(f"row log-odds are defined here for T = 2 logits (..., 2, 2), got {M.shape}")
    return np.stack([M[..., 0, 0] - M[..., 0, 1], M[..., 1, 1] - M[..., 1, 0]], axis=-1)


@dataclass(frozen=True)
class TwoLayerSpec:
    """What a two-layer dataset is: T = 2, ρ, d, α, skip c, replicate, test size.

    Parameters
    ----------
    rho : width ratio of both layers, finite > 0
    d : token dimension, >= 2
    alpha : sample ratio n/d², finite > 0
    skip : the skip strength c >= 0
    replicate : index of the independent draw, >= 0
    n_test : size of the fresh test set, >= 1
    T : tokens per sequence (2: the theory's case)

    The fields shared with one layer are checked, and n and r computed, by
    the softmax ``paper1.data.DatasetSpec`` of the same sizes.
    """

    rho: float
    d: int
    alpha: float
    skip: float
    replicate: int
    n_test: int = 1000
    T: int = 2

    def __post_init__(self):
        if self.T != 2:
            raise ValueError(f"the two-layer model is implemented for T = 2 tokens, got T={self.T!r}")
        check_skip(self.skip)
        self._one_layer()

    def _one_layer(self) -> DatasetSpec:
        return DatasetSpec("softmax", self.T, self.rho, self.d, self.alpha, self.replicate, self.n_test, 1.0)

    @property
    def n(self) -> int:
        return self._one_layer().n

    @property
    def r(self) -> int:
        return self._one_layer().r


def dataset_seed(base_seed: int, spec: TwoLayerSpec) -> np.random.SeedSequence:
    """SeedSequence of one dataset: the base seed and a sha256 of (T, ρ, d, α, c, replicate)."""
    return keyed_seed(base_seed, f"aim-two-layer-dataset|T={spec.T}|rho={float(spec.rho)!r}|d={spec.d}"
                                 f"|alpha={float(spec.alpha)!r}|skip={float(spec.skip)!r}"
                                 f"|replicate={spec.replicate}")


@dataclass(frozen=True)
class TwoLayerDataset:
    """Teachers W₁, W₂ (d, r); tokens X (n, 2, d) float32; labels y (n, 2, 2) and u (n, 2); the same for the test set."""

    spec: TwoLayerSpec
    base_seed: int
    W1: np.ndarray
    W2: np.ndarray
    X: np.ndarray
    y: np.ndarray
    u: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    u_test: np.ndarray

    @property
    def S1(self) -> np.ndarray:
        return self.W1 @ self.W1.T / math.sqrt(self.W1.shape[1] * self.spec.d)

    @property
    def S2(self) -> np.ndarray:
        return self.W2 @ self.W2.T / math.sqrt(self.W2.shape[1] * self.spec.d)


def _labels_from_factors(X, W1, W2, d, skip):
    scale = 1.0 / math.sqrt(W1.shape[1] * d)
    M = logits(indices_from_factor(X, W1, scale), indices_from_factor(X, W2, scale), skip)
    return np.exp(log_softmax(M, axis=-1)), row_log_odds(M)


def sample_dataset(spec: TwoLayerSpec, base_seed: int) -> TwoLayerDataset:
    """Draw both teachers, n training and n_test test sequences and their labels (module notes)."""
    first, second, train, test = dataset_seed(base_seed, spec).spawn(4)
    W1 = sample_teacher(spec.d, spec.rho, np.random.default_rng(first)).W
    W2 = sample_teacher(spec.d, spec.rho, np.random.default_rng(second)).W
    X = sample_tokens(spec.n, spec.T, spec.d, np.random.default_rng(train), dtype=np.float32)
    X_test = sample_tokens(spec.n_test, spec.T, spec.d, np.random.default_rng(test), dtype=np.float32)
    y, u = _labels_from_factors(X, W1, W2, spec.d, spec.skip)
    y_test, u_test = _labels_from_factors(X_test, W1, W2, spec.d, spec.skip)
    return TwoLayerDataset(spec, int(base_seed), W1, W2, X, y, u, X_test, y_test, u_test)


def save_dataset(path: str | os.PathLike, dataset: TwoLayerDataset) -> None:
    """Write a dataset as an uncompressed ``.npz`` (byte-reproducible, ``paper1.data.write_npz``)."""
    meta = {"format": DATASET_FORMAT, "spec": asdict(dataset.spec), "base_seed": dataset.base_seed}
    write_npz(path, {"W1": dataset.W1, "W2": dataset.W2, "X": dataset.X, "y": dataset.y, "u": dataset.u,
                     "X_test": dataset.X_test, "y_test": dataset.y_test, "u_test": dataset.u_test,
                     "meta": np.array(json.dumps(meta, sort_keys=True))})


def load_dataset(path: str | os.PathLike) -> TwoLayerDataset:
    """Read a dataset written by :func:`save_dataset`."""
    with np.load(path, allow_pickle=False) as archive:
        meta = json.loads(str(archive["meta"]))
        if meta.get("format") != DATASET_FORMAT:
            raise ValueError(f"{path} is not a two-layer dataset (format {meta.get('format')!r})")
        arrays = {name: archive[name] for name in ("W1", "W2", "X", "y", "u", "X_test", "y_test", "u_test")}
    return TwoLayerDataset(TwoLayerSpec(**meta["spec"]), int(meta["base_seed"]), **arrays)
