# Paper 1, simulations: AIM datasets, GAMP-RIE runs and gradient descent
# (docs/paper1.md §5, §6, §7).
#
# aim_dataset_<scale>  one teacher + training + test sequences per (link,
#                      beta, T, rho, d, alpha, seed), read by AMP and GD; temp()
#                      at a scale whose preset says so (scales.<scale>.data.temporary)
# amp_run              one GAMP-RIE run of one channel on one dataset
# amp_summary          mean and spread over seeds per alpha of one marker curve
# gd_run               K tied students trained by full-batch Adam on one dataset
# gd_summary           mean and spread over draws per alpha of one T


# One dataset rule per configured scale: whether datasets are temporary is a
# property of the scale in the path.
for _scale in configured_scales(config):

    rule:
        name:
            f"aim_dataset_{_scale}"
        input:
            code=script_code("aim_dataset.py"),
        output:
            **KINDS["aim_dataset"].path.outputs(
                wrap=temp if config["scales"][_scale]["data"]["temporary"] else (lambda p: p),
                scale=_scale),
        log:
            KINDS["aim_dataset"].path.log(scale=_scale),
        wildcard_constraints:
            **KINDS["aim_dataset"].path.constraints(),
        params:
            base_seed=config["seed"],
            test_samples=config["scales"][_scale]["data"]["test_samples"],
        threads: 1
        resources:
            **COSTS.resources(f"aim_dataset_{_scale}"),
        script:
            "../scripts/aim_dataset.py"


rule amp_run:
    """GAMP-RIE of one channel on one dataset: final error, trace, generalisation error."""
    input:
        unpack(job_inputs("amp_run")),
        code=script_code("amp_run.py"),
    output:
        **KINDS["amp_run"].path.outputs(),
    log:
        KINDS["amp_run"].path.log(),
    wildcard_constraints:
        **KINDS["amp_run"].path.constraints(),
    params:
        **cache_key("amp_run"),
        solver=config["paper1"]["amp_solver"],
        backend=job_backend("amp_run", "amp"),
    cache: shared_cache("amp_run")
    threads: 1
    resources:
        **COSTS.resources("amp_run"),
        gpu=BACKEND_GPUS,
    script:
        "../scripts/amp_run.py"


def curve_of(rule, curves):
    """The planned curve (without its runs) whose summary this job of ``rule`` writes."""
    return lambda wildcards: PLAN.without_runs([PLAN.curve_of(
        curves(wildcards.scale), PLAN.job_of(rule, wildcards).path)])[0]


rule amp_summary:
    """Mean and std over seeds per alpha of one AMP curve, with unconverged runs counted apart."""
    input:
        unpack(job_inputs("amp_summary")),
        code=script_code("amp_summary.py"),
    output:
        **KINDS["amp_summary"].path.outputs(),
    log:
        KINDS["amp_summary"].path.log(),
    wildcard_constraints:
        **KINDS["amp_summary"].path.constraints(),
    params:
        curve=curve_of("amp_summary", PLAN.amp_curves),
    threads: 1
    resources:
        **COSTS.resources("amp_summary"),
    script:
        "../scripts/amp_summary.py"


_GD_PLAN = config["paper1"]["figure2"]["right"].get("gd")


rule gd_run:
    """K tied students trained by full-batch Adam on one dataset: errors, losses, curves."""
    input:
        unpack(job_inputs("gd_run")),
        code=script_code("gd_run.py"),
    output:
        **KINDS["gd_run"].path.outputs(),
    log:
        KINDS["gd_run"].path.log(),
    wildcard_constraints:
        **KINDS["gd_run"].path.constraints(),
    params:
        **cache_key("gd_run"),
        optimizer=_GD_PLAN["optimizer"] if _GD_PLAN else {},
        block=lambda wildcards: (PLAN.gd_size(wildcards.scale) or {}).get("block"),
        backend=job_backend("gd_run", "gd"),
    cache: shared_cache("gd_run")
    threads: COSTS.threads("gd_run")
    resources:
        **COSTS.resources("gd_run"),
        gpu=BACKEND_GPUS,
    script:
        "../scripts/gd_run.py"


rule gd_summary:
    """Mean and std over draws per alpha of single and averaged GD (one T), diverged students apart."""
    input:
        unpack(job_inputs("gd_summary")),
        code=script_code("gd_summary.py"),
    output:
        **KINDS["gd_summary"].path.outputs(),
    log:
        KINDS["gd_summary"].path.log(),
    wildcard_constraints:
        **KINDS["gd_summary"].path.constraints(),
    params:
        curve=curve_of("gd_summary", PLAN.figure2_gd_curves),
    threads: 1
    resources:
        **COSTS.resources("gd_summary"),
    script:
        "../scripts/gd_summary.py"


rule tokens_amp_run:
    """GAMP-RIE with the sampled hardmax g_out of T >= 3 tokens on one dataset (docs/paper1.md §3.6)."""
    input:
        unpack(job_inputs("tokens_amp_run")),
        code=script_code("tokens_amp_run.py"),
    output:
        **KINDS["tokens_amp_run"].path.outputs(),
    log:
        KINDS["tokens_amp_run"].path.log(),
    wildcard_constraints:
        **KINDS["tokens_amp_run"].path.constraints(),
    params:
        **cache_key("tokens_amp_run"),
        solver=config["paper1"]["amp_solver"],
    cache: shared_cache("tokens_amp_run")
    threads: 1
    resources:
        **COSTS.resources("tokens_amp_run"),
    script:
        "../scripts/tokens_amp_run.py"


rule two_layer_amp_run:
    """Two-layer GAMP-RIE on a dataset it samples (docs/paper1.md §14.7)."""
    input:
        code=script_code("two_layer_amp_run.py"),
    output:
        **KINDS["two_layer_amp_run"].path.outputs(),
    log:
        KINDS["two_layer_amp_run"].path.log(),
    wildcard_constraints:
        **KINDS["two_layer_amp_run"].path.constraints(),
    params:
        **cache_key("two_layer_amp_run"),
        solver=config["paper1"].get("two_layer", {}).get("amp_solver"),
        test_samples=TWO_LAYER_TEST_SAMPLES,
    cache: shared_cache("two_layer_amp_run")
    threads: 1
    resources:
        **COSTS.resources("two_layer_amp_run"),
    script:
        "../scripts/two_layer_amp_run.py"


rule two_layer_gd_run:
    """K two-layer tied students trained by full-batch Adam on the dataset the AMP runs sample (§14.8)."""
    input:
        code=script_code("two_layer_gd_run.py"),
    output:
        **KINDS["two_layer_gd_run"].path.outputs(),
    log:
        KINDS["two_layer_gd_run"].path.log(),
    wildcard_constraints:
        **KINDS["two_layer_gd_run"].path.constraints(),
    params:
        **cache_key("two_layer_gd_run"),
        lr=config["paper1"].get("two_layer", {}).get("gd", {}).get("lr"),
        init_scale=config["paper1"].get("two_layer", {}).get("gd", {}).get("init_scale", 1.0),
        test_samples=TWO_LAYER_TEST_SAMPLES,
    cache: shared_cache("two_layer_gd_run")
    threads: 1
    resources:
        **COSTS.resources("two_layer_gd_run"),
    script:
        "../scripts/two_layer_gd_run.py"
