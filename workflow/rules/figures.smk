# Figures: one rule per figure; its inputs are exactly the results it plots.
# Each writes a PDF, a PNG (shown in `snakemake --report`, with the caption
# workflow/report/<name>.rst) and a provenance sidecar with the same stem.


rule paper1_fig1:
    """Paper 1, Figure 1: hardmax SE error vs alpha (left) and alpha/rho (right)."""
    input:
        unpack(needs_inputs("paper1_fig1")),
        code=script_code("paper1_fig1.py"),
    output:
        **figure_outputs("paper1_fig1", "Paper 1", "Figure 1"),
    params:
        **needs_params("paper1_fig1"),
        channels=config["paper1"]["figure1"]["channels"],
        T=config["paper1"]["figure1"]["T"],
        small_width_limit=config["paper1"]["figure1"]["right"]["small_width_limit"],
    log:
        figure_log("paper1_fig1"),
    threads: 1
    resources:
        **COSTS.resources("paper1_fig1"),
    script:
        "../scripts/paper1_fig1.py"


rule paper1_fig2:
    """Paper 1, Figure 2: softmax SE error vs alpha (left) and alpha (T^2+T-2) (right)."""
    input:
        unpack(needs_inputs("paper1_fig2")),
        code=script_code("paper1_fig2.py"),
    output:
        **figure_outputs("paper1_fig2", "Paper 1", "Figure 2"),
    params:
        **needs_params("paper1_fig2"),
    log:
        figure_log("paper1_fig2"),
    threads: 1
    resources:
        **COSTS.resources("paper1_fig2"),
    script:
        "../scripts/paper1_fig2.py"


rule paper1_figS1:
    """Beyond paper 1: Figure 1 left for hardmax attention with T = 2, 3, 4 tokens (docs/paper1.md §3.6)."""
    input:
        unpack(needs_inputs("paper1_figS1")),
        code=script_code("paper1_figS1.py"),
    output:
        **figure_outputs("paper1_figS1", "Paper 1", "Figure S1"),
    params:
        **needs_params("paper1_figS1"),
    log:
        figure_log("paper1_figS1"),
    threads: 1
    resources:
        **COSTS.resources("paper1_figS1"),
    script:
        "../scripts/paper1_figS1.py"


rule paper1_two_layer:
    """Beyond paper 1: the Bayes-optimal error of two attention layers (T = 2) per skip c, with GAMP-RIE (docs/paper1.md §14)."""
    input:
        unpack(needs_inputs("paper1_two_layer")),
        code=script_code("paper1_two_layer.py"),
    output:
        **figure_outputs("paper1_two_layer", "Paper 1", "Two attention layers"),
    params:
        **needs_params("paper1_two_layer"),
        rho=config["paper1"].get("two_layer", {}).get("rho"),
    log:
        figure_log("paper1_two_layer"),
    threads: 1
    resources:
        **COSTS.resources("paper1_two_layer"),
    script:
        "../scripts/paper1_two_layer.py"


rule paper1_figS2:
    """Paper 1, Figure S2 (beyond the paper): SE generalisation errors with AMP's held-out errors."""
    input:
        unpack(needs_inputs("paper1_figS2")),
        code=script_code("paper1_figS2.py"),
    output:
        **figure_outputs("paper1_figS2", "Paper 1", "Figure S2"),
    params:
        **needs_params("paper1_figS2"),
    log:
        figure_log("paper1_figS2"),
    threads: 1
    resources:
        **COSTS.resources("paper1_figS2"),
    script:
        "../scripts/paper1_figS2.py"


rule paper2_fig1:
    """Paper 2, Figure 1: tied softmax SGD against truncations of order M and the matrix flow."""
    input:
        unpack(needs_inputs("paper2_fig1")),
        code=script_code("paper2_fig1.py"),
    output:
        **figure_outputs("paper2_fig1", "Paper 2", "Figure 1"),
    params:
        **needs_params("paper2_fig1"),
        orders=P2.get("figure1", {}).get("orders"),
    log:
        figure_log("paper2_fig1"),
    threads: 1
    resources:
        **COSTS.resources("paper2_fig1"),
    script:
        "../scripts/paper2_fig1.py"


rule paper2_fig2:
    """Paper 2, Figure 2: tied W vs direct S for h1, h2, h3 (SGD over seeds, reference flows)."""
    input:
        unpack(needs_inputs("paper2_fig2")),
        code=script_code("paper2_fig2.py"),
    output:
        **figure_outputs("paper2_fig2", "Paper 2", "Figure 2"),
    params:
        **needs_params("paper2_fig2"),
        threshold=P2.get("threshold"),
    log:
        figure_log("paper2_fig2"),
    threads: 1
    resources:
        **COSTS.resources("paper2_fig2"),
    script:
        "../scripts/paper2_fig2.py"


rule paper2_fig3:
    """Paper 2, Figure 3: untied attention, symmetric overlap vs slow time for h1, h2, h3."""
    input:
        unpack(needs_inputs("paper2_fig3")),
        code=script_code("paper2_fig3.py"),
    output:
        **figure_outputs("paper2_fig3", "Paper 2", "Figure 3"),
    params:
        **needs_params("paper2_fig3"),
        threshold=P2.get("threshold"),
    log:
        figure_log("paper2_fig3"),
    threads: 1
    resources:
        **COSTS.resources("paper2_fig3"),
    script:
        "../scripts/paper2_fig3.py"


rule paper2_fig4:
    """Paper 2, Figure 4: the exactly solvable case, SGD against truncations and the Riccati flow."""
    input:
        unpack(needs_inputs("paper2_fig4")),
        code=script_code("paper2_fig4.py"),
    output:
        **figure_outputs("paper2_fig4", "Paper 2", "Figure 4"),
    params:
        **needs_params("paper2_fig4"),
        orders=P2.get("figure4", {}).get("orders"),
    log:
        figure_log("paper2_fig4"),
    threads: 1
    resources:
        **COSTS.resources("paper2_fig4"),
    script:
        "../scripts/paper2_fig4.py"


rule paper2_figS1:
    """Paper 2, Figure S1: Theorem 1 at finite d, loss against Phi(q) and the gap against d."""
    input:
        unpack(needs_inputs("paper2_figS1")),
        code=script_code("paper2_figS1.py"),
    output:
        **figure_outputs("paper2_figS1", "Paper 2", "Figure S1"),
    params:
        **needs_params("paper2_figS1"),
        links=P2.get("figureS1", {}).get("links"),
    log:
        figure_log("paper2_figS1"),
    threads: 1
    resources:
        **COSTS.resources("paper2_figS1"),
    script:
        "../scripts/paper2_figS1.py"


rule paper2_figS2:
    """Paper 2, Figure S2: the population landscape, with the tied uninformative point."""
    input:
        unpack(needs_inputs("paper2_figS2")),
        code=script_code("paper2_figS2.py"),
    output:
        **figure_outputs("paper2_figS2", "Paper 2", "Figure S2"),
    params:
        **needs_params("paper2_figS2"),
        links=P2.get("figureS2", {}).get("links"),
        rho=P2.get("figureS2", {}).get("rho"),
    log:
        figure_log("paper2_figS2"),
    threads: 1
    resources:
        **COSTS.resources("paper2_figS2"),
    script:
        "../scripts/paper2_figS2.py"


rule paper2_figS3:
    """Paper 2, Figure S3: weak-recovery time (t_ode) and samples/(d^2 ln d) against d."""
    input:
        unpack(needs_inputs("paper2_figS3")),
        code=script_code("paper2_figS3.py"),
    output:
        **figure_outputs("paper2_figS3", "Paper 2", "Figure S3"),
    params:
        **needs_params("paper2_figS3"),
        threshold=P2.get("threshold"),
        eta=P2.get("figureS3", {}).get("eta"),
    log:
        figure_log("paper2_figS3"),
    threads: 1
    resources:
        **COSTS.resources("paper2_figS3"),
    script:
        "../scripts/paper2_figS3.py"


rule paper2_figS4:
    """Paper 2, Figure S4: the mean collapses on t = lr n, the overlap on tau = lr n/d."""
    input:
        unpack(needs_inputs("paper2_figS4")),
        code=script_code("paper2_figS4.py"),
    output:
        **figure_outputs("paper2_figS4", "Paper 2", "Figure S4"),
    params:
        **needs_params("paper2_figS4"),
    log:
        figure_log("paper2_figS4"),
    threads: 1
    resources:
        **COSTS.resources("paper2_figS4"),
    script:
        "../scripts/paper2_figS4.py"


rule paper2_figS5:
    """Paper 2, Figure S5: escape time vs teacher mean for several d, with the instability times of the flows."""
    input:
        unpack(needs_inputs("paper2_figS5")),
        code=script_code("paper2_figS5.py"),
    output:
        **figure_outputs("paper2_figS5", "Paper 2", "Figure S5"),
    params:
        **needs_params("paper2_figS5"),
        threshold=P2.get("threshold"),
    log:
        figure_log("paper2_figS5"),
    threads: 1
    resources:
        **COSTS.resources("paper2_figS5"),
    script:
        "../scripts/paper2_figS5.py"


rule paper2_figS6:
    """Paper 2, Figure S6: truncation error against M at fixed times, per weight decay."""
    input:
        unpack(needs_inputs("paper2_figS6")),
        code=script_code("paper2_figS6.py"),
    output:
        **figure_outputs("paper2_figS6", "Paper 2", "Figure S6"),
    params:
        **needs_params("paper2_figS6"),
        times=P2.get("figureS6", {}).get("times"),
        matrix_scale=P2.get("figureS6", {}).get("matrix_scale"),
    log:
        figure_log("paper2_figS6"),
    threads: 1
    resources:
        **COSTS.resources("paper2_figS6"),
    script:
        "../scripts/paper2_figS6.py"


# Beyond both papers: tokens that are not Gaussian (docs/paper1.md §13, docs/paper2.md §10).


rule paper1_token_laws:
    """Beyond paper 1: the SE against GAMP-RIE and GD for tokens that are not Gaussian (docs/paper1.md §13)."""
    input:
        unpack(needs_inputs("paper1_token_laws")),
        code=script_code("paper1_token_laws.py"),
    output:
        **figure_outputs("paper1_token_laws", "Paper 1", "Token laws"),
    params:
        **needs_params("paper1_token_laws"),
    log:
        figure_log("paper1_token_laws"),
    threads: 1
    resources:
        **COSTS.resources("paper1_token_laws"),
    script:
        "../scripts/paper1_token_laws.py"


rule paper2_token_laws:
    """Beyond paper 2: weak recovery of SGD on tokens that are not Gaussian against both flows (docs/paper2.md §10)."""
    input:
        unpack(needs_inputs("paper2_token_laws")),
        code=script_code("paper2_token_laws.py"),
    output:
        **figure_outputs("paper2_token_laws", "Paper 2", "Token laws"),
    params:
        **needs_params("paper2_token_laws"),
        threshold=P2.get("threshold"),
    log:
        figure_log("paper2_token_laws"),
    threads: 1
    resources:
        **COSTS.resources("paper2_token_laws"),
    script:
        "../scripts/paper2_token_laws.py"
