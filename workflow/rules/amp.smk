# Simulations of paper 1: AIM datasets and GAMP-RIE runs (paper1.md §5, §7).
#
# aim_dataset  one teacher + training + test sequences per (link, beta, T, rho,
#              d, alpha, seed), read by AMP (and by GD, later issue)
# amp_run      one GAMP-RIE run of one channel on one dataset
# amp_summary  mean and spread over seeds per alpha of one marker curve, with
#              unconverged runs counted apart and the SE error alongside
# Paths are spelled in common.smk (dataset_path, amp_run_path,
# amp_summary_path); which curves exist is figure1/figure2_amp_curves there.

import sys

LINK_TOKEN = rf"softmax_beta{NUMBER}|hardmax|linear"
CHANNEL_TOKEN = rf"softmax_beta{NUMBER}|hardmax_paper|hardmax"


def _check_amp_plan():
    """Cross-key checks the schema cannot express; a violation stops with one line."""
    plan = config["paper1"]["figure1"].get("amp")
    if plan:
        n = plan["alpha"]["n"]
        if plan["last_index"] >= n:
            return (f"paper1.figure1.amp.last_index = {plan['last_index']}; "
                    f"allowed: an index < alpha.n = {n}")
        left_rhos = {float(r) for r in config["paper1"]["figure1"]["left"]["rhos"]}
        for i, entry in enumerate(plan["first_index"]):
            if float(entry["rho"]) not in left_rhos:
                return (f"paper1.figure1.amp.first_index[{i}].rho = {entry['rho']}; "
                        f"allowed: one of left.rhos {sorted(left_rhos)}")
            if entry["index"] > plan["last_index"]:
                return (f"paper1.figure1.amp.first_index[{i}].index = {entry['index']}; "
                        f"allowed: an index <= last_index = {plan['last_index']}")
    right = config["paper1"]["figure2"]["right"].get("amp")
    for i, run in enumerate(right["runs"] if right else []):
        if run.get("last_index", 0) >= run["alpha"]["n"]:
            return (f"paper1.figure2.right.amp.runs[{i}].last_index = {run['last_index']}; "
                    f"allowed: an index < alpha.n = {run['alpha']['n']}")
    return None


_AMP_PLAN_PROBLEM = _check_amp_plan()
if _AMP_PLAN_PROBLEM:
    sys.exit(f"aimrepro: invalid config: {_AMP_PLAN_PROBLEM}")


def dataset_output(pattern):
    """Datasets are temp() at a scale whose preset says so: deleted once every job reading them is done."""
    return temp(pattern) if config["scales"][SCALE]["data"]["temporary"] else pattern


def amp_dataset_input(wildcards):
    """The dataset an AMP run reads: both hardmax channels read the (correct) hardmax data."""
    link = "hardmax" if wildcards.channel.startswith("hardmax") else wildcards.channel
    return (f"results/{wildcards.scale}/data/{link}_T{wildcards.T}_rho{wildcards.rho}_d{wildcards.d}/"
            f"alpha{wildcards.alpha}_seed{wildcards.seed}.npz")


def amp_curve_of(wildcards):
    """The planned curve whose summary this job writes (rule amp_summary)."""
    path = (f"results/{wildcards.scale}/amp/{wildcards.channel}_T{wildcards.T}_rho{wildcards.rho}"
            f"_d{wildcards.d}/summary_seeds{wildcards.n}.csv")
    for curve in amp_curves(wildcards.scale):
        if curve["path"] == path:
            return curve
    raise ValueError(f"{path} is not an AMP curve of the config at scale {wildcards.scale}")


def _sequences(wildcards):
    """Tokens of a dataset, n (T) d, for the resource estimates."""
    n = max(1, round(float(wildcards.alpha) * int(wildcards.d) ** 2))
    return n * int(wildcards.T) * int(wildcards.d)


rule aim_dataset:
    """One AIM dataset: teacher W, training and test tokens and labels (aimrepro.paper1.data)."""
    input:
        code=script_code("aim_dataset.py"),
    output:
        data=dataset_output("results/{scale}/data/{link}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}.npz"),
        sidecar="results/{scale}/data/{link}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}.json",
    log:
        "results/{scale}/logs/data/{link}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}.log",
    wildcard_constraints:
        link=LINK_TOKEN,
        T="[0-9]+",
        rho=NUMBER,
        d="[0-9]+",
        alpha=NUMBER,
        seed="[0-9]+",
    params:
        base_seed=config["seed"],
        test_samples=lambda wildcards: config["scales"][wildcards.scale]["data"]["test_samples"],
    threads: 1
    resources:
        # float32 tokens plus float64 temporaries of the label computation
        mem_mb=lambda wildcards: 300 + _sequences(wildcards) * 40 // 10**6,
        runtime=5,
    script:
        "../scripts/aim_dataset.py"


rule amp_run:
    """GAMP-RIE of one channel on one dataset: final error, trace, generalisation error."""
    input:
        data=amp_dataset_input,
        code=script_code("amp_run.py"),
    output:
        run="results/{scale}/amp/{channel}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}.npz",
        sidecar="results/{scale}/amp/{channel}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}.json",
    log:
        "results/{scale}/logs/amp/{channel}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}.log",
    wildcard_constraints:
        channel=CHANNEL_TOKEN,
        T="[0-9]+",
        rho=NUMBER,
        d="[0-9]+",
        alpha=NUMBER,
        seed="[0-9]+",
    params:
        solver=config["paper1"]["amp_solver"],
    threads: 1
    resources:
        # O(n T d) float64 working set: tokens, their product with S, back-projection
        mem_mb=lambda wildcards: 500 + _sequences(wildcards) * 40 // 10**6,
        # benchmarks/bench_amp.py: < 0.2 s per iteration at n T d = 5.4e6 on one core
        runtime=lambda wildcards: 10 + config["paper1"]["amp_solver"]["max_iter"]
        * (1 + _sequences(wildcards) // 10**6) // 60,
    script:
        "../scripts/amp_run.py"


rule amp_summary:
    """Mean and std over seeds per alpha of one AMP curve, with unconverged runs counted apart."""
    input:
        runs=lambda wildcards: [p for per_alpha in amp_curve_of(wildcards)["runs"] for p in per_alpha],
        code=script_code("amp_summary.py"),
    output:
        table="results/{scale}/amp/{channel}_T{T}_rho{rho}_d{d}/summary_seeds{n}.csv",
        sidecar="results/{scale}/amp/{channel}_T{T}_rho{rho}_d{d}/summary_seeds{n}.json",
    log:
        "results/{scale}/logs/amp/{channel}_T{T}_rho{rho}_d{d}/summary_seeds{n}.log",
    wildcard_constraints:
        channel=CHANNEL_TOKEN,
        T="[0-9]+",
        rho=NUMBER,
        d="[0-9]+",
        n="[0-9]+",
    params:
        curve=lambda wildcards: amp_curve_params([amp_curve_of(wildcards)])[0],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/amp_summary.py"


# The claims need AMP results: at a scale without AMP the topic stays pending.
if amp_curves(SCALE):

    rule claims_paper1_amp:
        """Paper 1's AMP claims (AMP vs SE, softmax recovery, erratum B1) as measured rows."""
        input:
            summaries=lambda wildcards: [c["path"] for c in amp_curves(wildcards.scale)],
            code=script_code("claims_paper1_amp.py"),
        output:
            table="results/{scale}/claims/paper1_amp.tsv",
            sidecar="results/{scale}/claims/paper1_amp.json",
        params:
            curves=lambda wildcards: amp_curve_params(amp_curves(wildcards.scale)),
        log:
            "results/{scale}/logs/claims/paper1_amp.log",
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        script:
            "../scripts/claims_paper1_amp.py"
