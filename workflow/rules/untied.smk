# Paper 2, part 3: untied attention S = U V^T (paper2.md §2.3, §5.3, §6): SGD runs
# with fast (t = lr n) and slow (tau = lr n/d) records, their population flows and
# fast-phase means, the slaved d -> infinity slow flow, the fast-state table,
# Figures 3, S4, S5 and the claims topic paper2_untied.
#
# Paths name every parameter, e.g.
#   results/quick/untied/sgd/h2_T1_rho1_unit_variance_sU1_sV0.9_m2-2_m0none_d100/
#       lr0.01_B256_wd0_tau0.15_n31_fast6x31_stop0.5_seed0.csv
# m0none: the student's natural mean (independent factors); stopnone: to the horizon.
# Theory tables sit under results/{scale}/untied/{flow,limit}/ with the same
# problem directory, and name the integrator (e.g. RK45-1e-06).

UNTIED_FIGURES = ("figure3", "figureS4", "figureS5")

# A signed number as fmt_number writes it.
SIGNED_NUMBER = rf"-?{P2_NUMBER}"


def untied_sections_present():
    return all(name in config.get("paper2", {}) for name in UNTIED_FIGURES)


if "paper2" in config and any(name in config["paper2"] for name in UNTIED_FIGURES):
    # The three sections and their sizes come together (one feature).
    for _name in UNTIED_FIGURES:
        if _name not in config["paper2"]:
            sys.exit(f"aimrepro: invalid config: paper2.{_name} is missing; allowed: a mapping "
                     "(untied attention needs paper2.figure3, figureS4 and figureS5 together)")
        for _scale in ("quick", "paper"):
            if _name not in config["scales"][_scale]["paper2"] \
                    or "untied_flow" not in config["scales"][_scale]["paper2"]:
                sys.exit(f"aimrepro: invalid config: scales.{_scale}.paper2.{_name} or "
                         "untied_flow is missing; allowed: a mapping (sizes of the untied figures)")


def untied_problem_dir(scale, kind, *, link, T, rho, normalisation, scales, teacher_mean,
                       init_mean, d):
    m0 = "none" if init_mean is None else fmt_number(init_mean)
    return (f"results/{scale}/untied/{kind}/{link}_T{int(T)}_rho{fmt_number(rho)}_{normalisation}"
            f"_sU{fmt_number(scales[0])}_sV{fmt_number(scales[1])}_m2{fmt_number(teacher_mean)}"
            f"_m0{m0}_d{int(d)}")


def untied_schedule(*, weight_decay, horizon, records, fast_horizon, fast_records, stop):
    return (f"wd{fmt_number(weight_decay)}_tau{fmt_number(horizon)}_n{int(records)}"
            f"_fast{fmt_number(fast_horizon)}x{int(fast_records)}_stop{p2_stop_text(stop)}")


def untied_run(scale, *, lr, batch, seed, flow, **problem):
    """One untied replicate: its SGD path, population-flow path and slaved-limit path."""
    schedule_keys = ("weight_decay", "horizon", "records", "fast_horizon", "fast_records", "stop")
    schedule = untied_schedule(**{key: problem[key] for key in schedule_keys})
    keys = {key: value for key, value in problem.items() if key not in schedule_keys}
    method = f"{flow['method']}-{fmt_number(flow['rtol'])}"
    return {
        **problem, "lr": lr, "batch": batch, "seed": seed,
        "path": f"{untied_problem_dir(scale, 'sgd', **keys)}/lr{fmt_number(lr)}_B{int(batch)}"
                f"_{schedule}_seed{int(seed)}.csv",
        "flow_path": f"{untied_problem_dir(scale, 'flow', **keys)}/{schedule}_{method}"
                     f"_seed{int(seed)}.csv",
        "limit_path": f"{untied_problem_dir(scale, 'limit', **keys)}/{schedule}_seed{int(seed)}.csv",
    }


def _untied_common(science):
    return dict(T=science.get("T", 1), rho=science["rho"],
                normalisation=science["normalisation"], scales=science["init_scales"])


def figure3_untied_runs(scale):
    science, sizes = config["paper2"]["figure3"], p2_sizes(scale)["figure3"]
    runs = []
    for link in science["links"]:
        for s in range(sizes["seeds"]):
            runs.append(untied_run(
                scale, lr=sizes["lr"][link], batch=sizes["batch"], seed=config["paper2"]["seed"] + s,
                flow=p2_sizes(scale)["untied_flow"], link=link, **_untied_common(science),
                teacher_mean=science["teacher_mean"], init_mean=None, d=sizes["d"],
                weight_decay=science["weight_decay"], horizon=science["horizon"],
                records=sizes["records"], fast_horizon=0.0, fast_records=0, stop=None))
    return runs


def figureS4_runs(scale):
    science, sizes = config["paper2"]["figureS4"], p2_sizes(scale)["figureS4"]
    runs = []
    for d in sizes["dims"]:
        for s in range(sizes["seeds"]):
            runs.append(untied_run(
                scale, lr=sizes["lr"], batch=sizes["batch"], seed=config["paper2"]["seed"] + s,
                flow=p2_sizes(scale)["untied_flow"], link=science["link"],
                **_untied_common(science), teacher_mean=science["teacher_mean"],
                init_mean=science["init_mean"], d=d, weight_decay=0.0,
                horizon=science["horizon"], records=sizes["records"],
                fast_horizon=science["fast_horizon"], fast_records=sizes["fast_records"],
                stop=None))
    return runs


def figureS5_runs(scale):
    science, sizes = config["paper2"]["figureS5"], p2_sizes(scale)["figureS5"]
    if science["stop_overlap"] < config["paper2"]["threshold"]:
        sys.exit("aimrepro: invalid config: paper2.figureS5.stop_overlap = "
                 f"{science['stop_overlap']}; allowed: a number >= paper2.threshold "
                 f"({config['paper2']['threshold']})")
    runs = []
    for teacher_mean in science["teacher_means"]:
        for d in sizes["dims"]:
            for s in range(sizes["seeds"]):
                runs.append(untied_run(
                    scale, lr=sizes["lr"], batch=sizes["batch"],
                    seed=config["paper2"]["seed"] + s, flow=p2_sizes(scale)["untied_flow"],
                    link=science["link"], **_untied_common(science), teacher_mean=teacher_mean,
                    init_mean=None, d=d, weight_decay=0.0, horizon=science["horizon"],
                    records=sizes["records"], fast_horizon=science["fast_horizon"],
                    fast_records=sizes["fast_records"], stop=science["stop_overlap"]))
    return runs


def fast_states_path(scale):
    science, n_grid = config["paper2"]["figureS5"], p2_sizes(scale)["figureS5"]["n_grid"]
    means = science["teacher_means"]
    return (f"results/{scale}/untied/fast_states/{science['link']}_rho{fmt_number(science['rho'])}"
            f"_{science['normalisation']}_sU{fmt_number(science['init_scales'][0])}"
            f"_sV{fmt_number(science['init_scales'][1])}_m2{fmt_number(min(means))}"
            f"to{fmt_number(max(means))}_n{int(n_grid)}.csv")


UNTIED_PROBLEM = ("{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}_m0{m0}_d{d}")
UNTIED_SCHEDULE = "wd{wd}_tau{horizon}_n{records}_fast{fh}x{nf}_stop{stop}"
UNTIED_CONSTRAINTS = dict(
    link="softmax|linear|h1|h2|h3", T="[0-9]+", rho=P2_NUMBER,
    normalisation="unit_variance|aim", sU=P2_NUMBER, sV=P2_NUMBER, m2=SIGNED_NUMBER,
    m0=f"none|{SIGNED_NUMBER}", d="[0-9]+", wd=P2_NUMBER, horizon=P2_NUMBER, records="[0-9]+",
    fh=P2_NUMBER, nf="[0-9]+", stop=f"none|{P2_NUMBER}", seed="[0-9]+")


def untied_threads(wildcards):
    """One thread at quick scale; 8 for the paper's large GEMMs (B d >= 10^6, e.g. 4096 x 800)."""
    return 8 if int(wildcards.B) * int(wildcards.d) >= 10**6 else 1


def untied_runtime_minutes(wildcards, threads):
    """Slurm budget: steps x 8 B d r flops at ~2 GFlop/s per thread, plus 10 minutes.

    A run that stops at recovery (Figure S5) takes far less than its horizon's steps.
    """
    d, B = int(wildcards.d), int(wildcards.B)
    steps = float(wildcards.horizon) * d / float(wildcards.lr)
    return 10 + int(steps * 8 * B * d * d / (2e9 * threads) / 60)


rule untied_sgd_run:
    """Online SGD of untied attention, one replicate, fast and slow records (paper2.md §2.3)."""
    input:
        code=script_code("untied_sgd_run.py"),
    output:
        table=f"results/{{scale}}/untied/sgd/{UNTIED_PROBLEM}/lr{{lr}}_B{{B}}_{UNTIED_SCHEDULE}_seed{{seed}}.csv",
        sidecar=f"results/{{scale}}/untied/sgd/{UNTIED_PROBLEM}/lr{{lr}}_B{{B}}_{UNTIED_SCHEDULE}_seed{{seed}}.json",
    log:
        f"results/{{scale}}/logs/untied/sgd/{UNTIED_PROBLEM}/lr{{lr}}_B{{B}}_{UNTIED_SCHEDULE}_seed{{seed}}.log",
    wildcard_constraints:
        lr=P2_NUMBER,
        B="[0-9]+",
        **UNTIED_CONSTRAINTS,
    threads: untied_threads
    resources:
        mem_mb=lambda wildcards: 2000 + int(wildcards.B) * int(wildcards.d) * 8 * 6 // 10**6,
        runtime=untied_runtime_minutes,
    script:
        "../scripts/untied_sgd_run.py"


rule untied_theory:
    """Theory of one replicate: population flow + fast mean (flow), or the slaved slow flow (limit)."""
    input:
        code=script_code("untied_theory.py"),
    output:
        table=f"results/{{scale}}/untied/{{kind}}/{UNTIED_PROBLEM}/{UNTIED_SCHEDULE}{{method}}_seed{{seed}}.csv",
        sidecar=f"results/{{scale}}/untied/{{kind}}/{UNTIED_PROBLEM}/{UNTIED_SCHEDULE}{{method}}_seed{{seed}}.json",
    log:
        f"results/{{scale}}/logs/untied/{{kind}}/{UNTIED_PROBLEM}/{UNTIED_SCHEDULE}{{method}}_seed{{seed}}.log",
    wildcard_constraints:
        kind="flow|limit",
        # "_RK45-1e-06" for the population flow, empty for the slaved limit
        method=rf"|_[A-Za-z0-9]+-{P2_NUMBER}",
        **UNTIED_CONSTRAINTS,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda wildcards: 10 + int(wildcards.d) ** 3 // 10**6,
    script:
        "../scripts/untied_theory.py"


rule untied_fast_states:
    """Fast state m*(m2), dichotomy factors and the symmetric-state threshold (paper2.md §5.3)."""
    input:
        code=script_code("untied_fast_states.py"),
    output:
        table="results/{scale}/untied/fast_states/{link}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{lo}to{hi}_n{n}.csv",
        sidecar="results/{scale}/untied/fast_states/{link}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{lo}to{hi}_n{n}.json",
    log:
        "results/{scale}/logs/untied/fast_states/{link}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{lo}to{hi}_n{n}.log",
    wildcard_constraints:
        link="linear|h1|h2|h3",
        rho=P2_NUMBER,
        normalisation="unit_variance|aim",
        sU=P2_NUMBER,
        sV=P2_NUMBER,
        lo=SIGNED_NUMBER,
        hi=SIGNED_NUMBER,
        n="[0-9]+",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/untied_fast_states.py"


def _paths(runs, key):
    return [run[key] for run in runs]


def figureS4_limit_runs(scale):
    """The slaved d -> infinity flow from the largest d's replicates (Figure S4, claims)."""
    runs = figureS4_runs(scale)
    largest = max(run["d"] for run in runs)
    return [run for run in runs if run["d"] == largest]


rule paper2_fig3:
    """Paper 2, Figure 3: untied attention, symmetric overlap vs slow time for h1, h2, h3."""
    input:
        runs=lambda wildcards: _paths(figure3_untied_runs(wildcards.scale), "path"),
        flows=lambda wildcards: _paths(figure3_untied_runs(wildcards.scale), "flow_path"),
        code=script_code("paper2_fig3.py"),
    output:
        **p2_figure_outputs("paper2_fig3", "paper2_fig3.rst", "Figure 3"),
    params:
        runs=lambda wildcards: figure3_untied_runs(wildcards.scale),
        threshold=config.get("paper2", {}).get("threshold"),
    log:
        "results/{scale}/logs/figures/paper2_fig3.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/paper2_fig3.py"


rule paper2_figS4:
    """Paper 2, Figure S4: the mean collapses on t = lr n, the overlap on tau = lr n/d."""
    input:
        runs=lambda wildcards: _paths(figureS4_runs(wildcards.scale), "path"),
        flows=lambda wildcards: _paths(figureS4_runs(wildcards.scale), "flow_path"),
        limits=lambda wildcards: _paths(figureS4_limit_runs(wildcards.scale), "limit_path"),
        code=script_code("paper2_figS4.py"),
    output:
        **p2_figure_outputs("paper2_figS4", "paper2_figS4.rst", "Figure S4"),
    params:
        runs=lambda wildcards: figureS4_runs(wildcards.scale),
        limits=lambda wildcards: figureS4_limit_runs(wildcards.scale),
    log:
        "results/{scale}/logs/figures/paper2_figS4.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/paper2_figS4.py"


rule paper2_figS5:
    """Paper 2, Figure S5: escape time vs teacher mean for several d, with the derived threshold."""
    input:
        runs=lambda wildcards: _paths(figureS5_runs(wildcards.scale), "path"),
        flows=lambda wildcards: _paths(figureS5_runs(wildcards.scale), "flow_path"),
        fast_states=lambda wildcards: fast_states_path(wildcards.scale),
        code=script_code("paper2_figS5.py"),
    output:
        **p2_figure_outputs("paper2_figS5", "paper2_figS5.rst", "Figure S5"),
    params:
        runs=lambda wildcards: figureS5_runs(wildcards.scale),
        threshold=config.get("paper2", {}).get("threshold"),
    log:
        "results/{scale}/logs/figures/paper2_figS5.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/paper2_figS5.py"


rule claims_paper2_untied:
    """Paper 2's untied claims: the two collapses, the dichotomy in d, the sign (paper2.md §5.3)."""
    input:
        figure3=lambda wildcards: _paths(figure3_untied_runs(wildcards.scale), "path"),
        figureS4=lambda wildcards: _paths(figureS4_runs(wildcards.scale), "path"),
        figureS4_flows=lambda wildcards: _paths(figureS4_runs(wildcards.scale), "flow_path"),
        figureS4_limits=lambda wildcards: _paths(figureS4_limit_runs(wildcards.scale),
                                                 "limit_path"),
        figureS5=lambda wildcards: _paths(figureS5_runs(wildcards.scale), "path"),
        figureS5_flows=lambda wildcards: _paths(figureS5_runs(wildcards.scale), "flow_path"),
        fast_states=lambda wildcards: fast_states_path(wildcards.scale),
        code=script_code("claims_paper2_untied.py"),
    output:
        table="results/{scale}/claims/paper2_untied.tsv",
        sidecar="results/{scale}/claims/paper2_untied.json",
    params:
        figure3=lambda wildcards: figure3_untied_runs(wildcards.scale),
        figureS4=lambda wildcards: figureS4_runs(wildcards.scale),
        figureS4_limits=lambda wildcards: figureS4_limit_runs(wildcards.scale),
        figureS5=lambda wildcards: figureS5_runs(wildcards.scale),
        threshold=config.get("paper2", {}).get("threshold"),
    log:
        "results/{scale}/logs/claims/paper2_untied.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/claims_paper2_untied.py"
