# Paper 2, population landscape and online SGD of direct, tied and untied
# attention (docs/paper2.md §1-3, §5.1-5.2, §6): SGD runs, their reference flows,
# the Theorem-1 check and the landscape.
#
# Paths name every parameter, e.g.
#   results/quick/sgd/tied_h2_T1_rho0.5_unit_variance_c0.5_d100/lr0.05_B256_wd0_t3_n121_stopnone_seed0.csv
# (c: loss prefactor of L = c |F(G1) - F(G2)|^2; stopnone: the run goes to its
# horizon, stop0.5: it stops at overlap ratio 0.5).  Replicate s of a figure
# uses seed paper2.seed + s, and the path holds that seed.


rule sgd_run:
    """Online SGD of one teacher-student problem, one replicate (docs/paper2.md §2)."""
    input:
        code=script_code("sgd_run.py"),
    output:
        **KINDS["sgd_run"].path.outputs(),
    log:
        KINDS["sgd_run"].path.log(),
    wildcard_constraints:
        **KINDS["sgd_run"].path.constraints(),
    params:
        **cache_key("sgd_run"),
        backend=BACKEND["sgd"],
    cache: shared_cache("sgd_run")
    threads: 1
    resources:
        **COSTS.resources("sgd_run"),
        gpu=BACKEND_GPUS,
    script:
        "../scripts/sgd_run.py"


rule reference_flow:
    """Theory curve of one replicate: tied matrix flow or direct closed ODE (docs/paper2.md §4.3, §2.1)."""
    input:
        code=script_code("reference_flow.py"),
    output:
        **KINDS["reference_flow"].path.outputs(),
    log:
        KINDS["reference_flow"].path.log(),
    wildcard_constraints:
        **KINDS["reference_flow"].path.constraints(),
    params:
        **cache_key("reference_flow"),
    cache: shared_cache("reference_flow")
    threads: 1
    resources:
        **COSTS.resources("reference_flow"),
    script:
        "../scripts/reference_flow.py"


rule theorem1:
    """Finite-d population loss against Phi(q) at one d (docs/paper2.md §3.1, Figure S1)."""
    input:
        code=script_code("theorem1.py"),
    output:
        **KINDS["theorem1"].path.outputs(),
    log:
        KINDS["theorem1"].path.log(),
    wildcard_constraints:
        **KINDS["theorem1"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("theorem1"),
    script:
        "../scripts/theorem1.py"


rule landscape:
    """Phi over (q11, q12) at the AIM teacher norm, one link (docs/paper2.md §3.3-3.4, Figure S2)."""
    input:
        code=script_code("landscape.py"),
    output:
        **KINDS["landscape"].path.outputs(),
    log:
        KINDS["landscape"].path.log(),
    wildcard_constraints:
        **KINDS["landscape"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("landscape"),
    script:
        "../scripts/landscape.py"


rule flow_ensemble:
    """Deterministic flows of several replicates in one table: tied, direct, or exact finite-d (claims' d-trends)."""
    input:
        code=script_code("flow_ensemble.py"),
    output:
        **KINDS["flow_ensemble"].path.outputs(),
    log:
        KINDS["flow_ensemble"].path.log(),
    wildcard_constraints:
        **KINDS["flow_ensemble"].path.constraints(),
    params:
        **cache_key("flow_ensemble"),
    cache: shared_cache("flow_ensemble")
    threads: 1
    resources:
        **COSTS.resources("flow_ensemble"),
    script:
        "../scripts/flow_ensemble.py"


rule tied_velocity:
    """dp12/dt at W(0) over replicates: [P eq. 17], the matrix flow, the exact finite-d SGD drift."""
    input:
        code=script_code("tied_velocity.py"),
    output:
        **KINDS["tied_velocity"].path.outputs(),
    log:
        KINDS["tied_velocity"].path.log(),
    wildcard_constraints:
        **KINDS["tied_velocity"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("tied_velocity"),
    script:
        "../scripts/tied_velocity.py"
