# Figures: one rule per figure; its inputs are exactly the results it plots
# (plus the code that draws them).  Each writes a PDF, a PNG (shown in
# `snakemake --report`) and a provenance sidecar with the same stem.


rule paper1_fig1:
    """Paper 1, Figure 1: hardmax SE error vs alpha (left) and alpha/rho (right)."""
    input:
        curves=lambda wildcards: curve_paths(figure1_curves(wildcards.scale)),
        # AMP markers of the left panel (amp.smk); none if not configured.
        amp=lambda wildcards: [c["path"] for c in figure1_amp_curves(wildcards.scale)],
        code=script_code("paper1_fig1.py"),
    output:
        pdf="figures/{scale}/paper1_fig1.pdf",
        png=report(
            "figures/{scale}/paper1_fig1.png",
            caption="../report/paper1_fig1.rst",
            category="Paper 1",
            subcategory="Figure 1",
        ),
        sidecar="figures/{scale}/paper1_fig1.json",
    params:
        curves=lambda wildcards: figure1_curves(wildcards.scale),
        channels=config["paper1"]["figure1"]["channels"],
        T=config["paper1"]["figure1"]["T"],
        small_width_limit=config["paper1"]["figure1"]["right"]["small_width_limit"],
        amp_curves=lambda wildcards: amp_curve_params(figure1_amp_curves(wildcards.scale)),
    log:
        "results/{scale}/logs/figures/paper1_fig1.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/paper1_fig1.py"


rule paper1_fig2:
    """Paper 1, Figure 2: softmax SE error vs alpha (left) and alpha (T^2+T-2) (right)."""
    input:
        curves=lambda wildcards: curve_paths(figure2_curves(wildcards.scale)),
        # Simulation markers (AMP, GD) are further named inputs; the script
        # draws whichever it is given.  AMP: amp.smk, none if not configured.
        amp=lambda wildcards: [c["path"] for c in figure2_amp_curves(wildcards.scale)],
        # GD '+' and 'x' markers (gd.smk), one summary per T; none if not configured.
        gd=lambda wildcards: [c["path"] for c in figure2_gd_curves(wildcards.scale)],
        code=script_code("paper1_fig2.py"),
    output:
        pdf="figures/{scale}/paper1_fig2.pdf",
        png=report(
            "figures/{scale}/paper1_fig2.png",
            caption="../report/paper1_fig2.rst",
            category="Paper 1",
            subcategory="Figure 2",
        ),
        sidecar="figures/{scale}/paper1_fig2.json",
    params:
        curves=lambda wildcards: figure2_curves(wildcards.scale),
        amp_curves=lambda wildcards: amp_curve_params(figure2_amp_curves(wildcards.scale)),
        gd_curves=lambda wildcards: amp_curve_params(figure2_gd_curves(wildcards.scale)),
    log:
        "results/{scale}/logs/figures/paper1_fig2.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/paper1_fig2.py"
