"""Result kinds of the token-law study (beyond both papers: ``docs/paper1.md`` §13, ``docs/paper2.md`` §10).

Every kind names its token law in its path (:attr:`aimrepro.model.TokenLaw.token`:
``gaussian``, ``rademacher``, ``sparse_p0.5``, ``student_t_nu5``) and runs all
replicates of one (point, law, d) in one job, as the science does
(:mod:`aimrepro.paper1.token_law_runs`, :mod:`aimrepro.paper2.token_law_runs`):
the replicates of two laws share the teacher and the normals behind the tokens,
so the claims' paired differences need no dataset on disk.

* ``token_law_amp``: GAMP-RIE on ``n`` replicates of one trend point, law and d;
* ``token_law_gd``: K students of averaged GD on ``n`` replicates (softmax);
* ``token_law_theory``: the Gaussian SE, the SE with the law's diagonal variance
  and the finite-d shifts of one hardmax point and law (``token_laws.law_table``);
* ``token_law_se_curve``: the law's SE along an α grid (the figure's lines);
* ``token_law_sgd``: paper 2's SGD with the Gaussian and the law's flows from each
  replicate's initial state: the summaries the claims read and the trajectories
  the figure draws, one ``.npz`` per (parametrisation, law, d).

Each job's work is its science's per-replicate work (the kinds of
:mod:`.paper1` and :mod:`.paper2`) times its replicates, plus drawing the dataset
in memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from aimrepro import resources as R
from aimrepro.model import TokenLaw
from aimrepro.numerics.grids import SPACINGS
from aimrepro.paper1.channels import CHANNELS
from aimrepro.paper1.data import DatasetSpec, parse_link_token
from aimrepro.paper1.gd import GDSettings
from aimrepro.paper2.sgd import NORMALISATIONS, ProblemSpec, SGDSettings

from ..paths import (CHANNEL_TOKEN, DIMS_FIELD, INTEGER_FIELD, NUMBER, NUMBER_FIELD, PAPER2_LINK, SEED, STOP,
                     Field, ResultPath, choice)
from ..prices import SIDECAR_BYTES, TYPICAL, Work, csv_bytes
from . import Job, Kind, Read, register
from .paper1 import AMPJob, GDJob, _amp_work, _gd_work
from .paper2 import FlowJob, SGDJob, _one_flow, _sgd_work

#: A token law as :attr:`aimrepro.model.TokenLaw.token` writes it.
LAW_TOKEN = Field(rf"gaussian|rademacher|sparse_p{NUMBER}|student_t_nu{NUMBER}")

#: Typical (quick-scale) sizes: the config check names the value whose typical size shrinks a job most.
_TYPICAL = {"T": 2, "d": 50, "rho": 0.5, "alpha": 0.1, "n": 4, "max_iter": 500, "inits": 16,
            "steps": 1000, "samples": 10_000, "points": 24, "B": 256, "horizon": 8.0, "records": 81}


def _sizes(*names: str) -> dict:
    return {name: _TYPICAL[name] for name in names}


def _law(token: str) -> TokenLaw:
    return TokenLaw.parse(token)


def _scaled(work: Work, replicates: int, startup: str, *, fixed=None, memory=None, disk=None) -> Work:
    """``replicates`` times one replicate's ``work`` in one job with its own start-up (the loop stays
    the per-replicate loop, its work multiplied), plus ``fixed`` units once per replicate."""
    n = float(replicates)
    total = {unit: n * amount for unit, amount in work.fixed.items()}
    for unit, amount in (fixed or {}).items():
        total[unit] = total.get(unit, 0.0) + n * amount
    return Work(startup, fixed=total, per_loop={unit: n * amount for unit, amount in work.per_loop.items()},
                loop=work.loop, loop_bound=work.loop_bound, threads=work.threads,
                memory=work.memory if memory is None else memory, disk=work.disk if disk is None else disk)


def _sampling(spec: DatasetSpec) -> dict[str, float]:
    """Drawing one dataset in memory: normals for the tokens and the teacher, the labels' GEMM."""
    m = spec.n + spec.n_test
    return {"normal": m * spec.T * spec.d + spec.d * spec.r, "flop": 2.0 * m * spec.T * spec.d * spec.r,
            "element": 10.0 * m * spec.T * (spec.d + spec.T ** 2)}


# ---------------------------------------------------------------------------
# paper 1: GAMP-RIE and averaged GD per (point, law, d)


@dataclass(frozen=True)
class TokenLawAMPJob:
    """GAMP-RIE with ``channel`` on replicates 0 … n−1 of the dataset ``data`` (its ``replicate`` unused)."""

    data: DatasetSpec
    channel: str
    replicates: tuple[int, ...]
    max_iter: int
    base_seed: int


def _dataset_spec(v, link_token: str, law: TokenLaw) -> DatasetSpec:
    link, beta = parse_link_token(link_token)
    return DatasetSpec(link="hardmax" if link.startswith("hardmax") else link, T=v["T"], rho=v["rho"],
                       d=v["d"], alpha=v["alpha"], replicate=0, n_test=1, beta=beta, tokens=law)


def _token_law_amp(job: Job) -> TokenLawAMPJob:
    v = job.values
    channel = parse_link_token(v["channel"])[0]
    return TokenLawAMPJob(_dataset_spec(v, v["channel"], _law(v["law"])), channel, tuple(range(v["n"])),
                          int(v["max_iter"]), int(v["base_seed"]))


def _token_law_amp_work(job: Job) -> Work:
    """Per replicate: the dataset drawn in memory and one GAMP-RIE run (:func:`.paper1._amp_work`)."""
    amp: TokenLawAMPJob = job.params
    one = _amp_work(SimpleNamespace(params=AMPJob(amp.data, amp.channel, amp.max_iter)))
    # the token-law points sit far from the thresholds: fewer iterations than a figure's grid
    one.loop = min(amp.max_iter, TYPICAL[f"token_law_amp_iterations_{amp.channel}"])
    return _scaled(one, len(amp.replicates), "token_law_amp", fixed=_sampling(amp.data),
                   disk=csv_bytes(len(amp.replicates), 6))


_BASE_SEED = Read("seed")

TOKEN_LAW_AMP = register(Kind(
    "token_law_amp",
    ResultPath("token_laws/amp", "{channel}_T{T}_rho{rho}_d{d}/alpha{alpha}_{law}_seeds{n}", ".csv",
               {"channel": CHANNEL_TOKEN, "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "d": INTEGER_FIELD,
                "alpha": NUMBER_FIELD, "law": LAW_TOKEN, "n": INTEGER_FIELD}),
    params=_token_law_amp, work=_token_law_amp_work,
    sizes=_sizes("T", "d", "rho", "alpha", "n", "max_iter"),
    reads={"max_iter": Read("paper1.amp_solver.max_iter"), "base_seed": _BASE_SEED}, cached=True))


@dataclass(frozen=True)
class TokenLawGDJob:
    """K = ``inits`` students of full-batch Adam on replicates 0 … n−1 of the softmax dataset ``data``."""

    data: DatasetSpec
    inits: int
    settings: GDSettings
    replicates: tuple[int, ...]
    base_seed: int


def _token_law_gd(job: Job) -> TokenLawGDJob:
    v = job.values
    settings = GDSettings(**{**v["optimizer"], "steps": v["steps"]})
    return TokenLawGDJob(_dataset_spec(v, v["link"], _law(v["law"])), v["inits"], settings,
                         tuple(range(v["n"])), int(v["base_seed"]))


def _token_law_gd_work(job: Job) -> Work:
    """Per replicate: the dataset drawn in memory and K students (:func:`.paper1._gd_work`)."""
    gd: TokenLawGDJob = job.params
    one = _gd_work(SimpleNamespace(params=GDJob(gd.data, gd.inits, gd.settings, 1)))
    return _scaled(one, len(gd.replicates), "token_law_gd", fixed=_sampling(gd.data),
                   disk=csv_bytes(len(gd.replicates), 4))


TOKEN_LAW_GD = register(Kind(
    "token_law_gd",
    ResultPath("token_laws/gd", "{link}_T{T}_rho{rho}_d{d}_inits{inits}/alpha{alpha}_{law}_seeds{n}", ".csv",
               {"link": Field(rf"softmax_beta{NUMBER}"), "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
                "d": INTEGER_FIELD, "inits": INTEGER_FIELD, "alpha": NUMBER_FIELD, "law": LAW_TOKEN,
                "n": INTEGER_FIELD}),
    params=_token_law_gd, work=_token_law_gd_work,
    sizes=_sizes("T", "d", "rho", "alpha", "n", "inits", "steps"),
    reads={"optimizer": Read("paper1.figure2.right.gd.optimizer", {}),
           "steps": Read("paper1.figure2.right.gd.optimizer.steps", 1000), "base_seed": _BASE_SEED}, cached=True))


# ---------------------------------------------------------------------------
# paper 1: the theory of a law


@dataclass(frozen=True)
class TokenLawTheoryJob:
    """``token_laws.law_table`` of one point and law: the d → ∞ row and one finite-d row per d."""

    channel: str
    T: int
    rho: float
    alpha: float
    beta: float | None
    law: TokenLaw
    dims: tuple[int, ...]
    samples: int
    seed: int


def _token_law_theory(job: Job) -> TokenLawTheoryJob:
    v = job.values
    channel, beta = parse_link_token(v["channel"])
    if min(v["dims"]) < 2 or v["samples"] < 2:
        raise ValueError(f"token_law_theory: every d and the sample count must be >= 2, got {v['dims']}, "
                         f"{v['samples']}")
    return TokenLawTheoryJob(channel, v["T"], v["rho"], v["alpha"], beta, _law(v["law"]), tuple(v["dims"]),
                             v["samples"], v["seed"])


def _token_law_theory_work(job: Job) -> Work:
    """Two finite-d SE solves per d (the law's and the Gaussian's, common draws), each a few secant
    steps of O(samples (d + 40)): drawing the known part and the Owen's-T information per draw."""
    theory: TokenLawTheoryJob = job.params
    draws = sum(2.0 * theory.samples * (d + 40) for d in theory.dims)
    memory = R.BASE_BYTES + 8.0 * 12 * theory.samples + 8.0 * min(4e6, theory.samples * max(theory.dims))
    return Work("token_law_theory", fixed={"finite_d_draw": draws, "se_point_hardmax": 2.0},
                memory=memory, disk=csv_bytes(len(theory.dims) + 1, 6))


TOKEN_LAW_THEORY = register(Kind(
    "token_law_theory",
    ResultPath("token_laws/theory", "{channel}_T{T}_rho{rho}/alpha{alpha}_{law}_d{dims}_n{samples}_seed{seed}",
               ".csv", {"channel": choice(["hardmax"]), "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
                        "alpha": NUMBER_FIELD, "law": LAW_TOKEN, "dims": DIMS_FIELD, "samples": INTEGER_FIELD,
                        "seed": SEED}),
    params=_token_law_theory, work=_token_law_theory_work, sizes=_sizes("samples")))


@dataclass(frozen=True)
class TokenLawCurve:
    """The SE of a law along a grid of α (d → ∞; ``token_laws.law_se_curve``)."""

    channel: str
    T: int
    rho: float
    law: TokenLaw
    spacing: str
    lo: float
    hi: float
    n: int


TOKEN_LAW_SE_CURVE = register(Kind(
    "token_law_se_curve",
    ResultPath("token_laws/se", "{channel}_T{T}_rho{rho}_{law}/alpha_{spacing}_{lo}_{hi}_n{n}", ".csv",
               {"channel": choice(list(CHANNELS)), "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "law": LAW_TOKEN,
                "spacing": choice(SPACINGS), "lo": NUMBER_FIELD, "hi": NUMBER_FIELD, "n": INTEGER_FIELD}),
    params=lambda job: TokenLawCurve(job.values["channel"], job.values["T"], job.values["rho"],
                                     _law(job.values["law"]), job.values["spacing"], job.values["lo"],
                                     job.values["hi"], job.values["n"]),
    work=lambda job: Work("token_law_se_curve", fixed={"se_point_hardmax": float(job.params.n)},
                          memory=R.BASE_BYTES + 100e6, disk=csv_bytes(job.params.n, 3)),
    sizes={"n": 64}))


# ---------------------------------------------------------------------------
# paper 2: SGD and both flows per (parametrisation, law, d)


@dataclass(frozen=True)
class TokenLawSGDJob:
    """``token_law_runs.law_replicates`` of one problem (its ``tokens`` the law) on seeds ``seeds``."""

    problem: ProblemSpec
    settings: SGDSettings
    seeds: tuple[int, ...]
    threshold: float


def _token_law_sgd(job: Job) -> TokenLawSGDJob:
    v = job.values
    problem = ProblemSpec(v["param"], v["link"], v["T"], v["d"], rho=v["rho"], normalisation=v["normalisation"],
                          tokens=_law(v["law"]))
    settings = SGDSettings(lr=v["lr"], batch=v["B"], horizon=v["horizon"], n_records=v["records"],
                           stop_overlap=v["stop"])
    return TokenLawSGDJob(problem, settings, tuple(range(v["seed"], v["seed"] + v["n"])), float(v["threshold"]))


def _token_law_sgd_work(job: Job) -> Work:
    """Per replicate: one SGD run (:func:`.paper2._sgd_work`) and two flows from its initial state, the
    Gaussian and the law's (one when the law is Gaussian; :func:`.paper2._one_flow`)."""
    run: TokenLawSGDJob = job.params
    # how far a run goes before its stop depends on the law: trapped escapes go far, blow-ups nowhere
    stop_fraction = f"token_law_stop_fraction_{run.problem.tokens.name}"
    sgd = _sgd_work("token_law_sgd", stop_fraction)(SimpleNamespace(params=SGDJob(run.problem, run.settings,
                                                                                   run.seeds[0])))
    flow = _one_flow(FlowJob(run.problem, run.settings.horizon, run.settings.n_records, 0.0, run.seeds[0]))
    flows = 1 if run.problem.tokens.is_gaussian else 2
    # the flows' loops are folded into fixed work (the job's loop is SGD's); they stop where SGD does
    # (token_law_runs.law_replicates), so they run the same typical share of the horizon
    share = TYPICAL[stop_fraction] if run.settings.stop_overlap is not None else 1.0
    fixed = {unit: flows * amount for unit, amount in flow.fixed.items()}
    for unit, amount in flow.per_loop.items():
        fixed[unit] = fixed.get(unit, 0.0) + flows * amount * flow.loop * share
    return _scaled(sgd, len(run.seeds), "token_law_sgd", fixed=fixed, memory=max(sgd.memory, flow.memory),
                   disk=len(run.seeds) * 3 * 8.0 * 20 * run.settings.n_records + SIDECAR_BYTES)


TOKEN_LAW_SGD = register(Kind(
    "token_law_sgd",
    ResultPath("token_laws/sgd", "{param}_{link}_T{T}_rho{rho}_{normalisation}_d{d}/"
                                 "{law}_lr{lr}_B{B}_t{horizon}_n{records}_stop{stop}_seed{seed}x{n}", ".npz",
               {"param": choice(["tied", "direct"]), "link": PAPER2_LINK, "T": INTEGER_FIELD,
                "rho": NUMBER_FIELD, "normalisation": choice(NORMALISATIONS), "d": INTEGER_FIELD,
                "law": LAW_TOKEN, "lr": NUMBER_FIELD, "B": INTEGER_FIELD, "horizon": NUMBER_FIELD,
                "records": INTEGER_FIELD, "stop": STOP, "seed": SEED, "n": INTEGER_FIELD}, output="run"),
    params=_token_law_sgd, work=_token_law_sgd_work,
    sizes=_sizes("T", "d", "rho", "B", "horizon", "records", "n"),
    reads={"threshold": Read("paper2.threshold")}, cached=True))
