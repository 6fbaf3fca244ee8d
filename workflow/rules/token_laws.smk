# Beyond both papers: tokens that are not Gaussian (docs/paper1.md §13, docs/paper2.md §10).
#
# token_law_amp       GAMP-RIE on the replicates of one trend point, law and d (datasets in memory)
# token_law_gd        K students of averaged GD on the replicates of one law and d (softmax)
# token_law_theory    the Gaussian SE, the SE with the law's diagonal variance and its finite-d shifts
# token_law_se_curve  the SE of one law along an alpha grid (the figure's lines)
# token_law_sgd       paper 2: SGD, the Gaussian flow and the law's flow per replicate, one law and d


rule token_law_amp:
    """GAMP-RIE on n replicates of one token law at one point and d: one row per replicate."""
    input:
        code=script_code("token_law_amp.py"),
    output:
        **KINDS["token_law_amp"].path.outputs(),
    log:
        KINDS["token_law_amp"].path.log(),
    wildcard_constraints:
        **KINDS["token_law_amp"].path.constraints(),
    params:
        **cache_key("token_law_amp"),
        base_seed=config["seed"],
        solver=config["paper1"]["amp_solver"],
    cache: shared_cache("token_law_amp")
    threads: 1
    resources:
        **COSTS.resources("token_law_amp"),
    script:
        "../scripts/token_law_amp.py"


rule token_law_gd:
    """K students of full-batch Adam on n replicates of one token law and d: one row per replicate."""
    input:
        code=script_code("token_law_gd.py"),
    output:
        **KINDS["token_law_gd"].path.outputs(),
    log:
        KINDS["token_law_gd"].path.log(),
    wildcard_constraints:
        **KINDS["token_law_gd"].path.constraints(),
    params:
        **cache_key("token_law_gd"),
        base_seed=config["seed"],
        optimizer=config["paper1"]["figure2"]["right"].get("gd", {}).get("optimizer", {}),
    cache: shared_cache("token_law_gd")
    threads: 1
    resources:
        **COSTS.resources("token_law_gd"),
    script:
        "../scripts/token_law_gd.py"


rule token_law_theory:
    """The SE of one hardmax point for one token law: d -> infinity and the finite-d shifts (docs/paper1.md §13)."""
    input:
        code=script_code("token_law_theory.py"),
    output:
        **KINDS["token_law_theory"].path.outputs(),
    log:
        KINDS["token_law_theory"].path.log(),
    wildcard_constraints:
        **KINDS["token_law_theory"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("token_law_theory"),
    script:
        "../scripts/token_law_theory.py"


rule token_law_se_curve:
    """The SE with one token law's diagonal variance along an alpha grid (docs/paper1.md §13.2)."""
    input:
        code=script_code("token_law_se_curve.py"),
    output:
        **KINDS["token_law_se_curve"].path.outputs(),
    log:
        KINDS["token_law_se_curve"].path.log(),
    wildcard_constraints:
        **KINDS["token_law_se_curve"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("token_law_se_curve"),
    script:
        "../scripts/token_law_se_curve.py"


rule token_law_sgd:
    """Paper 2 on one token law: SGD, the Gaussian flow and the law's flow of n replicates (docs/paper2.md §10)."""
    input:
        code=script_code("token_law_sgd.py"),
    output:
        **KINDS["token_law_sgd"].path.outputs(),
    log:
        KINDS["token_law_sgd"].path.log(),
    wildcard_constraints:
        **KINDS["token_law_sgd"].path.constraints(),
    params:
        **cache_key("token_law_sgd"),
        threshold=P2.get("threshold"),
    cache: shared_cache("token_law_sgd")
    threads: 1
    resources:
        **COSTS.resources("token_law_sgd"),
    script:
        "../scripts/token_law_sgd.py"
