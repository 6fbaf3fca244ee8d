"""Glue between a Snakemake job and aimrepro's run records.

Every workflow script runs its body inside :func:`run_job`, which sends
logging, warnings and stderr to the job's log file (``log:`` of the rule),
records the start time, and gives a :class:`Job` whose
:meth:`Job.write_sidecar` writes the provenance sidecar from what the rule
declared: data inputs (every input except the named ``code`` list), code
inputs (the ``code`` list: package modules and the script), wildcards and
params.

Snakemake puts this directory on ``sys.path`` of script jobs, so scripts
import it as ``from _job import run_job``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from aimrepro.claims import write_claims
from aimrepro.provenance import capture_log, config_hash, git_state, utc_now, write_sidecar


class Job:
    """A running Snakemake job: its declared files, start time and logger."""

    def __init__(self, smk: Any, logger: logging.Logger) -> None:
        self.smk = smk
        self.log = logger
        self.started = utc_now()

    @property
    def code_inputs(self) -> list[str]:
        code = getattr(self.smk.input, "code", [])
        return [code] if isinstance(code, str) else list(code)

    @property
    def data_inputs(self) -> list[str]:
        code = set(self.code_inputs)
        return [path for path in self.smk.input if path not in code]

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
    ) -> Path:
        """Write the sidecar of ``outputs`` (call after they are complete)."""
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
        )
        self.log.info("wrote sidecar %s", path)
        return path

    def save_figure(self, fig: Any, title: str) -> None:
        """Save ``fig`` to ``output.pdf`` and ``output.png`` with the provenance metadata embedded."""
        # Imported here, not at the top: matplotlib would add about a second of
        # start-up to every job that draws nothing.
        from aimrepro.plotting import save_figure

        git = git_state()
        save_figure(fig, self.smk.output.pdf, self.smk.output.png, metadata={
            "title": title, "commit": git["commit"], "dirty": git["dirty"],
            "config_hash": config_hash(self.smk.config)})

    def write_claims(self, rows: Sequence[Any], what: str) -> Path:
        """Write the claim rows to ``output.table`` and its sidecar; log how many failed.

        Every ``claims_*`` rule ends here, so each fragment's sidecar carries
        the same diagnostics (``n_claims``, ``n_failed``).
        """
        rows = list(rows)
        write_claims(self.smk.output.table, rows)
        n_failed = sum(not row.passed for row in rows)
        self.log.info("%d %s claims, %d not reproduced", len(rows), what, n_failed)
        return self.write_sidecar(self.smk.output.table,
                                  diagnostics={"n_claims": len(rows), "n_failed": n_failed})


def runs_per_alpha(paths: Sequence[str], curve: Mapping[str, Any], load) -> list[list[Any]]:
    """``load`` of each run of a marker curve, one list of seeds per alpha.

    The rules list the runs alpha-major, seeds inside (common.smk:
    ``_amp_curve``, ``figure2_gd_curves``).
    """
    paths, n_seeds = list(paths), len(curve["seeds"])
    return [[load(p) for p in paths[i * n_seeds:(i + 1) * n_seeds]]
            for i in range(len(curve["alphas"]))]


@contextlib.contextmanager
def run_job(smk: Any) -> Iterator[Job]:
    """Run a script body with its log captured; yields the :class:`Job`."""
    with capture_log(smk.log[0]) as logger:
        job = Job(smk, logger)
        logger.info("rule %s, wildcards %s", smk.rule, dict(smk.wildcards.items()))
        yield job
        logger.info("done")
