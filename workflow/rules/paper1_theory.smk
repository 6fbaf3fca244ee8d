# Paper 1, Bayes-optimal theory: state-evolution curves (docs/paper1.md §3-4).
#
# One job = one curve: a channel, T and rho along one grid of one axis, e.g.
#   results/quick/se/hardmax_T2_rho0.5/alpha_log_0.03_10_n24.csv
# rho `0` is the rho -> 0 limit (axis alphabar only) and `inf` the rho ->
# infinity limit (softmax only); the package rejects combinations that have
# no meaning, and the job log says which.


rule se_curve:
    """State-evolution MMSE curve of one channel, T and rho along one grid."""
    input:
        code=script_code("se_curve.py"),
    output:
        **paths.SE_CURVE.outputs(),
    log:
        paths.SE_CURVE.log(),
    wildcard_constraints:
        **paths.SE_CURVE.constraints(),
    params:
        # The softmax SE does not depend on beta (docs/paper1.md §3.3): the paths
        # carry no beta and every curve is computed at beta = 1.
        beta=1.0,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=budgets.se_runtime,
    script:
        "../scripts/se_curve.py"


rule se_generalisation:
    """Bayes-optimal and plug-in generalisation errors of one channel, T and rho along one grid."""
    input:
        code=script_code("se_generalisation.py"),
    output:
        **paths.GEN_CURVE.outputs(),
    log:
        paths.GEN_CURVE.log(),
    wildcard_constraints:
        **paths.GEN_CURVE.constraints(),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=budgets.se_runtime,
    script:
        "../scripts/se_generalisation.py"
