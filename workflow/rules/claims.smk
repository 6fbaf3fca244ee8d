# The claims table: one rule per topic writes results/{scale}/claims/<topic>.tsv
# (claims_<topic>, module aimrepro.claims.<topic>); rule `claims` merges the
# topics the plan measures at the scale into results/{scale}/claims.md.


rule claims_paper1_theory:
    """Paper 1's theory claims (thresholds, collapse, limits, erratum B1) as measured rows."""
    input:
        unpack(needs_inputs("claims_paper1_theory")),
        code=script_code("claims_paper1_theory.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper1_theory"),
    params:
        **needs_params("claims_paper1_theory"),
        softmax_rhos=config["paper1"]["figure2"]["left"]["rhos"],
        # the softmax collapse is checked for every T the papers plot (Figure 2 right: T = 2..6)
        collapse_T_values=[3, 4, 5, 6],
        rho_collapse=config["paper1"]["figure2"]["right"]["rho"],
    log:
        CLAIM_FRAGMENT.log(topic="paper1_theory"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_theory"),
    script:
        "../scripts/claims_paper1_theory.py"


rule claims_paper1_amp:
    """Paper 1's AMP claims (AMP vs SE, softmax recovery, erratum B1) as measured rows."""
    input:
        unpack(needs_inputs("claims_paper1_amp")),
        code=script_code("claims_paper1_amp.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper1_amp"),
    params:
        **needs_params("claims_paper1_amp"),
    log:
        CLAIM_FRAGMENT.log(topic="paper1_amp"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_amp"),
    script:
        "../scripts/claims_paper1_amp.py"


rule claims_paper1_gd:
    """Paper 1's GD claims (averaged GD vs SE, single GD ~ 2 MMSE, zero-error onset) as measured rows."""
    input:
        unpack(needs_inputs("claims_paper1_gd")),
        code=script_code("claims_paper1_gd.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper1_gd"),
    params:
        **needs_params("claims_paper1_gd"),
    log:
        CLAIM_FRAGMENT.log(topic="paper1_gd"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_gd"),
    script:
        "../scripts/claims_paper1_gd.py"


rule claims_paper1_hardmax_tokens:
    """Beyond paper 1: hardmax T >= 3 (T = 2 reproduction, unique fixed point, order in T) as measured rows."""
    input:
        unpack(needs_inputs("claims_paper1_hardmax_tokens")),
        code=script_code("claims_paper1_hardmax_tokens.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper1_hardmax_tokens"),
    params:
        **needs_params("claims_paper1_hardmax_tokens"),
        rhos=config["paper1"]["figure1"]["left"]["rhos"],
        uniqueness_alphas=config["paper1"].get("hardmax_tokens", {}).get("uniqueness_alphas"),
    log:
        CLAIM_FRAGMENT.log(topic="paper1_hardmax_tokens"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_hardmax_tokens"),
    script:
        "../scripts/claims_paper1_hardmax_tokens.py"


rule claims_paper1_hardmax_tokens_amp:
    """Beyond paper 1: GAMP-RIE with the sampled T >= 3 hardmax g_out against the tabulated SE, trend in d."""
    input:
        unpack(needs_inputs("claims_paper1_hardmax_tokens_amp")),
        code=script_code("claims_paper1_hardmax_tokens_amp.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper1_hardmax_tokens_amp"),
    params:
        **needs_params("claims_paper1_hardmax_tokens_amp"),
    log:
        CLAIM_FRAGMENT.log(topic="paper1_hardmax_tokens_amp"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_hardmax_tokens_amp"),
    script:
        "../scripts/claims_paper1_hardmax_tokens_amp.py"


rule claims_paper1_two_layer:
    """Beyond paper 1: two attention layers (threshold D/2, the c -> infinity limit, GAMP-RIE's trend) as measured rows."""
    input:
        unpack(needs_inputs("claims_paper1_two_layer")),
        code=script_code("claims_paper1_two_layer.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper1_two_layer"),
    params:
        **needs_params("claims_paper1_two_layer"),
        rho=config["paper1"].get("two_layer", {}).get("rho"),
        figure_skips=config["paper1"].get("two_layer", {}).get("figure_skips"),
        threshold=lambda wildcards: (config["scales"][wildcards.scale].get("two_layer") or {}).get("threshold"),
    log:
        CLAIM_FRAGMENT.log(topic="paper1_two_layer"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_two_layer"),
    script:
        "../scripts/claims_paper1_two_layer.py"


rule claims_paper2_dynamics:
    """Paper 2's landscape and weak-recovery claims as measured rows (docs/paper2.md §3, §5)."""
    input:
        unpack(needs_inputs("claims_paper2_dynamics")),
        code=script_code("claims_paper2_dynamics.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper2_dynamics"),
    params:
        **needs_params("claims_paper2_dynamics"),
        theorem1_links=P2.get("figureS1", {}).get("links"),
        threshold=P2.get("threshold"),
        eta=P2.get("figureS3", {}).get("eta"),
    log:
        CLAIM_FRAGMENT.log(topic="paper2_dynamics"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper2_dynamics"),
    script:
        "../scripts/claims_paper2_dynamics.py"


rule claims_paper2_moments:
    """Paper 2's claims on the moment hierarchy and its truncations as measured rows (docs/paper2.md §4)."""
    input:
        unpack(needs_inputs("claims_paper2_moments")),
        code=script_code("claims_paper2_moments.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper2_moments"),
    params:
        **needs_params("claims_paper2_moments"),
        short_times={figure: P2.get(figure, {}).get("short_time")
                     for figure in ("figure1", "figure4", "figureS6")},
        matrix_scale=P2.get("figureS6", {}).get("matrix_scale"),
        orders={figure: P2.get(figure, {}).get("orders") for figure in ("figure1", "figure4")},
    log:
        CLAIM_FRAGMENT.log(topic="paper2_moments"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper2_moments"),
    script:
        "../scripts/claims_paper2_moments.py"


rule claims_paper2_untied:
    """Paper 2's untied claims: the two collapses, the dichotomy in d, the sign, strong recovery (docs/paper2.md §5.3-5.4)."""
    input:
        unpack(needs_inputs("claims_paper2_untied")),
        code=script_code("claims_paper2_untied.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper2_untied"),
    params:
        **needs_params("claims_paper2_untied"),
        threshold=P2.get("threshold"),
    log:
        CLAIM_FRAGMENT.log(topic="paper2_untied"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper2_untied"),
    script:
        "../scripts/claims_paper2_untied.py"


# Merging a few small TSV files: not worth a cluster job.
localrules:
    claims,


# Beyond both papers: tokens that are not Gaussian (docs/paper1.md §13, docs/paper2.md §10).


rule claims_paper1_token_laws:
    """Beyond paper 1: GAMP-RIE and GD on tokens that are not Gaussian against the Gaussian and the corrected SE."""
    input:
        unpack(needs_inputs("claims_paper1_token_laws")),
        code=script_code("claims_paper1_token_laws.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper1_token_laws"),
    params:
        **needs_params("claims_paper1_token_laws"),
    log:
        CLAIM_FRAGMENT.log(topic="paper1_token_laws"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper1_token_laws"),
    script:
        "../scripts/claims_paper1_token_laws.py"


rule claims_paper2_token_laws:
    """Beyond paper 2: SGD on tokens that are not Gaussian against the Gaussian flow and the law's flow."""
    input:
        unpack(needs_inputs("claims_paper2_token_laws")),
        code=script_code("claims_paper2_token_laws.py"),
    output:
        **CLAIM_FRAGMENT.outputs(topic="paper2_token_laws"),
    params:
        **needs_params("claims_paper2_token_laws"),
        threshold=P2.get("threshold"),
    log:
        CLAIM_FRAGMENT.log(topic="paper2_token_laws"),
    threads: 1
    resources:
        **COSTS.resources("claims_paper2_token_laws"),
    script:
        "../scripts/claims_paper2_token_laws.py"


rule claims:
    """Merge the claim fragments into one markdown table with the verdict of each claim."""
    input:
        unpack(needs_inputs("claims")),
        code=script_code("claims.py"),
    output:
        table=report("results/{scale}/claims.md", caption="../report/claims.rst", category="Claims"),
        sidecar="results/{scale}/claims.json",
    params:
        **needs_params("claims"),
    log:
        "results/{scale}/logs/claims.log",
    threads: 1
    resources:
        **COSTS.resources("claims"),
    script:
        "../scripts/claims.py"
