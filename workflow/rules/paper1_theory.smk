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
        **KINDS["se_curve"].path.outputs(),
    log:
        KINDS["se_curve"].path.log(),
    wildcard_constraints:
        **KINDS["se_curve"].path.constraints(),
    params:
        # The softmax SE does not depend on beta (docs/paper1.md §3.3): the paths
        # carry no beta and every curve is computed at beta = 1.
        beta=1.0,
    threads: 1
    resources:
        **COSTS.resources("se_curve"),
    script:
        "../scripts/se_curve.py"


# Beyond the paper: hardmax attention with T >= 3 tokens (docs/paper1.md §3.6).
# One Fisher table F_T(m) per T (a seeded Monte-Carlo estimate, e.g.
#   results/quick/fisher/hardmax_T3_x0.02_k17_nref50000_deg6_seed20250602.csv)
# serves every (rho, alpha): each SE curve is a root search through its fit.


rule fisher_table:
    """Fisher table F_T(m) of hardmax attention with T tokens, its fit in the sidecar."""
    input:
        code=script_code("fisher_table.py"),
    output:
        **KINDS["fisher_table"].path.outputs(),
    log:
        KINDS["fisher_table"].path.log(),
    wildcard_constraints:
        **KINDS["fisher_table"].path.constraints(),
    params:
        first_block=config["paper1"].get("hardmax_tokens", {}).get("table", {}).get("first_block", 2),
    threads: 1
    resources:
        **COSTS.resources("fisher_table"),
    script:
        "../scripts/fisher_table.py"


rule tokens_se_curve:
    """SE curve (MMSE with its standard error) of hardmax attention with T tokens through its Fisher table."""
    input:
        unpack(job_inputs("tokens_se_curve")),
        code=script_code("tokens_se_curve.py"),
    output:
        **KINDS["tokens_se_curve"].path.outputs(),
    log:
        KINDS["tokens_se_curve"].path.log(),
    wildcard_constraints:
        **KINDS["tokens_se_curve"].path.constraints(),
    params:
        degree=config["paper1"].get("hardmax_tokens", {}).get("table", {}).get("degree"),
    threads: 1
    resources:
        **COSTS.resources("tokens_se_curve"),
    script:
        "../scripts/tokens_se_curve.py"


rule two_layer_table:
    """Two-layer Fisher table of one skip c (docs/paper1.md §14.4, §14.6); its cost and quadrature check in the sidecar."""
    input:
        code=script_code("two_layer_table.py"),
    output:
        **KINDS["two_layer_table"].path.outputs(),
    log:
        KINDS["two_layer_table"].path.log(),
    wildcard_constraints:
        **KINDS["two_layer_table"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("two_layer_table"),
    script:
        "../scripts/two_layer_table.py"


rule two_layer_se_curve:
    """Two-layer SE (MMSE1, MMSE2 with standard errors, the cross term) of one skip c through its table."""
    input:
        unpack(job_inputs("two_layer_se_curve")),
        code=script_code("two_layer_se_curve.py"),
    output:
        **KINDS["two_layer_se_curve"].path.outputs(),
    log:
        KINDS["two_layer_se_curve"].path.log(),
    wildcard_constraints:
        **KINDS["two_layer_se_curve"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("two_layer_se_curve"),
    script:
        "../scripts/two_layer_se_curve.py"


rule se_generalisation:
    """Bayes-optimal and plug-in generalisation errors of one channel, T and rho along one grid."""
    input:
        code=script_code("se_generalisation.py"),
    output:
        **KINDS["se_generalisation"].path.outputs(),
    log:
        KINDS["se_generalisation"].path.log(),
    wildcard_constraints:
        **KINDS["se_generalisation"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("se_generalisation"),
    script:
        "../scripts/se_generalisation.py"
