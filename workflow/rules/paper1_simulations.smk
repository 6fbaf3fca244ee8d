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


def dataset_of(wildcards):
    """The dataset a run reads (paths.dataset_of: both hardmax channels read the hardmax data)."""
    return paths.dataset_of(dict(wildcards.items()))


# One dataset rule per configured scale: whether datasets are temporary is a
# property of the scale in the path.
for _scale in configured_scales(config):

    rule:
        name:
            f"aim_dataset_{_scale}"
        input:
            code=script_code("aim_dataset.py"),
        output:
            **paths.DATASET.outputs(
                wrap=temp if config["scales"][_scale]["data"]["temporary"] else (lambda p: p),
                scale=_scale),
        log:
            paths.DATASET.log(scale=_scale),
        wildcard_constraints:
            **paths.DATASET.constraints(),
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
        data=dataset_of,
        code=script_code("amp_run.py"),
    output:
        **paths.AMP_RUN.outputs(),
    log:
        paths.AMP_RUN.log(),
    wildcard_constraints:
        **paths.AMP_RUN.constraints(),
    params:
        wildcards=path_values,
        solver=config["paper1"]["amp_solver"],
        backend=BACKEND["amp"],
    cache: SHARED_CACHE
    threads: 1
    resources:
        **COSTS.resources("amp_run"),
        gpu=BACKEND_GPUS,
    script:
        "../scripts/amp_run.py"


def amp_curve_of(wildcards):
    """The planned curve whose summary this job writes."""
    return PLAN.curve_of(PLAN.amp_curves(wildcards.scale), paths.AMP_SUMMARY.format(
        wildcards.scale, channel=wildcards.channel, T=wildcards.T, rho=wildcards.rho,
        d=wildcards.d, n=wildcards.n))


rule amp_summary:
    """Mean and std over seeds per alpha of one AMP curve, with unconverged runs counted apart."""
    input:
        runs=lambda wildcards: [p for per_alpha in amp_curve_of(wildcards)["runs"] for p in per_alpha],
        code=script_code("amp_summary.py"),
    output:
        **paths.AMP_SUMMARY.outputs(),
    log:
        paths.AMP_SUMMARY.log(),
    wildcard_constraints:
        **paths.AMP_SUMMARY.constraints(),
    params:
        curve=lambda wildcards: Plan.without_runs([amp_curve_of(wildcards)])[0],
    threads: 1
    resources:
        **COSTS.resources("amp_summary"),
    script:
        "../scripts/amp_summary.py"


_GD_PLAN = config["paper1"]["figure2"]["right"].get("gd")


rule gd_run:
    """K tied students trained by full-batch Adam on one dataset: errors, losses, curves."""
    input:
        data=dataset_of,
        code=script_code("gd_run.py"),
    output:
        **paths.GD_RUN.outputs(),
    log:
        paths.GD_RUN.log(),
    wildcard_constraints:
        **paths.GD_RUN.constraints(),
    params:
        wildcards=path_values,
        optimizer=_GD_PLAN["optimizer"] if _GD_PLAN else {},
        block=lambda wildcards: (PLAN.gd_size(wildcards.scale) or {}).get("block"),
        backend=BACKEND["gd"],
    cache: SHARED_CACHE
    threads: COSTS.threads("gd_run")
    resources:
        **COSTS.resources("gd_run"),
        gpu=BACKEND_GPUS,
    script:
        "../scripts/gd_run.py"


def gd_curve_of(wildcards):
    """The planned curve whose summary this job writes."""
    return PLAN.curve_of(PLAN.figure2_gd_curves(wildcards.scale), paths.GD_SUMMARY.format(
        wildcards.scale, link=wildcards.link, T=wildcards.T, rho=wildcards.rho, d=wildcards.d,
        inits=wildcards.inits, n=wildcards.n))


rule gd_summary:
    """Mean and std over draws per alpha of single and averaged GD (one T), diverged students apart."""
    input:
        runs=lambda wildcards: [p for per_alpha in gd_curve_of(wildcards)["runs"] for p in per_alpha],
        code=script_code("gd_summary.py"),
    output:
        **paths.GD_SUMMARY.outputs(),
    log:
        paths.GD_SUMMARY.log(),
    wildcard_constraints:
        **paths.GD_SUMMARY.constraints(),
    params:
        curve=lambda wildcards: Plan.without_runs([gd_curve_of(wildcards)])[0],
    threads: 1
    resources:
        **COSTS.resources("gd_summary"),
    script:
        "../scripts/gd_summary.py"


rule tokens_amp_run:
    """GAMP-RIE with the sampled hardmax g_out of T >= 3 tokens on one dataset (docs/paper1.md §3.6)."""
    input:
        data=lambda wildcards: paths.DATASET.format(
            wildcards.scale, link="hardmax", T=wildcards.T, rho=wildcards.rho, d=wildcards.d,
            alpha=wildcards.alpha, seed=wildcards.seed),
        code=script_code("tokens_amp_run.py"),
    output:
        **paths.TOKENS_AMP_RUN.outputs(),
    log:
        paths.TOKENS_AMP_RUN.log(),
    wildcard_constraints:
        **paths.TOKENS_AMP_RUN.constraints(),
    params:
        wildcards=path_values,
        solver=config["paper1"]["amp_solver"],
    cache: SHARED_CACHE
    threads: 1
    resources:
        **COSTS.resources("tokens_amp_run"),
    script:
        "../scripts/tokens_amp_run.py"
