# The claims table: one rule per topic writes results/{scale}/claims/<topic>.tsv
# (claims_<topic>, module aimrepro.claims.<topic>); rule `claims` merges the
# topics the plan measures at the scale into results/{scale}/claims.md.


rule claims_paper1_theory:
    """Paper 1's theory claims (thresholds, collapse, limits, erratum B1) as measured rows."""
    input:
        code=script_code("claims_paper1_theory.py"),
    output:
        **paths.CLAIM_FRAGMENT.outputs(topic="paper1_theory"),
    params:
        softmax_rhos=config["paper1"]["figure2"]["left"]["rhos"],
        # the softmax collapse is checked for every T the papers plot (Figure 2 right: T = 2..6)
        collapse_T_values=[3, 4, 5, 6],
        rho_collapse=config["paper1"]["figure2"]["right"]["rho"],
    log:
        paths.CLAIM_FRAGMENT.log(topic="paper1_theory"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_theory"),
    script:
        "../scripts/claims_paper1_theory.py"


rule claims_paper1_amp:
    """Paper 1's AMP claims (AMP vs SE, softmax recovery, erratum B1) as measured rows."""
    input:
        summaries=lambda wildcards: column(PLAN.amp_curves(wildcards.scale), "path"),
        trend_runs=lambda wildcards: PLAN.trend_runs(wildcards.scale, "amp"),
        code=script_code("claims_paper1_amp.py"),
    output:
        **paths.CLAIM_FRAGMENT.outputs(topic="paper1_amp"),
    params:
        curves=lambda wildcards: Plan.without_runs(PLAN.amp_curves(wildcards.scale)),
        trends=lambda wildcards: PLAN.amp_trends(wildcards.scale),
    log:
        paths.CLAIM_FRAGMENT.log(topic="paper1_amp"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_amp"),
    script:
        "../scripts/claims_paper1_amp.py"


rule claims_paper1_gd:
    """Paper 1's GD claims (averaged GD vs SE, single GD ~ 2 MMSE, zero-error onset) as measured rows."""
    input:
        summaries=lambda wildcards: column(PLAN.figure2_gd_curves(wildcards.scale), "path"),
        trend_runs=lambda wildcards: PLAN.trend_runs(wildcards.scale, "gd"),
        trend_amp_runs=lambda wildcards: PLAN.trend_runs(wildcards.scale, "gd_amp"),
        code=script_code("claims_paper1_gd.py"),
    output:
        **paths.CLAIM_FRAGMENT.outputs(topic="paper1_gd"),
    params:
        curves=lambda wildcards: Plan.without_runs(PLAN.figure2_gd_curves(wildcards.scale)),
        trend=lambda wildcards: PLAN.gd_trend(wildcards.scale),
    log:
        paths.CLAIM_FRAGMENT.log(topic="paper1_gd"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_gd"),
    script:
        "../scripts/claims_paper1_gd.py"


rule claims_paper1_hardmax_tokens:
    """Beyond paper 1: hardmax T >= 3 (T = 2 reproduction, unique fixed point, order in T) as measured rows."""
    input:
        curves=lambda wildcards: column(PLAN.tokens_curves(wildcards.scale), "path"),
        exact=lambda wildcards: column(PLAN.tokens_exact_curves(wildcards.scale), "path"),
        tables=lambda wildcards: column(PLAN.fisher_tables(wildcards.scale), "path"),
        code=script_code("claims_paper1_hardmax_tokens.py"),
    output:
        **paths.CLAIM_FRAGMENT.outputs(topic="paper1_hardmax_tokens"),
    params:
        curves=lambda wildcards: PLAN.tokens_curves(wildcards.scale),
        exact=lambda wildcards: PLAN.tokens_exact_curves(wildcards.scale),
        tables=lambda wildcards: PLAN.fisher_tables(wildcards.scale),
        rhos=config["paper1"]["figure1"]["left"]["rhos"],
        uniqueness_alphas=config["paper1"].get("hardmax_tokens", {}).get("uniqueness_alphas"),
    log:
        paths.CLAIM_FRAGMENT.log(topic="paper1_hardmax_tokens"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_hardmax_tokens"),
    script:
        "../scripts/claims_paper1_hardmax_tokens.py"


rule claims_paper1_hardmax_tokens_amp:
    """Beyond paper 1: GAMP-RIE with the sampled T >= 3 hardmax g_out against the tabulated SE, trend in d."""
    input:
        runs=lambda wildcards: column(PLAN.tokens_amp_runs(wildcards.scale), "path"),
        table=lambda wildcards: PLAN.tokens_amp_table(wildcards.scale)["path"],
        code=script_code("claims_paper1_hardmax_tokens_amp.py"),
    output:
        **paths.CLAIM_FRAGMENT.outputs(topic="paper1_hardmax_tokens_amp"),
    params:
        runs=lambda wildcards: PLAN.tokens_amp_runs(wildcards.scale),
        table=lambda wildcards: PLAN.tokens_amp_table(wildcards.scale),
    log:
        paths.CLAIM_FRAGMENT.log(topic="paper1_hardmax_tokens_amp"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_hardmax_tokens_amp"),
    script:
        "../scripts/claims_paper1_hardmax_tokens_amp.py"


rule claims_paper2_dynamics:
    """Paper 2's landscape and weak-recovery claims as measured rows (docs/paper2.md §3, §5)."""
    input:
        theorem1=lambda wildcards: PLAN.theorem1_paths(wildcards.scale),
        figure2=lambda wildcards: column(PLAN.figure2_runs(wildcards.scale), "path"),
        figureS3=lambda wildcards: column(PLAN.figureS3_runs(wildcards.scale), "path"),
        figureS3_flows=lambda wildcards: column(PLAN.figureS3_runs(wildcards.scale), "flow_path"),
        follow=lambda wildcards: column(PLAN.figureS3_follow_runs(wildcards.scale), "path"),
        follow_flows=lambda wildcards: column(PLAN.figureS3_follow_runs(wildcards.scale),
                                              "flow_path"),
        figure2_flows=lambda wildcards: column(PLAN.figure2_runs(wildcards.scale), "flow_path"),
        figure2_ensembles=lambda wildcards: column(PLAN.figure2_flow_ensembles(wildcards.scale),
                                                   "path"),
        s3_ensembles=lambda wildcards: column(PLAN.figureS3_flow_ensembles(wildcards.scale),
                                              "path"),
        velocity=lambda wildcards: column(PLAN.tied_velocity_tables(wildcards.scale), "path"),
        strong=lambda wildcards: column(PLAN.strong_recovery_ensembles(wildcards.scale), "path"),
        strong_sgd=lambda wildcards: column(PLAN.strong_recovery_sgd_runs(wildcards.scale), "path"),
        code=script_code("claims_paper2_dynamics.py"),
    output:
        **paths.CLAIM_FRAGMENT.outputs(topic="paper2_dynamics"),
    params:
        figure2=lambda wildcards: PLAN.figure2_runs(wildcards.scale),
        figureS3=lambda wildcards: PLAN.figureS3_runs(wildcards.scale),
        follow=lambda wildcards: PLAN.figureS3_follow_runs(wildcards.scale),
        figure2_ensembles=lambda wildcards: PLAN.figure2_flow_ensembles(wildcards.scale),
        s3_ensembles=lambda wildcards: PLAN.figureS3_flow_ensembles(wildcards.scale),
        velocity=lambda wildcards: PLAN.tied_velocity_tables(wildcards.scale),
        strong=lambda wildcards: PLAN.strong_recovery_ensembles(wildcards.scale),
        strong_sgd=lambda wildcards: PLAN.strong_recovery_sgd_runs(wildcards.scale),
        theorem1_links=P2.get("figureS1", {}).get("links"),
        threshold=P2.get("threshold"),
        eta=P2.get("figureS3", {}).get("eta"),
    log:
        paths.CLAIM_FRAGMENT.log(topic="paper2_dynamics"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper2_dynamics"),
    script:
        "../scripts/claims_paper2_dynamics.py"


rule claims_paper2_moments:
    """Paper 2's claims on the moment hierarchy and its truncations as measured rows (docs/paper2.md §4)."""
    input:
        s6=lambda wildcards: column(PLAN.figureS6_tables(wildcards.scale), "path"),
        figure1=lambda wildcards: [run[key] for run in PLAN.figure1_moment_runs(wildcards.scale)
                                   for key in ("path", "flow_path", "truncations_path")],
        figure4=lambda wildcards: [run[key] for run in PLAN.figure4_moment_runs(wildcards.scale)
                                   for key in ("path", "exact_path", "truncations_path")],
        radius=lambda wildcards: PLAN.figure4_radius(wildcards.scale)["path"],
        code=script_code("claims_paper2_moments.py"),
    output:
        **paths.CLAIM_FRAGMENT.outputs(topic="paper2_moments"),
    params:
        s6=lambda wildcards: PLAN.figureS6_tables(wildcards.scale),
        figure1=lambda wildcards: PLAN.figure1_moment_runs(wildcards.scale),
        figure4=lambda wildcards: PLAN.figure4_moment_runs(wildcards.scale),
        short_times={figure: P2.get(figure, {}).get("short_time")
                     for figure in ("figure1", "figure4", "figureS6")},
        matrix_scale=P2.get("figureS6", {}).get("matrix_scale"),
        orders={figure: P2.get(figure, {}).get("orders") for figure in ("figure1", "figure4")},
    log:
        paths.CLAIM_FRAGMENT.log(topic="paper2_moments"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper2_moments"),
    script:
        "../scripts/claims_paper2_moments.py"


rule claims_paper2_untied:
    """Paper 2's untied claims: the two collapses, the dichotomy in d, the sign, strong recovery (docs/paper2.md §5.3-5.4)."""
    input:
        figure3=lambda wildcards: column(PLAN.figure3_untied_runs(wildcards.scale), "path"),
        figureS4=lambda wildcards: column(PLAN.figureS4_runs(wildcards.scale), "path"),
        figureS4_flows=lambda wildcards: column(PLAN.figureS4_runs(wildcards.scale), "flow_path"),
        figureS4_limits=lambda wildcards: column(PLAN.figureS4_limit_runs(wildcards.scale),
                                                 "limit_path"),
        figureS5=lambda wildcards: column(PLAN.figureS5_runs(wildcards.scale), "path"),
        figureS5_flows=lambda wildcards: column(PLAN.figureS5_runs(wildcards.scale), "flow_path"),
        fast_states=lambda wildcards: PLAN.fast_states_path(wildcards.scale),
        velocity=lambda wildcards: column(PLAN.untied_velocity_tables(wildcards.scale), "path"),
        plateau=lambda wildcards: column(PLAN.figure3_plateau_runs(wildcards.scale), "path"),
        truncations=lambda wildcards: column(PLAN.untied_truncation_tables(wildcards.scale),
                                             "path"),
        truncation_sgd=lambda wildcards: column(PLAN.untied_truncation_sgd_runs(wildcards.scale),
                                                "path"),
        decay=lambda wildcards: column(PLAN.untied_decay_tables(wildcards.scale), "path"),
        decay_sgd=lambda wildcards: column(PLAN.untied_decay_sgd_runs(wildcards.scale), "path"),
        code=script_code("claims_paper2_untied.py"),
    output:
        **paths.CLAIM_FRAGMENT.outputs(topic="paper2_untied"),
    params:
        figure3=lambda wildcards: PLAN.figure3_untied_runs(wildcards.scale),
        figureS4=lambda wildcards: PLAN.figureS4_runs(wildcards.scale),
        figureS4_limits=lambda wildcards: PLAN.figureS4_limit_runs(wildcards.scale),
        figureS5=lambda wildcards: PLAN.figureS5_runs(wildcards.scale),
        velocity=lambda wildcards: PLAN.untied_velocity_tables(wildcards.scale),
        plateau=lambda wildcards: PLAN.figure3_plateau_runs(wildcards.scale),
        truncations=lambda wildcards: PLAN.untied_truncation_tables(wildcards.scale),
        decay=lambda wildcards: PLAN.untied_decay_tables(wildcards.scale),
        threshold=P2.get("threshold"),
    log:
        paths.CLAIM_FRAGMENT.log(topic="paper2_untied"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper2_untied"),
    script:
        "../scripts/claims_paper2_untied.py"


# Merging a few small TSV files: not worth a cluster job.
localrules:
    claims,


rule claims:
    """Merge the claim fragments into one markdown table with the verdict of each claim."""
    input:
        fragments=lambda wildcards: PLAN.claim_fragments(wildcards.scale),
        code=script_code("claims.py"),
    output:
        table=report("results/{scale}/claims.md", caption="../report/claims.rst", category="Claims"),
        sidecar="results/{scale}/claims.json",
    params:
        not_measured=lambda wildcards: PLAN.unmeasured_topics(wildcards.scale),
    log:
        "results/{scale}/logs/claims.log",
    threads: 1
    resources:
        **COSTS.resources("claims"),
    script:
        "../scripts/claims.py"
