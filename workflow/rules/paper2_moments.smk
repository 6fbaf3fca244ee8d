# Paper 2, the tied matrix-moment hierarchy, its zero truncations and the
# exactly solvable Riccati case (docs/paper2.md §4, §6, §8.1).  Figure 1 reuses the
# SGD runs and matrix flows of paper2_dynamics.smk; Figure 4 runs SGD with the
# loss (G1 - G2)^2 (prefactor c = 1), e.g.
#   results/quick/moments/truncations/softmax_T2_rho0.5_aim_c0.5_d100/wd0_t2_n41_M2-3-4-6-8_seed0.csv


rule moment_truncations:
    """Truncated moment hierarchy at every order, from one replicate's initial moments (docs/paper2.md §4.2)."""
    input:
        code=script_code("moment_truncations.py"),
    output:
        **KINDS["moment_truncations"].path.outputs(),
    log:
        KINDS["moment_truncations"].path.log(),
    wildcard_constraints:
        **KINDS["moment_truncations"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("moment_truncations"),
    script:
        "../scripts/moment_truncations.py"


rule riccati_flow:
    """Exact matrix flow of the linear case in closed form (docs/paper2.md §4.4, [P eq. 343])."""
    input:
        code=script_code("riccati_flow.py"),
    output:
        **KINDS["riccati_flow"].path.outputs(),
    log:
        KINDS["riccati_flow"].path.log(),
    wildcard_constraints:
        **KINDS["riccati_flow"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("riccati_flow"),
    script:
        "../scripts/riccati_flow.py"


rule truncation_error:
    """Truncation error of orders 2..M against the exact Riccati flow, one weight decay (Figure S6)."""
    input:
        code=script_code("truncation_error.py"),
    output:
        **KINDS["truncation_error"].path.outputs(),
    log:
        KINDS["truncation_error"].path.log(),
    wildcard_constraints:
        **KINDS["truncation_error"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("truncation_error"),
    script:
        "../scripts/truncation_error.py"


rule truncation_radius:
    """Radius of convergence of the linear-case truncations at replicates' W(0), S* (docs/paper2.md §4.2)."""
    input:
        code=script_code("truncation_radius.py"),
    output:
        **KINDS["truncation_radius"].path.outputs(),
    log:
        KINDS["truncation_radius"].path.log(),
    wildcard_constraints:
        **KINDS["truncation_radius"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("truncation_radius"),
    script:
        "../scripts/truncation_radius.py"
