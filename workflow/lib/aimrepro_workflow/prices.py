"""What a unit of work costs: the cost model's calibration, and the work of one job.

A job's CPU seconds are a sum of *work* counted from its parameters, each kind
of work at a calibrated price (:data:`PRICES`, seconds per unit)::

    cpu = startup(rule) + fixed work + loop × (work per iteration)

The units are either machine rates measured by micro-benchmarks (a
floating-point operation of a large GEMM, a standard normal drawn, an
eigendecomposition per d³) or per-call overheads fitted to the quick-scale
jobs (a Python-level SGD step, an AMP iteration, an ODE right-hand side, one
quadrature point).  ``loop`` is the job's main loop: SGD steps, Adam steps,
AMP iterations, right-hand-side evaluations.  Where the data decide its length
(an AMP run that converges, an SGD run or a flow that stops at an overlap, an
adaptive ODE solver) a job's :class:`Work` gives two numbers: the expected
length, from what the quick-scale jobs did (:data:`TYPICAL`), for the cost, and
the cap, for the Slurm limit.  CPU seconds are counted per job whatever its
thread count: BLAS threads share the same operations (a small parallel
overhead is ignored).

Each result kind counts its own work (:mod:`.kinds`); peak memory is
:mod:`aimrepro.resources`' estimate of the job's arrays plus the interpreter
(the same numbers the command line uses); disk is the job's outputs, its
sidecar and its log.  The prices are fitted by ``benchmarks/gather_job_costs.py``
and ``benchmarks/bench_costs.py`` (docs/benchmarks.md, "Cost model").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from aimrepro import resources as R

__all__ = ["PRICES", "STARTUP", "TYPICAL", "SIDECAR_BYTES", "CSV_BYTES_PER_VALUE", "Work", "arithmetic_units",
           "csv_bytes"]

# ---------------------------------------------------------------------------
# calibration: prices of each kind of work (seconds per unit)

#: Seconds per unit of work.  Machine rates (``flop``, ``normal``, ``eigh``,
#: ``byte_io``, ``element``, ``small_matmul``) come from benchmarks/bench_costs.py on the
#: reference machine (one core); the overheads are fitted to the quick-scale jobs of
#: benchmarks/results/quick_jobs.json by benchmarks/gather_job_costs.py --fit, except
#: those it holds (``HELD`` there), which the quick jobs cannot tell from a start-up: the
#: moment hierarchy's (bench_moments.py), a summary's read per file, the Fisher table's
#: and the token SE curve's, and the sampled g_out's (no quick job draws one).
PRICES: dict[str, float] = {
    "flop": 1.0 / 35e9,          # GEMM of the pipeline's shapes, one core
    "normal": 14e-9,             # one float64 standard normal (numpy PCG64)
    "eigh": 2.0e-9,              # a symmetric eigendecomposition, per d³
    "byte_io": 1.0e-9,           # writing or reading one byte of a .npz
    "element": 1.1e-9,           # one float64 element of a vectorised expression
    "small_matmul": 1.247e-10,   # one multiply-add of numpy's matmul on stacks of tiny (T × r) matrices
    # the same in float32 (backend.dtype of a kernel family, docs/design.md "Precision"): the float64
    # price over the float32 speed-up bench_costs.py measured beside it (GEMM 1.96, element 2.10,
    # small matmul 1.06)
    "flop32": 1.0 / 35e9 / 1.96,
    "element32": 1.1e-9 / 2.10,
    "small_matmul32": 1.247e-10 / 1.06,
    # overheads per call, fitted
    "se_point_softmax": 0,
    "se_point_hardmax": 0.1042,
    "se_point_hardmax_paper": 0.07992,
    "amp_iteration": 4.148e-4,
    "amp_sample_hardmax": 3.655e-08,
    "amp_sample_softmax": 0,
    "gd_step": 1.019e-4,
    "gd_replica_step": 0,
    "sgd_step": 0,
    "sgd_step_untied": 0,
    "sgd_sample_softmax": 0,
    "rhs_tied": 0.0003162,
    "rhs_direct": 0.0003056,
    "rhs_untied": 0.001404,
    "rhs_untied_limit": 0.01238,  # the slaved limit flow: fast fixed points per right-hand side
    "gamma_softmax": 0.0006989,
    "moment_letter_build": 13e-6,
    "moment_term": 8e-9,
    "moment_rhs": 1.0e-4,
    "mc_sequence": 7.136e-07,
    "quadrature_point": 8.579e-05,
    "fast_state": 0.01084,
    "input_file": 5.0e-3,
    # hardmax with T >= 3 tokens: the Fisher table's CPU seconds come from the package's own
    # per-sample calibration (aimrepro.paper1.hardmax_tokens.estimated_table_seconds)
    "fisher_table_second": 1.0,
    "tokens_se_point": 0.03,
    # two attention layers (docs/paper1.md §14), from benchmarks/results/two_layer_quick.json and
    # two_layer_referee.json (one process, CPU time on the shared machine under load ~20: upper
    # estimates): a table's seconds come from the package's per-integral calibration
    # (two_layer.fisher.estimated_table_seconds, fisher_table_second above); an SE point is its
    # central, per-replicate and diagonal fixed points; an AMP iteration's overhead and its fibre
    # integral per sample by how the fibre is integrated (two branches for c < 1, one for c < 2,
    # the d-plane beyond: d = 40 markers at c = 0, 1, 10 and the c = 1 trend from d = 40 to 100);
    # a GD step per student (d = 40, alpha 0.2 and 0.5, 8 students); a fibre integral of the
    # threshold's Fisher estimate (claims)
    "two_layer_se_point": 0.09,
    "two_layer_amp_iteration": 2.5e-3,
    "two_layer_amp_sample_two_branches": 40e-6,
    "two_layer_amp_sample_one_branch": 15e-6,
    "two_layer_amp_sample_plane": 6e-6,
    "two_layer_gd_student_step": 4.5e-4,
    "two_layer_threshold_integral": 1.5e-4,
    # generalisation error along an SE curve: nested quadrature per point (T = 3: 2 + 2 dimensions)
    "gen_point_softmax_T2": 0,
    "gen_point_softmax_T3": 0.08098,
    "gen_point_hardmax_T2": 0.1282,
    # the exact finite-d tied flow, per right-hand side and link degree: an overhead, and the
    # moments of its words per d³
    "exact_rhs_h1": 0, "exact_rhs_h2": 2.431e-05, "exact_rhs_h3": 0.001201,
    "exact_rhs_d3_h1": 2.603e-11, "exact_rhs_d3_h2": 3.643e-10, "exact_rhs_d3_h3": 1.218e-09,
    # paper-2 theory tables: per replicate and d (one initial state, its flow or its velocity),
    # and for the tied velocity the exact drift's moments per d³ and link degree
    "tied_velocity_replicate": 0,
    "untied_velocity_replicate": 0.08532,
    "tied_velocity_d3_h1": 5.813e-10, "tied_velocity_d3_h2": 1.342e-09,
    "tied_velocity_d3_h3": 3.604e-09,
    "radius_d3": 3.51e-7,  # one replicate of the truncation radius, per d³
    "untied_truncation_order": 0.07846,  # one truncation order of a replicate, beside its limit flow
    "tokens_gout_proposal": 6.4e-7,  # one importance-sampling proposal of the sampled g_out, per sample
    "instability_time": 0.02539,  # the instability time of one untied flow (paper 2, Figure S5)
    # the token-law theory (beyond both papers): one draw of the finite-d SE's known part and its
    # information, per (sample, d + 40) and solve (findings: 1.5-4 s per law and d at 2e4 draws)
    "finite_d_draw": 8.0e-7,
    # a claims topic's own work beyond the start-up (claims_topic), per topic
    "claims_paper1_amp": 0.7, "claims_paper1_gd": 0.194, "claims_paper1_hardmax_tokens": 10.56,
    "claims_paper1_theory": 2.404, "claims_paper2_dynamics": 0.938, "claims_paper2_moments": 0,
    "claims_paper2_untied": 0.862,
}

#: CPU seconds of a job's process before and after its work: the interpreter,
#: numpy/scipy (and matplotlib for figures), the aimrepro modules, the input
#: checks and the sidecar; fitted per rule to the quick-scale jobs, except the Fisher
#: table's, the token SE curve's and the token AMP run's, which stay with their rules'
#: hand-set work prices.
STARTUP: dict[str, float] = {
    "se_curve": 0.3041, "aim_dataset": 0.1286, "amp_run": 0.2642, "amp_summary": 0.2437,
    "gd_run": 0, "gd_summary": 0.1433, "sgd_run": 0.1153, "reference_flow": 0.4088, "theorem1": 0,
    "landscape": 0,
    "moment_truncations": 0.3828, "riccati_flow": 0.4252, "truncation_error": 0.5172,
    "untied_sgd_run": 0.09888, "untied_theory": 0.5802, "untied_fast_states": 0,
    "fisher_table": 1.0, "tokens_se_curve": 1.0, "tokens_amp_run": 0.5, "se_generalisation": 0.3111,
    "flow_ensemble": 0.4157, "tied_velocity": 0, "untied_velocity": 0, "truncation_radius": 0,
    "untied_truncation": 0, "untied_decay": 0.58,
    "two_layer_table": 1.0, "two_layer_se_curve": 1.0, "two_layer_amp_run": 0.5, "two_layer_gd_run": 0.5,
    "figure": 1.179, "claims_topic": 0.382, "claims": 0.132,
    # the token-law study (beyond both papers), set by hand until gather_job_costs.py refits them
    "token_law_amp": 0.3, "token_law_gd": 0.3, "token_law_theory": 0.5, "token_law_se_curve": 0.3,
    "token_law_sgd": 0.5,
}

#: Expected loop lengths where the data decide them, from the quick-scale jobs
#: (means, since a total is what they price): AMP iterations per channel; the
#: fraction of its horizon an SGD run that stops at an overlap runs;
#: right-hand-side evaluations of the adaptive ODE solvers (per unit of horizon
#: for the moment hierarchy).
TYPICAL: dict[str, float] = {
    "amp_iterations_hardmax": 329.0,
    "amp_iterations_hardmax_paper": 12.0,
    "amp_iterations_softmax": 499.0,
    "amp_iterations_tokens": 210.0,   # the sampled g_out never settles: `stationary` near 204
    # two-layer GAMP-RIE: its sampled-quadrature messages jitter, runs end `stationary` after 70-130
    "two_layer_amp_iterations": 100.0,
    "sgd_stop_fraction": 0.285,
    # token-law SGD (rule token_law_sgd) at horizons tied 16, direct 12: the mean end of a run over
    # its horizon, measured on the referee runs (d = 50-200): Rademacher's trapped escapes 0.14-0.29,
    # sparse 0.01-0.05, Student-t blows up within steps; Gaussian as Figure S3's
    "token_law_stop_fraction_rademacher": 0.2, "token_law_stop_fraction_sparse": 0.035,
    "token_law_stop_fraction_student_t": 0.001, "token_law_stop_fraction_gaussian": 0.285,
    "untied_stop_fraction": 0.147,
    "tied_flow_rhs": 300.0,
    "direct_flow_rhs": 820.0,
    "untied_flow_rhs_RK45": 780.0,
    "untied_flow_rhs_ROS2": 1300.0,
    "untied_limit_rhs": 128.0,
    "untied_stop_fraction_flow": 0.53,
    # the untied decay table's RK45 population flow, right-hand sides per replicate per d and unit
    # of tau: the stiff fast direction (rate ~ d) sets the steps (d = 50, 100 at tau = 6: 5.2, 4.7)
    "untied_decay_rhs_per_d_tau": 5.0,
    "moment_rhs_per_order": 60.0,
    # GAMP-RIE iterations of the token-law points (quick jobs: hardmax alpha = 0.6 converges in ~50,
    # softmax alpha_T = 0.3 in ~100; runs that jitter stop at ~200)
    "token_law_amp_iterations_hardmax": 55.0, "token_law_amp_iterations_softmax": 115.0,
    # flow ensembles, right-hand sides per replicate: a + b × horizon
    "ensemble_rhs_tied": 160.0, "ensemble_rhs_per_time_tied": 48.0,
    "ensemble_rhs_direct": 850.0, "ensemble_rhs_per_time_direct": 0.0,
    "ensemble_rhs_exact": 690.0, "ensemble_rhs_per_time_exact": 0.0,
}

#: Disk per job beside its result: sidecar (code hashes, params) and log, measured at quick scale.
SIDECAR_BYTES = 12_000.0
#: Bytes per number of a CSV table (text, with separators).
CSV_BYTES_PER_VALUE = 20.0


@dataclass
class Work:
    """Work of one job: fixed units, units per loop iteration, the loop's lengths, memory and disk.

    ``startup`` names the job's start-up price (:data:`STARTUP`, one per rule);
    ``memory`` is the peak resident memory (bytes), ``disk`` its outputs, sidecar
    and log (bytes), ``threads`` the threads its rule asks for, ``temporary`` that
    its output is deleted once its consumers are done.
    """

    startup: str
    fixed: dict[str, float] = field(default_factory=dict)
    per_loop: dict[str, float] = field(default_factory=dict)
    loop: float = 0.0
    loop_bound: float = 0.0
    memory: float = R.BASE_BYTES
    disk: float = 0.0
    threads: int = 1
    temporary: bool = False

    def units(self, loop: float) -> dict[str, float]:
        """Amount of each unit of work with a loop of this length (``startup`` once)."""
        amounts: dict[str, float] = defaultdict(float, {"startup": 1.0})
        for unit, amount in self.fixed.items():
            amounts[unit] += amount
        for unit, amount in self.per_loop.items():
            amounts[unit] += loop * amount
        return dict(amounts)

    def seconds(self, loop: float) -> float:
        return sum(amount * (STARTUP[self.startup] if unit == "startup" else PRICES[unit])
                   for unit, amount in self.units(loop).items())


def csv_bytes(rows: float, columns: float) -> float:
    """Disk of a CSV table of ``rows`` × ``columns`` numbers, with its sidecar."""
    return CSV_BYTES_PER_VALUE * rows * columns + SIDECAR_BYTES


def arithmetic_units(dtype: str) -> tuple[str, str, str]:
    """The units of a kernel family's arithmetic, (GEMM flop, element, small matmul), in ``dtype``.

    ``backend.dtype.<family>`` float32 prices the kernels' own arithmetic at
    the float32 rates; what stays float64 in every type (the state, the
    records, the reported numbers) keeps the float64 units in the work functions.
    """
    if dtype == "float32":
        return "flop32", "element32", "small_matmul32"
    return "flop", "element", "small_matmul"
