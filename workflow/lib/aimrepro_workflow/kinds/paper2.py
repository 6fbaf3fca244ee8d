"""Paper 2's result kinds: online SGD, its flows, the moment hierarchy, untied attention.

Every kind's problem is the science's :class:`~aimrepro.paper2.sgd.ProblemSpec`
(and an SGD run's optimiser its :class:`~aimrepro.paper2.sgd.SGDSettings`), built
here once from the path's fields: ``c`` is the loss prefactor, ``B`` the batch,
``wd`` the weight decay, ``records`` the record count, ``stop`` the stop overlap.
Each kind's work counts the operations its science module states (``.sgd``:
O(B T d r) per step; ``.flows``: O(d r²) per right-hand side; ...).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from aimrepro import resources as R
from aimrepro.model import LINKS, width
from aimrepro.paper2.sgd import NORMALISATIONS, PARAMETRISATIONS, ProblemSpec, SGDSettings

from ..paths import (DIMS_FIELD, INTEGER_FIELD, NUMBER, NUMBER_FIELD, PAPER2_LINK, SEED, SIGNED_FIELD,
                     SIGNED_OR_NONE, STOP, Field, ResultPath, alternatives, choice, integer_list)
from ..prices import PRICES, TYPICAL, Work, arithmetic_units, csv_bytes
from . import Job, Kind, Read, register

#: Typical (quick-scale) sizes: the config check names the value whose typical size shrinks a job most.
_TYPICAL = {"T": 1, "d": 100, "rho": 0.5, "B": 256, "lr": 0.05, "horizon": 3.0, "records": 101,
            "nf": 0, "method": "RK45"}

#: The flows of :data:`aimrepro.paper2.theory_tables.FLOWS`, spelled here so that parsing the
#: workflow does not import the flows (a unit test keeps the two equal).
ENSEMBLE_FLOWS = ("tied", "direct", "exact")
#: Links with a polynomial loss (the exact finite-d drift and flow).
POLYNOMIAL_LINKS = ("h1", "h2", "h3", "linear")

_PROBLEM = {"link": PAPER2_LINK, "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
            "normalisation": choice(NORMALISATIONS), "d": INTEGER_FIELD}


def _sizes(*names: str, **others) -> dict:
    return {**{name: _TYPICAL[name] for name in names}, **others}


def _problem(v, param: str, **extra) -> ProblemSpec:
    """The :class:`ProblemSpec` of a path's problem fields (link, T, ρ, normalisation, d; c if any)."""
    if "c" in v:
        extra.setdefault("loss_prefactor", v["c"])
    return ProblemSpec(param, v["link"], v["T"], v["d"], rho=v["rho"],
                       normalisation=v["normalisation"], **extra)


def _untied_problem(v, d: int | None = None) -> ProblemSpec:
    """The untied :class:`ProblemSpec` of a path's fields (student width = teacher width)."""
    return ProblemSpec("untied", v["link"], v["T"], v["d"] if d is None else d, rho=v["rho"],
                       student_rho=v["rho"], normalisation=v["normalisation"], init_scale=v["sU"],
                       init_scale_v=v["sV"], teacher_mean=v["m2"], init_mean=v.get("m0"))


# ---------------------------------------------------------------------------
# online SGD


@dataclass(frozen=True)
class SGDJob:
    """One online-SGD run: the problem, the optimiser and the replicate's seed.

    Untied runs record on a slow grid of ``settings.n_records`` times and a fast one
    of ``n_fast`` times up to t = ``fast_horizon`` (``aimrepro.paper2.sgd.fast_slow_record_times``).
    """

    problem: ProblemSpec
    settings: SGDSettings
    seed: int
    fast_horizon: float = 0.0
    n_fast: int = 0
    dtype: str = "float64"

    @property
    def records(self) -> int:
        """Records the run writes (the slow and the fast grid counted apart)."""
        return self.settings.n_records + self.n_fast


def _sgd(job: Job) -> SGDJob:
    v = job.values
    return SGDJob(_problem(v, v["param"]),
                  SGDSettings(lr=v["lr"], batch=v["B"], horizon=v["horizon"], weight_decay=v["wd"],
                              n_records=v["records"], stop_overlap=v["stop"]), v["seed"],
                  dtype=v["dtype"])


def _untied_sgd(job: Job) -> SGDJob:
    v = job.values
    return SGDJob(_untied_problem(v),
                  SGDSettings(lr=v["lr"], batch=v["B"], horizon=v["horizon"], weight_decay=v["wd"],
                              n_records=v["records"], stop_overlap=v["stop"],
                              stop_measure="symmetric_overlap"), v["seed"], v["fh"], v["nf"], v["dtype"])


def _sgd_work(rule: str, stop_fraction: str, threads=lambda run: 1):
    """Per step: the batch's normals (B T d, float64 in every type), the teacher's and the
    student's projections and the gradient (GEMMs, in the family's float type), the link on
    B T² indices and the update (float64), a Python-level step; the records' order parameters
    (float64) in proportion to the steps run."""
    def work(job: Job) -> Work:
        run: SGDJob = job.params
        problem, settings = run.problem, run.settings
        param, T, d, B = problem.param, problem.T, problem.d, settings.batch
        r_teacher = r = width(d, problem.rho)
        records = run.records
        steps = R.sgd_steps(param=param, d=d, lr=settings.lr, horizon=settings.horizon)
        if param == "direct":
            flops = 2.0 * B * T * d * (2 * d + r_teacher)
            elements = 6.0 * d * d + 20.0 * B * T * T
            record = 4.0 * d * d * r_teacher
        elif param == "tied":
            flops = 2.0 * B * T * d * (2 * r + r_teacher)
            elements = 6.0 * d * r + 20.0 * B * T * T
            record = 8.0 * d * r * (r + r_teacher)
        else:
            flops = 4.0 * B * T * d * (2 * r + r_teacher)
            elements = 12.0 * d * r + 20.0 * B * T * T
            record = 16.0 * d * r * (r + r_teacher)
        flop = arithmetic_units(run.dtype)[0]
        per_step = {"sgd_step_untied" if param == "untied" else "sgd_step": 1, "normal": B * T * d,
                    flop: flops, "element": elements}
        if flop != "flop":  # the tokens cast to the float type
            per_step["element"] += B * T * d
        if problem.link == "softmax":
            per_step["sgd_sample_softmax"] = B * T ** 4
        stops = settings.stop_overlap is not None
        expected = steps * (TYPICAL[stop_fraction] if stops else 1.0)
        memory = R.sgd_job(param=param, T=T, d=d, rho=problem.rho, batch=B, lr=settings.lr,
                           horizon=settings.horizon, records=records, student_rho=problem.rho).bytes
        # records are taken along the run: one that stops early takes only its share of them
        per_step["flop"] = per_step.get("flop", 0.0) + records * record / max(steps, 1)
        return Work(rule, per_loop=per_step, loop=expected, loop_bound=steps, memory=memory,
                    disk=csv_bytes(records, 20), threads=threads(run))
    return work


_SGD_SIZES = _sizes("T", "d", "rho", "B", "lr", "horizon", "records")
#: The float type of SGD's kernels (docs/design.md, "Precision"), read from the config, not the path.
_SGD_READS = {"dtype": Read("backend.dtype.sgd", "float64")}

#: Online SGD of one replicate; c is the loss prefactor of L = c|F(G1) - F(G2)|^2.
SGD_RUN = register(Kind(
    "sgd_run",
    ResultPath("sgd", "{param}_{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/"
                      "lr{lr}_B{B}_wd{wd}_t{horizon}_n{records}_stop{stop}_seed{seed}", ".csv",
               {"param": choice(PARAMETRISATIONS), **_PROBLEM, "c": NUMBER_FIELD,
                "lr": NUMBER_FIELD, "B": INTEGER_FIELD, "wd": NUMBER_FIELD,
                "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "stop": STOP, "seed": SEED}),
    params=_sgd, work=_sgd_work("sgd_run", "sgd_stop_fraction"), sizes=_SGD_SIZES,
    reads=_SGD_READS, cached=True))


def _untied_threads(run: SGDJob) -> int:
    """One thread at quick sizes; 8 for the paper's large GEMMs (B d >= 10^6, e.g. 4096 x 800)."""
    return 8 if run.settings.batch * run.problem.d >= 10 ** 6 else 1


_UNTIED_PROBLEM = "{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}_m0{m0}_d{d}"
_UNTIED_SCHEDULE = "wd{wd}_tau{horizon}_n{records}_fast{fh}x{nf}_stop{stop}"
_UNTIED_FIELDS = {
    **_PROBLEM, "sU": NUMBER_FIELD, "sV": NUMBER_FIELD, "m2": SIGNED_FIELD, "m0": SIGNED_OR_NONE,
    "wd": NUMBER_FIELD, "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "fh": NUMBER_FIELD,
    "nf": INTEGER_FIELD, "stop": STOP, "seed": SEED}

#: Online SGD of untied attention, with fast (t = lr n) and slow (tau = lr n/d) records.
UNTIED_SGD = register(Kind(
    "untied_sgd_run",
    ResultPath("untied/sgd", f"{_UNTIED_PROBLEM}/lr{{lr}}_B{{B}}_{_UNTIED_SCHEDULE}_seed{{seed}}", ".csv",
               {**_UNTIED_FIELDS, "lr": NUMBER_FIELD, "B": INTEGER_FIELD}),
    params=_untied_sgd, work=_sgd_work("untied_sgd_run", "untied_stop_fraction", _untied_threads),
    sizes={**_SGD_SIZES, "nf": 0}, reads=_SGD_READS,
    cached=True))


# ---------------------------------------------------------------------------
# deterministic flows of tied and direct attention


@dataclass(frozen=True)
class FlowJob:
    """A deterministic flow of one replicate (``seed``) or of ``n`` replicates from ``seed`` on."""

    problem: ProblemSpec
    horizon: float
    records: int
    weight_decay: float
    seed: int
    n: int = 1
    flow: str | None = None


def _flow(job: Job) -> FlowJob:
    v = job.values
    flow = v.get("flow")
    param = v.get("param") or ("direct" if flow == "direct" else "tied")
    return FlowJob(_problem(v, param), v["horizon"], v["records"], v["wd"], v["seed"], v.get("n", 1),
                   flow)


def _one_flow(flow: FlowJob) -> Work:
    """Tied: RK45 on W (d r), each right-hand side O(d r² + d r r*) flops and one Γ; direct: the
    closed ODE of a few order parameters from the initial d×d problem."""
    problem = flow.problem
    d, records, rho = problem.d, flow.records, problem.rho
    r = width(d, rho)
    gamma = {"gamma_softmax": 1} if problem.link == "softmax" else {}
    if problem.param == "tied":
        rhs = TYPICAL["tied_flow_rhs"]
        return Work("reference_flow", fixed={"flop": 4.0 * d * r * r, "normal": 2.0 * d * r},
                    per_loop={"rhs_tied": 1, "flop": 8.0 * d * r * r + 4.0 * d * r * r,
                              "element": 20.0 * d * r, **gamma},
                    loop=rhs, loop_bound=rhs,
                    memory=R.tied_flow_job(d=d, rho=rho, records=records).bytes,
                    disk=csv_bytes(records, 12))
    rhs = TYPICAL["direct_flow_rhs"]
    return Work("reference_flow", fixed={"flop": 4.0 * d * d * r + 2.0 * d ** 3, "normal": d * d + d * r},
                per_loop={"rhs_direct": 1, **gamma}, loop=rhs, loop_bound=rhs,
                memory=R.direct_flow_job(d=d, rho=rho).bytes, disk=csv_bytes(records, 12))


_FLOW_SIZES = _sizes("T", "d", "rho", "records")

#: The deterministic reference of one replicate: tied matrix flow or direct closed ODE.
REFERENCE_FLOW = register(Kind(
    "reference_flow",
    ResultPath("theory", "{param}_flow/{link}_T{T}_rho{rho}_{normalisation}_d{d}/"
                         "wd{wd}_t{horizon}_n{records}_seed{seed}", ".csv",
               {"param": choice(["direct", "tied"]), **_PROBLEM, "wd": NUMBER_FIELD,
                "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "seed": SEED}),
    params=_flow, work=lambda job: _one_flow(job.params), sizes=_FLOW_SIZES,
    cached=True))


def _ensemble_work(job: Job) -> Work:
    """``n`` flows of :func:`_one_flow`, one per replicate; the loop is the right-hand sides of all
    replicates, about ``n`` (a + b × horizon): a long horizon is mostly the slow approach to the
    fixed point.  ``exact``: the finite-d flow, whose right-hand side takes the moments of words
    in (S₁, S₂) up to a length set by the link's degree (O(d³) each, priced per link) on top of
    the tied one's work."""
    ensemble: FlowJob = job.params
    flow, link, d, n = ensemble.flow, ensemble.problem.link, ensemble.problem.d, ensemble.n
    one = _one_flow(ensemble)
    per_loop = dict(one.per_loop)
    if flow == "exact":
        degree = link if f"exact_rhs_{link}" in PRICES else "h3"
        per_loop[f"exact_rhs_{degree}"] = 1.0
        per_loop[f"exact_rhs_d3_{degree}"] = float(d) ** 3
    rhs = n * (TYPICAL[f"ensemble_rhs_{flow}"] + TYPICAL[f"ensemble_rhs_per_time_{flow}"] * ensemble.horizon)
    return Work("flow_ensemble", fixed={u: n * a for u, a in one.fixed.items()},
                per_loop=per_loop, loop=rhs, loop_bound=rhs, memory=one.memory, disk=n * one.disk)


#: Deterministic flows of replicates seed, seed + 1, ..., seed + n − 1 of one problem in one
#: table (a ``seed`` column): the tied matrix flow (tied), the closed ODE of direct S (direct)
#: or the exact finite-d tied population flow (exact); the finite-size trends of the claims.
FLOW_ENSEMBLE = register(Kind(
    "flow_ensemble",
    ResultPath("theory/ensembles", "{flow}_{link}_T{T}_rho{rho}_{normalisation}_d{d}/"
                                   "wd{wd}_t{horizon}_n{records}_seed{seed}x{n}", ".csv",
               {"flow": choice(ENSEMBLE_FLOWS), **_PROBLEM, "wd": NUMBER_FIELD,
                "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "seed": SEED,
                "n": INTEGER_FIELD}),
    params=_flow, work=_ensemble_work, sizes=_FLOW_SIZES,
    cached=True))


# ---------------------------------------------------------------------------
# initial velocities (tied [P eq. 17], untied [P eq. 42])


@dataclass(frozen=True)
class VelocityJob:
    """Initial velocities of ``n`` replicates from ``seed`` on, at each of ``dims``."""

    problem: ProblemSpec   # at dims[0]
    dims: tuple[int, ...]
    seed: int
    n: int


def _velocity_work(rule: str):
    """Initial velocities per d and replicate: one initial state each (d r normals, its traces).
    Tied: the exact finite-d drift, moments of words up to a length set by the link's degree,
    O(d³) each (priced per d³ and link); untied: a fast phase per replicate."""
    def work(job: Job) -> Work:
        velocity: VelocityJob = job.params
        dims, n, rho = velocity.dims, velocity.n, velocity.problem.rho
        fixed = {f"{rule}_replicate": len(dims) * n,
                 "normal": sum(2.0 * d * width(d, rho) for d in dims) * n,
                 "flop": sum(4.0 * d * d * width(d, rho) for d in dims) * n}
        if rule == "tied_velocity":
            link = velocity.problem.link
            degree = link if f"tied_velocity_d3_{link}" in PRICES else "h3"
            fixed[f"tied_velocity_d3_{degree}"] = n * sum(float(d) ** 3 for d in dims)
        largest = max(dims)
        return Work(rule, fixed=fixed, memory=R.BASE_BYTES + 8.0 * 6 * largest * largest,
                    disk=csv_bytes(len(dims) * n, 12))
    return work


def _tied_velocity(job: Job) -> VelocityJob:
    v = job.values
    return VelocityJob(_problem({**v, "d": v["dims"][0]}, "tied"), tuple(v["dims"]), v["seed"], v["n"])


#: dp12/dt at W(0) of n tied replicates at each d: [P eq. 17], the matrix flow, the exact SGD drift.
TIED_VELOCITY = register(Kind(
    "tied_velocity",
    ResultPath("theory/tied_velocity", "{link}_T{T}_rho{rho}_{normalisation}/d{dims}_seed{seed}x{n}",
               ".csv",
               {"link": PAPER2_LINK, "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
                "normalisation": choice(NORMALISATIONS), "dims": DIMS_FIELD, "seed": SEED,
                "n": INTEGER_FIELD}),
    params=_tied_velocity, work=_velocity_work("tied_velocity"), sizes={"dims": 100, "rho": 0.5}))


# ---------------------------------------------------------------------------
# Theorem 1 at finite d and the landscape (Figures S1, S2)


@dataclass(frozen=True)
class Theorem1Job:
    """The finite-d population loss of ``links`` against Φ(q) at one d, ``n_samples`` sequences."""

    links: tuple[str, ...]
    T: int
    d: int
    rho: float
    beta: float
    n_samples: int
    seed: int


def _theorem1_work(job: Job) -> Work:
    """Monte Carlo over n sequences: tokens (n T d normals), the projections on [W*, W'] (2 n T d 2r
    flops) and the m = k + k(k + 1)/2 control variates, k = 2T² (n m² flops)."""
    check: Theorem1Job = job.params
    T, d, n = check.T, check.d, check.n_samples
    r = width(d, check.rho)
    k = 2 * T * T
    m = k + k * (k + 1) / 2
    links = len(check.links)
    return Work("theorem1", fixed={"normal": n * T * d, "flop": 2.0 * n * T * d * 2 * r + 2.0 * n * m * m,
                                   "mc_sequence": n * links, "quadrature_point": 3 * links},
                memory=R.theorem1_job(T=T, d=d, rho=check.rho, n_samples=n, n_links=links).bytes,
                disk=csv_bytes(1, 20))


THEOREM1 = register(Kind(
    "theorem1",
    ResultPath("population/theorem1", "{links}_T{T}_rho{rho}_beta{beta}_n{n}_seed{seed}/d{d}", ".csv",
               {"links": Field(rf"(?:{alternatives(LINKS)})(?:-(?:{alternatives(LINKS)}))*",
                               "-".join, lambda text: text.split("-")),
                "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "beta": NUMBER_FIELD, "n": INTEGER_FIELD,
                "seed": SEED, "d": INTEGER_FIELD}),
    params=lambda job: Theorem1Job(tuple(job.values["links"]), job.values["T"], job.values["d"],
                                   job.values["rho"], job.values["beta"], job.values["n"],
                                   job.values["seed"]),
    work=_theorem1_work, sizes={"T": 2, "d": 100, "rho": 0.5, "n": 200_000}))


@dataclass(frozen=True)
class LandscapeJob:
    """Φ on an ``n_grid`` × ``n_grid`` grid of (q₁₁, q₁₂), one link."""

    link: str
    T: int
    rho: float
    beta: float
    n_grid: int


LANDSCAPE = register(Kind(
    "landscape",
    ResultPath("population/landscape", "{link}_T{T}_rho{rho}_beta{beta}_n{n}", ".csv",
               {"link": choice(LINKS), "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
                "beta": NUMBER_FIELD, "n": INTEGER_FIELD}),
    params=lambda job: LandscapeJob(job.values["link"], job.values["T"], job.values["rho"],
                                    job.values["beta"], job.values["n"]),
    # one 60 × 60 quadrature per grid point
    work=lambda job: Work("landscape", fixed={"quadrature_point": job.params.n_grid ** 2},
                          memory=R.landscape_job(n_grid=job.params.n_grid).bytes,
                          disk=csv_bytes(job.params.n_grid ** 2, 5)),
    sizes={"n": 81}))


# ---------------------------------------------------------------------------
# the moment hierarchy (docs/paper2.md §4)


@dataclass(frozen=True)
class TruncationsJob:
    """Zero truncations of the tied hierarchy of each order of ``orders``, from one replicate."""

    problem: ProblemSpec
    horizon: float
    records: int
    orders: tuple[int, ...]
    weight_decay: float
    seed: int


def _moment_orders(orders, d: int, link: str) -> dict[str, float]:
    """Each order: its basis (letters), its DOP853 solve (right-hand sides × 2 letters terms, Γ);
    the initial moments: one d×d product per prefix of the largest basis (2 d³ flops)."""
    work: dict[str, float] = defaultdict(float)
    words, _ = R.word_count(max(orders))
    work["flop"] += 2.0 * words * float(d) ** 3
    for order in orders:
        _, letters = R.word_count(order)
        rhs = TYPICAL["moment_rhs_per_order"]
        work["moment_letter_build"] += letters
        work["moment_term"] += rhs * 2.0 * letters
        work["moment_rhs"] += rhs
        if link == "softmax":
            work["gamma_softmax"] += rhs
    return dict(work)


def _truncations_work(job: Job) -> Work:
    run: TruncationsJob = job.params
    d, records = run.problem.d, run.records
    return Work("moment_truncations", fixed=_moment_orders(run.orders, d, run.problem.link),
                memory=R.moment_truncations_job(d=d, rho=run.problem.rho, records=records,
                                                max_order=max(run.orders)).bytes,
                disk=csv_bytes(records * len(run.orders), 12))


TRUNCATIONS = register(Kind(
    "moment_truncations",
    ResultPath("moments/truncations", "{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/"
                                      "wd{wd}_t{horizon}_n{records}_M{orders}_seed{seed}", ".csv",
               {**_PROBLEM, "c": NUMBER_FIELD, "wd": NUMBER_FIELD, "horizon": NUMBER_FIELD,
                "records": INTEGER_FIELD, "orders": integer_list(ordered=True), "seed": SEED}),
    params=lambda job: TruncationsJob(_problem(job.values, "tied"), job.values["horizon"],
                                      job.values["records"], tuple(job.values["orders"]),
                                      job.values["wd"], job.values["seed"]),
    work=_truncations_work, sizes={**_sizes("T", "d", "rho", "records"), "orders": 8}))

_LINEAR = {"rho": NUMBER_FIELD, "normalisation": choice(NORMALISATIONS), "c": NUMBER_FIELD,
           "d": INTEGER_FIELD}


def _linear_problem(v) -> ProblemSpec:
    return _problem({**v, "link": "linear", "T": 1}, "tied")


def _riccati_work(job: Job) -> Work:
    """One eigendecomposition of S*, then O(d² r + d r² + r³) per record."""
    flow: FlowJob = job.params
    d, records = flow.problem.d, flow.records
    r = width(d, flow.problem.rho)
    return Work("riccati_flow", fixed={"eigh": float(d) ** 3,
                                       "flop": records * 2.0 * (d * d * r + d * r * r + r ** 3)},
                memory=R.riccati_job(d=d, rho=flow.problem.rho, records=records).bytes,
                disk=csv_bytes(records, 12))


RICCATI = register(Kind(
    "riccati_flow",
    ResultPath("theory/riccati", "linear_T1_rho{rho}_{normalisation}_c{c}_d{d}/"
                                 "wd{wd}_t{horizon}_n{records}_seed{seed}", ".csv",
               {**_LINEAR, "wd": NUMBER_FIELD, "horizon": NUMBER_FIELD, "records": INTEGER_FIELD,
                "seed": SEED}),
    params=lambda job: FlowJob(_linear_problem(job.values), job.values["horizon"],
                               job.values["records"], job.values["wd"], job.values["seed"]),
    work=_riccati_work, sizes=_sizes("d", "rho", "records")))


@dataclass(frozen=True)
class TruncationErrorJob:
    """Truncation errors of orders 2..``max_order`` against the Riccati flow, log-spaced times."""

    problem: ProblemSpec
    matrix_scale: float
    t_min: float
    horizon: float
    records: int
    max_order: int
    weight_decay: float
    seed: int


def _truncation_error_work(job: Job) -> Work:
    run: TruncationErrorJob = job.params
    d, records, M = run.problem.d, run.records + 1, run.max_order
    r = width(d, run.problem.rho)
    work = _moment_orders(list(range(2, M + 1)), d, "linear")
    work["eigh"] = work.get("eigh", 0.0) + float(d) ** 3
    work["flop"] += records * 2.0 * (d * d * r + d * r * r + r ** 3)
    return Work("truncation_error", fixed=work,
                memory=R.truncation_error_job(d=d, rho=run.problem.rho, records=records,
                                              max_order=M).bytes,
                disk=csv_bytes(records * (M - 1), 6))


TRUNCATION_ERROR = register(Kind(
    "truncation_error",
    ResultPath("moments/truncation_error", "linear_T1_rho{rho}_{normalisation}_c{c}_scale{s}_d{d}/"
                                           "wd{wd}_t{tmin}-{horizon}_n{records}_M{M}_seed{seed}", ".csv",
               {**_LINEAR, "s": NUMBER_FIELD, "wd": NUMBER_FIELD, "tmin": NUMBER_FIELD,
                "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "M": INTEGER_FIELD, "seed": SEED}),
    params=lambda job: TruncationErrorJob(_linear_problem(job.values), job.values["s"],
                                          job.values["tmin"], job.values["horizon"],
                                          job.values["records"], job.values["M"], job.values["wd"],
                                          job.values["seed"]),
    work=_truncation_error_work, sizes={**_sizes("d", "rho", "records"), "M": 8}))


@dataclass(frozen=True)
class RadiusJob:
    """The radius of convergence of the linear-case truncations at ``n`` replicates' W(0), S*."""

    problem: ProblemSpec
    matrix_scale: float
    weight_decay: float
    seed: int
    n: int


#: The radius of convergence of the linear-case truncations at n replicates' W(0), S*:
#: per replicate the nearest zero of the Riccati determinant, Newton and an
#: argument-principle count, each step O(d³) (d×d determinants and solves).
RADIUS = register(Kind(
    "truncation_radius",
    ResultPath("moments/radius", "linear_T1_rho{rho}_{normalisation}_c{c}_scale{s}_d{d}/"
                                 "wd{wd}_seed{seed}x{n}", ".csv",
               {**_LINEAR, "s": NUMBER_FIELD, "wd": NUMBER_FIELD, "seed": SEED, "n": INTEGER_FIELD}),
    params=lambda job: RadiusJob(_linear_problem(job.values), job.values["s"], job.values["wd"],
                                 job.values["seed"], job.values["n"]),
    work=lambda job: Work("truncation_radius",
                          fixed={"radius_d3": job.params.n * float(job.params.problem.d) ** 3},
                          memory=R.BASE_BYTES + 8.0 * 6 * job.params.problem.d ** 2,
                          disk=csv_bytes(job.params.n, 8)),
    sizes={"d": 100}))


# ---------------------------------------------------------------------------
# untied attention (docs/paper2.md §2.3, §5.3)


@dataclass(frozen=True)
class UntiedTheoryJob:
    """The theory of one untied replicate: its population flow (``flow``, with its integrator
    ``method`` at ``rtol``) or the slaved slow flow (``limit``), on the replicate's record grid."""

    kind: str
    problem: ProblemSpec
    horizon: float
    records: int
    fast_horizon: float
    n_fast: int
    weight_decay: float
    stop_overlap: float | None
    method: str | None
    rtol: float | None
    seed: int


def _untied_theory(job: Job) -> UntiedTheoryJob:
    v = job.values
    method, rtol = (v["method"].lstrip("_").split("-", 1) + [None])[:2] if v["method"] else (None, None)
    return UntiedTheoryJob(v["kind"], _untied_problem(v), v["horizon"], v["records"], v["fh"], v["nf"],
                           v["wd"], v["stop"], method, None if rtol is None else float(rtol), v["seed"])


def _untied_theory_work(job: Job) -> Work:
    """Flow: the population flow of (U, V), each right-hand side 3 Gram matrices and 4 projections
    (14 d r² flops); limit: the slaved flow of a few order parameters."""
    theory: UntiedTheoryJob = job.params
    d, rho = theory.problem.d, theory.problem.rho
    r = width(d, rho)
    records = theory.records + theory.n_fast
    fixed = {"normal": 4.0 * d * r, "flop": 16.0 * d * r * r}
    if theory.kind == "flow":
        cap = TYPICAL.get(f"untied_flow_rhs_{theory.method}", TYPICAL["untied_flow_rhs_RK45"])
        expected = cap * (TYPICAL["untied_stop_fraction_flow"] if theory.stop_overlap is not None else 1.0)
        return Work("untied_theory", fixed=fixed,
                    per_loop={"rhs_untied": 1, "flop": 14.0 * d * r * r, "element": 30.0 * d * r},
                    loop=expected, loop_bound=cap,
                    memory=R.untied_flow_job(d=d, rho=rho, records=records, method=theory.method).bytes,
                    disk=csv_bytes(records, 20))
    rhs = TYPICAL["untied_limit_rhs"]
    return Work("untied_theory", fixed=fixed, per_loop={"rhs_untied_limit": 1}, loop=rhs, loop_bound=rhs,
                memory=R.untied_flow_job(d=d, rho=rho, records=records).bytes, disk=csv_bytes(records, 20))


#: Theory of one untied replicate: the population flow (kind flow, with its
#: integrator, e.g. "_RK45-1e-06") or the slaved slow flow (kind limit, no method).
UNTIED_THEORY = register(Kind(
    "untied_theory",
    ResultPath("untied", f"{{kind}}/{_UNTIED_PROBLEM}/{_UNTIED_SCHEDULE}{{method}}_seed{{seed}}", ".csv",
               {**_UNTIED_FIELDS, "kind": choice(["flow", "limit"]),
                "method": Field(rf"|_[A-Za-z0-9]+-{NUMBER}")}),
    params=_untied_theory, work=_untied_theory_work,
    sizes=_sizes("T", "d", "rho", "records", "nf", "method"),
    cached=True))

#: The untied replicate tables' problem fields (their students start from independent factors).
_UNTIED_REPLICATE_FIELDS = {"link": PAPER2_LINK, "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
                            "normalisation": choice(NORMALISATIONS), "sU": NUMBER_FIELD,
                            "sV": NUMBER_FIELD, "m2": SIGNED_FIELD}


def _untied_velocity(job: Job) -> VelocityJob:
    v = job.values
    return VelocityJob(_untied_problem(v, v["dims"][0]), tuple(v["dims"]), v["seed"], v["n"])


#: dq12/dtau after the fast phase of n untied replicates at each d: [P eq. 42], the slaved slow flow.
UNTIED_VELOCITY = register(Kind(
    "untied_velocity",
    ResultPath("untied/velocity", "{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}/"
                                  "d{dims}_seed{seed}x{n}", ".csv",
               {**_UNTIED_REPLICATE_FIELDS, "dims": DIMS_FIELD, "seed": SEED, "n": INTEGER_FIELD}),
    params=_untied_velocity, work=_velocity_work("untied_velocity"), sizes={"dims": 100, "rho": 0.5}))


@dataclass(frozen=True)
class UntiedReplicatesJob:
    """A table of ``n`` untied replicates from ``seed`` on: truncations to ``max_order``
    ([P Cor. 8]) or the late decay from τ₀ = ``start`` ([P Cor. 9])."""

    problem: ProblemSpec
    horizon: float
    records: int
    seed: int
    n: int
    max_order: int | None = None
    start: float | None = None


def _untied_truncation_work(job: Job) -> Work:
    """Truncations of order 2..M per replicate against the slaved slow flow (the limit flow of
    :func:`_untied_theory_work` once per replicate)."""
    table: UntiedReplicatesJob = job.params
    n, M, records = table.n, table.max_order, table.records
    rhs = TYPICAL["untied_limit_rhs"]
    return Work("untied_truncation", fixed={"untied_truncation_order": n * (M - 1),
                                            "rhs_untied_limit": n * rhs},
                memory=R.BASE_BYTES + 50e6, disk=csv_bytes(records * (M - 1) * n, 6))


#: s(tau) of the slaved slow flow and the untied truncations M = 2 .. max_order, n replicates.
UNTIED_TRUNCATION = register(Kind(
    "untied_truncation",
    ResultPath("untied/truncation", "{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}_d{d}/"
                                    "tau{horizon}_n{records}_M{M}_seed{seed}x{n}", ".csv",
               {**_UNTIED_REPLICATE_FIELDS, "d": INTEGER_FIELD, "horizon": NUMBER_FIELD,
                "records": INTEGER_FIELD, "M": INTEGER_FIELD, "seed": SEED, "n": INTEGER_FIELD}),
    params=lambda job: UntiedReplicatesJob(_untied_problem(job.values), job.values["horizon"],
                                           job.values["records"], job.values["seed"], job.values["n"],
                                           max_order=job.values["M"]),
    work=_untied_truncation_work, sizes={"records": 101, "M": 5}))


def _untied_decay_work(job: Job) -> Work:
    """``n`` RK45 population flows of (U, V) to the horizon (right-hand sides as
    :func:`_untied_theory_work`'s, their number ∝ d τ: the stiff fast direction), then per replicate
    two d×d products and eigendecompositions and the mode sum over d² pairs and the records."""
    table: UntiedReplicatesJob = job.params
    d, n, records = table.problem.d, table.n, table.records + 1
    rho = table.problem.rho
    r = width(d, rho)
    rhs = n * TYPICAL["untied_decay_rhs_per_d_tau"] * d * table.horizon
    return Work("untied_decay", fixed={"normal": n * 4.0 * d * r,
                                       "flop": n * (16.0 * d * r * r + 30.0 * d ** 3
                                                    + 2.0 * d * d * records)},
                per_loop={"rhs_untied": 1, "flop": 14.0 * d * r * r, "element": 30.0 * d * r},
                loop=rhs, loop_bound=rhs,
                memory=R.untied_flow_job(d=d, rho=rho, records=records).bytes
                + 8.0 * (6 * d * d + d * d * records),
                disk=csv_bytes(n * records, 6))


#: The untied population flow of n replicates to late tau, its excess loss and the decay of its
#: linearisation from tau0 = {start} on ([P App. F.4, Cor. 9]).
UNTIED_DECAY = register(Kind(
    "untied_decay",
    ResultPath("untied/decay", "{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}_d{d}/"
                               "tau{start}to{horizon}_n{records}_seed{seed}x{n}", ".csv",
               {**_UNTIED_REPLICATE_FIELDS, "d": INTEGER_FIELD, "start": NUMBER_FIELD,
                "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "seed": SEED, "n": INTEGER_FIELD}),
    params=lambda job: UntiedReplicatesJob(_untied_problem(job.values), job.values["horizon"],
                                           job.values["records"], job.values["seed"], job.values["n"],
                                           start=job.values["start"]),
    work=_untied_decay_work, sizes=_sizes("d", "rho", "records")))


@dataclass(frozen=True)
class FastStatesJob:
    """The fast state m*(m₂) and the dichotomy factors on ``n`` teacher means from ``lo`` to ``hi``."""

    problem: ProblemSpec
    lo: float
    hi: float
    n: int


#: The fast state m*(m2), the dichotomy factors and the teacher mean at which m = 0 is unstable
#: at the initial moments, over teacher means: one mean landscape and its fixed points per mean.
FAST_STATES = register(Kind(
    "untied_fast_states",
    ResultPath("untied/fast_states", "{link}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{lo}to{hi}_n{n}",
               ".csv",
               {"link": choice([name for name in LINKS if name not in ("softmax", "hardmax")]),
                "rho": NUMBER_FIELD, "normalisation": choice(NORMALISATIONS), "sU": NUMBER_FIELD,
                "sV": NUMBER_FIELD, "lo": SIGNED_FIELD, "hi": SIGNED_FIELD, "n": INTEGER_FIELD}),
    # the table's problem at d = 100 (its script's): the landscape does not depend on d
    params=lambda job: FastStatesJob(_untied_problem({**job.values, "T": 1, "m2": 0.0}, 100),
                                     job.values["lo"], job.values["hi"], job.values["n"]),
    work=lambda job: Work("untied_fast_states", fixed={"fast_state": job.params.n},
                          memory=R.fast_states_job(n_grid=job.params.n).bytes,
                          disk=csv_bytes(job.params.n, 10)),
    sizes={"n": 81}))
