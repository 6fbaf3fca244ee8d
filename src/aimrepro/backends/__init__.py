"""Where the heavy kernels run: numpy (the default and the reference) or PyTorch (``docs/design.md``, "Backends").

Three kernels have a second implementation: the GD step of a block of
students (:mod:`aimrepro.paper1.gd`), the online-SGD step of tied, direct
and untied students (:mod:`aimrepro.paper2.sgd`) and the two GEMMs and the
eigendecomposition of a GAMP-RIE iteration (:mod:`aimrepro.paper1.amp`).
The numpy code is the reference; the PyTorch one
(:mod:`aimrepro.backends.torch_kernels`, the optional extra ``.[gpu]``)
computes the same numbers on a GPU when one is present, otherwise on the
CPU, and agrees with numpy to 1e-10 (tests/unit/test_backends.py).
Random numbers are always drawn by numpy on the host, so a seed gives the
same data whatever the backend.

A :class:`Backend` names the library, the device and the float type
(float64 unless a run states otherwise).  float32 is a choice of either
library: the kernels then do their per-sample arithmetic (the GEMMs over
the samples, GD's softmax) in single precision, while the state that
accumulates over steps (parameters, optimiser moments) and every number
reported (losses, order parameters, errors) stay float64
(``docs/design.md``, "Precision"; each kernel's docstring says which is
which).  The random numbers do not depend on the float type: they are
drawn as before and cast, so float32 and float64 runs of one seed see the
same data.  :func:`single_threaded` is the
context in which every kernel runs: one BLAS thread (threadpoolctl) and one
PyTorch thread, so that a result is a function of its inputs and never of
the number of threads; parallelism, where there is any, comes from running
fixed blocks of work on a thread pool (``docs/design.md``, "Determinism").
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["BACKENDS", "DTYPES", "FAMILIES", "Backend", "NUMPY", "available", "blas_threads", "family_backend",
           "make_backend", "single_threaded"]

#: Backend names, equal to the config's ``backend.name``.
BACKENDS = ("numpy", "torch")
#: Float types a backend may compute in.
DTYPES = ("float64", "float32")
#: Kernel families whose float type the config chooses one by one (``backend.dtype.<family>``):
#: GD (:mod:`aimrepro.paper1.gd`), online SGD of every parametrisation (:mod:`aimrepro.paper2.sgd`),
#: GAMP-RIE (:mod:`aimrepro.paper1.amp`).
FAMILIES = ("gd", "sgd", "amp")

_INSTALL_HINT = "pip install -e '.[gpu]' (the optional extra that installs PyTorch)"


def available(name: str) -> bool:
    """Whether the library of backend ``name`` can be imported here."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    return name == "numpy" or importlib.util.find_spec(name) is not None


@dataclass(frozen=True)
class Backend:
    """A kernel library, the device it computes on and its float type.

    Parameters
    ----------
    name : one of :data:`BACKENDS`
    dtype : one of :data:`DTYPES`
    device : ``"cpu"``, ``"cuda"``, ``"cuda:1"`` …; ``None`` picks CUDA when PyTorch sees a GPU, else the CPU
    """

    name: str = "numpy"
    dtype: str = "float64"
    device: str | None = None

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.name!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"backend dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.name == "numpy" and self.device not in (None, "cpu"):
            raise ValueError(f"the numpy backend computes on the CPU, got device {self.device!r}")
        if self.name == "torch" and not available("torch"):
            raise ValueError(f"backend 'torch' needs PyTorch, which is not installed: {_INSTALL_HINT}")

    @property
    def is_numpy(self) -> bool:
        return self.name == "numpy"

    @property
    def float_type(self) -> type[np.floating]:
        """The numpy float type of the kernels' arithmetic: ``np.float64`` or ``np.float32``."""
        return np.float64 if self.dtype == "float64" else np.float32

    def resolved_device(self) -> str:
        """The device the kernels run on (``"cpu"`` for numpy)."""
        if self.is_numpy:
            return "cpu"
        if self.device is not None:
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def describe(self) -> dict:
        """For a sidecar: name, dtype, device and the library's version."""
        info = {"name": self.name, "dtype": self.dtype, "device": self.resolved_device()}
        if not self.is_numpy:
            import torch

            info["torch"] = torch.__version__
        return info


#: The default backend.
NUMPY = Backend()


def family_backend(backend: Mapping, family: str) -> dict:
    """The backend mapping of one kernel family from the config's ``backend``: ``{name, dtype}``.

    ``backend["dtype"]`` is either one float type for every family or a
    mapping ``{gd: …, sgd: …, amp: …}`` (missing families compute in
    float64).  The result is what a rule passes to its script (one param per
    family, so a change of one family's float type reruns that family's
    jobs only) and what :func:`make_backend` accepts.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    spec = dict(backend)
    dtype = spec.get("dtype", "float64")
    if isinstance(dtype, Mapping):
        unknown = set(dtype) - set(FAMILIES)
        if unknown:
            raise ValueError(f"backend.dtype has unknown families {sorted(unknown)}; allowed: {', '.join(FAMILIES)}")
        dtype = dtype.get(family, "float64")
    return {**spec, "dtype": dtype}


def make_backend(spec: str | Mapping | Backend | None) -> Backend:
    """A :class:`Backend` from a name, a config mapping ``{name, dtype, device}``, a Backend or None (numpy)."""
    if spec is None:
        return NUMPY
    if isinstance(spec, Backend):
        return spec
    if isinstance(spec, str):
        return Backend(spec)
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"name", "dtype", "device"}
        if unknown:
            raise ValueError(f"backend has unknown keys {sorted(unknown)}; allowed: name, dtype, device")
        return Backend(**dict(spec))
    raise ValueError(f"backend must be a name in {BACKENDS} or a mapping, got {spec!r}")


@contextlib.contextmanager
def single_threaded(backend: Backend = NUMPY) -> Iterator[None]:
    """Run the enclosed kernels with one BLAS thread (and one PyTorch thread), restoring both after.

    Multi-threaded BLAS may split a product into other blocks than one
    thread does, so the last digits of a GEMM could depend on the thread
    count.  threadpoolctl sets the count of the BLAS library numpy loaded at
    run time, whatever ``OMP_NUM_THREADS`` and friends said when it loaded.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        if backend.is_numpy:
            yield
            return
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(before)


def blas_threads() -> int | None:
    """Threads the BLAS library numpy loaded uses now (None if threadpoolctl cannot see it).

    Recorded in the sidecars of the runs whose kernels are not pinned to one
    thread (online SGD), whose last digits may depend on it.
    """
    from threadpoolctl import threadpool_info

    counts = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    return max(counts) if counts else None
