# Claims table: merges the claim fragments listed in common.smk
# (CLAIM_TOPICS) into results/{scale}/claims.md.

# Merging a few small TSV files: not worth a cluster job.
localrules:
    claims,


rule claims:
    """Merge the claim fragments into one markdown table with pass/FAIL per claim."""
    input:
        fragments=lambda wildcards: claim_fragments(wildcards.scale),
        code=script_code("claims.py"),
    output:
        table=report(
            "results/{scale}/claims.md",
            caption="../report/claims.rst",
            category="Claims",
        ),
        sidecar="results/{scale}/claims.json",
    params:
        # Listed topics whose rule does not exist yet; shown in claims.md.
        pending=lambda wildcards: pending_claim_topics(),
    log:
        "results/{scale}/logs/claims.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/claims.py"
