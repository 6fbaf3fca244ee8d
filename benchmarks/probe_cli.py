"""A probe of the command line: several hundred calls, counted by how they end.

Run:  python benchmarks/probe_cli.py [--jobs 2] [--timeout 60] [--memory-gib 2]

Every subcommand is called with a small valid command line, then with each of
its options replaced by valid, boundary, absurd and malformed values (and a
few combinations the parser cannot check alone), each call in a fresh process
under an address-space cap (``ulimit -v``: the memory estimates see it as the
memory available) and a time limit.  A call ends *clean* if it

* computed: exit 0, every stdout line strict JSON, no traceback on stderr; or
* was refused: exit 2, nothing on stdout, one stderr line that names an
  option (``--rho``, ``FILE``, ...); the varied option itself where the value
  alone is wrong; or
* is a legitimate long run that announced its estimate and showed progress
  on stderr before the time limit stopped it.

Anything else is counted as not clean and listed: a traceback, an internal
error line (exit 1), a refusal in several lines or naming no option, a
timeout.  ``aimrepro cost`` is left out (its internals belong to the
workflow's cost model); ``provenance`` is probed on files made here.

Writes ``benchmarks/results/probe_cli.json`` (the counts, and each call with
its outcome) and prints the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: Small valid command lines, one per subcommand (each runs in about a second).
BASE = {
    "se": ["se", "--channel", "softmax", "--T", "2", "--rho", "0.5", "--alpha", "0.1"],
    "se-hardmax3": ["se", "--channel", "hardmax", "--T", "3", "--rho", "0.5", "--alpha", "0.3",
                    "--table-samples", "1000"],
    "threshold": ["threshold", "--T", "2", "--rho", "0.5"],
    "sgd": ["sgd", "--param", "tied", "--link", "h2", "--T", "1", "--d", "20", "--lr", "0.01",
            "--batch", "8", "--horizon", "0.2", "--seed", "0", "--records", "3"],
    "amp": ["amp", "--channel", "softmax", "--T", "2", "--rho", "0.5", "--alpha", "0.3", "--d", "12",
            "--seed", "1", "--test-samples", "20", "--max-iter", "50"],
    "gd": ["gd", "--T", "2", "--rho", "0.5", "--alpha", "0.1", "--d", "12", "--inits", "2",
           "--steps", "20", "--lr", "0.1", "--seed", "1", "--test-samples", "20"],
}

#: Values tried for every option of a kind (besides each option's own valid ones).
NUMBER_VALUES = ["0", "-1", "1e-320", "1e-300", "1e300", "1e309", "inf", "-inf", "nan", "abc", "",
                 "0x10", "1_000"]
INTEGER_VALUES = ["0", "1", "2", "-1", "1.5", "1e3", "abc", "", "10000000000",
                  "1" + "0" * 400, "9" * 5000]
CHOICE_VALUES = ["", "nonsense", "SOFTMAX"]

#: Per base: option -> (kind, values valid for it).
OPTIONS = {
    "se": {"--channel": ("choice", ["hardmax", "hardmax_paper"]), "--T": ("int", ["3", "1000000000"]),
           "--rho": ("number", ["1e-4", "1e14", "1e-5", "2e14"]),
           "--alpha": ("number", ["1e-8", "100", "1e8"]), "--beta": ("number", ["2", "1e6"])},
    "se-hardmax3": {"--T": ("int", ["4", "5", "10", "144", "1000000000"]),
                    "--table-samples": ("int", ["999", "100000000", "1000000000000"]),
                    "--table-seed": ("int", ["7"]),
                    "--max-table-seconds": ("number", ["0.001", "1e300"])},
    "threshold": {"--T": ("int", ["3", "1000000", "1000000000000"]),
                  "--rho": ("number", ["1e-10", "1e10", "1e300"])},
    "sgd": {"--param": ("choice", ["direct", "untied"]), "--link": ("choice", ["h1", "h3", "linear", "softmax", "hardmax"]),
            "--T": ("int", ["2", "1000000"]), "--d": ("int", ["2", "100000", "1000000000"]),
            "--lr": ("number", ["1e-5", "10", "1e6"]), "--batch": ("int", ["1", "100000000"]),
            "--horizon": ("number", ["1e-6", "1e12"]), "--seed": ("int", ["123456789"]),
            "--rho": ("number", ["1e-6", "1e3", "1e300"]), "--beta": ("number", ["2"]),
            "--teacher-link": ("choice", ["h1", "softmax"]), "--weight-decay": ("number", ["0.5", "1e300"]),
            "--normalisation": ("choice", ["aim"]), "--records": ("int", ["101", "1000000000000"]),
            "--threshold": ("number", ["0.5", "1e300"]), "--backend": ("choice", ["numpy", "torch"]),
            "--dtype": ("choice", ["float32"]), "--memory-limit": ("number", ["1e-6", "1", "1e300"])},
    "amp": {"--channel": ("choice", ["hardmax", "hardmax_paper"]), "--T": ("int", ["3", "1000"]),
            "--rho": ("number", ["1e-5", "1e15", "1e300"]), "--alpha": ("number", ["1e-9", "1e6"]),
            "--d": ("int", ["4", "3", "200000"]), "--seed": ("int", ["7"]),
            "--replicate": ("int", ["3"]), "--test-samples": ("int", ["1", "1000000000"]),
            "--beta": ("number", ["2"]), "--max-iter": ("int", ["1", "1000000000000"]),
            "--backend": ("choice", ["numpy", "torch"]), "--dtype": ("choice", ["float32"]),
            "--memory-limit": ("number", ["1e-6", "1"]),
            "--dataset": ("path", ["no/such.npz", "CORRUPT", "TEXTFILE"])},
    "gd": {"--T": ("int", ["3", "1000"]), "--rho": ("number", ["1e-5", "1e300"]),
           "--alpha": ("number", ["1e-9", "1e6"]), "--d": ("int", ["4", "3", "200000"]),
           "--inits": ("int", ["1", "1000000"]), "--steps": ("int", ["1", "1000000000"]),
           "--lr": ("number", ["1e-6", "1e6"]), "--init-scale": ("number", ["1e-3", "1e300"]),
           "--threads": ("int", ["2", "1000000000"]), "--test-samples": ("int", ["1"]),
           "--beta": ("number", ["2"]), "--backend": ("choice", ["numpy", "torch"]),
           "--dtype": ("choice", ["float32"]), "--memory-limit": ("number", ["1e-6", "1"]),
           "--dataset": ("path", ["no/such.npz", "CORRUPT", "TEXTFILE"])},
}


def calls(files: dict[str, str]) -> list[tuple[str, str, list[str]]]:
    """(base, option, argv) of every call: each option of each base with each value."""
    out = [(name, "", list(argv)) for name, argv in BASE.items()]
    for name, options in OPTIONS.items():
        for option, (kind, valid) in options.items():
            extra = {"number": NUMBER_VALUES, "int": INTEGER_VALUES, "choice": CHOICE_VALUES,
                     "path": []}[kind]
            for value in [*valid, *extra]:
                value = files.get(value, value)
                argv = list(BASE[name])
                if option == "--dataset":  # replaces the sampling options
                    argv = _without(argv, ("--T", "--rho", "--alpha", "--d", "--seed",
                                           "--test-samples"))
                if option in argv:
                    argv[argv.index(option) + 1] = value
                else:
                    argv += [option, value]
                out.append((name, option, argv))
    # combinations the parser cannot check alone, and provenance on files made here
    out += [
        ("sgd", "--horizon", BASE["sgd"][:-6] + ["--horizon", "1e-9", "--seed", "0", "--records", "3"]),
        ("sgd", "--T", _set(BASE["sgd"], link="softmax")),
        ("sgd", "--teacher-link", BASE["sgd"] + ["--teacher-link", "softmax"]),
        ("sgd", "--beta", BASE["sgd"] + ["--beta", "3"]),
        ("sgd", "--lr", _set(BASE["sgd"], param="direct", d="3000", lr="0.05", batch="16", horizon="0.5")),
        ("sgd", "--rho", _set(BASE["sgd"], rho="1e300", d="3000")),
        ("amp", "--dataset", BASE["amp"] + ["--dataset", files["DATASET"]]),
        ("amp", "--beta", _set(BASE["amp"], channel="hardmax") + ["--beta", "2"]),
        ("gd", "--dataset", _without(BASE["gd"], ("--T", "--rho", "--alpha", "--d", "--seed",
                                                  "--test-samples")) + ["--dataset", files["DATASET"]]),
        ("gd", "--seed", _without(BASE["gd"], ("--seed",))),
        ("provenance", "FILE", ["provenance", files["DATASET"]]),
        ("provenance", "FILE", ["provenance", "--check", files["DATASET"]]),
        ("provenance", "FILE", ["provenance", "no/such/file.pdf"]),
        ("provenance", "FILE", ["provenance", "--check", str(Path(files["DATASET"]).parent)]),
        ("provenance", "FILE", ["provenance", str(Path(files["DATASET"]).parent)]),
        ("provenance", "FILE", ["provenance", files["TEXTFILE"]]),
        ("provenance", "FILE", ["provenance", "--check", files["BADSIDECAR"]]),
        ("provenance", "--repair", ["provenance", "--repair", files["DATASET"]]),
        ("provenance", "--repair", ["provenance", "--check", "--repair", files["BADSIDECAR"]]),
        ("provenance", "FILE", ["provenance"]),
        ("", "", []),
        ("", "", ["nosuchcommand"]),
        ("", "", ["se", "--no-such-option", "1"]),
    ]
    return out


def _without(argv: list[str], options) -> list[str]:
    out, skip = [], False
    for item in argv:
        if skip:
            skip = False
            continue
        if item in options:
            skip = True
            continue
        out.append(item)
    return out


def _set(argv: list[str], **values) -> list[str]:
    argv = list(argv)
    for key, value in values.items():
        option = "--" + key.replace("_", "-")
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
    return argv


def make_files(directory: Path, executable: str) -> dict[str, str]:
    """A dataset with its sidecar, a truncated copy, a text file and a result with a malformed sidecar."""
    dataset = directory / "results" / "probe" / "data" / "softmax.npz"
    dataset.parent.mkdir(parents=True)
    code = ("import sys, datetime as dt; from aimrepro.paper1.data import DatasetSpec, sample_dataset, "
            "save_dataset; from aimrepro.records.sidecars import write_sidecar, utc_now; "
            "spec = DatasetSpec(link='softmax', T=2, rho=0.5, d=12, alpha=0.3, replicate=0, n_test=20, beta=1.0); "
            "save_dataset(sys.argv[1], sample_dataset(spec, 1)); t = utc_now(); "
            "write_sidecar(sys.argv[1], rule='aim_dataset', params={}, inputs=[], code=[], diagnostics={}, "
            "started=t, ended=t, seed=1)")
    subprocess.run([executable, "-c", code, str(dataset)], check=True)
    corrupt = directory / "corrupt.npz"
    corrupt.write_bytes(dataset.read_bytes()[:300])
    text = directory / "notes.txt"
    text.write_text("not a dataset\n")
    bad = directory / "results" / "probe" / "table.csv"
    bad.write_text("a,b\n1,2\n")
    bad.with_suffix(".json").write_text("[1, 2")
    return {"DATASET": str(dataset), "CORRUPT": str(corrupt), "TEXTFILE": str(text),
            "BADSIDECAR": str(bad)}


#: The verdicts that count as ending clean.
CLEAN = ("computed", "refused", "long run, announced")


def classify(argv: list[str], option: str, status: int | None, stdout: str, stderr: str) -> str:
    """``computed``, ``refused`` or what is wrong with the call's end."""
    if status is None:
        # a legitimate long run: clean if it said so up front and showed its progress
        return "long run, announced" if "estimated ~" in stderr else "timeout"
    if "Traceback" in stderr:
        return "traceback"
    if status == 0:
        try:
            for line in stdout.splitlines():
                if argv[:1] == ["provenance"]:
                    break
                json.loads(line)
        except json.JSONDecodeError:
            return "computed, stdout not JSON"
        return "computed"
    if status == 1 and argv[:1] == ["provenance"] and "--check" in argv and not stderr:
        return "computed"  # a check that found problems: exit 1, its report on stdout
    if status == 2:
        lines = stderr.splitlines()
        if stdout or len(lines) != 1:
            return "refused, not in one line"
        named = option if option.startswith("--") else None
        if named and named not in lines[0] and not _names_an_option(lines[0]):
            return "refused, names no option"
        if not named and not _names_an_option(lines[0]):
            return "refused, names no option"
        return "refused"
    return f"exit {status}: {stderr.strip().splitlines()[-1][:160] if stderr.strip() else ''}"


def _names_an_option(line: str) -> bool:
    return any(token in line for token in ("argument --", "arguments --", "argument FILE",
                                           "argument command", "invalid choice",
                                           "the following arguments are required",
                                           "unrecognized arguments"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--memory-gib", type=float, default=2.0)
    args = parser.parse_args()
    executable = shutil.which("aimrepro", path=str(Path(sys.executable).parent)) or "aimrepro"
    cap = int(args.memory_gib * 2 ** 30)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    with tempfile.TemporaryDirectory() as scratch:
        files = make_files(Path(scratch), sys.executable)
        todo = calls(files)

        def run(call):
            base, option, argv = call
            started = time.monotonic()
            try:
                done = subprocess.run([executable, *argv], capture_output=True, text=True,
                                      timeout=args.timeout, preexec_fn=limit, check=False,
                                      env={**os.environ, "OMP_NUM_THREADS": "1",
                                           "OPENBLAS_NUM_THREADS": "1"})
                status, out, err = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired as expired:
                status, out = None, expired.stdout or ""
                err = expired.stderr.decode() if isinstance(expired.stderr, bytes) else (expired.stderr or "")
            verdict = classify(argv, option, status, out, err)
            shown = [a if len(a) <= 40 else a[:20] + f"...({len(a)} chars)" for a in argv]
            return {"base": base, "option": option, "argv": shown, "status": status, "verdict": verdict,
                    "seconds": round(time.monotonic() - started, 2),
                    "stderr_first_line": err.strip().splitlines()[0][:300] if err.strip() else "",
                    "announced": "estimated ~" in err}

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(run, todo))
    counts: dict[str, int] = {}
    for result in results:
        counts[result["verdict"]] = counts.get(result["verdict"], 0) + 1
    clean = sum(counts.get(verdict, 0) for verdict in CLEAN)
    summary = {"date": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
               "load_average_1min": os.getloadavg()[0], "memory_cap_gib": args.memory_gib,
               "timeout_seconds": args.timeout, "calls": len(results), "clean": clean,
               "counts": dict(sorted(counts.items())), "calls_detail": results}
    out = Path(__file__).with_name("results") / "probe_cli.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{clean} of {len(results)} calls end clean; {json.dumps(summary['counts'])}")
    for result in results:
        if result["verdict"] not in CLEAN:
            print(f"  {result['verdict']}: aimrepro {' '.join(result['argv'])}\n    {result['stderr_first_line']}")


if __name__ == "__main__":
    main()
