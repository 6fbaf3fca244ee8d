"""Paper 1's result kinds: SE curves, datasets, GAMP-RIE, gradient descent, hardmax T >= 3.

Each kind's work counts the operations its science module states in its
docstrings (``aimrepro.paper1.amp``: O(n T d² + d³) per iteration; ``.gd``:
O(n T d r) per step and student; ...), priced by :mod:`..prices`; its memory
is :mod:`aimrepro.resources`' estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from aimrepro import resources as R
from aimrepro.numerics.grids import SPACINGS
from aimrepro.paper1.channels import CHANNELS
from aimrepro.paper1.data import DatasetSpec, dataset_bytes, parse_link_token
from aimrepro.paper1.gd import GDSettings
from aimrepro.paper1.thresholds import AXES

from ..paths import (CHANNEL_TOKEN, INTEGER_FIELD, LINK_TOKEN, NUMBER, NUMBER_FIELD, SEED, Field,
                     ResultPath, choice, fmt_number)
from ..prices import PRICES, SIDECAR_BYTES, TYPICAL, Work, arithmetic_units, csv_bytes
from . import Job, Kind, Read, dtype_read, register

#: Typical (quick-scale) sizes: the config check names the value whose typical size shrinks a job most.
_TYPICAL = {"T": 2, "d": 100, "rho": 0.5, "alpha": 0.1, "n_test": 1000, "max_iter": 500,
            "inits": 8, "steps": 1000}


@dataclass(frozen=True)
class Grid:
    """A grid of ``n`` points from ``lo`` to ``hi`` (``aimrepro.numerics.grids.grid_values``)."""

    spacing: str
    lo: float
    hi: float
    n: int


def _grid(job: Job) -> Grid:
    v = job.values
    return Grid(v["spacing"], v["lo"], v["hi"], v["n"])


# ---------------------------------------------------------------------------
# state evolution


@dataclass(frozen=True)
class SECurve:
    """One SE curve: a channel, T and ρ along one grid of one axis (ρ 0: the ρ → 0 limit, inf: ρ → ∞)."""

    channel: str
    T: int
    rho: float
    axis: str
    grid: Grid


def _se_curve(job: Job) -> SECurve:
    v = job.values
    return SECurve(v["channel"], v["T"], v["rho"], v["axis"], _grid(job))


def _se_curve_work(job: Job) -> Work:
    """Softmax: one vectorised root over the curve; other channels point by point (warm started)."""
    curve: SECurve = job.params
    n = curve.grid.n
    unit = f"se_point_{curve.channel}"
    unit = unit if unit in PRICES else "se_point_hardmax"
    return Work("se_curve", fixed={unit: n},
                memory=R.se_curve_job(channel=curve.channel, n_points=n).bytes, disk=csv_bytes(n, 12))


#: A state-evolution curve along one grid of one axis; rho 0 is the rho -> 0
#: limit (axis alphabar), inf rho -> infinity (softmax).
SE_CURVE = register(Kind(
    "se_curve",
    ResultPath("se", "{channel}_T{T}_rho{rho}/{axis}_{spacing}_{lo}_{hi}_n{n}", ".csv",
               {"channel": choice(list(CHANNELS)), "T": INTEGER_FIELD,
                "rho": Field(f"{NUMBER}|inf", fmt_number, float), "axis": choice(AXES),
                "spacing": choice(SPACINGS), "lo": NUMBER_FIELD, "hi": NUMBER_FIELD,
                "n": INTEGER_FIELD}),
    params=_se_curve, work=_se_curve_work, sizes={"n": 64}))


def _gen_work(job: Job) -> Work:
    """The SE curve, then the Bayes and plug-in errors per point (aimrepro.paper1.generalisation)."""
    curve: SECurve = job.params
    unit = f"gen_point_{curve.channel}_T{curve.T}"
    if unit not in PRICES:
        raise ValueError(f"no price for the generalisation error of {curve.channel} T={curve.T}")
    return Work("se_generalisation", fixed={unit: curve.grid.n}, memory=R.BASE_BYTES + 100e6,
                disk=csv_bytes(curve.grid.n, 7))


#: Bayes-optimal and plug-in generalisation errors along one grid (through the SE
#: overlap, aimrepro.paper1.generalisation): softmax (beta 1) and the corrected hardmax.
GEN_CURVE = register(Kind(
    "se_generalisation",
    ResultPath("se_gen", "{channel}_T{T}_rho{rho}/{axis}_{spacing}_{lo}_{hi}_n{n}", ".csv",
               {"channel": choice(["softmax", "hardmax"]), "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
                "axis": choice(["alpha", "alphaT"]), "spacing": choice(SPACINGS),
                "lo": NUMBER_FIELD, "hi": NUMBER_FIELD, "n": INTEGER_FIELD}),
    params=_se_curve, work=_gen_work, sizes={"n": 64}))


# ---------------------------------------------------------------------------
# datasets


def _dataset(job: Job, link_token: str) -> DatasetSpec:
    """The :class:`DatasetSpec` of a dataset, or of the dataset a run reads (``link_token``)."""
    v = job.values
    link, beta = parse_link_token(link_token)
    return DatasetSpec(link=link, T=v["T"], rho=v["rho"], d=v["d"], alpha=v["alpha"],
                       replicate=v["seed"], n_test=v["n_test"], beta=beta)


def data_link(channel: str) -> str:
    """The dataset a channel's run reads: both hardmax channels read the hardmax data."""
    return "hardmax" if channel.startswith("hardmax") else channel


def _dataset_work(job: Job) -> Work:
    """Normals for the tokens, the labels' GEMM X W (2 m T d r) and softmax, the .npz written."""
    spec: DatasetSpec = job.params
    T, d, r, m = spec.T, spec.d, spec.r, spec.n + spec.n_test
    size = float(dataset_bytes(spec))
    return Work("aim_dataset",
                fixed={"normal": m * T * d + d * r, "flop": 2.0 * m * T * d * r,
                       "element": 10.0 * m * T * (d + T * T), "byte_io": size},
                memory=R.dataset_job(T=T, d=d, rho=spec.rho, alpha=spec.alpha, n_test=spec.n_test).bytes,
                disk=size + SIDECAR_BYTES, temporary=bool(job.values["temporary"]))


_DATA_READS = {"n_test": Read("scales.{scale}.data.test_samples")}

#: One teacher with its training and test sequences.  "seed" is the index of
#: the draw; its random numbers come from the config's seed and the dataset's
#: parameters (aimrepro.paper1.data.dataset_seed).  One rule per scale: whether
#: datasets are temporary is a property of the scale.
DATASET = register(Kind(
    "aim_dataset",
    ResultPath("data", "{link}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}", ".npz",
               {"link": LINK_TOKEN, "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "d": INTEGER_FIELD,
                "alpha": NUMBER_FIELD, "seed": SEED}, output="data"),
    params=lambda job: _dataset(job, job.values["link"]), work=_dataset_work,
    sizes={name: _TYPICAL[name] for name in ("T", "d", "rho", "alpha", "n_test")},
    reads={**_DATA_READS, "temporary": Read("scales.{scale}.data.temporary", False)},
    per_scale=True))


def dataset_path(job: Job, link: str) -> str:
    """The path of the dataset a run of these values reads."""
    v = job.values
    return DATASET.path.format(job.scale, link=link, T=v["T"], rho=v["rho"], d=v["d"],
                               alpha=v["alpha"], seed=v["seed"])


# ---------------------------------------------------------------------------
# GAMP-RIE


@dataclass(frozen=True)
class AMPJob:
    """GAMP-RIE of ``channel`` on one dataset, stopped at ``max_iter`` iterations at most."""

    data: DatasetSpec
    channel: str
    max_iter: int
    dtype: str = "float64"


def _amp(job: Job) -> AMPJob:
    token = job.values["channel"]
    return AMPJob(_dataset(job, data_link(token)), parse_link_token(token)[0],
                  int(job.values["max_iter"]), job.values["dtype"])


def _amp_work(job: Job) -> Work:
    """Per iteration: X S and Xᵀ(G X) (4 n T d² flops, the family's float type), one eigh (d³),
    the channel per sample."""
    amp: AMPJob = job.params
    spec, channel, cap = amp.data, amp.channel, amp.max_iter
    flop, _, small_matmul = arithmetic_units(amp.dtype)
    n, n_test, T, d = spec.n, spec.n_test, spec.T, spec.d
    softmax = channel == "softmax"
    expected = min(cap, TYPICAL.get(f"amp_iterations_{channel}", TYPICAL["amp_iterations_hardmax"]))
    return Work(
        "amp_run",
        fixed={"byte_io": float(dataset_bytes(spec)), "flop": 2.0 * n_test * T * d * d,
               "element": 20.0 * (n + n_test) * T * d},
        per_loop={"amp_iteration": 1, flop: 4.0 * n * T * d * d, "eigh": float(d) ** 3,
                  ("amp_sample_softmax" if softmax else "amp_sample_hardmax"): n * (T * T if softmax else 1),
                  small_matmul: n * T * T * d, "element": 10.0 * n * T * d},
        loop=expected, loop_bound=cap,
        memory=R.amp_job(T=T, d=d, rho=spec.rho, alpha=spec.alpha, n_test=n_test, max_iter=cap,
                         channel=channel).bytes,
        disk=8.0 * d * d + 40.0 * cap + SIDECAR_BYTES)


_AMP_READS = {**_DATA_READS, "max_iter": Read("paper1.amp_solver.max_iter"),
              "dtype": dtype_read("amp")}
_AMP_FIELDS = {"channel": CHANNEL_TOKEN, "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "d": INTEGER_FIELD}

AMP_RUN = register(Kind(
    "amp_run",
    ResultPath("amp", "{channel}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}", ".npz",
               {**_AMP_FIELDS, "alpha": NUMBER_FIELD, "seed": SEED}, output="run"),
    params=_amp, work=_amp_work,
    sizes={name: _TYPICAL[name] for name in ("T", "d", "rho", "alpha", "n_test", "max_iter")},
    reads=_AMP_READS,
    inputs=lambda job: {"data": dataset_path(job, data_link(job.values["channel"]))},
    cached=True))


@dataclass(frozen=True)
class Summary:
    """Mean and spread over seeds per α of one marker curve: the runs it reads."""

    channel: str
    T: int
    d: int
    runs: tuple[str, ...]


def _summary_work(rule: str, run_bytes, theory=None):
    """Each run read (its file and its bytes), and the theory the table adds per point."""
    def work(job: Job) -> Work:
        summary: Summary = job.params
        one = run_bytes(job.values)
        fixed = {"input_file": len(summary.runs), "byte_io": one * len(summary.runs),
                 **(theory(job.values) if theory else {})}
        return Work(rule, fixed=fixed, memory=R.BASE_BYTES + 2.0 * one, disk=csv_bytes(64, 12))
    return work


def _amp_summary_theory(values) -> dict[str, float]:
    """The AMP table's theory columns (aimrepro.paper1.amp.summary_table) at its n points: the
    channel's SE curve and, for hardmax and softmax with few tokens, the generalisation errors."""
    n, T = values["n"], values["T"]
    channel = values["channel"].split("_beta")[0]
    se_unit = f"se_point_{channel}" if f"se_point_{channel}" in PRICES else "se_point_hardmax"
    work = {se_unit: float(n)}
    gen_unit = f"gen_point_{channel}_T{T}"
    # softmax has prices for the token counts the package implements (generalisation.
    # SOFTMAX_TOKENS, not imported: it would bring its quadrature into Snakemake's process)
    if channel == "softmax" and gen_unit in PRICES or channel == "hardmax":
        if gen_unit not in PRICES:
            raise ValueError(f"no price for the generalisation error of {channel} T={T}")
        work[gen_unit] = float(n)
    return work


def _summary(family: str):
    def params(job: Job) -> Summary:
        v = job.values
        runs = job.plan.summary_runs(family, job)
        return Summary(v.get("channel", v.get("link")), v["T"], v["d"], tuple(runs))
    return params


AMP_SUMMARY = register(Kind(
    "amp_summary",
    ResultPath("amp", "{channel}_T{T}_rho{rho}_d{d}/summary_seeds{n}", ".csv",
               {**_AMP_FIELDS, "n": INTEGER_FIELD}),
    params=_summary("amp"),
    work=_summary_work("amp_summary", lambda v: 8.0 * v["d"] ** 2, _amp_summary_theory),
    inputs=lambda job: {"runs": list(job.params.runs)}))


# ---------------------------------------------------------------------------
# gradient descent


@dataclass(frozen=True)
class GDJob:
    """K = ``inits`` tied students trained by full-batch Adam on one dataset."""

    data: DatasetSpec
    inits: int
    settings: GDSettings
    threads: int
    dtype: str = "float64"


def _gd(job: Job) -> GDJob:
    v = job.values
    # steps is a value of its own: a size the config check can name
    settings = GDSettings(**{**v["optimizer"], "steps": v["steps"]})
    return GDJob(_dataset(job, v["link"]), v["inits"], settings, int(v["threads"]), v["dtype"])


def _gd_work(job: Job) -> Work:
    """Per Adam step and student: P = X W and Xᵀ(·) (4 n T d r flops), the pair products P Pᵀ
    and (g + gᵀ) P (2 n T² r multiply-adds on T × r stacks), the softmax (n T²), all in the
    family's float type, and Adam (d r, float64)."""
    gd: GDJob = job.params
    spec, K, steps = gd.data, gd.inits, gd.settings.steps
    n, n_test, T, d, r = spec.n, spec.n_test, spec.T, spec.d, spec.r
    flop, element, small_matmul = arithmetic_units(gd.dtype)
    per_loop = {"gd_step": 1, "gd_replica_step": K, flop: 4.0 * K * n * T * d * r,
                small_matmul: 2.0 * K * n * T * T * r, element: K * 20.0 * n * T * T}
    per_loop["element"] = per_loop.get("element", 0.0) + K * 12.0 * d * r
    return Work(
        "gd_run",
        fixed={"byte_io": float(dataset_bytes(spec)),
               "flop": 2.0 * K * n_test * T * d * r + 2.0 * K * d * d * r},
        per_loop=per_loop,
        loop=steps, loop_bound=steps, threads=gd.threads,
        memory=R.gd_job(T=T, d=d, rho=spec.rho, alpha=spec.alpha, n_test=n_test, inits=K,
                        steps=max(steps, 1)).bytes,
        disk=8.0 * K * (d * r + steps + 8) + SIDECAR_BYTES)


_GD_FIELDS = {"link": Field(rf"softmax_beta{NUMBER}"), "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
              "d": INTEGER_FIELD, "inits": INTEGER_FIELD}

GD_RUN = register(Kind(
    "gd_run",
    ResultPath("gd", "{link}_T{T}_rho{rho}_d{d}_inits{inits}/alpha{alpha}_seed{seed}", ".npz",
               {**_GD_FIELDS, "alpha": NUMBER_FIELD, "seed": SEED}, output="run"),
    params=_gd, work=_gd_work,
    sizes={name: _TYPICAL[name] for name in ("T", "d", "rho", "alpha", "n_test", "inits", "steps")},
    reads={**_DATA_READS, "optimizer": Read("paper1.figure2.right.gd.optimizer", {}),
           "steps": Read("paper1.figure2.right.gd.optimizer.steps", 1000),
           "threads": Read("scales.{scale}.gd.threads", 1),
           "dtype": dtype_read("gd")},
    inputs=lambda job: {"data": dataset_path(job, job.values["link"])},
    cached=True))


def _gd_run_bytes(values) -> float:
    d = values["d"]
    return 8.0 * values["inits"] * d * max(1, int(round(values["rho"] * d)))


GD_SUMMARY = register(Kind(
    "gd_summary",
    ResultPath("gd", "{link}_T{T}_rho{rho}_d{d}_inits{inits}/summary_seeds{n}", ".csv",
               {**_GD_FIELDS, "n": INTEGER_FIELD}),
    params=_summary("gd"), work=_summary_work("gd_summary", _gd_run_bytes),
    inputs=lambda job: {"runs": list(job.params.runs)}))


# ---------------------------------------------------------------------------
# hardmax attention with T >= 3 tokens (docs/paper1.md §3.6)


@dataclass(frozen=True)
class FisherTableJob:
    """The Fisher table F_T(m) on ``nodes`` nodes x = √(1 − m) from ``x_min``, n_k = n_reference/x_k."""

    T: int
    x_min: float
    nodes: int
    n_reference: int
    degree: int
    seed: int


def _fisher_work(job: Job) -> Work:
    """Nishimori estimates on the table's nodes: rejection sampling, ~(possible labels) candidates each."""
    from aimrepro.paper1.hardmax_tokens.calibration import estimated_table_seconds

    table: FisherTableJob = job.params
    seconds = estimated_table_seconds(table.T, table.n_reference, table.nodes, table.x_min)
    return Work("fisher_table", fixed={"fisher_table_second": seconds},
                memory=R.BASE_BYTES + 300e6, disk=csv_bytes(table.nodes, 8))


#: The Fisher-information table F_T(m) of hardmax attention with T tokens
#: (aimrepro.paper1.hardmax_tokens, docs/paper1.md §3.6): nodes x = sqrt(1 - m)
#: from x_min to 1, n_k = nref/x_k samples at node k, fitted at degree deg
#: (the fit, FisherFit.to_dict, is in the sidecar's diagnostics; readers refit
#: the table, which is deterministic and takes milliseconds).
FISHER_TABLE = register(Kind(
    "fisher_table",
    ResultPath("fisher", "hardmax_T{T}_x{x_min}_k{nodes}_nref{nref}_deg{degree}_seed{seed}", ".csv",
               {"T": INTEGER_FIELD, "x_min": NUMBER_FIELD, "nodes": INTEGER_FIELD,
                "nref": INTEGER_FIELD, "degree": INTEGER_FIELD, "seed": SEED}),
    params=lambda job: FisherTableJob(job.values["T"], job.values["x_min"], job.values["nodes"],
                                      job.values["nref"], job.values["degree"], job.values["seed"]),
    work=_fisher_work, sizes={"T": 3, "nref": 50_000, "nodes": 17}))


@dataclass(frozen=True)
class TokensCurve:
    """The SE curve of hardmax attention with T tokens through a Fisher table."""

    T: int
    rho: float
    grid: Grid
    n_reference: int
    seed: int


TOKENS_SE_CURVE = register(Kind(
    "tokens_se_curve",
    ResultPath("se", "hardmax_tokens_T{T}_rho{rho}/alpha_{spacing}_{lo}_{hi}_n{n}_nref{nref}_seed{seed}",
               ".csv",
               {"T": INTEGER_FIELD, "rho": NUMBER_FIELD, "spacing": choice(SPACINGS),
                "lo": NUMBER_FIELD, "hi": NUMBER_FIELD, "n": INTEGER_FIELD, "nref": INTEGER_FIELD,
                "seed": SEED}),
    params=lambda job: TokensCurve(job.values["T"], job.values["rho"], _grid(job),
                                   job.values["nref"], job.values["seed"]),
    work=lambda job: Work("tokens_se_curve", fixed={"tokens_se_point": job.params.grid.n},
                          memory=R.BASE_BYTES + 100e6, disk=csv_bytes(job.params.grid.n, 13)),
    sizes={"n": 64},
    inputs=lambda job: {"table": job.plan.fisher_table(job.scale, job.values["T"], job.values["nref"],
                                                       job.values["seed"])["path"]}))


@dataclass(frozen=True)
class TokensAMPJob:
    """GAMP-RIE with the sampled hardmax g_out of T tokens (``proposals`` per sample) on one dataset."""

    data: DatasetSpec
    proposals: int
    max_iter: int


def _tokens_amp_work(job: Job) -> Work:
    """GAMP-RIE's linear algebra as :func:`_amp_work`, the channel by importance sampling:
    n × proposals draws of the T-token scores per iteration."""
    amp: TokensAMPJob = job.params
    spec, proposals, cap = amp.data, amp.proposals, amp.max_iter
    n, n_test, T, d = spec.n, spec.n_test, spec.T, spec.d
    draws_bytes = 8.0 * 3 * n * proposals * T * T
    return Work(
        "tokens_amp_run",
        fixed={"byte_io": float(dataset_bytes(spec)), "flop": 2.0 * n_test * T * d * d},
        per_loop={"amp_iteration": 1, "flop": 4.0 * n * T * d * d, "eigh": float(d) ** 3,
                  "tokens_gout_proposal": n * proposals, "element": 10.0 * n * T * d},
        loop=min(cap, TYPICAL["amp_iterations_tokens"]), loop_bound=cap,
        memory=R.amp_job(T=T, d=d, rho=spec.rho, alpha=spec.alpha, n_test=n_test, max_iter=cap).bytes
        + draws_bytes,
        disk=8.0 * d * d + 40.0 * cap + SIDECAR_BYTES)


#: GAMP-RIE with the hardmax channel of T tokens whose g_out is sampled with K proposals
#: (aimrepro.paper1.hardmax_tokens.HardmaxTokens) on the hardmax dataset of the same values.
TOKENS_AMP_RUN = register(Kind(
    "tokens_amp_run",
    ResultPath("amp", "hardmax_tokens_T{T}_rho{rho}_d{d}/alpha{alpha}_K{proposals}_seed{seed}", ".npz",
               {"T": INTEGER_FIELD, "rho": NUMBER_FIELD, "d": INTEGER_FIELD, "alpha": NUMBER_FIELD,
                "proposals": INTEGER_FIELD, "seed": SEED}, output="run"),
    params=lambda job: TokensAMPJob(_dataset(job, "hardmax"), job.values["proposals"],
                                    int(job.values["max_iter"])),
    work=_tokens_amp_work,
    sizes={**{name: _TYPICAL[name] for name in ("d", "rho", "alpha", "n_test", "max_iter")},
           "T": 3, "proposals": 256},
    reads=_AMP_READS,
    inputs=lambda job: {"data": dataset_path(job, "hardmax")},
    cached=True))


# ---------------------------------------------------------------------------
# two attention layers, T = 2 (docs/paper1.md §14; beyond the paper)


@dataclass(frozen=True)
class TwoLayerTableJob:
    """The two-layer Fisher table of skip c (``two_layer.fisher.fisher_table``): nodes² points, QMC settings."""

    rho: float
    skip: float
    nodes: int
    log2_samples: int
    replicates: int
    seed: int


def _two_layer_table(job: Job) -> TwoLayerTableJob:
    from aimrepro.paper1.two_layer.fibre import check_skip

    v = job.values
    return TwoLayerTableJob(v["rho"], check_skip(v["skip"]), v["nodes"], v["log2_samples"], v["replicates"],
                            v["seed"])


def _two_layer_table_work(job: Job) -> Work:
    """Fibre integrals: 2 nodes² replicates 2^k of them (the slope's second covariance doubles them),
    priced by the package's own per-integral calibration (``fisher.estimated_table_seconds``)."""
    from aimrepro.paper1.two_layer.fisher import estimated_table_seconds

    table: TwoLayerTableJob = job.params
    seconds = estimated_table_seconds(table.skip, nodes=table.nodes, log2_samples=table.log2_samples,
                                      replicates=table.replicates)
    points = float(table.nodes) ** 2 * table.replicates
    # the QMC normals of one replicate (2^k × 8) and the per-node estimates (3 per sample, 3 estimators)
    memory = R.BASE_BYTES + 8.0 * 2.0 ** table.log2_samples * (8 + 9 + 200)
    return Work("two_layer_table", fixed={"fisher_table_second": seconds}, memory=memory,
                disk=8.0 * 12 * points + SIDECAR_BYTES + 100_000.0)


_TWO_LAYER_TABLE_FIELDS = {"rho": NUMBER_FIELD, "skip": NUMBER_FIELD, "nodes": INTEGER_FIELD,
                           "log2_samples": INTEGER_FIELD, "replicates": INTEGER_FIELD, "seed": SEED}

#: The whitened 2×2 Fisher information of two layers at skip c on a (V₁, V₂) grid, with its
#: cross-term slope and V → 0 limit (aimrepro.paper1.two_layer.fisher, docs/paper1.md §14.4, §14.6):
#: nodes per axis, 2^log2_samples QMC points per node and replicate.
TWO_LAYER_TABLE = register(Kind(
    "two_layer_table",
    ResultPath("fisher", "two_layer_rho{rho}_c{skip}/k{nodes}_q{log2_samples}_r{replicates}_seed{seed}", ".npz",
               _TWO_LAYER_TABLE_FIELDS),
    params=_two_layer_table, work=_two_layer_table_work,
    sizes={"nodes": 5, "log2_samples": 9, "replicates": 4}))


def two_layer_table_path(job: Job) -> str:
    """The table a two-layer SE curve reads (the same values, its path's fields)."""
    return TWO_LAYER_TABLE.path.format(job.scale, **{name: job.values[name] for name in _TWO_LAYER_TABLE_FIELDS})


@dataclass(frozen=True)
class TwoLayerCurveJob:
    """The two-layer SE along one α grid through a table: a fixed point per α and table replicate."""

    table: TwoLayerTableJob
    grid: Grid


def _two_layer_curve_work(job: Job) -> Work:
    """Per α: the central fixed point, one per table replicate and the diagonal one (~0.1 s together)."""
    curve: TwoLayerCurveJob = job.params
    n = curve.grid.n
    return Work("two_layer_se_curve", fixed={"two_layer_se_point": n},
                memory=R.BASE_BYTES + 50e6, disk=csv_bytes(n, 20))


#: The two-layer state evolution (MMSE₁, MMSE₂ ± the table's noise, the cross term) of skip c along
#: one α grid, through its table (aimrepro.paper1.two_layer.state_evolution.two_layer_curve).
TWO_LAYER_SE_CURVE = register(Kind(
    "two_layer_se_curve",
    ResultPath("se", "two_layer_rho{rho}_c{skip}/alpha_{spacing}_{lo}_{hi}_n{n}_k{nodes}_q{log2_samples}"
                     "_r{replicates}_seed{seed}", ".csv",
               {**_TWO_LAYER_TABLE_FIELDS, "spacing": choice(SPACINGS), "lo": NUMBER_FIELD, "hi": NUMBER_FIELD,
                "n": INTEGER_FIELD}),
    params=lambda job: TwoLayerCurveJob(_two_layer_table(job), _grid(job)),
    work=_two_layer_curve_work, sizes={"n": 15},
    inputs=lambda job: {"table": two_layer_table_path(job)}))


@dataclass(frozen=True)
class TwoLayerRunJob:
    """A two-layer dataset (sampled in the job: it is small and read once) and what runs on it."""

    data: "TwoLayerSpec"  # noqa: F821 -- aimrepro.paper1.two_layer.model.TwoLayerSpec
    stopping: dict


#: Test sequences of a two-layer dataset: the runs score the teachers, not a test set.
TWO_LAYER_TEST_SAMPLES = 10


def _two_layer_spec(job: Job):
    from aimrepro.paper1.two_layer.model import TwoLayerSpec

    v = job.values
    return TwoLayerSpec(rho=v["rho"], d=v["d"], alpha=v["alpha"], skip=v["skip"], replicate=v["seed"],
                        n_test=TWO_LAYER_TEST_SAMPLES)


def _fibre_kind(skip: float) -> str:
    """How the fibre integral of skip c is done (``two_layer.fibre``): two branches, one, or the d-plane."""
    from aimrepro.paper1.two_layer.fibre import PLANE_SKIP

    return "plane" if skip >= PLANE_SKIP else ("two_branches" if skip < 1.0 else "one_branch")


def _two_layer_amp_work(job: Job) -> Work:
    """Per iteration: a fibre integral per sample (the two-layer g_out, ``two_layer.amp.output_messages``),
    the index and back-projection GEMMs of both layers (8 n T d² flops) and two eigh (2 d³)."""
    run: TwoLayerRunJob = job.params
    spec, cap = run.data, int(run.stopping["max_iter"])
    n, T, d = spec.n, spec.T, spec.d
    # the tokens and labels, Ŝ, Ĉ and the eigendecompositions of both layers, the fibre nodes per
    # sample, and the trace (nine numbers per iteration, at most the cap)
    memory = R.BASE_BYTES + 8.0 * (4 * (n + spec.n_test) * T * d + 40.0 * d * d + 400.0 * n + 9.0 * cap)
    return Work("two_layer_amp_run",
                fixed={"normal": (n + spec.n_test) * T * d + 2 * d * spec.r, "flop": 4.0 * n * T * d * spec.r},
                per_loop={"two_layer_amp_iteration": 1, "flop": 8.0 * n * T * d * d, "eigh": 2.0 * float(d) ** 3,
                          f"two_layer_amp_sample_{_fibre_kind(spec.skip)}": n},
                loop=min(cap, TYPICAL["two_layer_amp_iterations"]), loop_bound=cap, memory=memory,
                disk=16.0 * d * d + 80.0 * cap + SIDECAR_BYTES)


_TWO_LAYER_RUN_FIELDS = {"rho": NUMBER_FIELD, "skip": NUMBER_FIELD, "d": INTEGER_FIELD}
_TWO_LAYER_SIZES = {"d": 40, "rho": 0.5, "alpha": 0.3}

#: Two-layer GAMP-RIE (aimrepro.paper1.two_layer.amp, docs/paper1.md §14.7) on a dataset it samples
#: (two_layer.model.sample_dataset, keyed by the config's seed and the run's values), stopped by
#: paper1.two_layer.amp_solver.
TWO_LAYER_AMP_RUN = register(Kind(
    "two_layer_amp_run",
    ResultPath("amp", "two_layer_rho{rho}_c{skip}_d{d}/alpha{alpha}_seed{seed}", ".npz",
               {**_TWO_LAYER_RUN_FIELDS, "alpha": NUMBER_FIELD, "seed": SEED}, output="run"),
    # max_iter is a value of its own: a size the config check can name
    params=lambda job: TwoLayerRunJob(_two_layer_spec(job), {**job.values["stopping"],
                                                              "max_iter": int(job.values["max_iter"])}),
    work=_two_layer_amp_work,
    sizes={**_TWO_LAYER_SIZES, "max_iter": 150},
    reads={"stopping": Read("paper1.two_layer.amp_solver"),
           "max_iter": Read("paper1.two_layer.amp_solver.max_iter")},
    cached=True))


def _two_layer_gd_work(job: Job) -> Work:
    """Per Adam step and student: both layers' indices and back-projections (8 n T d r flops), the
    attention and its backward pass (~40 n T² elements), Adam on 2 d r entries."""
    run: TwoLayerRunJob = job.params
    spec = run.data
    K, steps = int(job.values["inits"]), int(job.values["steps"])
    n, T, d, r = spec.n, spec.T, spec.d, spec.r
    memory = R.BASE_BYTES + 8.0 * (2 * (n + spec.n_test) * T * d + 12.0 * n * T * r + 10.0 * d * r + 4.0 * d * d
                                   + K * 2.0 * d * d)
    return Work("two_layer_gd_run",
                fixed={"normal": (n + spec.n_test) * T * d + 2 * d * r * (K + 1)},
                per_loop={"two_layer_gd_student_step": K, "flop": 8.0 * K * n * T * d * r,
                          "element": K * (40.0 * n * T * T + 24.0 * d * r)},
                loop=steps, loop_bound=steps, memory=memory, disk=200.0 + SIDECAR_BYTES)


#: K two-layer tied students trained by full-batch Adam (aimrepro.paper1.two_layer.gd, docs/paper1.md
#: §14.8) on the dataset of the same values the AMP runs sample; the summary (single, averaged, A∞
#: per layer) in an .npz.
TWO_LAYER_GD_RUN = register(Kind(
    "two_layer_gd_run",
    ResultPath("gd", "two_layer_rho{rho}_c{skip}_d{d}_inits{inits}/alpha{alpha}_steps{steps}_seed{seed}", ".npz",
               {**_TWO_LAYER_RUN_FIELDS, "inits": INTEGER_FIELD, "alpha": NUMBER_FIELD, "steps": INTEGER_FIELD,
                "seed": SEED}, output="run"),
    params=lambda job: TwoLayerRunJob(_two_layer_spec(job), {"lr": job.values["lr"],
                                                              "init_scale": job.values["init_scale"],
                                                              "steps": job.values["steps"]}),
    work=_two_layer_gd_work,
    sizes={**_TWO_LAYER_SIZES, "inits": 8, "steps": 1000},
    reads={"lr": Read("paper1.two_layer.gd.lr"), "init_scale": Read("paper1.two_layer.gd.init_scale", 1.0)},
    cached=True))
