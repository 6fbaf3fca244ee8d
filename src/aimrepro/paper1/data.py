"""AIM datasets: a teacher, training sequences and a fresh test set, one per job.

A dataset is fixed by a :class:`DatasetSpec` — link (and softmax β), T, ρ,
d, α, replicate index, test-set size — and a *base seed* (the config's
``seed``).  The random numbers come from a :class:`numpy.random.SeedSequence`
keyed by the base seed and a hash of the spec's scientific parameters
(:func:`dataset_seed`), so

* the same (base seed, spec) gives the same bits on every machine and run;
* adding a grid point or a replicate never changes another dataset;
* the teacher, the training set and the test set use three independent
  child streams, so changing the test-set size changes neither the teacher
  nor the training data.

The model is that of ``docs/paper1.md`` §1: tokens i.i.d. N(0, 1) (or another
law with mean 0 and variance 1, ``DatasetSpec.tokens``, §13), teacher
S* = W Wᵀ/√(r d) with r = round(ρ d), labels y = g(h) with
h = (X S* Xᵀ − Tr S*·I)/√d, n = round(α d²) sequences.

Storage (``.npz``, uncompressed: Gaussian floats do not compress)
------------------------------------------------------------------
``W`` (d, r) float64, ``X`` (n, T, d) and ``X_test`` (n_test, T, d) float32,
``y`` and ``y_test`` (·, T, T) float64, ``meta`` a JSON string with the spec,
the base seed and :data:`DATASET_FORMAT`.  The tokens are drawn *as* float32
numbers (half the disk and memory of float64) and the labels are computed
from exactly those numbers, so the stored data are self-consistent; every
consumer (AMP, GD) converts them to float64 once.  Size: 4 (n + n_test) T d
bytes for the tokens, e.g. 22 MB for the hardmax point d = 100, α = 2.7.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import zipfile
from dataclasses import asdict, dataclass

import numpy as np

from aimrepro.model import (GAUSSIAN, LINKS, Teacher, TokenLaw, apply_link, indices_from_factor,
                            sample_teacher, sample_tokens, width)
from aimrepro.records.files import atomic_path

DATASET_FORMAT = "aimrepro.dataset/1"

#: Most training sequences a dataset may have (``DatasetSpec``): 1e8.
MAX_SEQUENCES = 10**8

#: Link whose labels depend on an inverse temperature β.
_TEMPERED_LINKS = ("softmax",)


@dataclass(frozen=True)
class DatasetSpec:
    """What a dataset is: link, β (softmax only), T, ρ, d, α, replicate, test size.

    Parameters
    ----------
    link : one of ``model.LINKS`` (``softmax``, ``hardmax``, ``linear``)
    T : tokens per sequence, >= 2
    rho : width ratio ρ = r/d > 0
    d : token dimension, >= 2
    alpha : sample ratio α = n/d² > 0; n = round(α d²) >= 1
    replicate : index of the independent draw at this point (the ``seed`` of result paths), >= 0
    n_test : size of the fresh test set, >= 1
    beta : softmax inverse temperature (finite > 0); must be None for the other links
    tokens : the law of the token coordinates (``model.TokenLaw``; default Gaussian, §13)
    """

    link: str
    T: int
    rho: float
    d: int
    alpha: float
    replicate: int
    n_test: int
    beta: float | None = None
    tokens: TokenLaw = GAUSSIAN

    def __post_init__(self):
        if not isinstance(self.tokens, TokenLaw):
            raise ValueError(f"tokens must be a model.TokenLaw, got {self.tokens!r}")
        if self.link not in LINKS:
            raise ValueError(f"link must be one of {LINKS}, got {self.link!r}")
        for name, minimum in (("T", 2), ("d", 2), ("replicate", 0), ("n_test", 1)):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= minimum):
                raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        for name in ("rho", "alpha"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        if self.link in _TEMPERED_LINKS:
            if self.beta is None or not (math.isfinite(self.beta) and self.beta > 0):
                raise ValueError(f"beta must be a finite number > 0 for the {self.link} link, got {self.beta!r}")
        elif self.beta is not None:
            raise ValueError(f"beta applies to the softmax link only, got beta={self.beta!r} for {self.link!r}")
        if self.n > MAX_SEQUENCES:
            raise ValueError(f"alpha d^2 = {self.n} sequences is beyond what this module is meant for "
                             f"({MAX_SEQUENCES:.0e})")

    @property
    def n(self) -> int:
        """Number of training sequences, round(α d²), at least 1."""
        return max(1, int(round(self.alpha * self.d * self.d)))

    @property
    def r(self) -> int:
        """Teacher width round(ρ d), at least 1."""
        return width(self.d, self.rho)


def dataset_seed(base_seed: int, spec: DatasetSpec) -> np.random.SeedSequence:
    """The seed sequence of one dataset: base seed + a hash of its scientific parameters.

    The key is the canonical text of (link, β, T, ρ, d, α, replicate) with
    floats in ``repr`` form; the test-set size is deliberately not part of it
    (the test set has its own child stream).  sha256 of the key gives four
    32-bit words used as the ``spawn_key``.

    The token law is not part of it either, on purpose: datasets that differ
    only in their law share the teacher and the standard normals their tokens
    are made from (``model.TokenLaw``), common random numbers for comparing a
    law with the Gaussian one (``docs/paper1.md`` §13); their paths differ.
    """
    return keyed_seed(base_seed, f"aim-dataset|link={spec.link}|beta={spec.beta!r}|T={spec.T}"
                                 f"|rho={float(spec.rho)!r}|d={spec.d}|alpha={float(spec.alpha)!r}"
                                 f"|replicate={spec.replicate}")


def keyed_seed(base_seed: int, key: str) -> np.random.SeedSequence:
    """SeedSequence with entropy ``base_seed`` and spawn key the first four 32-bit words of sha256(key).

    The one recipe behind every seed of paper 1's random objects: same (base seed,
    key), same stream; another key (another dataset, table replicate, …), an
    independent one.
    """
    if isinstance(base_seed, bool) or not (isinstance(base_seed, (int, np.integer)) and base_seed >= 0):
        raise ValueError(f"base_seed must be an integer >= 0, got {base_seed!r}")
    digest = hashlib.sha256(key.encode("ascii")).digest()
    words = tuple(int(w) for w in np.frombuffer(digest[:16], dtype="<u4"))
    return np.random.SeedSequence(entropy=int(base_seed), spawn_key=words)


@dataclass(frozen=True)
class Dataset:
    """A sampled dataset: teacher factor, training and test sequences with labels."""

    spec: DatasetSpec
    base_seed: int
    W: np.ndarray
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray

    @property
    def teacher(self) -> Teacher:
        return Teacher(self.W)

    @property
    def S(self) -> np.ndarray:
        """The teacher matrix S* = W Wᵀ/√(r d)."""
        return self.teacher.S


def _labels(X, W, spec):
    h = indices_from_factor(X, W, 1.0 / math.sqrt(W.shape[1] * spec.d))
    return apply_link(h, spec.link, beta=1.0 if spec.beta is None else spec.beta)


def sample_dataset(spec: DatasetSpec, base_seed: int) -> Dataset:
    """Draw the teacher, n training and n_test test sequences and their labels.

    O(n T d r) time (labels from the factor W), O(n T d) memory.
    """
    teacher_ss, train_ss, test_ss = dataset_seed(base_seed, spec).spawn(3)
    teacher = sample_teacher(spec.d, spec.rho, np.random.default_rng(teacher_ss))
    X = sample_tokens(spec.n, spec.T, spec.d, np.random.default_rng(train_ss), dtype=np.float32,
                      law=spec.tokens)
    X_test = sample_tokens(spec.n_test, spec.T, spec.d, np.random.default_rng(test_ss), dtype=np.float32,
                           law=spec.tokens)
    return Dataset(spec, int(base_seed), teacher.W, X, _labels(X, teacher.W, spec),
                   X_test, _labels(X_test, teacher.W, spec))


def training_arrays(X, y) -> tuple[np.ndarray, np.ndarray]:
    """Check tokens (n, T, d) and labels (n, T, T); return them as float64, tokens C-contiguous.

    Datasets store float32 tokens; the learners (AMP, GD) convert them once, here.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 3 or X.shape[1] < 2 or X.shape[2] < 2 or X.shape[0] < 1:
        raise ValueError(f"X must have shape (n, T, d) with n >= 1, T >= 2, d >= 2, got {X.shape}")
    n, T, _ = X.shape
    if y.shape != (n, T, T):
        raise ValueError(f"y must have shape {(n, T, T)} to match X, got {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must be finite")
    return X, y


def write_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write arrays as an uncompressed ``.npz`` (readable by ``np.load``), atomically and byte-reproducibly.

    ``np.savez`` stamps each member with the current time, so two writes of
    the same arrays differ; here every member carries the zip epoch
    (1980-01-01), so the same arrays always give the same file (and sha256).
    """
    with atomic_path(path) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, value in arrays.items():
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                with archive.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def spec_metadata(spec: DatasetSpec) -> dict:
    """The spec as plain JSON fields; the token law only when it is not the Gaussian one.

    A Gaussian dataset's metadata is therefore what it was before the laws
    existed, and its file has the same bytes.
    """
    fields = asdict(spec)
    fields.pop("tokens")
    if not spec.tokens.is_gaussian:
        fields["tokens"] = spec.tokens.to_dict()
    return fields


def spec_from_metadata(fields: dict) -> DatasetSpec:
    """Inverse of :func:`spec_metadata`."""
    fields = dict(fields)
    tokens = fields.pop("tokens", None)
    return DatasetSpec(**fields, tokens=GAUSSIAN if tokens is None else TokenLaw(**tokens))


def save_dataset(path: str | os.PathLike, dataset: Dataset) -> None:
    """Write a dataset as ``.npz`` (see the module notes for the layout); same data, same bytes."""
    meta = {"format": DATASET_FORMAT, "spec": spec_metadata(dataset.spec), "base_seed": dataset.base_seed}
    write_npz(path, {"W": dataset.W, "X": dataset.X, "y": dataset.y, "X_test": dataset.X_test,
                     "y_test": dataset.y_test, "meta": np.array(json.dumps(meta, sort_keys=True))})


def load_dataset(path: str | os.PathLike) -> Dataset:
    """Read a dataset written by :func:`save_dataset` (no pickles)."""
    # the file is opened here, not by np.load: given a damaged archive np.load raises
    # without closing the file it opened
    with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as archive:
        meta = json.loads(str(archive["meta"]))
        if meta.get("format") != DATASET_FORMAT:
            raise ValueError(f"{path} is not an aimrepro dataset (format {meta.get('format')!r})")
        arrays = {name: archive[name] for name in ("W", "X", "y", "X_test", "y_test")}
    return Dataset(spec_from_metadata(meta["spec"]), int(meta["base_seed"]), **arrays)


def dataset_bytes(spec: DatasetSpec) -> int:
    """Size on disk of a dataset's arrays (tokens float32, labels and W float64), in bytes."""
    return (4 * (spec.n + spec.n_test) * spec.T * spec.d + 8 * (spec.n + spec.n_test) * spec.T ** 2
            + 8 * spec.d * spec.r)


# ---------------------------------------------------------------------------
# path tokens: how a link (or an AMP channel) and its beta are spelled in paths


def link_token(name: str, beta: float | None = None) -> str:
    """Path spelling of a link or channel: ``softmax_beta1`` (β with ``:g``), ``hardmax``, ``hardmax_paper``."""
    if name in _TEMPERED_LINKS:
        if beta is None:
            raise ValueError(f"the {name} token needs beta")
        return f"{name}_beta{float(beta):g}"
    if beta is not None:
        raise ValueError(f"beta applies to the softmax link only, got beta={beta!r} for {name!r}")
    return name


def parse_link_token(token: str) -> tuple[str, float | None]:
    """Inverse of :func:`link_token`: ``softmax_beta1`` → (``softmax``, 1.0), ``hardmax`` → (``hardmax``, None)."""
    for name in _TEMPERED_LINKS:
        prefix = f"{name}_beta"
        if token.startswith(prefix):
            return name, float(token[len(prefix):])
    return token, None
