"""Rule claims: merge the claim fragments into results/{scale}/claims.md + sidecar."""

from _job import run_job

from aimrepro.claims.table import merge_claims, render_claims_markdown, verdict_counts
from aimrepro.records.files import atomic_write
from aimrepro.records.sidecars import git_state


def main(smk) -> None:
    with run_job(smk) as job:
        fragments = list(smk.input.fragments)
        rows = merge_claims(fragments)
        git = git_state()
        text = render_claims_markdown(rows, scale=smk.wildcards.scale, commit=git["commit"],
                                      dirty=git["dirty"], not_measured=dict(smk.params.not_measured))
        with atomic_write(smk.output.table) as handle:
            handle.write(text)
        counts = verdict_counts(rows)
        job.log.info("%d claims from %d fragments: %s", len(rows), len(fragments), counts)
        job.write_sidecar(smk.output.table, diagnostics={
            "n_claims": len(rows), "verdicts": counts, "n_failed": counts["FAIL"],
            "not_measured": dict(smk.params.not_measured),
        })


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
