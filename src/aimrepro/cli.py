"""Command line: one-off theory queries and provenance audits.

``aimrepro se --channel softmax --T 2 --rho 0.5 --alpha 0.05 0.1``
    Solve the state evolution at each α (in increasing order) and print one
    JSON object per line: ``alpha, mmse, q, qhat, converged, iterations,
    residual``.
``aimrepro se --channel hardmax --T 3 --rho 0.5 --alpha 0.3``
    Hardmax attention with T >= 3 tokens (beyond the paper, docs/paper1.md
    §3.6): the SE needs a Monte-Carlo table of one function F_T(m), computed
    first (``--table-samples``, ``--table-seed``; the defaults give the quick
    pipeline's table bit for bit, ~11 s CPU at T = 3, ~70 s at T = 4).  Each
    line gains ``mmse_stderr`` (the table's noise carried to the MMSE) and
    ``extrapolated``.  A table estimated to need more than
    ``--max-table-seconds`` CPU is refused with one line.
``aimrepro se --layers 2 --skip 1 --channel softmax --T 2 --rho 0.5 --alpha 0.1 0.2``
    Two attention layers (beyond the paper, docs/paper1.md §13): tabulates the
    two-layer Fisher information at the quick pipeline's settings (seeded by
    ``--table-seed``; ~10–40 s CPU depending on c), then prints per α ``mmse1``,
    ``mmse2`` (the two layers' errors), their ``*_stderr`` (the table's noise),
    ``corr`` (the layers' error correlation), ``perfect``, ``converged``,
    ``iterations``, ``residual``.
``aimrepro threshold --T 2 --rho 0.5``
    Print ``{"rho": ..., "T": ..., "alpha_pr": ...}``, the softmax
    perfect-recovery threshold.
``aimrepro sgd --param tied --link h2 --T 1 --d 100 --lr 0.05 --batch 256 --horizon 3 --seed 0``
    Online SGD of paper 2 (direct S, tied W Wᵀ or untied U Vᵀ): one JSON
    object per recorded time with the order parameters (``t_ode`` in the
    paper's time of the parametrisation, traces t, q, Ψ, Ω, means m, p12,
    ``overlap_ratio`` = |p12|/p22), then a last line with
    ``weak_recovery_time`` (t_ode at which the overlap ratio first reaches
    ``--threshold``, null if never) and ``blew_up``.
``aimrepro amp --channel hardmax --T 2 --rho 0.5 --alpha 0.3 --d 100 --seed 1``
    Sample an AIM dataset (teacher, training and test sequences; the seed
    is the base seed, ``--replicate`` the draw index of a result path), run
    GAMP-RIE and print one JSON object: ``error``, ``generalisation_error``
    (the plug-in test error ‖y − g(ĥ)‖², also as ``plugin_generalisation_error``),
    ``bayes_generalisation_error`` (of the posterior-mean prediction;
    ``aimrepro.paper1.generalisation``), ``iterations``, ``status``, ``converged``,
    ``se_mmse``.
``aimrepro amp --channel softmax --dataset results/quick/data/softmax_beta1_T3_rho0.5_d50/alpha0.06_seed3.npz``
    The same on a dataset file of the pipeline (or any ``save_dataset``
    file): T, ρ, α, d, the seeds and the test set come from the file, so a
    pipeline point reruns without typing α to every digit.  ``gd`` takes
    ``--dataset`` too.
``aimrepro gd --T 2 --rho 0.5 --alpha 0.1 --d 60 --inits 8 --steps 1000 --lr 0.1 --seed 1``
    Sample a softmax AIM dataset as ``amp`` does, train ``--inits`` tied
    students W Wᵀ/√(r d) of the teacher's width by full-batch Adam on the
    paper's loss (docs/paper1.md §6) and print one JSON object:
    ``single_error`` (mean over the students of ‖S_k − S*‖²_F/d),
    ``averaged_error`` (‖S̄ − S*‖²_F/d of their mean), ``train_loss`` (mean
    final training loss), ``generalisation_error`` (plug-in test error of
    S̄), ``se_mmse`` and ``n_diverged`` (students that diverged, left out).
``aimrepro provenance figures/quick/paper1_fig1.pdf``
    Print the lineage tree of a figure or result from the provenance
    sidecars down to its raw inputs.
``aimrepro cost [--scale quick|paper] [--configfile F] [--json]``
    What a pipeline run would cost before it is launched: per rule the
    number of jobs, core-hours (expected, and if every data-dependent loop
    ran to its cap), the largest job, peak memory per job and disk, then the
    totals; ``--json`` prints the same as one JSON object.  The model is the
    workflow's (``workflow/lib/aimrepro_workflow/costs.py``, which also sets
    the rules' resources), found in the repository that holds ``--configfile``
    (default ``config.yaml`` of the repository around the current directory).

Arguments are checked before anything is computed.  A bad argument exits
with status 2 and a single line on stderr naming it and its allowed range.
``amp``, ``gd`` and ``sgd`` also estimate the memory of the run
(``aimrepro.resources``) and refuse, the same way, one that needs more than
``--memory-limit`` GiB (default: the memory available now), naming the option
that makes it large; ``sgd`` refuses a horizon shorter than one step; ``se``,
``amp`` and ``gd`` refuse a width ratio outside the range on which the state
evolution is validated; a run that exhausts the memory all the same ends with
one line (status 1).  Non-finite numbers are printed as JSON ``null``, so
that every line is strict JSON.  Output cut short by a closed pipe
(``aimrepro ... | head``) ends the command quietly with status 141
(128 + SIGPIPE, what a shell reports for a process that signal ends).
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from aimrepro.model import LINKS
from aimrepro.paper1.channels import CHANNELS
from aimrepro.paper2.sgd import PARAMETRISATIONS

__all__ = ["CHANNEL_NAMES", "LINK_NAMES", "PARAMETRISATIONS", "build_parser", "main"]

#: The choices of the commands come from the package's registries, as do the
#: workflow's wildcard constraints: output channels (``se``, ``amp``), links and
#: parametrisations (``sgd``).
CHANNEL_NAMES = tuple(CHANNELS)
#: Channels defined for T = 2 only (docs/paper1.md §3.4); hardmax with T >= 3
#: goes through a Fisher table (``se`` only, aimrepro.paper1.hardmax_tokens).
_T2_ONLY_CHANNELS = ("hardmax_paper",)
_TABLED_CHANNELS = ("hardmax",)
#: The quick pipeline's table: its reference sample size and the config's seed.
_TABLE_SAMPLES, _TABLE_SEED, _MAX_TABLE_SECONDS = 50_000, 20250602, 300.0
LINK_NAMES = LINKS
#: Row-wise links act on rows of T >= 2 tokens (docs/paper2.md §1).
_ROW_LINKS = ("softmax", "hardmax")


class _OneLineArgumentParser(argparse.ArgumentParser):
    """ArgumentParser whose errors are a single line (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _integer_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value
    return parse


def _finite_number(minimum: float, *, strict: bool):
    """Parser of a finite number > minimum (strict) or >= minimum."""
    relation = ">" if strict else ">="

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be a finite number {relation} {minimum:g}, got {text!r}") from None
        if not (math.isfinite(value) and (value > minimum if strict else value >= minimum)):
            raise argparse.ArgumentTypeError(
                f"must be a finite number {relation} {minimum:g}, got {text}")
        return value
    return parse


_positive_finite = _finite_number(0.0, strict=True)
_nonnegative_finite = _finite_number(0.0, strict=False)


def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(
            f"must be an existing result or figure file, no such file: {text}")
    return path


def _add_backend(sub: argparse.ArgumentParser) -> None:
    from aimrepro.backends import BACKENDS

    sub.add_argument("--backend", choices=BACKENDS, default="numpy",
                     help="where the kernels compute: numpy (default, the reference) or torch "
                          "(pip install -e '.[gpu]'; a GPU if there is one)")


def _add_memory_limit(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--memory-limit", type=_positive_finite, default=None, metavar="GIB",
                     help="refuse a run whose estimated memory exceeds this many GiB, finite > 0 "
                          "(default: the memory available now)")


def _dataset_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"must be an existing dataset file (.npz), no such file: {text}")
    return path


#: The options that sample a dataset; ``--dataset`` replaces them all.
_SAMPLING_OPTIONS = ("T", "rho", "alpha", "d", "seed", "replicate", "test_samples")
_SAMPLING_REQUIRED = ("T", "rho", "alpha", "d", "seed")


def _add_dataset_arguments(sub: argparse.ArgumentParser, *, T_help: str) -> None:
    """The arguments naming an AIM dataset (``amp``, ``gd``): a dataset file, or T, rho, alpha, d, seeds, test size.

    The sampling options are required unless ``--dataset`` is given, and refused
    with it (checked by :func:`_resolve_dataset` after parsing).
    """
    sub.add_argument("--dataset", type=_dataset_file, default=None, metavar="PATH",
                     help="run on this dataset file (e.g. results/quick/data/.../alpha0.06_seed3.npz, "
                          "a pipeline point) instead of sampling one; replaces --T ... --test-samples")
    sub.add_argument("--T", dest="T", type=_integer_at_least(2), metavar="T", help=T_help)
    sub.add_argument("--rho", type=_positive_finite, metavar="RHO",
                     help="width ratio rho = r/d, finite > 0")
    sub.add_argument("--alpha", type=_positive_finite, metavar="ALPHA",
                     help="sample ratio alpha = n/d^2, finite > 0")
    sub.add_argument("--d", dest="d", type=_integer_at_least(4), metavar="D",
                     help="token dimension, integer >= 4")
    sub.add_argument("--seed", type=_integer_at_least(0), metavar="SEED",
                     help="base seed, integer >= 0 (the config's `seed`)")
    sub.add_argument("--replicate", type=_integer_at_least(0), default=None, metavar="K",
                     help="index of the independent draw, integer >= 0 (default 0)")
    sub.add_argument("--test-samples", type=_integer_at_least(1), default=None, metavar="N",
                     help="size of the fresh test set (default 1000)")


def _resolve_dataset(args: argparse.Namespace, subparser: argparse.ArgumentParser, *, link: str) -> None:
    """Either load ``--dataset`` (its spec fills T, rho, alpha, d, ...) or check the sampling options.

    ``link`` is the data model the command needs (``hardmax`` for both hardmax
    channels): a dataset of another link is refused.  Sets ``args.loaded``
    (the :class:`~aimrepro.paper1.data.Dataset`, or None to sample one).
    """
    from aimrepro.paper1.data import load_dataset

    given = [name for name in _SAMPLING_OPTIONS if getattr(args, name) is not None]
    args.loaded = None
    if args.dataset is None:
        missing = [name for name in _SAMPLING_REQUIRED if getattr(args, name) is None]
        if missing:
            subparser.error("the following arguments are required without --dataset: "
                            + ", ".join("--" + name.replace("_", "-") for name in missing))
        args.replicate = 0 if args.replicate is None else args.replicate
        args.test_samples = 1000 if args.test_samples is None else args.test_samples
        return
    if given:
        subparser.error(f"argument --dataset: not allowed with --{given[0].replace('_', '-')} "
                        f"(the dataset file fixes T, rho, alpha, d, the seeds and the test set)")
    try:
        dataset = load_dataset(args.dataset)
    except (ValueError, KeyError, OSError) as err:
        subparser.error(f"argument --dataset: {args.dataset} is not an aimrepro dataset ({err})")
    spec = dataset.spec
    if spec.link != link:
        subparser.error(f"argument --dataset: {args.dataset} holds {spec.link} data; this run needs {link} data")
    if getattr(args, "beta", None) is not None and spec.beta is not None and args.beta != spec.beta:
        subparser.error(f"argument --beta = {args.beta:g}: the dataset's labels use beta = {spec.beta:g}")
    args.loaded = dataset
    args.T, args.rho, args.alpha, args.d = spec.T, spec.rho, spec.alpha, spec.d
    args.seed, args.replicate, args.test_samples = dataset.base_seed, spec.replicate, spec.n_test
    if hasattr(args, "beta") and spec.beta is not None:
        args.beta = spec.beta


def build_parser() -> argparse.ArgumentParser:
    """The ``aimrepro`` argument parser with its three subcommands."""
    parser = _OneLineArgumentParser(
        prog="aimrepro",
        description="Theory, simulations, costs and provenance audits of the AIM reproduction.",
    )
    commands = parser.add_subparsers(dest="command", required=True,
                                     metavar="{se,threshold,amp,gd,sgd,provenance,cost}")

    se = commands.add_parser(
        "se", help="solve the Bayes-optimal state evolution at given sample ratios",
        description="Solve the SE fixed point at each alpha (increasing order); "
                    "print one JSON object per line.")
    se.add_argument("--channel", required=True, choices=CHANNEL_NAMES,
                    help="output channel; hardmax_paper is the published formula (erratum B1)")
    se.add_argument("--T", dest="T", required=True, type=_integer_at_least(2), metavar="T",
                    help="sequence length, integer >= 2 (hardmax_paper: T = 2; hardmax with "
                         "T >= 3 first tabulates F_T, see --table-samples)")
    se.add_argument("--rho", required=True, type=_positive_finite, metavar="RHO",
                    help="width ratio rho = r/d, finite > 0")
    se.add_argument("--alpha", required=True, nargs="+", type=_positive_finite,
                    metavar="ALPHA", help="sample ratios alpha = n/d^2, each finite > 0")
    se.add_argument("--beta", type=_positive_finite, default=None, metavar="BETA",
                    help="softmax inverse temperature, finite > 0 (default 1; softmax only)")
    se.add_argument("--table-samples", type=_integer_at_least(1000), default=_TABLE_SAMPLES,
                    metavar="N",
                    help="hardmax, T >= 3: reference sample size of the Fisher table (node k gets "
                         f"N/x_k samples, 17 nodes), integer >= 1000 (default {_TABLE_SAMPLES}: "
                         "MMSE s.e. ~0.1-1 %% of the MMSE; CPU ~11 s at T = 3, ~70 s at T = 4, "
                         "proportional to N)")
    se.add_argument("--table-seed", type=_integer_at_least(0), default=_TABLE_SEED, metavar="S",
                    help=f"hardmax, T >= 3: seed of the table, integer >= 0 (default {_TABLE_SEED}, "
                         "the config's seed: the quick pipeline's table)")
    se.add_argument("--max-table-seconds", type=_positive_finite, default=_MAX_TABLE_SECONDS,
                    metavar="SEC",
                    help="hardmax, T >= 3: refuse a table estimated to need more CPU seconds than "
                         f"this (default {_MAX_TABLE_SECONDS:g}; T = 5 needs ~12x T = 4 per sample)")
    se.add_argument("--layers", type=int, choices=(1, 2), default=1,
                    help="attention layers: 1 (the paper) or 2 (beyond the paper, docs/paper1.md §13: "
                         "softmax, T = 2, needs --skip; tabulates the two-layer Fisher information first)")
    se.add_argument("--skip", type=_nonnegative_finite, default=None, metavar="C",
                    help="--layers 2: skip strength c of the attention c I + softmax(H1), finite >= 0")

    threshold = commands.add_parser(
        "threshold", help="softmax perfect-recovery threshold alpha_PR(rho, T)",
        description="Print the softmax perfect-recovery threshold as JSON.")
    threshold.add_argument("--T", dest="T", required=True, type=_integer_at_least(2),
                           metavar="T", help="sequence length, integer >= 2")
    threshold.add_argument("--rho", required=True, type=_positive_finite, metavar="RHO",
                           help="width ratio rho = r/d, finite > 0")

    sgd = commands.add_parser(
        "sgd", help="online SGD of paper 2 (direct, tied or untied attention)",
        description="Run online SGD against a fresh teacher; print the order parameters at "
                    "each recorded time as one JSON object per line, then a summary line "
                    "with weak_recovery_time (t_ode units) and blew_up.")
    sgd.add_argument("--param", required=True, choices=PARAMETRISATIONS,
                     help="parametrisation of the student: S itself, W Wᵀ or U Vᵀ")
    sgd.add_argument("--link", required=True, choices=LINK_NAMES,
                     help="output link of student (and teacher); h1 = linear")
    sgd.add_argument("--T", dest="T", required=True, type=_integer_at_least(1), metavar="T",
                     help="tokens per sequence, integer >= 1 (softmax, hardmax: >= 2)")
    sgd.add_argument("--d", required=True, type=_integer_at_least(2), metavar="D",
                     help="dimension, integer >= 2")
    sgd.add_argument("--lr", required=True, type=_positive_finite, metavar="A",
                     help="step size of one minibatch step, finite > 0")
    sgd.add_argument("--batch", required=True, type=_integer_at_least(1), metavar="B",
                     help="minibatch size, integer >= 1")
    sgd.add_argument("--horizon", required=True, type=_positive_finite, metavar="H",
                     help="final time in t_ode units (tied 4·lr·steps/d, direct and untied "
                          "lr·steps/d), finite > 0")
    sgd.add_argument("--seed", required=True, type=_integer_at_least(0), metavar="S",
                     help="replicate seed, integer >= 0 (teacher, student and data derive from it)")
    sgd.add_argument("--rho", type=_positive_finite, default=0.5, metavar="RHO",
                     help="width ratio r/d of teacher and student factors, finite > 0 "
                          "(default 0.5)")
    sgd.add_argument("--beta", type=_positive_finite, default=1.0, metavar="BETA",
                     help="softmax inverse temperature, finite > 0 (default 1)")
    sgd.add_argument("--teacher-link", choices=LINK_NAMES, default=None,
                     help="teacher link if different from --link (e.g. hardmax)")
    sgd.add_argument("--weight-decay", type=_nonnegative_finite, default=0.0, metavar="GAMMA",
                     help="weight decay gamma, finite >= 0 (default 0)")
    sgd.add_argument("--normalisation", choices=("unit_variance", "aim"), default="unit_variance",
                     help="teacher/student scaling (default unit_variance: index variance 1)")
    sgd.add_argument("--records", type=_integer_at_least(2), default=101, metavar="N",
                     help="records on a uniform t_ode grid including 0 and H (default 101)")
    sgd.add_argument("--threshold", type=_positive_finite, default=0.3, metavar="C",
                     help="weak-recovery threshold on |p12|/p22 (default 0.3)")
    _add_backend(sgd)
    _add_memory_limit(sgd)
    amp = commands.add_parser(
        "amp", help="sample an AIM dataset and run GAMP-RIE on it",
        description="Sample a teacher and n = round(alpha d^2) sequences, run GAMP-RIE, "
                    "print one JSON object.")
    amp.add_argument("--channel", required=True, choices=CHANNEL_NAMES,
                     help="output channel; hardmax_paper runs the published g_out (erratum B1) "
                          "on data of the correct hardmax model")
    _add_dataset_arguments(amp, T_help="sequence length, integer >= 2 (hardmax channels: T = 2)")
    amp.add_argument("--beta", type=_positive_finite, default=None, metavar="BETA",
                     help="softmax inverse temperature, finite > 0 (default 1; softmax only)")
    amp.add_argument("--max-iter", type=_integer_at_least(1), default=2000, metavar="N",
                     help="iteration cap (default 2000, aimrepro.paper1.amp.StoppingRule)")
    _add_backend(amp)
    _add_memory_limit(amp)

    gd = commands.add_parser(
        "gd", help="sample a softmax AIM dataset and train tied students on it by Adam",
        description="Sample a teacher and n = round(alpha d^2) sequences (softmax link), train "
                    "--inits students of the teacher's width by full-batch Adam on the paper's "
                    "loss, print one JSON object.")
    _add_dataset_arguments(gd, T_help="sequence length, integer >= 2")
    gd.add_argument("--inits", required=True, type=_integer_at_least(1), metavar="K",
                    help="students (random initialisations) trained together, integer >= 1")
    gd.add_argument("--steps", required=True, type=_integer_at_least(1), metavar="N",
                    help="full-batch Adam steps, integer >= 1 (paper: 1000)")
    gd.add_argument("--lr", required=True, type=_positive_finite, metavar="LR",
                    help="Adam learning rate, finite > 0 (paper: 0.1)")
    gd.add_argument("--beta", type=_positive_finite, default=None, metavar="BETA",
                    help="softmax inverse temperature of data and students, finite > 0 (default 1, "
                         "or the dataset's)")
    gd.add_argument("--init-scale", type=_positive_finite, default=1.0, metavar="SIGMA",
                    help="std of the initial factor entries, finite > 0 (default 1, as the paper)")
    gd.add_argument("--threads", type=_integer_at_least(1), default=1, metavar="N",
                    help="blocks of students trained at once, integer >= 1 (default 1); "
                         "the result does not depend on it")
    _add_backend(gd)
    _add_memory_limit(gd)

    provenance = commands.add_parser(
        "provenance", help="print the lineage tree of a result or figure",
        description="Follow provenance sidecars from FILE down to its raw inputs.")
    provenance.add_argument("file", type=_existing_file, metavar="FILE",
                            help="a result (.csv, .md, ...) or figure (.pdf, .png)")
    provenance.add_argument("--code", action="store_true",
                            help="also list the code files (with sha256) of each step")
    provenance.add_argument("--check", action="store_true",
                            help="verify the whole lineage instead: every file against its sidecar "
                                 "and its consumer's record, every code file against its recorded "
                                 "hash; print what differs; exit 0 only if nothing does")

    cost = commands.add_parser(
        "cost", help="what the pipeline would cost: core-hours, memory and disk per rule",
        description="Predict, before launching, what `snakemake --config scale=SCALE` costs: per "
                    "rule the jobs, core-hours (expected; bound: every data-dependent loop at "
                    "its cap), the largest job, peak memory per job and disk, then the totals. "
                    "The model is the workflow's own (workflow/lib/aimrepro_workflow/costs.py, "
                    "which also sets each rule's threads, mem_mb and runtime): it is read from "
                    "the repository that holds --configfile, or else from the repository around "
                    "the current directory (run it from the repository root, as snakemake).")
    cost.add_argument("--scale", choices=("quick", "paper"), default=None,
                      help="the preset to cost (default: the config's `scale`)")
    cost.add_argument("--configfile", type=Path, default=None, metavar="FILE",
                      help="the config to cost (default: config.yaml at the repository root)")
    cost.add_argument("--json", action="store_true",
                      help="print one JSON object instead of the table")

    # Each subcommand reports its own errors, prefixed with its name.
    for sub in commands.choices.values():
        sub.set_defaults(subparser=sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aimrepro`` console script; returns the exit status."""
    try:
        return _main(argv)
    except MemoryError as err:
        # The estimate fitted the limit (or --memory-limit raised it) but the machine
        # could not deliver: one line, as for any other failure of the run.
        print(f"aimrepro: out of memory: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader of stdout left (`aimrepro ... | head`): point stdout at devnull so
        # that the interpreter's final flush cannot fail again, and end quietly
        # (Python docs, signal module, "Note on SIGPIPE").
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    subparser = args.subparser
    if args.command == "se":
        _check_se_arguments(args, subparser)
        return _run_se(args, subparser)
    if args.command == "threshold":
        return _run_threshold(args)
    if args.command == "sgd":
        _check_sgd_arguments(args, subparser)
        _check_sgd_size(args, subparser)
        return _run_sgd(args, subparser)
    if args.command == "amp":
        from aimrepro.paper1.amp import CHANNEL_LINK

        _resolve_dataset(args, subparser, link=CHANNEL_LINK[args.channel])
        _check_se_arguments(args, subparser)
        _check_amp_size(args, subparser)
        return _run_amp(args, subparser)
    if args.command == "gd":
        _resolve_dataset(args, subparser, link="softmax")
        _check_rho(args, subparser)
        _check_gd_size(args, subparser)
        return _run_gd(args, subparser)
    if args.command == "cost":
        return _run_cost(args, subparser)
    return _run_provenance(args, subparser)


# ---------------------------------------------------------------------------
# sizes, estimated before anything is allocated (aimrepro.resources)


def _gib(value: float) -> str:
    return f"{value / 2.0 ** 30:.3g}"


def _memory_limit(args: argparse.Namespace) -> tuple[float, str]:
    """The memory a run may use, in bytes, and where that number comes from."""
    from aimrepro.resources import available_memory

    if args.memory_limit is not None:
        return args.memory_limit * 2.0 ** 30, "--memory-limit"
    return available_memory(), "available memory; --memory-limit to change"


def _refuse_if_too_large(args: argparse.Namespace, subparser: argparse.ArgumentParser,
                         estimate, params: dict[str, Any], options: dict[str, str]) -> None:
    """Exit 2 with one line if ``estimate(**params)`` needs more than the memory limit.

    ``options`` maps the estimate's parameters to the options that set them; the
    line names the one whose typical value would shrink the estimate most
    (``resources.driver``), its value, the estimate and the limit.
    """
    from aimrepro.resources import driver

    needed = estimate(**params)
    limit, source = _memory_limit(args)
    if needed.bytes <= limit:
        return
    name = driver(estimate, params, list(options))
    steps = f", {needed.steps:.3g} steps" if needed.steps >= 1e6 else ""
    if name is None:  # ordinary sizes: the limit is what is small
        subparser.error(f"argument --memory-limit: the run needs ~{_gib(needed.bytes)} GiB "
                        f"(estimate{steps}) at ordinary sizes, more than the limit of "
                        f"{_gib(limit)} GiB ({source})")
    option = options[name]
    value = getattr(args, option[2:].replace("-", "_"))
    value = f"{value:g}" if isinstance(value, float) else value
    subparser.error(f"argument {option} = {value}: needs ~{_gib(needed.bytes)} GiB "
                    f"(estimate{steps}), limit {_gib(limit)} GiB ({source})")


#: Parameters of the dataset-based estimates and the options that set them.
_DATASET_OPTIONS = {"alpha": "--alpha", "d": "--d", "T": "--T", "n_test": "--test-samples",
                    "rho": "--rho"}


def _check_sequences(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    from aimrepro.paper1.data import MAX_SEQUENCES

    n = round(args.alpha * args.d * args.d)
    if n < 1:
        subparser.error(f"arguments --alpha/--d: alpha d^2 must round to at least one sequence, "
                        f"got alpha={args.alpha}, d={args.d}")
    if n > MAX_SEQUENCES:
        subparser.error(f"arguments --alpha/--d: alpha d^2 = {n:.3g} sequences (alpha={args.alpha}, "
                        f"d={args.d}), more than the {MAX_SEQUENCES:.0e} a dataset may have "
                        f"(aimrepro.paper1.data)")


def _dataset_params(args: argparse.Namespace) -> dict[str, Any]:
    return {"T": args.T, "d": args.d, "rho": args.rho, "alpha": args.alpha,
            "n_test": args.test_samples}


def _amp_estimate(*, channel, max_iter, **dataset):
    """Sampling the dataset, then GAMP-RIE on it in the same process."""
    from aimrepro.paper1.amp import CHANNEL_LINK
    from aimrepro.resources import Estimate, amp_job, dataset_job

    return Estimate.peak(dataset_job(**dataset),
                         amp_job(**dataset, max_iter=max_iter, channel=CHANNEL_LINK[channel]))


def _gd_estimate(*, inits, steps, **dataset):
    """Sampling the dataset, then K students trained on it in the same process."""
    from aimrepro.resources import Estimate, dataset_job, gd_job

    return Estimate.peak(dataset_job(**dataset),
                         gd_job(**dataset, inits=inits, steps=steps, trace=False))


def _check_amp_size(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    _check_sequences(args, subparser)
    _refuse_if_too_large(args, subparser, _amp_estimate,
                         {**_dataset_params(args), "channel": args.channel,
                          "max_iter": args.max_iter},
                         {**_DATASET_OPTIONS, "max_iter": "--max-iter"})


def _check_gd_size(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    _check_sequences(args, subparser)
    _refuse_if_too_large(args, subparser, _gd_estimate,
                         {**_dataset_params(args), "inits": args.inits, "steps": args.steps},
                         {**_DATASET_OPTIONS, "inits": "--inits", "steps": "--steps"})


def _check_sgd_size(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    from aimrepro.resources import sgd_job, sgd_steps

    if sgd_steps(param=args.param, d=args.d, lr=args.lr, horizon=args.horizon) < 1:
        factor = "4 lr/d" if args.param == "tied" else "lr/d"
        one_step = (4.0 if args.param == "tied" else 1.0) * args.lr / args.d
        subparser.error(f"argument --horizon = {args.horizon:g}: less than one SGD step (a step "
                        f"advances t_ode by {factor} = {one_step:.3g}); use --horizon >= "
                        f"{one_step:.3g} or a smaller --lr")
    _refuse_if_too_large(args, subparser, sgd_job,
                         {"param": args.param, "T": args.T, "d": args.d, "rho": args.rho,
                          "batch": args.batch, "lr": args.lr, "horizon": args.horizon,
                          "records": args.records},
                         {"d": "--d", "T": "--T", "batch": "--batch", "rho": "--rho",
                          "lr": "--lr", "horizon": "--horizon", "records": "--records"})


def _check_rho(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    from aimrepro.paper1.spectra import RHO_MAX, RHO_MIN

    if not RHO_MIN <= args.rho <= RHO_MAX:
        subparser.error(f"argument --rho: must lie in [{RHO_MIN:g}, {RHO_MAX:g}], the range on "
                        f"which the state evolution is validated, got {args.rho:g}")


def _check_se_arguments(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    _check_rho(args, subparser)
    if getattr(args, "layers", 1) == 2:
        _check_two_layer_arguments(args, subparser)
        return
    if getattr(args, "skip", None) is not None:
        subparser.error("argument --skip: applies to --layers 2 only")
    # GAMP-RIE has no T >= 3 hardmax channel in the CLI (its g_out is sampled, docs/paper1.md §3.6)
    t2_only = _T2_ONLY_CHANNELS if args.command == "se" else _T2_ONLY_CHANNELS + _TABLED_CHANNELS
    if args.channel in t2_only and args.T != 2:
        subparser.error(f"argument --T: must be 2 for channel {args.channel}, got {args.T}")
    if args.beta is not None and args.channel != "softmax":
        subparser.error(f"argument --beta: applies to the softmax channel only, "
                        f"not {args.channel}")


def _run_se(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    # Imported here: the science modules are heavier than the parser, and
    # `aimrepro provenance` must not depend on them.
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.state_evolution import se_curve

    if args.layers == 2:
        return _run_two_layer_se(args, subparser)
    if args.channel in _TABLED_CHANNELS and args.T >= 3:
        return _run_tabled_se(args, subparser)
    channel_params: dict[str, Any] = {"T": args.T}
    if args.channel == "softmax":
        channel_params["beta"] = 1.0 if args.beta is None else args.beta
    try:
        channel = make_channel(args.channel, **channel_params)
        alphas = sorted(args.alpha)
        # one call: the softmax points are solved together (vectorised root), the others warm-started
        for alpha, point in zip(alphas, se_curve(channel, alphas, args.rho)):
            _print_json({
                "alpha": alpha,
                "mmse": point.mmse,
                "q": point.q,
                "qhat": point.q_hat,
                "converged": bool(point.converged),
                "iterations": int(point.iterations),
                "residual": point.residual,
            })
    except ValueError as err:
        # The package's own argument checks (STYLE §2.1): report as usage errors.
        subparser.error(str(err).splitlines()[0] if str(err) else type(err).__name__)
    return 0


def _run_tabled_se(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    """Hardmax with T >= 3: tabulate F_T (seeded), fit it, solve the SE at each alpha."""
    from aimrepro.paper1 import hardmax_tokens as ht

    seconds = ht.estimated_table_seconds(args.T, args.table_samples)
    if seconds > args.max_table_seconds:
        subparser.error(f"argument --T = {args.T}: the Fisher table needs ~{seconds:.3g} s CPU at "
                        f"--table-samples {args.table_samples}, more than --max-table-seconds "
                        f"{args.max_table_seconds:g}; lower --table-samples or raise the limit")
    x = ht.table_grid()
    print(f"aimrepro: tabulating F_{args.T} on {x.size} nodes, --table-samples "
          f"{args.table_samples}, --table-seed {args.table_seed} (~{seconds:.2g} s CPU)",
          file=sys.stderr)
    try:
        with _one_blas_thread():  # as the pipeline's fisher_table job: the same table, bit for bit
            table = ht.fisher_table(args.T, x, ht.table_samples(x, args.table_samples), args.table_seed)
        fit = ht.fit_fisher_table(table)
        alphas = sorted(args.alpha)
        for point in ht.se_curve(fit, alphas, args.rho):
            _print_json({
                "alpha": point.alpha,
                "mmse": point.mmse,
                "mmse_stderr": point.mmse_stderr,
                "q": point.q,
                "qhat": point.q_hat,
                "converged": bool(point.converged),
                "iterations": int(point.iterations),
                "residual": point.residual,
                "extrapolated": bool(point.extrapolated),
            })
    except ValueError as err:
        subparser.error(str(err).splitlines()[0] if str(err) else type(err).__name__)
    return 0


#: The two-layer table of ``se --layers 2``: the quick pipeline's settings (docs/paper1.md §13.6).
_TWO_LAYER_TABLE = {"nodes": 5, "log2_samples": 9, "replicates": 4}


def _check_two_layer_arguments(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    if args.channel != "softmax":
        subparser.error(f"argument --channel: --layers 2 is the softmax model, got {args.channel}")
    if args.T != 2:
        subparser.error(f"argument --T: --layers 2 is solved for T = 2, got {args.T}")
    if args.beta is not None:
        subparser.error("argument --beta: --layers 2 has no temperature (the theory does not depend on it)")
    if args.skip is None:
        subparser.error("argument --skip: required with --layers 2 (the skip strength c >= 0)")


def _run_two_layer_se(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    """Two layers: tabulate the Fisher information at the quick settings (seeded), solve each alpha."""
    from aimrepro.paper1.two_layer.fisher import estimated_table_seconds, fisher_table
    from aimrepro.paper1.two_layer.state_evolution import two_layer_curve

    seconds = estimated_table_seconds(args.skip, **_TWO_LAYER_TABLE)
    if seconds > args.max_table_seconds:
        subparser.error(f"argument --skip = {args.skip:g}: the two-layer table needs ~{seconds:.3g} s CPU, more "
                        f"than --max-table-seconds {args.max_table_seconds:g}")
    print(f"aimrepro: tabulating the two-layer Fisher information (c = {args.skip:g}, {_TWO_LAYER_TABLE}, "
          f"--table-seed {args.table_seed}, ~{seconds:.2g} s CPU)", file=sys.stderr)
    try:
        with _one_blas_thread():
            table = fisher_table(args.rho, args.skip, seed=args.table_seed, **_TWO_LAYER_TABLE)
            curve = two_layer_curve(table, sorted(args.alpha))
    except ValueError as err:
        subparser.error(str(err).splitlines()[0] if str(err) else type(err).__name__)
    for k in range(curve["alpha"].size):
        _print_json({name: (bool(curve[name][k]) if curve[name].dtype == bool else
                            int(curve[name][k]) if name == "iterations" else float(curve[name][k]))
                     for name in ("alpha", "mmse1", "mmse2", "mmse1_stderr", "mmse2_stderr", "corr", "perfect",
                                  "converged", "iterations", "residual")})
    return 0


def _check_sgd_arguments(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    teacher_link = args.teacher_link or args.link
    if args.link == "hardmax":
        subparser.error("argument --link: hardmax is piecewise constant and has no SGD dynamics; "
                        "use softmax (large --beta) with --teacher-link hardmax")
    if (args.link in _ROW_LINKS) != (teacher_link in _ROW_LINKS):
        subparser.error(f"argument --teacher-link: {teacher_link} and --link {args.link} must both "
                        f"be row-wise (softmax, hardmax) or both elementwise")
    if args.link in _ROW_LINKS and args.T < 2:
        subparser.error(f"argument --T: must be >= 2 for link {args.link}, got {args.T}")
    if args.beta != 1.0 and "softmax" not in (args.link, teacher_link):
        subparser.error(f"argument --beta: applies to the softmax link only, not {args.link}")


def _run_sgd(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    import numpy as np

    from aimrepro.backends import make_backend
    from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings

    try:
        spec = ProblemSpec(args.param, args.link, args.T, args.d, rho=args.rho, beta=args.beta,
                           teacher_link=args.teacher_link, normalisation=args.normalisation)
        settings = SGDSettings(lr=args.lr, batch=args.batch, horizon=args.horizon,
                               weight_decay=args.weight_decay, n_records=args.records)
        backend = make_backend(args.backend)
    except ValueError as err:
        subparser.error(str(err).splitlines()[0] if str(err) else type(err).__name__)
    trajectory = SGDRun(spec, settings, args.seed).run(backend=backend)
    for i in range(len(trajectory)):
        op = trajectory.at(i)
        record: dict[str, Any] = {name: trajectory.extra[name][i]
                                  for name in ("n_steps", "n_samples")}
        record["t_ode"] = trajectory.t_ode[i]
        record["t_fast"] = trajectory.extra["t_fast"][i]
        record.update({"t1": op.trace[0], "t2": op.trace[1],
                       "q11": op.q[0, 0], "q12": op.q[0, 1], "q22": op.q[1, 1],
                       "Psi11": op.Psi[0, 0], "Psi12": op.Psi[0, 1], "Psi22": op.Psi[1, 1],
                       "Omega11": op.Omega[0, 0], "Omega12": op.Omega[0, 1],
                       "Omega22": op.Omega[1, 1]})
        m = op.mean(args.d)
        record.update({"m1": m[0], "m2": m[1], "p12": op.p_Psi[0, 1], "p22": op.p_Omega[1, 1],
                       "overlap_ratio": op.overlap_ratio,
                       "batch_loss": trajectory.extra["batch_loss"][i]})
        for name in ("tA", "tB"):
            if name in trajectory.extra:
                record[name] = trajectory.extra[name][i]
        _print_json(record)
    _print_json({"weak_recovery_time": trajectory.weak_recovery_time(args.threshold),
                 "threshold": args.threshold, "blew_up": bool(trajectory.blew_up),
                 "t_blowup": None if not trajectory.blew_up else float(trajectory.t_blowup),
                 "n_steps": int(np.max(trajectory.extra["n_steps"]))})
    return 0


def _one_blas_thread():
    """numpy's BLAS on one thread for the enclosed block (the pipeline's single-threaded jobs)."""
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1, user_api="blas")


def _run_amp(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.paper1.amp import CHANNEL_LINK, run_on_dataset
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.data import DatasetSpec, sample_dataset
    from aimrepro.paper1.state_evolution import solve_se

    beta = (1.0 if args.beta is None else args.beta) if args.channel == "softmax" else None
    try:
        spec = DatasetSpec(link=CHANNEL_LINK[args.channel], T=args.T, rho=args.rho, d=args.d,
                           alpha=args.alpha, replicate=args.replicate, n_test=args.test_samples, beta=beta)
        dataset = args.loaded if args.loaded is not None else sample_dataset(spec, args.seed)
        # one BLAS thread, as the pipeline's amp_run job has: the same point gives the same bits
        with _one_blas_thread():
            run = run_on_dataset(dataset, args.channel, max_iter=args.max_iter, backend=args.backend)
        se_mmse = solve_se(make_channel(args.channel, T=args.T, beta=beta), args.alpha, args.rho).mmse
    except ValueError as err:
        subparser.error(str(err).splitlines()[0] if str(err) else type(err).__name__)
    summary = run.summary()
    _print_json({key: summary[key] for key in ("error", "generalisation_error", "plugin_generalisation_error",
                                               "bayes_generalisation_error", "iterations", "status", "converged")}
                | {"se_mmse": se_mmse})
    return 0


def _run_gd(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.data import DatasetSpec, sample_dataset
    from aimrepro.paper1.gd import GDSettings, run_on_dataset
    from aimrepro.paper1.state_evolution import solve_se

    args.beta = 1.0 if args.beta is None else args.beta
    try:
        spec = DatasetSpec(link="softmax", T=args.T, rho=args.rho, d=args.d, alpha=args.alpha,
                           replicate=args.replicate, n_test=args.test_samples, beta=args.beta)
        settings = GDSettings(lr=args.lr, steps=args.steps, init_scale=args.init_scale, trace_every=0)
        dataset = args.loaded if args.loaded is not None else sample_dataset(spec, args.seed)
        run = run_on_dataset(dataset, args.inits, settings, threads=args.threads, backend=args.backend)
        se_mmse = solve_se(make_channel("softmax", T=args.T, beta=args.beta), args.alpha, args.rho).mmse
    except ValueError as err:
        subparser.error(str(err).splitlines()[0] if str(err) else type(err).__name__)
    summary = run.summary()
    _print_json({key: summary[key] for key in ("single_error", "averaged_error", "train_loss",
                                               "generalisation_error")}
                | {"se_mmse": se_mmse, "n_diverged": summary["n_diverged"]})
    return 0


def _run_threshold(args: argparse.Namespace) -> int:
    from aimrepro.paper1.thresholds import alpha_perfect_recovery

    _print_json({"rho": args.rho, "T": args.T,
                 "alpha_pr": alpha_perfect_recovery(args.rho, args.T)})
    return 0


def _run_provenance(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.records.lineage import check_lineage, lineage, render_lineage

    try:
        if args.check:
            check = check_lineage(args.file)
        else:
            tree = lineage(args.file)
    except (ValueError, OSError) as err:
        subparser.error(f"argument FILE: cannot read provenance of {args.file}: {err}")
    if not args.check:
        print(render_lineage(tree, show_code=args.code))
        return 0
    for problem in check.problems:
        print(problem)
    verdict = "differs" if check.problems else "verified"
    print(f"{args.file}: {verdict}: {check.n_files} files, {check.n_code_files} code files"
          + (f", {len(check.problems)} problem{'s' if len(check.problems) > 1 else ''}"
             if check.problems else ""))
    return 1 if check.problems else 0


def _workflow_root(start: Path) -> Path | None:
    """The repository around ``start``: the first of it and its parents with workflow/lib."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / "workflow" / "lib" / "aimrepro_workflow" / "costs.py").is_file():
            return candidate
    return None


def _run_cost(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    import yaml

    from aimrepro.config import ConfigError, validate_config

    if args.configfile is not None:
        if not args.configfile.is_file():
            subparser.error(f"argument --configfile: no such file: {args.configfile}")
        root = _workflow_root(args.configfile.parent) or _workflow_root(Path.cwd())
        config_path = args.configfile
    else:
        root = _workflow_root(Path.cwd())
        config_path = root / "config.yaml" if root else None
    if root is None:
        subparser.error("cannot find the workflow (workflow/lib/aimrepro_workflow): run from the "
                        "repository root or give --configfile inside the repository")
    if not config_path.is_file():
        subparser.error(f"argument --configfile: no config.yaml at {root}; give --configfile")
    sys.path.insert(0, str(root / "workflow" / "lib"))
    from aimrepro_workflow.checks import check_config
    from aimrepro_workflow.costs import CostModel, format_table

    try:
        config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        schema = yaml.safe_load((root / "workflow" / "schemas" / "config.schema.yaml")
                                .read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        subparser.error(f"argument --configfile: cannot read {config_path}: "
                        f"{' '.join(str(err).split())}")
    if not isinstance(config, dict):
        subparser.error(f"argument --configfile: {config_path} is not a mapping")
    try:
        validate_config(config, schema)
        check_config(config)
    except ConfigError as err:
        subparser.error(f"{config_path}: {err}")
    scale = args.scale or config["scale"]
    table = CostModel(config).table(scale)
    table["config"] = str(config_path)
    if args.json:
        print(json.dumps(table, allow_nan=False))
    else:
        print(format_table(table))
    return 0


def _print_json(record: dict[str, Any]) -> None:
    print(json.dumps({k: _plain(v) for k, v in record.items()}, allow_nan=False), flush=True)


def _plain(value: Any) -> Any:
    """numpy scalars → Python scalars; non-finite floats → None (JSON null)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if type(value).__name__ == "bool_":  # numpy.bool_, without importing numpy
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else None
    return value

if __name__ == "__main__":
    sys.exit(main())
