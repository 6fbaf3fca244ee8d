# Bayes-optimal theory: state-evolution curves (paper1.md §3-4).
#
# One job = one curve: a channel, T and rho along one grid of one axis.  The
# path names every parameter (common.smk: se_curve_path), e.g.
#   results/quick/se/hardmax_T2_rho0.5/alpha_log_0.03_10_n24.csv
# rho is written with Python's :g; `0` is the rho -> 0 limit (axis alphabar
# only) and `inf` the rho -> infinity limit (softmax only).  The package
# rejects combinations that have no meaning, and the job log says which.

# A non-negative number as fmt_number writes it: 0.5, 1, 0.0001, 1e-05.
NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?"


rule se_curve:
    """State-evolution MMSE curve of one channel, T and rho along one grid."""
    input:
        code=script_code("se_curve.py"),
    output:
        table="results/{scale}/se/{channel}_T{T}_rho{rho}/{axis}_{spacing}_{lo}_{hi}_n{n}.csv",
        sidecar="results/{scale}/se/{channel}_T{T}_rho{rho}/{axis}_{spacing}_{lo}_{hi}_n{n}.json",
    log:
        "results/{scale}/logs/se/{channel}_T{T}_rho{rho}/{axis}_{spacing}_{lo}_{hi}_n{n}.log",
    wildcard_constraints:
        channel="softmax|hardmax|hardmax_paper",
        T="[0-9]+",
        rho=f"{NUMBER}|inf",
        axis="alpha|alphabar|alphaT|alphapr",
        spacing="lin|log",
        lo=NUMBER,
        hi=NUMBER,
        n="[0-9]+",
    params:
        # The softmax SE does not depend on beta (paper1.md §3.3); the paths
        # therefore carry no beta and every curve is computed at beta = 1.
        beta=1.0,
    threads: 1
    resources:
        mem_mb=1000,
        # Wall-time budget in minutes for the Slurm scheduler, generous by
        # design: a softmax point is one scalar root, a hardmax point a
        # quadrature-based fixed point (paper1.md §11: up to seconds each).
        runtime=lambda wildcards: 10
        + int(wildcards.n) // (10 if wildcards.channel == "softmax" else 2),
    script:
        "../scripts/se_curve.py"


rule claims_paper1_theory:
    """Paper 1's theory claims (thresholds, collapse, limits, erratum B1) as measured rows."""
    input:
        code=script_code("claims_paper1_theory.py"),
    output:
        table="results/{scale}/claims/paper1_theory.tsv",
        sidecar="results/{scale}/claims/paper1_theory.json",
    params:
        softmax_rhos=config["paper1"]["figure2"]["left"]["rhos"],
        # the softmax collapse is checked for every T the papers plot (Figure 2 right: T = 2..6)
        collapse_T_values=[3, 4, 5, 6],
        rho_collapse=config["paper1"]["figure2"]["right"]["rho"],
    log:
        "results/{scale}/logs/claims/paper1_theory.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/claims_paper1_theory.py"
