"""The command line never shows a traceback, names the option in every refusal, starts light,
and tells how long a long run takes (a representative subset of benchmarks/probe_cli.py).

Most calls run in this process (``cli.main``): refusals come before any work.
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys

import pytest

from aimrepro import cli, resources
from aimrepro.progress import ProgressBar, format_seconds

from conftest import assert_usage_error, changed, run_main

SGD = ["sgd", "--param", "tied", "--link", "h2", "--T", "1", "--d", "20", "--lr", "0.01",
       "--batch", "8", "--horizon", "0.2", "--seed", "0", "--records", "3"]
SE_TABLE = ["se", "--channel", "hardmax", "--T", "3", "--rho", "0.5", "--alpha", "0.3"]
AMP = ["amp", "--channel", "softmax", "--T", "2", "--rho", "0.5", "--alpha", "0.3", "--d", "12",
       "--seed", "1", "--test-samples", "20", "--max-iter", "50"]
GD = ["gd", "--T", "2", "--rho", "0.5", "--alpha", "0.1", "--d", "12", "--inits", "2", "--steps", "20",
      "--lr", "0.1", "--seed", "1", "--test-samples", "20"]
HUGE = "1" + "0" * 400  # an integer beyond the floats


# --- the structure: a table of subcommands, the registries' names ------------------------


def test_every_subcommand_has_a_builder_and_a_runner_and_the_parser_lists_them_all():
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert list(subparsers.choices) == list(cli.COMMANDS) == [
        "se", "threshold", "amp", "gd", "sgd", "provenance", "diff", "cost"]
    for name, command in cli.COMMANDS.items():
        assert command.name == name and callable(command.add_arguments) and callable(command.run)


def test_the_names_spelled_in_the_cli_are_the_registries():
    from aimrepro.backends import BACKENDS, DTYPES
    from aimrepro.config import SCALES
    from aimrepro.model import DEFAULT_STUDENT_DOF, LINKS, TOKEN_LAWS
    from aimrepro.paper1 import spectra
    from aimrepro.paper1.amp import CHANNEL_LINK
    from aimrepro.paper1.channels import CHANNELS
    from aimrepro.paper1.data import MAX_SEQUENCES
    from aimrepro.paper2.sgd import PARAMETRISATIONS

    assert cli.CHANNEL_NAMES == tuple(CHANNELS)
    assert cli.LINK_NAMES == LINKS
    assert cli.PARAMETRISATIONS == PARAMETRISATIONS
    assert cli.BACKEND_NAMES == BACKENDS
    assert cli.DTYPE_NAMES == DTYPES
    assert cli.SCALE_NAMES == SCALES
    assert cli.TOKEN_LAW_NAMES == tuple(TOKEN_LAWS) and cli.DEFAULT_STUDENT_DOF == DEFAULT_STUDENT_DOF
    assert cli._CHANNEL_LINK == dict(CHANNEL_LINK)
    assert cli._MAX_SEQUENCES == MAX_SEQUENCES
    args = type("Args", (), {"rho": spectra.RHO_MIN})()
    cli._check_rho(args, None)  # the ends of the range pass (a refusal would call None.error)
    args.rho = spectra.RHO_MAX
    cli._check_rho(args, None)


def fresh_python(code: str) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter (nothing imported yet)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=True)


def test_importing_the_cli_loads_no_numerical_module():
    done = fresh_python("import sys, aimrepro.cli; "
                        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy', "
                        "'matplotlib') or (m.startswith('aimrepro.') and m != 'aimrepro.cli')))")
    assert done.stdout.strip() == "[]"


def test_help_and_refusals_with_dtype_load_no_numerical_module():
    calls = [["gd", "--help"], [*SGD, "--dtype", "float32", "--link", "softmax"],
             [*AMP, "--dtype", "float16"], [*GD, "--dtype", "float32", "--threads", "5000"]]
    done = fresh_python("import contextlib, io, sys\nfrom aimrepro import cli\n"
                        f"for argv in {calls!r}:\n"
                        "    with contextlib.redirect_stdout(io.StringIO()), \\\n"
                        "            contextlib.redirect_stderr(io.StringIO()):\n"
                        "        try:\n            cli.main(argv)\n        except SystemExit as done:\n"
                        "            assert done.code == (0 if '--help' in argv else 2), (argv, done.code)\n"
                        "        else:\n            raise AssertionError(argv)\n"
                        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy')))")
    assert done.stdout.strip() == "[]"


def test_the_softmax_state_evolution_runs_without_scipy():
    done = fresh_python("import sys; from aimrepro import cli; cli.main(['se', '--channel', 'softmax', "
                        "'--T', '2', '--rho', '0.5', '--alpha', '0.1']); "
                        "print([m for m in sys.modules if m.split('.')[0] == 'scipy'], file=sys.stderr)")
    assert done.stderr.strip() == "[]" and json.loads(done.stdout)["converged"] is True


# --- no traceback: absurd values are refused naming the option ---------------------------


ABSURD = [
    # the issue's two OverflowErrors
    (changed(SGD, rho="1e300", d="3000"), ["--rho = 1e+300", "GiB"]),
    (changed(SE_TABLE, T="1000000000"), ["--T", "[2, 1000000]", "1000000000"]),
    (changed(SE_TABLE, T="1000000"), ["--T = 1000000", "Fisher table", "forever"]),
    (changed(SE_TABLE, alpha="1e-320"), ["--alpha", ">= 1e-100"]),
    (["threshold", "--T", HUGE, "--rho", "0.5"], ["--T", "an integer of 401 digits"]),
    # integers beyond the floats
    (changed(SGD, d=HUGE), ["--d = 1.000e+400"]),
    (changed(SGD, batch=HUGE), ["--batch = 1.000e+400"]),
    (changed(SGD, records=HUGE), ["--records = 1.000e+400"]),
    (changed(GD, inits=HUGE), ["--inits = 1.000e+400"]),
    (changed(GD, steps=HUGE), ["--steps = 1.000e+400"]),
    (changed(AMP, max_iter=HUGE), ["--max-iter = 1.000e+400"]),
    (changed(AMP, test_samples=HUGE), ["--test-samples = 1.000e+400"]),
    (changed(AMP, d=HUGE), ["--alpha/--d", "1.000e+400"]),
    (changed(SE_TABLE, table_samples=HUGE), ["--table-samples = 1" + "0" * 400]),
    (changed(SE_TABLE, T="144"), ["--T = 144"]),
    # an integer too long to read, a float beyond the floats
    (changed(SGD, d="9" * 5000), ["--d", "integer >= 2", "..."]),
    (changed(SGD, lr="1e309"), ["--lr", "finite"]),
    (changed(GD, threads="1000000000"), ["--threads", "[1, 1024]"]),
    (changed(AMP, alpha="1e300"), ["--alpha/--d", "sequences"]),
]


@pytest.mark.parametrize(("args", "names"), ABSURD, ids=[" ".join(a[:1] + a[-2:])[:60] for a, _ in ABSURD])
def test_absurd_values_are_refused_in_one_line_naming_the_option(capsys, args, names):
    done = run_main(capsys, [*args, "--memory-limit", "16"] if args[0] in ("sgd", "amp", "gd") else args)
    assert_usage_error(done, names)


def test_the_estimates_never_raise_on_sizes_beyond_the_floats():
    assert resources.sgd_job(param="tied", T=1, d=3000, rho=1e300, batch=16, lr=0.05, horizon=0.5,
                             records=101).bytes == math.inf
    huge = 10**400
    assert resources.gd_job(T=2, d=huge, rho=0.5, alpha=0.1, n_test=10, inits=huge, steps=huge).bytes == math.inf
    assert resources.amp_job(T=huge, d=10, rho=0.5, alpha=0.1, n_test=10, max_iter=10).seconds == math.inf
    from aimrepro.paper1.hardmax_tokens import estimated_table_seconds

    assert estimated_table_seconds(10**9, 50_000) == math.inf
    assert estimated_table_seconds(3, huge) == math.inf
    assert 0 < estimated_table_seconds(5, 50_000) < math.inf


@pytest.mark.skipif("torch" in sys.modules or __import__("importlib").util.find_spec("torch") is not None,
                    reason="PyTorch is installed here")
@pytest.mark.parametrize("base", [SGD, AMP, GD])
def test_torch_without_pytorch_is_refused_naming_backend(capsys, base):
    assert_usage_error(run_main(capsys, changed(base, backend="torch")), ["--backend", "PyTorch"])


def test_a_failure_nobody_foresaw_is_one_line_not_a_traceback(capsys, monkeypatch):
    def broken(args, subparser):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setitem(cli.COMMANDS, "threshold", cli.Command("threshold", "", "", cli._threshold_arguments,
                                                               broken))
    done = run_main(capsys, ["threshold", "--T", "2", "--rho", "0.5"])
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "internal error: ZeroDivisionError" in done.stderr


# --- long runs: an estimate up front, a progress bar, --quiet -------------------------------


def test_a_long_run_announces_its_estimate_and_shows_progress_on_stderr_only(capsys, monkeypatch):
    quiet = run_main(capsys, [*SGD, "--quiet"])
    assert quiet.returncode == 0 and quiet.stderr == ""
    monkeypatch.setattr(cli, "ANNOUNCE_SECONDS", 0.0)  # every run counts as long
    loud = run_main(capsys, SGD)
    assert loud.returncode == 0 and loud.stdout == quiet.stdout  # the JSON lines are unchanged
    lines = loud.stderr.splitlines()
    assert lines[0].startswith("aimrepro sgd: estimated ~") and "--quiet" in lines[0]
    # not a terminal: one line per tenth of the run, then the closing line
    assert 2 <= len(lines) - 2 <= 10 and all(line.startswith("sgd [") for line in lines[1:-1])
    assert "100%" in lines[-2] and lines[-1].startswith("sgd: done in")
    assert run_main(capsys, [*SGD, "--quiet"]).stderr == ""


@pytest.mark.parametrize("base", [AMP, GD, [*SE_TABLE, "--table-samples", "1000"]])
def test_every_long_command_has_its_progress(capsys, monkeypatch, base):
    quiet = run_main(capsys, [*base, "--quiet"])
    monkeypatch.setattr(cli, "ANNOUNCE_SECONDS", 0.0)
    loud = run_main(capsys, base)
    assert loud.returncode == quiet.returncode == 0 and loud.stdout == quiet.stdout
    assert "estimated ~" in loud.stderr.splitlines()[0] and "[####" in loud.stderr
    assert quiet.stderr == ""


def test_the_issue_s_long_sgd_command_is_announced(capsys, monkeypatch):
    """`sgd --param direct --d 3000 ...` ran silently past 20 s: now its estimate comes first."""
    from aimrepro.paper2 import sgd

    monkeypatch.setattr(sgd.SGDRun, "run", lambda run, **options: (_ for _ in ()).throw(MemoryError("stop")))
    done = run_main(capsys, ["sgd", "--param", "direct", "--link", "h2", "--T", "1", "--d", "3000", "--lr",
                             "0.05", "--batch", "16", "--horizon", "0.5", "--seed", "0"])
    first = done.stderr.splitlines()[0]
    assert first.startswith("aimrepro sgd: estimated ~") and "(3e+04 steps)" in first


def test_the_progress_bar_redraws_in_place_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = ProgressBar("sgd", 1000, stream=stream)
    for done in range(0, 1001, 100):
        bar(done)
    bar.close()
    text = stream.getvalue()
    assert text.count("\n") == 2 and "\r" in text and text.rstrip().endswith(("s", "done in 0 s"))
    assert "100%" in text


def test_the_progress_bar_writes_a_line_per_tenth_elsewhere():
    stream = io.StringIO()
    bar = ProgressBar("table", 7, unit="samples", stream=stream)
    for done in range(8):
        bar(done)
    bar.close("finished")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 8 and lines[-1] == "table: finished" and "\r" not in stream.getvalue()
    assert lines[-2].startswith("table [########################] 100% 7/7 samples")


@pytest.mark.parametrize(("seconds", "text"), [(0.42, "0.42 s"), (12.4, "12 s"), (600, "10 min"),
                                                (7300, "2 h"), (1e6, "12 days"), (math.inf, "forever")])
def test_durations_read_as_people_say_them(seconds, text):
    assert format_seconds(seconds) == text


def test_progress_callbacks_change_no_number():
    import numpy as np

    from aimrepro.paper1 import hardmax_tokens as ht
    from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings

    run = SGDRun(ProblemSpec("tied", "h2", 1, 20, rho=0.5), SGDSettings(lr=0.01, batch=8, horizon=0.3,
                                                                          n_records=4), 3)
    seen = []
    plain, watched = run.run(), run.run(progress=lambda done, total: seen.append((done, total)))
    assert np.array_equal(plain.order, watched.order) and seen[-1] == (150, 150) and len(seen) > 10
    x = ht.table_grid(3)
    calls = []
    tables = [ht.fisher_table(3, x, 300, 5), ht.fisher_table(3, x, 300, 5, progress=lambda *a: calls.append(a))]
    assert np.array_equal(tables[0].value, tables[1].value) and calls[-1] == (900, 900)


@pytest.mark.parametrize("content", [b"PK\x03\x04 cut short", b"not a dataset\n", b""])
def test_a_damaged_dataset_file_is_refused_naming_dataset(capsys, tmp_path, content):
    path = tmp_path / "damaged.npz"
    path.write_bytes(content)
    for base in (["amp", "--channel", "softmax", "--max-iter", "5"], ["gd", "--inits", "1", "--steps", "1",
                                                                      "--lr", "0.1"]):
        assert_usage_error(run_main(capsys, [*base, "--dataset", str(path)]),
                           ["--dataset", "is not an aimrepro dataset"])


@pytest.mark.parametrize(("message", "named"), [
    ("lr must be a finite number > 0, got 0", "argument --lr: lr must be"),
    ("the teacher's rho and d give r = 0", "argument --rho: the teacher's rho"),
    ("T must be an integer >= 2, got 1", "argument --T: T must be"),
    ("something else went wrong", "error: something else went wrong"),
])
def test_a_science_error_is_refused_naming_the_option_it_mentions(capsys, message, named):
    parser = cli.build_parser()
    sgd = next(a for a in parser._actions if a.dest == "command").choices["sgd"]
    with pytest.raises(SystemExit) as stop:
        cli._refuse_science_error(ValueError(message), sgd)
    assert stop.value.code == 2 and named in capsys.readouterr().err
