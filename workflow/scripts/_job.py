"""Glue between a Snakemake job and aimrepro's run records.

Every workflow script runs its body inside :func:`run_job`, which

* checks every data input against its sidecar before the body runs, and
  stops the job with one line naming a damaged input and the remedy
  (``aimrepro.records.sidecars.verify_input``); an input made in another
  working directory and reused here (Snakemake's shared cache) must also be
  described under its path and made by the code files this directory has,
  and the sidecar records where it was made (``reused_inputs``);
* sends logging, warnings and stderr to the job's log file (``log:`` of
  the rule), records the start time, and removes the temporary files a
  killed earlier attempt at its outputs left behind;
* gives a :class:`Job` whose :meth:`Job.write_sidecar` writes the
  provenance sidecar from what the rule declared: data inputs (every input
  except the named ``code`` list, with the hashes verified above), code
  inputs (the ``code`` list: the script's import closure,
  workflow/lib/aimrepro_workflow/codeinputs.py), wildcards and params;
* ends a job that meets a fault of the machine (a full disk or quota, a
  read-only file system, a refused permission) with one line naming the file
  and the remedy (``aimrepro.preflight.machine_fault``); its outputs are
  written under temporary names, so nothing half-written is left;
* after the body, fails the job if it ran an ``aimrepro`` module or a
  helper of this directory that the rule does not declare as code, so a
  lazy import cannot make results silently stale.

Imports here are the ones every script needs; what only some scripts need
(matplotlib and the figure style, the claims writer) is imported inside the
method that uses it, so it stays out of the other rules' code inputs.

Snakemake puts this directory on ``sys.path`` of script jobs, so scripts
import it as ``from _job import run_job``.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from aimrepro.records.sidecars import (DamagedInputError, config_hash, git_state, reused_input,
                                       utc_now, verify_input, write_sidecar)
from aimrepro.records.logs import capture_log
from aimrepro.records.files import remove_stale_temporaries
from aimrepro.preflight import machine_fault

HELPER_DIR = Path(__file__).resolve().parent


class Job:
    """A running Snakemake job: its declared files, start time and logger."""

    def __init__(self, smk: Any, logger: logging.Logger, input_hashes: Mapping[str, str],
                 reused_inputs: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.smk = smk
        self.log = logger
        self.started = utc_now()
        self.input_hashes = dict(input_hashes)
        self.reused_inputs = dict(reused_inputs or {})

    @property
    def code_inputs(self) -> list[str]:
        code = getattr(self.smk.input, "code", [])
        return [code] if isinstance(code, str) else list(code)

    @property
    def data_inputs(self) -> list[str]:
        return data_inputs(self.smk)

    def params(self) -> dict[str, Any]:
        """Wildcards and rule params of the job, as recorded in the sidecar."""
        return {
            "wildcards": dict(self.smk.wildcards.items()),
            **dict(self.smk.params.items()),
        }

    def write_sidecar(
        self,
        outputs: str | Sequence[str],
        *,
        diagnostics: Mapping[str, Any],
        extra_params: Mapping[str, Any] | None = None,
        seed: int | None = None,
        temporary: bool = False,
    ) -> Path:
        """Write the sidecar of ``outputs`` (call after they are complete; ``temporary``: Snakemake
        deletes them once used, so a lineage check counts them deleted, not missing)."""
        params = self.params()
        if extra_params:
            params.update(extra_params)
        path = write_sidecar(
            outputs,
            rule=self.smk.rule,
            params=params,
            inputs=self.data_inputs,
            code=self.code_inputs,
            diagnostics=diagnostics,
            started=self.started,
            ended=utc_now(),
            seed=seed,
            config_hash=config_hash(self.smk.config),
            known_hashes=self.input_hashes,
            temporary=temporary,
            reused_inputs=self.reused_inputs,
        )
        self.log.info("wrote sidecar %s", path)
        return path

    def save_figure(self, fig: Any, title: str) -> None:
        """Save ``fig`` to ``output.pdf`` and ``output.png`` with the provenance metadata embedded."""
        # Imported here, not at the top: matplotlib would add about a second of
        # start-up to every job that draws nothing.
        from aimrepro.figures.style import save_figure

        git = git_state()
        save_figure(fig, self.smk.output.pdf, self.smk.output.png, metadata={
            "title": title, "commit": git["commit"], "dirty": git["dirty"],
            "config_hash": config_hash(self.smk.config)})

    def write_claims(self, rows: Sequence[Any], what: str) -> Path:
        """Write the claim rows to ``output.table`` and its sidecar; log the verdicts.

        Every ``claims_*`` rule ends here, so each fragment's sidecar carries
        the same diagnostics (``n_claims``, ``verdicts``: the count of each).
        """
        from aimrepro.claims.table import verdict_counts, write_claims

        rows = list(rows)
        write_claims(self.smk.output.table, rows)
        counts = verdict_counts(rows)
        self.log.info("%d %s claims: %s", len(rows), what, counts)
        return self.write_sidecar(self.smk.output.table,
                                  diagnostics={"n_claims": len(rows), "verdicts": counts})


def runs_per_alpha(paths: Sequence[str], curve: Mapping[str, Any], load) -> list[list[Any]]:
    """``load`` of each run of a marker curve, one list of seeds per alpha.

    The rules list the runs alpha-major, seeds inside (workflow/lib, plans.py:
    ``_amp_curve``, ``figure2_gd_curves``).
    """
    paths, n_seeds = list(paths), len(curve["seeds"])
    return [[load(p) for p in paths[i * n_seeds:(i + 1) * n_seeds]]
            for i in range(len(curve["alphas"]))]


def data_inputs(smk: Any) -> list[str]:
    """The job's inputs except its named ``code`` list."""
    code = getattr(smk.input, "code", [])
    code = {code} if isinstance(code, str) else set(code)
    return [path for path in smk.input if path not in code]


def verified_input_hashes(smk: Any) -> dict[str, str]:
    """sha256 of every data input, each checked against its sidecar.

    Exits the job with one line (to stderr, where Snakemake shows it, and to
    the log) if an input no longer matches its sidecar.
    """
    try:
        return {path: verify_input(path) for path in data_inputs(smk)}
    except DamagedInputError as err:
        message = f"aimrepro: rule {smk.rule}: {err}"
        Path(smk.log[0]).parent.mkdir(parents=True, exist_ok=True)
        Path(smk.log[0]).write_text(message + "\n", encoding="utf-8")
        sys.exit(message)


def undeclared_code(declared: Sequence[str]) -> list[str]:
    """Modules this process loaded from aimrepro or from this directory that ``declared`` lacks.

    ``declared`` holds paths relative to the working directory
    (``src/aimrepro/paper1/amp.py``, ``workflow/scripts/_job.py``).  They are
    compared by their place inside the package or by their name here, not
    by absolute path: tests run the workflow in a copy of the repository
    while importing the installed package.
    """
    wanted = set()
    for path in map(Path, declared):
        parts = path.parts
        wanted.add("/".join(parts[1:]) if parts[0] == "src" else path.name)
    loaded = set()
    for name, module in list(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if source is None:
            continue
        source = Path(source)
        if name == "aimrepro" or name.startswith("aimrepro."):
            stem = "/__init__.py" if source.name == "__init__.py" else ".py"
            loaded.add(name.replace(".", "/") + stem)
        elif source.resolve().parent == HELPER_DIR:
            loaded.add(source.name)
    return sorted(loaded - wanted)


@contextlib.contextmanager
def run_job(smk: Any) -> Iterator[Job]:
    """Run a script body with verified inputs and its log captured; yields the :class:`Job`."""
    hashes = verified_input_hashes(smk)
    reused = {path: where for path in hashes if (where := reused_input(path)) is not None}
    try:
        with capture_log(smk.log[0]) as logger:
            job = Job(smk, logger, hashes, reused)
            logger.info("rule %s, wildcards %s", smk.rule, dict(smk.wildcards.items()))
            for path, where in reused.items():
                logger.info("input %s was made on %s in %s (cache entry %s); verified against its "
                            "sidecar and this directory's code", path, where["host"], where["workdir"],
                            where["cache_entry"])
            for output in smk.output:
                for stale in remove_stale_temporaries(output):
                    logger.info("removed %s, left by an interrupted attempt", stale)
            yield job
            missing = undeclared_code(job.code_inputs)
            if missing:
                raise RuntimeError(
                    f"rule {smk.rule} ran code it does not declare as input: {', '.join(missing)}; "
                    "import it at module level in the rule's script (workflow/lib/aimrepro_workflow/codeinputs.py)")
            logger.info("done")
    except OSError as err:
        # A full disk or a read-only mount is the machine's fault, not a bug: one line, no
        # traceback on the terminal (the log keeps it when the log itself could be written).
        line = machine_fault(err)
        if line is None:
            raise
        sys.exit(f"aimrepro: rule {smk.rule}: {line}")
