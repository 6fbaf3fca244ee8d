# Gradient descent on the tied attention student, paper 1 (paper1.md §6, §7, §8.6).
#
# gd_run           K students trained by full-batch Adam on one softmax dataset
#                  (read through rule aim_dataset, amp.smk: temp() where the
#                  scale says so)
# gd_summary       mean and spread over draws per alpha of one T, diverged
#                  students counted apart, the SE error alongside
# claims_paper1_gd paper 1's GD claims as measured rows
# Paths are spelled in common.smk (gd_run_path, gd_summary_path); which
# curves exist is figure2_gd_curves there.


def gd_dataset_input(wildcards):
    """The dataset a GD run reads: the one AMP would read at the same (T, rho, d, alpha, seed)."""
    return (f"results/{wildcards.scale}/data/{wildcards.link}_T{wildcards.T}_rho{wildcards.rho}_d{wildcards.d}/"
            f"alpha{wildcards.alpha}_seed{wildcards.seed}.npz")


def gd_curve_of(wildcards):
    """The planned curve whose summary this job writes (rule gd_summary)."""
    path = (f"results/{wildcards.scale}/gd/{wildcards.link}_T{wildcards.T}_rho{wildcards.rho}_d{wildcards.d}"
            f"_inits{wildcards.inits}/summary_seeds{wildcards.n}.csv")
    for curve in figure2_gd_curves(wildcards.scale):
        if curve["path"] == path:
            return curve
    raise ValueError(f"{path} is not a GD curve of the config at scale {wildcards.scale}")


def _gd_work(wildcards):
    """(n T d, K n T r): the token entries and the replicas' working set, for the resource estimates."""
    d, T, K = int(wildcards.d), int(wildcards.T), int(wildcards.inits)
    n = max(1, round(float(wildcards.alpha) * d * d))
    r = max(1, round(float(wildcards.rho) * d))
    return n * T * d, K * n * T * r


def _gd_runtime(wildcards, threads):
    """Minutes for the Adam steps, K n T r (4d + 40T) flops each, at 10 GFLOP/s per thread.

    benchmarks/bench_gd.py measures 31 GFLOP/s of that count on one core at
    d = 200, T = 2, n = 12 000 (2.2 s per step for 32 students): a threefold margin.
    ``threads`` is the job's (the preset's, or fewer when --cores is lower).
    """
    _, work = _gd_work(wildcards)
    steps = config["paper1"]["figure2"]["right"]["gd"]["optimizer"]["steps"]
    flops = steps * work * (4 * int(wildcards.d) + 40 * int(wildcards.T))
    return 10 + int(flops / (10e9 * threads) / 60)


rule gd_run:
    """K tied students trained by full-batch Adam on one dataset: errors, losses, curves."""
    input:
        data=gd_dataset_input,
        code=script_code("gd_run.py"),
    output:
        run="results/{scale}/gd/{link}_T{T}_rho{rho}_d{d}_inits{inits}/alpha{alpha}_seed{seed}.npz",
        sidecar="results/{scale}/gd/{link}_T{T}_rho{rho}_d{d}_inits{inits}/alpha{alpha}_seed{seed}.json",
    log:
        "results/{scale}/logs/gd/{link}_T{T}_rho{rho}_d{d}_inits{inits}/alpha{alpha}_seed{seed}.log",
    wildcard_constraints:
        link=rf"softmax_beta{NUMBER}",
        T="[0-9]+",
        rho=NUMBER,
        d="[0-9]+",
        inits="[0-9]+",
        alpha=NUMBER,
        seed="[0-9]+",
    params:
        optimizer=config["paper1"]["figure2"]["right"]["gd"]["optimizer"] if
        config["paper1"]["figure2"]["right"].get("gd") else {},
    threads: lambda wildcards: gd_size(wildcards.scale).get("threads", 1)
    resources:
        # float32 + float64 tokens, and at most gd.CHUNK_ENTRIES floats per working array (about 3 live)
        mem_mb=lambda wildcards: 500 + _gd_work(wildcards)[0] * 12 // 10**6
        + 3 * 8 * min(_gd_work(wildcards)[1], 25_000_000) // 10**6,
        runtime=_gd_runtime,
    script:
        "../scripts/gd_run.py"


rule gd_summary:
    """Mean and std over draws per alpha of single and averaged GD (one T), diverged students apart."""
    input:
        runs=lambda wildcards: [p for per_alpha in gd_curve_of(wildcards)["runs"] for p in per_alpha],
        code=script_code("gd_summary.py"),
    output:
        table="results/{scale}/gd/{link}_T{T}_rho{rho}_d{d}_inits{inits}/summary_seeds{n}.csv",
        sidecar="results/{scale}/gd/{link}_T{T}_rho{rho}_d{d}_inits{inits}/summary_seeds{n}.json",
    log:
        "results/{scale}/logs/gd/{link}_T{T}_rho{rho}_d{d}_inits{inits}/summary_seeds{n}.log",
    wildcard_constraints:
        link=rf"softmax_beta{NUMBER}",
        T="[0-9]+",
        rho=NUMBER,
        d="[0-9]+",
        inits="[0-9]+",
        n="[0-9]+",
    params:
        # amp_curve_params drops the run paths (they are inputs); it fits GD curves too
        curve=lambda wildcards: amp_curve_params([gd_curve_of(wildcards)])[0],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/gd_summary.py"


# The claims need GD results: at a scale without GD the topic stays pending.
if figure2_gd_curves(SCALE):

    rule claims_paper1_gd:
        """Paper 1's GD claims (averaged GD vs SE, single GD ~ 2 MMSE, zero-error onset) as measured rows."""
        input:
            summaries=lambda wildcards: [c["path"] for c in figure2_gd_curves(wildcards.scale)],
            code=script_code("claims_paper1_gd.py"),
        output:
            table="results/{scale}/claims/paper1_gd.tsv",
            sidecar="results/{scale}/claims/paper1_gd.json",
        params:
            curves=lambda wildcards: amp_curve_params(figure2_gd_curves(wildcards.scale)),
        log:
            "results/{scale}/logs/claims/paper1_gd.log",
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        script:
            "../scripts/claims_paper1_gd.py"
