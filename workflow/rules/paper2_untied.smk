# Paper 2, untied attention S = U V^T (docs/paper2.md §2.3, §5.3, §6): SGD runs with
# fast (t = lr n) and slow (tau = lr n/d) records, their population flows and
# fast-phase means, the slaved d -> infinity slow flow and the fast-state table, e.g.
#   results/quick/untied/sgd/h2_T1_rho1_unit_variance_sU1_sV0.9_m2-2_m0none_d100/
#       lr0.01_B256_wd0_tau0.15_n31_fast6x31_stop0.5_seed0.csv
# m0none: the student's natural mean (independent factors); stopnone: to the
# horizon.  Theory tables sit under results/{scale}/untied/{flow,limit}/ with
# the same problem directory, and name the integrator (e.g. _RK45-1e-06).


rule untied_sgd_run:
    """Online SGD of untied attention, one replicate, fast and slow records (docs/paper2.md §2.3)."""
    input:
        code=script_code("untied_sgd_run.py"),
    output:
        **KINDS["untied_sgd_run"].path.outputs(),
    log:
        KINDS["untied_sgd_run"].path.log(),
    wildcard_constraints:
        **KINDS["untied_sgd_run"].path.constraints(),
    params:
        **cache_key("untied_sgd_run"),
        backend=BACKEND["sgd"],
    cache: shared_cache("untied_sgd_run")
    threads: COSTS.threads("untied_sgd_run")
    resources:
        **COSTS.resources("untied_sgd_run"),
        gpu=BACKEND_GPUS,
    script:
        "../scripts/untied_sgd_run.py"


rule untied_theory:
    """Theory of one replicate: population flow + fast mean (flow), or the slaved slow flow (limit)."""
    input:
        code=script_code("untied_theory.py"),
    output:
        **KINDS["untied_theory"].path.outputs(),
    log:
        KINDS["untied_theory"].path.log(),
    wildcard_constraints:
        **KINDS["untied_theory"].path.constraints(),
    params:
        **cache_key("untied_theory"),
    cache: shared_cache("untied_theory")
    threads: 1
    resources:
        **COSTS.resources("untied_theory"),
    script:
        "../scripts/untied_theory.py"


rule untied_fast_states:
    """Fast state m*(m2), dichotomy factors and the symmetric-state threshold (docs/paper2.md §5.3)."""
    input:
        code=script_code("untied_fast_states.py"),
    output:
        **KINDS["untied_fast_states"].path.outputs(),
    log:
        KINDS["untied_fast_states"].path.log(),
    wildcard_constraints:
        **KINDS["untied_fast_states"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("untied_fast_states"),
    script:
        "../scripts/untied_fast_states.py"


rule untied_velocity:
    """dq12/dtau after the fast phase over replicates: [P eq. 42] and the slaved slow flow."""
    input:
        code=script_code("untied_velocity.py"),
    output:
        **KINDS["untied_velocity"].path.outputs(),
    log:
        KINDS["untied_velocity"].path.log(),
    wildcard_constraints:
        **KINDS["untied_velocity"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("untied_velocity"),
    script:
        "../scripts/untied_velocity.py"


rule untied_truncation:
    """s(tau) of the slaved slow flow and the untied truncations M = 2 .. max_order ([P Cor. 8])."""
    input:
        code=script_code("untied_truncation.py"),
    output:
        **KINDS["untied_truncation"].path.outputs(),
    log:
        KINDS["untied_truncation"].path.log(),
    wildcard_constraints:
        **KINDS["untied_truncation"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("untied_truncation"),
    script:
        "../scripts/untied_truncation.py"


rule untied_decay:
    """The untied population flow of n replicates to late tau, its excess loss and linearised decay ([P Cor. 9])."""
    input:
        code=script_code("untied_decay.py"),
    output:
        **KINDS["untied_decay"].path.outputs(),
    log:
        KINDS["untied_decay"].path.log(),
    wildcard_constraints:
        **KINDS["untied_decay"].path.constraints(),
    threads: 1
    resources:
        **COSTS.resources("untied_decay"),
    script:
        "../scripts/untied_decay.py"
