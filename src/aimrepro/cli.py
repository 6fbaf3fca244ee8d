"""Command line: one-off theory queries and provenance audits.

``aimrepro se --channel softmax --T 2 --rho 0.5 --alpha 0.05 0.1``
    Solve the state evolution at each α (in increasing order) and print one
    JSON object per line: ``alpha, mmse, q, qhat, converged, iterations,
    residual``.
``aimrepro threshold --T 2 --rho 0.5``
    Print ``{"rho": ..., "T": ..., "alpha_pr": ...}``, the softmax
    perfect-recovery threshold.
``aimrepro amp --channel hardmax --T 2 --rho 0.5 --alpha 0.3 --d 100 --seed 1``
    Sample an AIM dataset (teacher, training and test sequences; the seed
    is the base seed, ``--replicate`` the draw index of a result path), run
    GAMP-RIE and print one JSON object: ``error, generalisation_error,
    iterations, converged, se_mmse``.
``aimrepro provenance figures/quick/paper1_fig1.pdf``
    Print the lineage tree of a figure or result from the provenance
    sidecars down to its raw inputs.

Arguments are checked before anything is computed.  A bad argument exits
with status 2 and a single line on stderr naming it and its allowed range.
Non-finite numbers are printed as JSON ``null``, so that every line is
strict JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["CHANNEL_NAMES", "build_parser", "main"]

#: Output channels the ``se`` command accepts; equal to the registry names of
#: ``aimrepro.channels`` (a unit test checks this), listed here so that the
#: parser does not import the science modules just to print --help.
CHANNEL_NAMES = ("softmax", "hardmax", "hardmax_paper")
#: Channels defined for T = 2 only (paper1.md §3.4).
_T2_ONLY_CHANNELS = ("hardmax", "hardmax_paper")


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


def _positive_finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a finite number > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(
            f"must be an existing result or figure file, no such file: {text}")
    return path


def build_parser() -> argparse.ArgumentParser:
    """The ``aimrepro`` argument parser with its three subcommands."""
    parser = _OneLineArgumentParser(
        prog="aimrepro",
        description="Theory queries and provenance audits for the AIM reproduction.",
    )
    commands = parser.add_subparsers(dest="command", required=True,
                                     metavar="{se,threshold,amp,provenance}")

    se = commands.add_parser(
        "se", help="solve the Bayes-optimal state evolution at given sample ratios",
        description="Solve the SE fixed point at each alpha (increasing order); "
                    "print one JSON object per line.")
    se.add_argument("--channel", required=True, choices=CHANNEL_NAMES,
                    help="output channel; hardmax_paper is the published formula (erratum B1)")
    se.add_argument("--T", dest="T", required=True, type=_integer_at_least(2), metavar="T",
                    help="sequence length, integer >= 2 (hardmax channels: T = 2)")
    se.add_argument("--rho", required=True, type=_positive_finite, metavar="RHO",
                    help="width ratio rho = r/d, finite > 0")
    se.add_argument("--alpha", required=True, nargs="+", type=_positive_finite,
                    metavar="ALPHA", help="sample ratios alpha = n/d^2, each finite > 0")
    se.add_argument("--beta", type=_positive_finite, default=None, metavar="BETA",
                    help="softmax inverse temperature, finite > 0 (default 1; softmax only)")

    threshold = commands.add_parser(
        "threshold", help="softmax perfect-recovery threshold alpha_PR(rho, T)",
        description="Print the softmax perfect-recovery threshold as JSON.")
    threshold.add_argument("--T", dest="T", required=True, type=_integer_at_least(2),
                           metavar="T", help="sequence length, integer >= 2")
    threshold.add_argument("--rho", required=True, type=_positive_finite, metavar="RHO",
                           help="width ratio rho = r/d, finite > 0")

    amp = commands.add_parser(
        "amp", help="sample an AIM dataset and run GAMP-RIE on it",
        description="Sample a teacher and n = round(alpha d^2) sequences, run GAMP-RIE, "
                    "print one JSON object.")
    amp.add_argument("--channel", required=True, choices=CHANNEL_NAMES,
                     help="output channel; hardmax_paper runs the published g_out (erratum B1) "
                          "on data of the correct hardmax model")
    amp.add_argument("--T", dest="T", required=True, type=_integer_at_least(2), metavar="T",
                     help="sequence length, integer >= 2 (hardmax channels: T = 2)")
    amp.add_argument("--rho", required=True, type=_positive_finite, metavar="RHO",
                     help="width ratio rho = r/d, finite > 0")
    amp.add_argument("--alpha", required=True, type=_positive_finite, metavar="ALPHA",
                     help="sample ratio alpha = n/d^2, finite > 0")
    amp.add_argument("--d", dest="d", required=True, type=_integer_at_least(4), metavar="D",
                     help="token dimension, integer >= 4")
    amp.add_argument("--seed", required=True, type=_integer_at_least(0), metavar="SEED",
                     help="base seed, integer >= 0 (the config's `seed`)")
    amp.add_argument("--replicate", type=_integer_at_least(0), default=0, metavar="K",
                     help="index of the independent draw, integer >= 0 (default 0)")
    amp.add_argument("--beta", type=_positive_finite, default=None, metavar="BETA",
                     help="softmax inverse temperature, finite > 0 (default 1; softmax only)")
    amp.add_argument("--test-samples", type=_integer_at_least(1), default=1000, metavar="N",
                     help="size of the fresh test set (default 1000)")
    amp.add_argument("--max-iter", type=_integer_at_least(1), default=500, metavar="N",
                     help="iteration cap (default 500)")

    provenance = commands.add_parser(
        "provenance", help="print the lineage tree of a result or figure",
        description="Follow provenance sidecars from FILE down to its raw inputs.")
    provenance.add_argument("file", type=_existing_file, metavar="FILE",
                            help="a result (.csv, .md, ...) or figure (.pdf, .png)")
    provenance.add_argument("--code", action="store_true",
                            help="also list the code files (with sha256) of each step")

    # Each subcommand reports its own errors, prefixed with its name.
    for sub in commands.choices.values():
        sub.set_defaults(subparser=sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aimrepro`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    subparser = args.subparser
    if args.command == "se":
        _check_se_arguments(args, subparser)
        return _run_se(args, subparser)
    if args.command == "threshold":
        return _run_threshold(args)
    if args.command == "amp":
        _check_se_arguments(args, subparser)
        _check_amp_size(args, subparser)
        return _run_amp(args, subparser)
    return _run_provenance(args, subparser)


#: Largest n T d (tokens times dimension) the ``amp`` command accepts: 8 bytes
#: each, a few copies live at once; 2e8 keeps a run within a few GB.
MAX_AMP_TOKEN_ENTRIES = 2 * 10**8


def _check_amp_size(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    n = round(args.alpha * args.d * args.d)
    if n < 1:
        subparser.error(f"argument --alpha: alpha d^2 must round to at least one sequence, "
                        f"got alpha={args.alpha}, d={args.d}")
    if n * args.T * args.d > MAX_AMP_TOKEN_ENTRIES:
        subparser.error(f"argument --alpha: n T d = {n * args.T * args.d:.3g} exceeds "
                        f"{MAX_AMP_TOKEN_ENTRIES:.0e} (use the workflow for runs this large)")


def _check_se_arguments(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> None:
    if args.channel in _T2_ONLY_CHANNELS and args.T != 2:
        subparser.error(f"argument --T: must be 2 for channel {args.channel}, got {args.T}")
    if args.beta is not None and args.channel != "softmax":
        subparser.error(f"argument --beta: applies to the softmax channel only, "
                        f"not {args.channel}")


def _run_se(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    # Imported here: the science modules are heavier than the parser, and
    # `aimrepro provenance` must not depend on them.
    from aimrepro.channels import make_channel
    from aimrepro.state_evolution import solve_se

    channel_params: dict[str, Any] = {"T": args.T}
    if args.channel == "softmax":
        channel_params["beta"] = 1.0 if args.beta is None else args.beta
    try:
        channel = make_channel(args.channel, **channel_params)
        for alpha in sorted(args.alpha):
            point = solve_se(channel, alpha, args.rho)
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


def _run_amp(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.amp import CHANNEL_LINK, run_on_dataset
    from aimrepro.channels import make_channel
    from aimrepro.data import DatasetSpec, sample_dataset
    from aimrepro.state_evolution import solve_se

    beta = (1.0 if args.beta is None else args.beta) if args.channel == "softmax" else None
    try:
        spec = DatasetSpec(link=CHANNEL_LINK[args.channel], T=args.T, rho=args.rho, d=args.d,
                           alpha=args.alpha, replicate=args.replicate, n_test=args.test_samples, beta=beta)
        run = run_on_dataset(sample_dataset(spec, args.seed), args.channel, max_iter=args.max_iter)
        se_mmse = solve_se(make_channel(args.channel, T=args.T, beta=beta), args.alpha, args.rho).mmse
    except ValueError as err:
        subparser.error(str(err).splitlines()[0] if str(err) else type(err).__name__)
    summary = run.summary()
    _print_json({key: summary[key] for key in ("error", "generalisation_error", "iterations", "converged")}
                | {"se_mmse": se_mmse})
    return 0


def _run_threshold(args: argparse.Namespace) -> int:
    from aimrepro.grids import alpha_perfect_recovery

    _print_json({"rho": args.rho, "T": args.T,
                 "alpha_pr": alpha_perfect_recovery(args.rho, args.T)})
    return 0


def _run_provenance(args: argparse.Namespace, subparser: argparse.ArgumentParser) -> int:
    from aimrepro.provenance import lineage, render_lineage

    try:
        tree = lineage(args.file)
    except (ValueError, OSError) as err:
        subparser.error(f"argument FILE: cannot read provenance of {args.file}: {err}")
    print(render_lineage(tree, show_code=args.code))
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
