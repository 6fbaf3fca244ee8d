"""Command line: one-off theory queries, simulations, costs and provenance audits.

Eight subcommands; ``aimrepro SUBCOMMAND -h`` lists each one's options.

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
    Two attention layers (beyond the paper, docs/paper1.md §14): tabulates the
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
    sidecars down to its raw inputs.  ``--check`` verifies it instead (exit
    0 only if every file and code hash matches; a failed check prints the
    repair command); ``--check --repair TARGET...`` removes every damaged
    file of the targets' lineages (a file, or every result under a
    directory), every file whose sidecar is missing or malformed and
    everything downstream of them on the way to the targets, so that
    ``snakemake`` rebuilds exactly those (``aimrepro.records.lineage.repair``);
    ``--crate OUT FILE...`` writes a Workflow Run RO-Crate (Provenance Run
    Crate) of the lineage of one or more results to the new directory OUT,
    zipped if OUT ends in ``.zip`` (``aimrepro.records.crate``), and prints
    what it holds.
``aimrepro diff A B [--rtol R] [--atol A] [--details] [--json]``
    Compare two result trees (two repositories after a run, or two
    directories of results) file by file: present in one only, the same
    bytes, the same content within the tolerance, or what differs
    (``aimrepro.records.diff``).  A summary first, one line per result that
    is not the same; ``--details`` lists everything that differs.  Exit 0
    when the trees are equal within the tolerance, 1 otherwise.
``aimrepro cost [--scale quick|referee|paper] [--configfile F] [--json]``
    What a pipeline run would cost before it is launched: per rule the
    number of jobs, core-hours (expected, and if every data-dependent loop
    ran to its cap), the largest job, peak memory per job and disk, then the
    totals; ``--json`` prints the same as one JSON object.  The model is the
    workflow layer's (``aimrepro_workflow.costs``, an installed package of the
    project, which also sets the rules' resources); the config is
    ``--configfile`` (default ``config.yaml`` of the current directory), checked
    as a run of that scale would be.

Arguments are checked before anything is computed.  A bad argument exits
with status 2 and a single line on stderr naming the option and its allowed
range; no input gives a traceback (an unexpected failure is one line, status
1; ``AIMREPRO_TRACEBACK=1`` shows the traceback).  ``amp``, ``gd`` and ``sgd``
also estimate the memory of the run (``aimrepro.resources``) and refuse, the
same way, one that needs more than ``--memory-limit`` GiB (default: the
memory available now), naming the option that makes it large; ``sgd``
refuses a horizon shorter than one step; ``se``, ``amp`` and ``gd`` refuse a
width ratio outside the range on which the state evolution is validated; a
run that exhausts the memory all the same ends with one line (status 1).

A run estimated to take more than :data:`ANNOUNCE_SECONDS` (the CPU-time
estimates of ``aimrepro.resources``, and of the Fisher table) says so in one
line on stderr before it starts, then shows a progress bar on stderr
(:mod:`aimrepro.progress`: redrawn in place on a terminal, a line per tenth
elsewhere); ``--quiet`` silences both.  Stdout holds only the JSON lines.
Non-finite numbers are printed as JSON ``null``, so that every line is
strict JSON.  Output cut short by a closed pipe (``aimrepro ... | head``)
ends the command quietly with status 141 (128 + SIGPIPE, what a shell
reports for a process that signal ends).

Layout: one section per subcommand, each with a builder of its options
(``_se_arguments``) and a runner that checks and computes (``_run_se``);
:data:`COMMANDS` lists them and :func:`main` dispatches through it.  The
module imports only the standard library: each runner imports the science
it needs when it runs, so ``aimrepro se`` starts without scipy and
``aimrepro provenance`` without numpy's science modules.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import numbers
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

__all__ = ["ANNOUNCE_SECONDS", "BACKEND_NAMES", "CHANNEL_NAMES", "COMMANDS", "DTYPE_NAMES", "LINK_NAMES",
           "PARAMETRISATIONS", "Command", "build_parser", "main"]

# ---------------------------------------------------------------------------
# the registries' names, spelled here so that parsing imports no science module
# (tests/unit/test_cli.py checks them against the registries)

#: Output channels of ``se`` and ``amp`` (``aimrepro.paper1.channels.CHANNELS``).
CHANNEL_NAMES = ("softmax", "hardmax", "hardmax_paper")
#: Links of ``sgd`` (``aimrepro.model.LINKS``).
LINK_NAMES = ("softmax", "hardmax", "linear", "h1", "h2", "h3")
#: Parametrisations of ``sgd`` (``aimrepro.paper2.sgd.PARAMETRISATIONS``).
PARAMETRISATIONS = ("direct", "tied", "untied")
#: Kernel libraries (``aimrepro.backends.BACKENDS``).
BACKEND_NAMES = ("numpy", "torch")
#: Float types of the kernels' arithmetic (``aimrepro.backends.DTYPES``).
DTYPE_NAMES = ("float64", "float32")
#: The config's presets (``aimrepro.config.SCALES``).
SCALE_NAMES = ("quick", "referee", "paper")
#: Laws of the token coordinates (``aimrepro.model.TOKEN_LAWS``) and Student-t's default ν.
TOKEN_LAW_NAMES = ("gaussian", "rademacher", "sparse", "student_t")
DEFAULT_STUDENT_DOF = 5.0
#: Channels defined for T = 2 only (docs/paper1.md §3.4); hardmax with T >= 3
#: goes through a Fisher table (``se`` only, aimrepro.paper1.hardmax_tokens).
_T2_ONLY_CHANNELS = ("hardmax_paper",)
_TABLED_CHANNELS = ("hardmax",)
#: The quick pipeline's table: its reference sample size and the config's seed.
_TABLE_SAMPLES, _TABLE_SEED, _MAX_TABLE_SECONDS = 50_000, 20250602, 300.0
#: Row-wise links act on rows of T >= 2 tokens (docs/paper2.md §1).
_ROW_LINKS = ("softmax", "hardmax")
#: The largest T of the theory commands (the softmax SE counts T^2 + T - 2 measurements).
_MAX_TOKENS = 10**6
#: The smallest alpha of ``se``: 1/alpha must stay a float in the large-Delta root.
_MIN_SE_ALPHA = 1e-100
#: A run estimated to take longer than this many seconds is announced, with a progress bar.
ANNOUNCE_SECONDS = 3.0


class _OneLineArgumentParser(argparse.ArgumentParser):
    """ArgumentParser whose errors are a single line (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


# ---------------------------------------------------------------------------
# option types: each refusal says what the option must be


def _integer_at_least(minimum: int, maximum: int | None = None):
    """Parser of an integer >= minimum (and <= maximum, if given)."""
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(f"must be an integer {allowed}, got {shown!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            shown = str(value) if len(str(value)) <= 40 else f"an integer of {len(str(value))} digits"
            raise argparse.ArgumentTypeError(f"must be an integer {allowed}, got {shown}")
        return value
    return parse


def _finite_number(minimum: float, *, strict: bool):
    """Parser of a finite number > minimum (strict) or >= minimum."""
    relation = ">" if strict else ">="

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(
                f"must be a finite number {relation} {minimum:g}, got {shown!r}") from None
        if not (math.isfinite(value) and (value > minimum if strict else value >= minimum)):
            raise argparse.ArgumentTypeError(
                f"must be a finite number {relation} {minimum:g}, got {text}")
        return value
    return parse


_positive_finite = _finite_number(0.0, strict=True)
_nonnegative_finite = _finite_number(0.0, strict=False)


def _backend_name(text: str) -> str:
    """A backend that can run here: torch only where PyTorch is installed."""
    if text not in BACKEND_NAMES:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(BACKEND_NAMES)}, got {text!r}")
    if text == "torch" and importlib.util.find_spec("torch") is None:
        raise argparse.ArgumentTypeError(
            "torch needs PyTorch, which is not installed here: pip install -e '.[gpu]', "
            "or use --backend numpy (the default)")
    return text


def _is_provenance_target(path: Path) -> bool:
    """A result or figure, its sidecar, or a directory of results; or a result whose sidecar exists."""
    return path.exists() or (path.suffix != ".json" and path.with_suffix(".json").is_file())


def _dataset_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"must be an existing dataset file (.npz), no such file: {text}")
    return path


# ---------------------------------------------------------------------------
# options shared by several subcommands


def _add_backend(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--backend", type=_backend_name, default="numpy", metavar="{numpy,torch}",
                     help="where the kernels compute: numpy (default, the reference) or torch "
                          "(pip install -e '.[gpu]'; a GPU if there is one)")
    sub.add_argument("--dtype", choices=DTYPE_NAMES, default="float64",
                     help="float type of the kernels' arithmetic (default float64; the state and the "
                          "reported numbers stay float64, docs/design.md \"Precision\")")


def _backend(args: argparse.Namespace) -> dict:
    """The backend of ``--backend`` and ``--dtype``, as ``aimrepro.backends.make_backend`` takes it."""
    return {"name": args.backend, "dtype": args.dtype}


def _add_memory_limit(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--memory-limit", type=_positive_finite, default=None, metavar="GIB",
                     help="refuse a run whose estimated memory exceeds this many GiB, finite > 0 "
                          "(default: the memory available now)")


def _add_quiet(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--quiet", action="store_true",
                     help=f"no estimate and no progress bar on stderr (a run estimated to take "
                          f"more than {ANNOUNCE_SECONDS:g} s shows both); errors are still printed")


#: The options that sample a dataset; ``--dataset`` replaces them all.
_SAMPLING_OPTIONS = ("T", "rho", "alpha", "d", "seed", "replicate", "test_samples")
_SAMPLING_REQUIRED = ("T", "rho", "alpha", "d", "seed")


def _add_token_arguments(sub: argparse.ArgumentParser, *, takes_dataset: bool = True) -> None:
    """--tokens and its parameters (``aimrepro.model.TokenLaw``; docs/paper1.md §13)."""
    sub.add_argument("--tokens", choices=TOKEN_LAW_NAMES, default=None,
                     help="law of the token coordinates, mean 0 and variance 1 (default gaussian, "
                          "the papers'" + ("; with --dataset, the dataset's)" if takes_dataset else ")"))
    sub.add_argument("--keep-prob", type=_finite_number(0.0, strict=True), default=None, metavar="P",
                     help="sparse tokens: probability in (0, 1] that a coordinate is kept")
    sub.add_argument("--dof", type=_finite_number(4.0, strict=True), default=None, metavar="NU",
                     help=f"student_t tokens: degrees of freedom, finite > 4 (default {DEFAULT_STUDENT_DOF:g})")


def _token_law(args: argparse.Namespace, subparser: argparse.ArgumentParser, *, default=None):
    """The TokenLaw of --tokens, --keep-prob, --dof; one-line usage errors naming the option."""
    from aimrepro.model import GAUSSIAN, TokenLaw

    name = args.tokens
    if name is None:
        for option in ("keep_prob", "dof"):
            if getattr(args, option) is not None:
                subparser.error(f"argument --{option.replace('_', '-')}: needs --tokens "
                                f"{'sparse' if option == 'keep_prob' else 'student_t'}")
        return GAUSSIAN if default is None else default
    if name == "sparse" and args.keep_prob is None:
        subparser.error("argument --keep-prob: required with --tokens sparse")
    if args.keep_prob is not None and name != "sparse":
        subparser.error(f"argument --keep-prob: applies to --tokens sparse only, not {name}")
    if args.dof is not None and name != "student_t":
        subparser.error(f"argument --dof: applies to --tokens student_t only, not {name}")
    if args.keep_prob is not None and args.keep_prob > 1:
        subparser.error(f"argument --keep-prob: must be a probability in (0, 1], got {args.keep_prob:g}")
    try:
        return TokenLaw(name, keep_prob=args.keep_prob, dof=args.dof)
    except ValueError as err:
        subparser.error(f"argument --tokens: {err}")


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
    if getattr(args, "tokens", None) is not None:
        subparser.error("argument --dataset: not allowed with --tokens (the dataset file fixes the token law)")
    from aimrepro.paper1.data import load_dataset

    try:
        dataset = load_dataset(args.dataset)
    except (ValueError, KeyError, OSError, EOFError, _bad_zip_file()) as err:
        subparser.error(f"argument --dataset: {args.dataset} is not an aimrepro dataset "
                        f"({type(err).__name__}: {err})")
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


def _bad_zip_file() -> type[Exception]:
    """zipfile.BadZipFile, imported when a dataset is read (zipfile is not needed to start)."""
    import zipfile

    return zipfile.BadZipFile


def _check_rho(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    # the range of aimrepro.paper1.spectra (RHO_MIN, RHO_MAX), spelled here: importing
    # spectra would load numpy before the arguments are known to be good
    rho_min, rho_max = 1e-4, 1e14
    if not rho_min <= args.rho <= rho_max:
        subparser.error(f"argument --rho: must lie in [{rho_min:g}, {rho_max:g}], the range on "
                        f"which the state evolution is validated, got {args.rho:g}")


def _refuse_science_error(err: ValueError, subparser: argparse.ArgumentParser) -> NoReturn:
    """A ValueError of the package's own argument checks, as a usage error naming the option.

    The science modules name their parameters (``lr must be ...``); the option
    whose name (or destination) the message starts with, or first mentions, is
    named in the line.
    """
    message = str(err).splitlines()[0] if str(err) else type(err).__name__
    options = {action.dest: action.option_strings[0] for action in subparser._actions
               if action.option_strings and action.dest not in ("help", "quiet")}
    mentioned = [(match.start(), options[name]) for name in options
                 for match in [re.search(rf"(?<![\w-]){re.escape(name)}(?![\w])", message)] if match]
    if mentioned:
        subparser.error(f"argument {min(mentioned)[1]}: {message}")
    subparser.error(message)


# ---------------------------------------------------------------------------
# se


def _se_arguments(se: argparse.ArgumentParser) -> None:
    se.add_argument("--channel", required=True, choices=CHANNEL_NAMES,
                    help="output channel; hardmax_paper is the published formula (erratum B1)")
    se.add_argument("--T", dest="T", required=True, type=_integer_at_least(2, _MAX_TOKENS), metavar="T",
                    help=f"sequence length, integer in [2, {_MAX_TOKENS}] (hardmax_paper: T = 2; hardmax "
                         "with T >= 3 first tabulates F_T, see --table-samples)")
    se.add_argument("--rho", required=True, type=_positive_finite, metavar="RHO",
                    help="width ratio rho = r/d, finite > 0")
    se.add_argument("--alpha", required=True, nargs="+", type=_finite_number(_MIN_SE_ALPHA, strict=False),
                    metavar="ALPHA", help=f"sample ratios alpha = n/d^2, each finite >= {_MIN_SE_ALPHA:g} "
                                          "(below, 1/alpha overflows the solver; the MMSE is the prior's)")
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
                    help="attention layers: 1 (the paper) or 2 (beyond the paper, docs/paper1.md §14: "
                         "softmax, T = 2, needs --skip; tabulates the two-layer Fisher information first)")
    se.add_argument("--skip", type=_nonnegative_finite, default=None, metavar="C",
                    help="--layers 2: skip strength c of the attention c I + softmax(H1), finite >= 0")
    _add_quiet(se)


def _check_channel_arguments(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    """``se`` and ``amp``: the width ratio, the channels' token counts, beta for softmax only."""
    _check_rho(args, subparser)
    # GAMP-RIE has no T >= 3 hardmax channel in the CLI (its g_out is sampled, docs/paper1.md §3.6)
    t2_only = _T2_ONLY_CHANNELS if args.command == "se" else _T2_ONLY_CHANNELS + _TABLED_CHANNELS
    if args.channel in t2_only and args.T != 2:
        subparser.error(f"argument --T: must be 2 for channel {args.channel}, got {args.T}")
    if args.beta is not None and args.channel != "softmax":
        subparser.error(f"argument --beta: applies to the softmax channel only, "
                        f"not {args.channel}")


def _run_se(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    _check_rho(args, subparser)
    if args.layers == 2:
        return _run_two_layer_se(args, subparser)
    if args.skip is not None:
        subparser.error("argument --skip: applies to --layers 2 only")
    _check_channel_arguments(args, subparser)
    if args.channel in _TABLED_CHANNELS and args.T >= 3:
        return _run_tabled_se(args, subparser)
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.state_evolution import se_curve

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
    except ValueError as err:  # the package's own argument checks (STYLE §2.1)
        _refuse_science_error(err, subparser)
    return 0


def _run_tabled_se(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    """Hardmax with T >= 3: tabulate F_T (seeded), fit it, solve the SE at each alpha."""
    from aimrepro.paper1 import hardmax_tokens as ht

    seconds = ht.estimated_table_seconds(args.T, args.table_samples)
    if seconds > args.max_table_seconds:
        # name the option that made it long: --T unless T's own default table fits
        at_default = ht.estimated_table_seconds(args.T, _TABLE_SAMPLES)
        option, value = (("--table-samples", args.table_samples)
                         if at_default <= args.max_table_seconds else ("--T", args.T))
        subparser.error(f"argument {option} = {value}: the Fisher table needs ~{_seconds(seconds)} "
                        f"CPU at --T {args.T}, --table-samples {args.table_samples}, more than "
                        f"--max-table-seconds {args.max_table_seconds:g}; lower --table-samples "
                        f"or raise the limit")
    x = ht.table_grid()
    samples = ht.table_samples(x, args.table_samples)
    bar = _progress_bar(args, f"aimrepro se: tabulating F_{args.T} on {x.size} nodes, --table-samples "
                              f"{args.table_samples}, --table-seed {args.table_seed}", seconds,
                        "Fisher table", int(samples.sum()), "samples")
    try:
        with _one_blas_thread():  # as the pipeline's fisher_table job: the same table, bit for bit
            table = ht.fisher_table(args.T, x, samples, args.table_seed, progress=bar)
        _close(bar)
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
        _refuse_science_error(err, subparser)
    return 0


#: The two-layer table of ``se --layers 2``: the quick pipeline's settings (docs/paper1.md §14.6).
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
    _check_two_layer_arguments(args, subparser)
    from aimrepro.paper1.two_layer.fisher import estimated_table_seconds, fisher_table
    from aimrepro.paper1.two_layer.state_evolution import two_layer_curve

    seconds = estimated_table_seconds(args.skip, **_TWO_LAYER_TABLE)
    if seconds > args.max_table_seconds:
        subparser.error(f"argument --skip = {args.skip:g}: the two-layer table needs ~{_seconds(seconds)} "
                        f"CPU, more than --max-table-seconds {args.max_table_seconds:g}")
    bar = _progress_bar(args, f"aimrepro se: tabulating the two-layer Fisher information (c = {args.skip:g}, "
                              f"{_TWO_LAYER_TABLE}, --table-seed {args.table_seed})", seconds,
                        "Fisher table", _TWO_LAYER_TABLE["nodes"] ** 2 * _TWO_LAYER_TABLE["replicates"],
                        "nodes")
    try:
        with _one_blas_thread():
            table = fisher_table(args.rho, args.skip, seed=args.table_seed, progress=bar, **_TWO_LAYER_TABLE)
            _close(bar)
            curve = two_layer_curve(table, sorted(args.alpha))
    except ValueError as err:
        _refuse_science_error(err, subparser)
    for k in range(curve["alpha"].size):
        _print_json({name: (bool(curve[name][k]) if curve[name].dtype == bool else
                            int(curve[name][k]) if name == "iterations" else float(curve[name][k]))
                     for name in ("alpha", "mmse1", "mmse2", "mmse1_stderr", "mmse2_stderr", "corr", "perfect",
                                  "converged", "iterations", "residual")})
    return 0


# ---------------------------------------------------------------------------
# threshold


def _threshold_arguments(threshold: argparse.ArgumentParser) -> None:
    threshold.add_argument("--T", dest="T", required=True, type=_integer_at_least(2, _MAX_TOKENS),
                           metavar="T", help=f"sequence length, integer in [2, {_MAX_TOKENS}]")
    threshold.add_argument("--rho", required=True, type=_positive_finite, metavar="RHO",
                           help="width ratio rho = r/d, finite > 0")


def _run_threshold(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.paper1.thresholds import alpha_perfect_recovery

    try:
        alpha_pr = alpha_perfect_recovery(args.rho, args.T)
    except (ValueError, OverflowError) as err:
        _refuse_science_error(ValueError(str(err)), subparser)
    _print_json({"rho": args.rho, "T": args.T, "alpha_pr": alpha_pr})
    return 0


# ---------------------------------------------------------------------------
# sgd


def _sgd_arguments(sgd: argparse.ArgumentParser) -> None:
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
    _add_token_arguments(sgd, takes_dataset=False)
    _add_backend(sgd)
    _add_memory_limit(sgd)
    _add_quiet(sgd)


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


def _sgd_estimate(**params):
    from aimrepro.resources import sgd_job

    return sgd_job(**params)


def _check_sgd_size(args: argparse.Namespace, subparser: argparse.ArgumentParser):
    """Refuse a horizon shorter than one step or a run too large; return the run's estimate."""
    from aimrepro.resources import sgd_steps

    if sgd_steps(param=args.param, d=args.d, lr=args.lr, horizon=args.horizon) < 1:
        factor = "4 lr/d" if args.param == "tied" else "lr/d"
        one_step = (4.0 if args.param == "tied" else 1.0) * args.lr / args.d
        subparser.error(f"argument --horizon = {args.horizon:g}: less than one SGD step (a step "
                        f"advances t_ode by {factor} = {one_step:.3g}); use --horizon >= "
                        f"{one_step:.3g} or a smaller --lr")
    return _refuse_if_too_large(args, subparser, _sgd_estimate,
                                {"param": args.param, "T": args.T, "d": args.d, "rho": args.rho,
                                 "batch": args.batch, "lr": args.lr, "horizon": args.horizon,
                                 "records": args.records},
                                {"d": "--d", "T": "--T", "batch": "--batch", "rho": "--rho",
                                 "lr": "--lr", "horizon": "--horizon", "records": "--records"})


def _run_sgd(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    _check_sgd_arguments(args, subparser)
    estimate = _check_sgd_size(args, subparser)
    import numpy as np

    from aimrepro.backends import make_backend
    from aimrepro.paper2.analysis import recovery_before_runaway
    from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings, step_time

    try:
        spec = ProblemSpec(args.param, args.link, args.T, args.d, rho=args.rho, beta=args.beta,
                           teacher_link=args.teacher_link, normalisation=args.normalisation,
                           tokens=_token_law(args, subparser))
        settings = SGDSettings(lr=args.lr, batch=args.batch, horizon=args.horizon,
                               weight_decay=args.weight_decay, n_records=args.records)
        backend = make_backend(_backend(args))
    except ValueError as err:
        _refuse_science_error(err, subparser)
    bar = _progress_bar(args, "aimrepro sgd", estimate.seconds, "sgd", estimate.steps, "steps")
    trajectory = SGDRun(spec, settings, args.seed).run(backend=backend, progress=bar)
    _close(bar)
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
    # a crossing at or after a blow-up (or a runaway of the state between records) is no recovery
    t_wr, away = recovery_before_runaway(trajectory, args.threshold)
    n_steps = int(np.max(trajectory.extra["n_steps"]))
    if trajectory.blew_up:  # the steps run, to the one that blew up (past the last record)
        n_steps = max(n_steps, round(trajectory.t_blowup / step_time(args.param, args.lr, args.d)))
    _print_json({"weak_recovery_time": t_wr if math.isfinite(t_wr) else None,
                 "threshold": args.threshold, "blew_up": math.isfinite(away),
                 "t_blowup": away if math.isfinite(away) else None,
                 "n_steps": n_steps}
                | ({} if spec.tokens.is_gaussian else {"tokens": spec.tokens.to_dict()}))
    return 0


# ---------------------------------------------------------------------------
# amp


def _amp_arguments(amp: argparse.ArgumentParser) -> None:
    amp.add_argument("--channel", required=True, choices=CHANNEL_NAMES,
                     help="output channel; hardmax_paper runs the published g_out (erratum B1) "
                          "on data of the correct hardmax model")
    _add_dataset_arguments(amp, T_help="sequence length, integer >= 2 (hardmax channels: T = 2)")
    amp.add_argument("--beta", type=_positive_finite, default=None, metavar="BETA",
                     help="softmax inverse temperature, finite > 0 (default 1; softmax only)")
    amp.add_argument("--max-iter", type=_integer_at_least(1), default=2000, metavar="N",
                     help="iteration cap (default 2000, aimrepro.paper1.amp.StoppingRule)")
    _add_token_arguments(amp)
    _add_backend(amp)
    _add_memory_limit(amp)
    _add_quiet(amp)


#: The channel's data model (``aimrepro.paper1.amp.CHANNEL_LINK``): both hardmax channels run on hardmax data.
_CHANNEL_LINK = {"softmax": "softmax", "hardmax": "hardmax", "hardmax_paper": "hardmax"}


def _amp_estimate(*, channel, max_iter, sampled=True, **dataset):
    """Sampling the dataset (unless loaded), then GAMP-RIE on it in the same process."""
    from aimrepro.resources import Estimate, amp_job, dataset_job

    run = amp_job(**dataset, max_iter=max_iter, channel=_CHANNEL_LINK[channel])
    return Estimate.peak(dataset_job(**dataset), run) if sampled else run


def _run_amp(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    _resolve_dataset(args, subparser, link=_CHANNEL_LINK[args.channel])
    _check_channel_arguments(args, subparser)
    _check_sequences(args, subparser)
    estimate = _refuse_if_too_large(
        args, subparser, _amp_estimate,
        {**_dataset_params(args), "channel": args.channel, "max_iter": args.max_iter,
         "sampled": args.loaded is None},
        {**_DATASET_OPTIONS, "max_iter": "--max-iter"})
    from aimrepro.paper1.amp import run_on_dataset
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.data import DatasetSpec, sample_dataset
    from aimrepro.paper1.state_evolution import solve_se

    beta = (1.0 if args.beta is None else args.beta) if args.channel == "softmax" else None
    law = _token_law(args, subparser, default=None if args.loaded is None else args.loaded.spec.tokens)
    bar = _progress_bar(args, "aimrepro amp (at most --max-iter iterations)", estimate.seconds,
                        "amp", args.max_iter, "iterations")
    try:
        spec = DatasetSpec(link=_CHANNEL_LINK[args.channel], T=args.T, rho=args.rho, d=args.d,
                           alpha=args.alpha, replicate=args.replicate, n_test=args.test_samples, beta=beta,
                           tokens=law)
        dataset = args.loaded if args.loaded is not None else sample_dataset(spec, args.seed)
        iterations = [0]

        def advance(state) -> None:
            iterations[0] += 1
            bar(iterations[0])

        # one BLAS thread, as the pipeline's amp_run job has: the same point gives the same bits
        with _one_blas_thread():
            run = run_on_dataset(dataset, args.channel, max_iter=args.max_iter, backend=_backend(args),
                                 callback=advance if bar is not None else None)
        _close(bar, f"stopped after {run.result.iterations} iterations ({run.result.status})")
        se_mmse = solve_se(make_channel(args.channel, T=args.T, beta=beta), args.alpha, args.rho).mmse
        law_fields = {}
        if not law.is_gaussian:
            from aimrepro.paper1.token_laws import law_se

            law_fields = {"tokens": law.to_dict(), "se_mmse_tokens": law_se(
                make_channel(args.channel, T=args.T, beta=beta), args.alpha, args.rho, law).mmse}
    except ValueError as err:
        _refuse_science_error(err, subparser)
    summary = run.summary()
    _print_json({key: summary[key] for key in ("error", "generalisation_error", "plugin_generalisation_error",
                                               "bayes_generalisation_error", "iterations", "status", "converged")}
                | {"se_mmse": se_mmse} | law_fields)
    return 0


# ---------------------------------------------------------------------------
# gd


def _gd_arguments(gd: argparse.ArgumentParser) -> None:
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
    _add_token_arguments(gd)
    _add_backend(gd)
    _add_memory_limit(gd)
    _add_quiet(gd)


def _gd_estimate(*, inits, steps, sampled=True, **dataset):
    """Sampling the dataset (unless loaded), then K students trained on it in the same process."""
    from aimrepro.resources import Estimate, dataset_job, gd_job

    run = gd_job(**dataset, inits=inits, steps=steps, trace=False)
    return Estimate.peak(dataset_job(**dataset), run) if sampled else run


#: More threads than this cannot help (a thread trains a block of students; 2 cores here).
_MAX_THREADS = 1024


def _run_gd(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    _resolve_dataset(args, subparser, link="softmax")
    _check_rho(args, subparser)
    if args.threads > _MAX_THREADS:
        subparser.error(f"argument --threads: must be an integer in [1, {_MAX_THREADS}], got {args.threads}")
    _check_sequences(args, subparser)
    estimate = _refuse_if_too_large(
        args, subparser, _gd_estimate,
        {**_dataset_params(args), "inits": args.inits, "steps": args.steps, "sampled": args.loaded is None},
        {**_DATASET_OPTIONS, "inits": "--inits", "steps": "--steps"})
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.data import DatasetSpec, sample_dataset
    from aimrepro.paper1.gd import GDSettings, run_on_dataset
    from aimrepro.paper1.state_evolution import solve_se

    args.beta = 1.0 if args.beta is None else args.beta
    law = _token_law(args, subparser, default=None if args.loaded is None else args.loaded.spec.tokens)
    bar = _progress_bar(args, "aimrepro gd", estimate.seconds, "gd", args.steps + 1, "Adam steps")
    try:
        spec = DatasetSpec(link="softmax", T=args.T, rho=args.rho, d=args.d, alpha=args.alpha,
                           replicate=args.replicate, n_test=args.test_samples, beta=args.beta, tokens=law)
        settings = GDSettings(lr=args.lr, steps=args.steps, init_scale=args.init_scale, trace_every=0)
        dataset = args.loaded if args.loaded is not None else sample_dataset(spec, args.seed)
        run = run_on_dataset(dataset, args.inits, settings, threads=args.threads, backend=_backend(args),
                             callback=(lambda step, loss: bar(step + 1)) if bar is not None else None)
        _close(bar)
        se_mmse = solve_se(make_channel("softmax", T=args.T, beta=args.beta), args.alpha, args.rho).mmse
    except ValueError as err:
        _refuse_science_error(err, subparser)
    summary = run.summary()
    _print_json({key: summary[key] for key in ("single_error", "averaged_error", "train_loss",
                                               "generalisation_error")}
                | {"se_mmse": se_mmse, "n_diverged": summary["n_diverged"]}
                | ({} if law.is_gaussian else {"tokens": law.to_dict()}))
    return 0


# ---------------------------------------------------------------------------
# provenance


def _provenance_arguments(provenance: argparse.ArgumentParser) -> None:
    provenance.add_argument("targets", type=Path, nargs="+", metavar="FILE",
                            help="a result (.csv, .npz, ...) or figure (.pdf, .png); with --check "
                                 "also a directory (every result under it); with --repair also "
                                 "one that does not exist (nothing there to repair)")
    provenance.add_argument("--code", action="store_true",
                            help="also list the code files (with sha256) of each step")
    provenance.add_argument("--check", action="store_true",
                            help="verify the whole lineage instead: every file against its sidecar "
                                 "and its consumer's record, every code file against its recorded "
                                 "hash; print what differs; exit 0 only if nothing does")
    provenance.add_argument("--repair", action="store_true",
                            help="with --check: remove every damaged file of the lineage (bytes not "
                                 "those of its sidecar, sidecar missing or malformed, changed since "
                                 "its consumer used it) and everything downstream of it on the way to "
                                 "FILE, then print the snakemake command that rebuilds exactly those")
    provenance.add_argument(
        "--crate", type=Path, default=None, metavar="OUT",
        help="write a Workflow Run RO-Crate (Provenance Run Crate) of the FILEs' lineage to the new "
             "directory OUT, or zipped if OUT ends in .zip: every job with its inputs, outputs, "
             "parameters, code files and their sha256, times and host; the workflow, config, "
             "software versions, license and citation; refused if the lineage does not verify")


def _run_provenance(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.records import lineage as records

    if args.repair and not args.check:
        subparser.error("argument --repair: needs --check (the repair removes what the check finds)")
    if args.crate is not None:
        return _run_crate(args, subparser)
    absent = [path for path in args.targets if not _is_provenance_target(path)]
    if absent and not args.repair:
        subparser.error(f"argument FILE: must be an existing result, figure or directory (or a "
                        f"result whose sidecar exists), no such file: {absent[0]}")
    if not args.check:
        directories = [str(path) for path in args.targets if path.is_dir()]
        if directories:
            subparser.error(f"argument FILE: {directories[0]} is a directory; the lineage tree is "
                            f"of one file (--check takes directories)")
    try:
        if args.repair:
            repair = records.repair(args.targets)
        elif args.check:
            checks = [records.check_directory(path) if path.is_dir() else records.check_lineage(path)
                      for path in args.targets]
        else:
            trees = [records.lineage(path) for path in args.targets]
    except (ValueError, OSError) as err:
        subparser.error(f"argument FILE: cannot read provenance of "
                        f"{' '.join(map(str, args.targets))}: {err}")
    if args.repair:
        print(records.describe_repair(repair))
        return 0 if repair.complete else 1
    if not args.check:
        print("\n".join(records.render_lineage(tree, show_code=args.code) for tree in trees))
        return 0
    failed = False
    for path, check in zip(args.targets, checks):
        for problem in check.problems:
            print(problem)
        verdict = "differs" if check.problems else "verified"
        print(f"{path}: {verdict}: {check.n_files} files, {check.n_code_files} code files"
              + (f", {len(check.problems)} problem{'s' if len(check.problems) > 1 else ''}"
                 if check.problems else ""))
        failed = failed or bool(check.problems)
    if failed:
        print(f"to repair: {records.repair_command(args.targets)}")
    return 1 if failed else 0


def _run_crate(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.records.crate import CrateError, write_crate

    if args.check or args.code:
        subparser.error("argument --crate: not with --check or --code (a crate is only written "
                        "of a lineage that verifies)")
    if args.crate.exists():
        subparser.error(f"argument --crate: {args.crate} exists; give a new directory or .zip file")
    missing = [path for path in args.targets if not path.is_file()]
    if missing:
        subparser.error(f"argument FILE: --crate takes existing result or figure files, not {missing[0]}")
    try:
        summary = write_crate(args.targets, args.crate)
    except CrateError as err:
        print(f"aimrepro provenance: {err}", file=sys.stderr)
        return 1
    print(summary.describe())
    return 0


# ---------------------------------------------------------------------------
# diff


def _diff_arguments(diff: argparse.ArgumentParser) -> None:
    diff.add_argument("a", type=Path, metavar="A", help="the first tree (a repository or a "
                      "directory of results)")
    diff.add_argument("b", type=Path, metavar="B", help="the second tree")
    diff.add_argument("--rtol", type=_finite_number(0.0, strict=False), default=0.0,
                      help="relative tolerance: |a - b| <= atol + rtol max(|a|, |b|) (default 0)")
    diff.add_argument("--atol", type=_finite_number(0.0, strict=False), default=0.0,
                      help="absolute tolerance (default 0)")
    diff.add_argument("--details", action="store_true",
                      help="under each result that differs, list everything that differs")
    diff.add_argument("--json", action="store_true", help="print one JSON object instead")


def _run_diff(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.records.diff import diff_trees, render_diff

    for name, tree in (("A", args.a), ("B", args.b)):
        if not tree.is_dir():
            subparser.error(f"argument {name}: not a directory: {tree}")
    try:
        compared = diff_trees(args.a, args.b, rtol=args.rtol, atol=args.atol)
    except ValueError as err:
        subparser.error(str(err))
    if args.json:
        print(json.dumps(compared.to_json(), allow_nan=False))
    else:
        print(render_diff(compared, details=args.details))
    return 0 if compared.equal else 1


# ---------------------------------------------------------------------------
# cost


def _cost_arguments(cost: argparse.ArgumentParser) -> None:
    cost.add_argument("--scale", choices=SCALE_NAMES, default=None,
                      help="the preset to cost (default: the config's `scale`)")
    cost.add_argument("--configfile", type=Path, default=None, metavar="FILE",
                      help="the config to cost (default: config.yaml in the current directory)")
    cost.add_argument("--json", action="store_true",
                      help="print one JSON object instead of the table")


def _run_cost(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    import yaml

    # the workflow layer, an installed package of the project: imported only for this command
    from aimrepro.config import ConfigError
    from aimrepro_workflow import load_schema
    from aimrepro_workflow.checks import validated
    from aimrepro_workflow.costs import CostModel, format_table
    from aimrepro_workflow.plans import Plan

    from aimrepro.preflight import yaml_problem

    config_path = args.configfile if args.configfile is not None else Path.cwd() / "config.yaml"
    if not config_path.is_file():
        if args.configfile is not None:
            subparser.error(f"argument --configfile: no such file: {args.configfile}")
        subparser.error("no config.yaml in the current directory: run from the repository root "
                        "or give --configfile")
    if problem := yaml_problem(config_path):
        subparser.error(problem)  # names the file, whether --configfile gave it or not
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    plan = Plan(config)
    try:
        # the scale costed is the scale checked: its plan against limits, as a run's would be
        validated(config, load_schema(), scales=[args.scale or config.get("scale", "quick")], plan=plan)
    except ConfigError as err:
        subparser.error(f"{config_path}: {err}")
    table = CostModel(config, plan).table(args.scale or config["scale"])
    table["config"] = str(config_path)
    if args.json:
        print(json.dumps(table, allow_nan=False))
    else:
        print(format_table(table))
    return 0


# ---------------------------------------------------------------------------
# the subcommands and the dispatch


class Command(NamedTuple):
    """One subcommand: its name, its help, the builder of its options and its runner.

    ``run(args, subparser)`` checks what parsing cannot (ranges that depend on
    other options, sizes against the memory limit), computes, prints and
    returns the exit status; refusals go through ``subparser.error`` (exit 2,
    one line).
    """

    name: str
    summary: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, argparse.ArgumentParser], int]


#: Every subcommand, in the order ``aimrepro -h`` lists them.
COMMANDS: dict[str, Command] = {command.name: command for command in (
    Command("se", "solve the Bayes-optimal state evolution at given sample ratios",
            "Solve the SE fixed point at each alpha (increasing order); print one JSON object "
            "per line.", _se_arguments, _run_se),
    Command("threshold", "softmax perfect-recovery threshold alpha_PR(rho, T)",
            "Print the softmax perfect-recovery threshold as JSON.",
            _threshold_arguments, _run_threshold),
    Command("amp", "sample an AIM dataset and run GAMP-RIE on it",
            "Sample a teacher and n = round(alpha d^2) sequences, run GAMP-RIE, print one JSON "
            "object.", _amp_arguments, _run_amp),
    Command("gd", "sample a softmax AIM dataset and train tied students on it by Adam",
            "Sample a teacher and n = round(alpha d^2) sequences (softmax link), train --inits "
            "students of the teacher's width by full-batch Adam on the paper's loss, print one "
            "JSON object.", _gd_arguments, _run_gd),
    Command("sgd", "online SGD of paper 2 (direct, tied or untied attention)",
            "Run online SGD against a fresh teacher; print the order parameters at each recorded "
            "time as one JSON object per line, then a summary line with weak_recovery_time "
            "(t_ode units) and blew_up.", _sgd_arguments, _run_sgd),
    Command("provenance", "print, check or repair the lineage of a result or figure",
            "Follow provenance sidecars from FILE down to its raw inputs; --check verifies them, "
            "--check --repair removes what is damaged and what depends on it so that snakemake "
            "rebuilds exactly that; --crate writes a Workflow Run RO-Crate of the lineage.",
            _provenance_arguments, _run_provenance),
    Command("diff", "compare two result trees: which results differ, by how much, and why",
            "Compare the results and figures of two runs (two repositories, or two directories of "
            "results) file by file: present in one only, the same bytes, the same content within "
            "--rtol/--atol, or what differs (parameters, code, inputs and software from the "
            "sidecars; the largest absolute and relative difference per table column; changed "
            "claim verdicts and values; whether a figure's pixels changed). Exit 0 when every "
            "result is in both trees and equal within the tolerance, 1 otherwise.",
            _diff_arguments, _run_diff),
    Command("cost", "what the pipeline would cost: core-hours, memory and disk per rule",
            "Predict, before launching, what `snakemake --config scale=SCALE` costs: per rule the "
            "jobs, core-hours (expected; bound: every data-dependent loop at its cap), the largest "
            "job, peak memory per job and disk, then the totals. The model is the workflow's own "
            "(aimrepro_workflow.costs, an installed part of the project, which also sets each "
            "rule's threads, mem_mb and runtime); the config is --configfile, or config.yaml in "
            "the current directory.", _cost_arguments, _run_cost),
)}


def build_parser() -> argparse.ArgumentParser:
    """The ``aimrepro`` argument parser: one subparser per entry of :data:`COMMANDS`."""
    parser = _OneLineArgumentParser(
        prog="aimrepro",
        description="Theory, simulations, costs and provenance audits of the AIM reproduction.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True,
                                       metavar="{" + ",".join(COMMANDS) + "}")
    for command in COMMANDS.values():
        sub = subparsers.add_parser(command.name, help=command.summary,
                                    description=command.description)
        command.add_arguments(sub)
        # each subcommand reports its own errors, prefixed with its name
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
    except KeyboardInterrupt:
        print("aimrepro: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - the last guard: one line, never a traceback
        if os.environ.get("AIMREPRO_TRACEBACK"):
            raise
        print(f"aimrepro: internal error: {type(err).__name__}: {' '.join(str(err).split())} "
              f"(a bug: please report it with the command; AIMREPRO_TRACEBACK=1 shows where)",
              file=sys.stderr)
        return 1


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command].run(args, args.subparser)


# ---------------------------------------------------------------------------
# sizes and times, estimated before anything is allocated (aimrepro.resources)


def _gib(value: float) -> str:
    return f"{value / 2.0 ** 30:.3g}"


def _seconds(value: float) -> str:
    from aimrepro.progress import format_seconds

    return format_seconds(value)


#: The share of the available memory a run may plan to use when --memory-limit is not given.
_AVAILABLE_FRACTION = 0.9


def _memory_limit(args: argparse.Namespace) -> tuple[float, str]:
    """The memory a run may use, in bytes, and where that number comes from."""
    from aimrepro.resources import available_memory

    if args.memory_limit is not None:
        return args.memory_limit * 2.0 ** 30, "--memory-limit"
    # the run imports numpy next: under an address-space limit (ulimit -v) its BLAS
    # buffers count, so what is available is measured with them in place
    import numpy  # noqa: F401

    # The estimates are the arrays a run holds (within 5 % of tracemalloc's peak for GD,
    # docs/benchmarks.md "Memory estimates"); the allocator's arenas and rounding are not in
    # them, and a run refused at 90 % is better than one killed at 100 %.
    return (_AVAILABLE_FRACTION * available_memory(),
            f"{_AVAILABLE_FRACTION:.0%} of the available memory; --memory-limit to change")


def _refuse_if_too_large(args: argparse.Namespace, subparser: argparse.ArgumentParser,
                         estimate, params: dict[str, Any], options: dict[str, str]):
    """Exit 2 with one line if ``estimate(**params)`` needs more than the memory limit; else return it.

    ``options`` maps the estimate's parameters to the options that set them; the
    line names the one whose typical value would shrink the estimate most
    (``resources.driver``), its value, the estimate and the limit.
    """
    from aimrepro.resources import driver

    needed = estimate(**params)
    limit, source = _memory_limit(args)
    if needed.bytes <= limit:
        return needed
    name = driver(estimate, params, list(options))
    steps = f", {needed.steps:.3g} steps" if needed.steps >= 1e6 else ""
    if name is None:  # ordinary sizes: the limit is what is small
        subparser.error(f"argument --memory-limit: the run needs ~{_gib(needed.bytes)} GiB "
                        f"(estimate{steps}) at ordinary sizes, more than the limit of "
                        f"{_gib(limit)} GiB ({source})")
    option = options[name]
    value = getattr(args, option[2:].replace("-", "_"))
    value = f"{value:g}" if isinstance(value, float) else _short_integer(value)
    subparser.error(f"argument {option} = {value}: needs ~{_gib(needed.bytes)} GiB "
                    f"(estimate{steps}), limit {_gib(limit)} GiB ({source})")


def _short_integer(value: int) -> str:
    """An integer as typed if it is short, else in scientific notation (10**400 is 401 digits)."""
    text = str(value)
    return text if len(text) <= 20 else f"{text[0]}.{text[1:4]}e+{len(text) - 1}"


#: Parameters of the dataset-based estimates and the options that set them.
_DATASET_OPTIONS = {"alpha": "--alpha", "d": "--d", "T": "--T", "n_test": "--test-samples",
                    "rho": "--rho"}
#: The largest dataset (``aimrepro.paper1.data.MAX_SEQUENCES``).
_MAX_SEQUENCES = 10**8


def _check_sequences(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    d = float(args.d) if args.d < 2 ** 1023 else math.inf  # never OverflowError for an absurd d
    n = args.alpha * d * d
    n = round(n) if math.isfinite(n) else n
    if n < 1:
        subparser.error(f"arguments --alpha/--d: alpha d^2 must round to at least one sequence, "
                        f"got alpha={args.alpha}, d={_short_integer(args.d)}")
    if not n <= _MAX_SEQUENCES:
        subparser.error(f"arguments --alpha/--d: alpha d^2 = {n:.3g} sequences (alpha={args.alpha}, "
                        f"d={_short_integer(args.d)}), more than the {_MAX_SEQUENCES:.0e} a dataset "
                        f"may have (aimrepro.paper1.data)")


def _dataset_params(args: argparse.Namespace) -> dict[str, Any]:
    return {"T": args.T, "d": args.d, "rho": args.rho, "alpha": args.alpha,
            "n_test": args.test_samples}


# ---------------------------------------------------------------------------
# progress on stderr (aimrepro.progress)


def _progress_bar(args: argparse.Namespace, what: str, seconds: float, label: str, total: float,
                  unit: str):
    """A progress bar for a run estimated to take ``seconds``, announced in one line; None if short or --quiet."""
    if args.quiet or not seconds > ANNOUNCE_SECONDS:
        return None
    from aimrepro.progress import ProgressBar, format_seconds

    print(f"{what}: estimated ~{format_seconds(seconds)} CPU ({total:.3g} {unit}); progress below, "
          f"--quiet to silence", file=sys.stderr, flush=True)
    return ProgressBar(label, int(min(total, 2 ** 62)), unit=unit)


def _close(bar, message: str | None = None) -> None:
    if bar is not None:
        bar.close(message)


def _one_blas_thread():
    """numpy's BLAS on one thread for the enclosed block (the pipeline's single-threaded jobs)."""
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1, user_api="blas")


# ---------------------------------------------------------------------------
# output


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
