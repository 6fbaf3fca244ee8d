# Paper 2, part 2: the tied matrix-moment hierarchy, its zero truncations and
# the exactly solvable Riccati case (paper2.md §4, §6, §8.1): Figures 1, 4, S6
# and the claims topic paper2_moments.  Planned when the paper2 section has
# figure1, figure4 and figureS6 (see common.smk); the sizes are in
# scales.*.paper2.{figure1,figure4,figureS6}.
#
# Paths name every parameter, e.g.
#   results/quick/moments/truncations/softmax_T2_rho0.5_aim_c0.5_d100/wd0_t2_n41_M2-3-4-6-8_seed0.csv
# (c is the loss prefactor of L = c |F(G1) - F(G2)|^2).  Figure 1 reuses the
# SGD runs and matrix flows of dynamics.smk (rules sgd_run, reference_flow);
# Figure 4 needs the loss (G1 - G2)^2 (c = 1), whose SGD runs have their own
# path with _c1 (rule sgd_run_prefactor, same script).

MOMENT_SECTIONS = ("figure1", "figure4", "figureS6")


def moment_sizes(scale, figure):
    """Sizes of one moment figure at a scale; a missing preset stops the plan with one line."""
    sizes = config["scales"][scale].get("paper2", {}).get(figure)
    if sizes is None:
        sys.exit(f"aimrepro: invalid config: scales.{scale}.paper2.{figure} is missing; allowed: "
                 f"the sizes of paper2.{figure} at scale {scale} (see config.yaml)")
    return sizes


def orders_text(orders):
    return "-".join(str(int(m)) for m in sorted(orders))


def sgd_run_prefactor_path(scale, *, param, link, T, rho, normalisation, c, d, lr, batch,
                           weight_decay, horizon, records, stop, seed):
    """Result path of an SGD run whose loss prefactor c is not the default 1/2."""
    return (f"results/{scale}/sgd/{param}_{link}_T{int(T)}_rho{fmt_number(rho)}_{normalisation}"
            f"_c{fmt_number(c)}_d{int(d)}/lr{fmt_number(lr)}_B{int(batch)}"
            f"_wd{fmt_number(weight_decay)}_t{fmt_number(horizon)}_n{int(records)}"
            f"_stop{p2_stop_text(stop)}_seed{int(seed)}.csv")


def truncations_path(scale, *, link, T, rho, normalisation, c, d, weight_decay, horizon,
                     records, orders, seed):
    return (f"results/{scale}/moments/truncations/{link}_T{int(T)}_rho{fmt_number(rho)}"
            f"_{normalisation}_c{fmt_number(c)}_d{int(d)}/wd{fmt_number(weight_decay)}"
            f"_t{fmt_number(horizon)}_n{int(records)}_M{orders_text(orders)}_seed{int(seed)}.csv")


def riccati_path(scale, *, rho, normalisation, c, d, weight_decay, horizon, records, seed):
    return (f"results/{scale}/theory/riccati/linear_T1_rho{fmt_number(rho)}_{normalisation}"
            f"_c{fmt_number(c)}_d{int(d)}/wd{fmt_number(weight_decay)}_t{fmt_number(horizon)}"
            f"_n{int(records)}_seed{int(seed)}.csv")


def truncation_error_path(scale, *, rho, normalisation, c, matrix_scale, d, weight_decay, t_min,
                          horizon, records, max_order, seed):
    return (f"results/{scale}/moments/truncation_error/linear_T1_rho{fmt_number(rho)}"
            f"_{normalisation}_c{fmt_number(c)}_scale{fmt_number(matrix_scale)}_d{int(d)}"
            f"/wd{fmt_number(weight_decay)}_t{fmt_number(t_min)}-{fmt_number(horizon)}"
            f"_n{int(records)}_M{int(max_order)}_seed{int(seed)}.csv")


def figure1_moment_runs(scale):
    """Figure 1 replicates: SGD (rule sgd_run), matrix flow (reference_flow), truncations."""
    science, sizes = config["paper2"]["figure1"], moment_sizes(scale, "figure1")
    runs = []
    for s in range(sizes["seeds"]):
        seed = config["paper2"]["seed"] + s
        common = dict(param="tied", link="softmax", T=science["T"], rho=science["rho"],
                      normalisation=science["normalisation"], d=sizes["d"],
                      weight_decay=science["weight_decay"], horizon=science["horizon"],
                      records=sizes["records"], seed=seed)
        runs.append({**common, "lr": sizes["lr"], "batch": sizes["batch"], "c": 0.5,
                     "path": sgd_run_path(scale, lr=sizes["lr"], batch=sizes["batch"], stop=None,
                                          **common),
                     "flow_path": reference_flow_path(scale, **common),
                     "truncations_path": truncations_path(
                         scale, link="softmax", T=science["T"], rho=science["rho"],
                         normalisation=science["normalisation"], c=0.5, d=sizes["d"],
                         weight_decay=science["weight_decay"], horizon=science["horizon"],
                         records=sizes["records"], orders=science["orders"], seed=seed)})
    return runs


def figure4_moment_runs(scale):
    """Figure 4 replicates: SGD with loss c (G1 - G2)^2, the Riccati solution, truncations."""
    science, sizes = config["paper2"]["figure4"], moment_sizes(scale, "figure4")
    c = science["prefactor"]
    runs = []
    for s in range(sizes["seeds"]):
        seed = config["paper2"]["seed"] + s
        common = dict(rho=science["rho"], normalisation=science["normalisation"], c=c,
                      d=sizes["d"], weight_decay=science["weight_decay"],
                      horizon=science["horizon"], records=sizes["records"], seed=seed)
        runs.append({**common, "param": "tied", "link": "linear", "T": 1, "lr": sizes["lr"],
                     "batch": sizes["batch"],
                     "path": sgd_run_prefactor_path(scale, param="tied", link="linear", T=1,
                                                    lr=sizes["lr"], batch=sizes["batch"],
                                                    stop=None, **common),
                     "exact_path": riccati_path(scale, **common),
                     "truncations_path": truncations_path(scale, link="linear", T=1,
                                                          orders=science["orders"], **common)})
    return runs


def figureS6_tables(scale):
    """Figure S6: one truncation-error table per weight decay."""
    science, sizes = config["paper2"]["figureS6"], moment_sizes(scale, "figureS6")
    if not science["t_min"] < science["horizon"]:
        sys.exit(f"aimrepro: invalid config: paper2.figureS6.t_min = {science['t_min']}; "
                 f"allowed: a number < paper2.figureS6.horizon ({science['horizon']})")
    return [{"weight_decay": float(gamma),
             "path": truncation_error_path(
                 scale, rho=science["rho"], normalisation=science["normalisation"],
                 c=science["prefactor"], matrix_scale=science["matrix_scale"], d=sizes["d"],
                 weight_decay=gamma, t_min=science["t_min"], horizon=science["horizon"],
                 records=sizes["records"], max_order=sizes["max_order"],
                 seed=config["paper2"]["seed"])}
            for gamma in science["weight_decays"]]


rule sgd_run_prefactor:
    """Online SGD with loss prefactor c (the Riccati case L = (G1 - G2)^2, paper2.md §4.4)."""
    input:
        code=script_code("sgd_run.py"),
    output:
        table="results/{scale}/sgd/{param}_{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/lr{lr}_B{B}_wd{wd}_t{horizon}_n{records}_stop{stop}_seed{seed}.csv",
        sidecar="results/{scale}/sgd/{param}_{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/lr{lr}_B{B}_wd{wd}_t{horizon}_n{records}_stop{stop}_seed{seed}.json",
    log:
        "results/{scale}/logs/sgd/{param}_{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/lr{lr}_B{B}_wd{wd}_t{horizon}_n{records}_stop{stop}_seed{seed}.log",
    wildcard_constraints:
        param="direct|tied|untied",
        link="softmax|linear|h1|h2|h3",
        T="[0-9]+",
        rho=P2_NUMBER,
        normalisation="unit_variance|aim",
        c=P2_NUMBER,
        d="[0-9]+",
        lr=P2_NUMBER,
        B="[0-9]+",
        wd=P2_NUMBER,
        horizon=P2_NUMBER,
        records="[0-9]+",
        stop=f"none|{P2_NUMBER}",
        seed="[0-9]+",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=p2_runtime_minutes,
    script:
        "../scripts/sgd_run.py"


rule moment_truncations:
    """Truncated moment hierarchy at every order, from one replicate's initial moments (paper2.md §4.2)."""
    input:
        code=script_code("moment_truncations.py"),
    output:
        table="results/{scale}/moments/truncations/{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/wd{wd}_t{horizon}_n{records}_M{orders}_seed{seed}.csv",
        sidecar="results/{scale}/moments/truncations/{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/wd{wd}_t{horizon}_n{records}_M{orders}_seed{seed}.json",
    log:
        "results/{scale}/logs/moments/truncations/{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/wd{wd}_t{horizon}_n{records}_M{orders}_seed{seed}.log",
    wildcard_constraints:
        link="softmax|linear|h1|h2|h3",
        T="[0-9]+",
        rho=P2_NUMBER,
        normalisation="unit_variance|aim",
        c=P2_NUMBER,
        d="[0-9]+",
        wd=P2_NUMBER,
        horizon=P2_NUMBER,
        records="[0-9]+",
        orders="[0-9]+(?:-[0-9]+)*",
        seed="[0-9]+",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/moment_truncations.py"


rule riccati_flow:
    """Exact matrix flow of the linear case in closed form (paper2.md §4.4, [P eq. 343])."""
    input:
        code=script_code("riccati_flow.py"),
    output:
        table="results/{scale}/theory/riccati/linear_T1_rho{rho}_{normalisation}_c{c}_d{d}/wd{wd}_t{horizon}_n{records}_seed{seed}.csv",
        sidecar="results/{scale}/theory/riccati/linear_T1_rho{rho}_{normalisation}_c{c}_d{d}/wd{wd}_t{horizon}_n{records}_seed{seed}.json",
    log:
        "results/{scale}/logs/theory/riccati/linear_T1_rho{rho}_{normalisation}_c{c}_d{d}/wd{wd}_t{horizon}_n{records}_seed{seed}.log",
    wildcard_constraints:
        rho=P2_NUMBER,
        normalisation="unit_variance|aim",
        c=P2_NUMBER,
        d="[0-9]+",
        wd=P2_NUMBER,
        horizon=P2_NUMBER,
        records="[0-9]+",
        seed="[0-9]+",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/riccati_flow.py"


rule truncation_error:
    """Truncation error of orders 2..M against the exact Riccati flow, one weight decay (Figure S6)."""
    input:
        code=script_code("truncation_error.py"),
    output:
        table="results/{scale}/moments/truncation_error/linear_T1_rho{rho}_{normalisation}_c{c}_scale{s}_d{d}/wd{wd}_t{tmin}-{horizon}_n{records}_M{M}_seed{seed}.csv",
        sidecar="results/{scale}/moments/truncation_error/linear_T1_rho{rho}_{normalisation}_c{c}_scale{s}_d{d}/wd{wd}_t{tmin}-{horizon}_n{records}_M{M}_seed{seed}.json",
    log:
        "results/{scale}/logs/moments/truncation_error/linear_T1_rho{rho}_{normalisation}_c{c}_scale{s}_d{d}/wd{wd}_t{tmin}-{horizon}_n{records}_M{M}_seed{seed}.log",
    wildcard_constraints:
        rho=P2_NUMBER,
        normalisation="unit_variance|aim",
        c=P2_NUMBER,
        s=P2_NUMBER,
        d="[0-9]+",
        wd=P2_NUMBER,
        tmin=P2_NUMBER,
        horizon=P2_NUMBER,
        records="[0-9]+",
        M="[0-9]+",
        seed="[0-9]+",
    threads: 1
    resources:
        mem_mb=3000,
        runtime=lambda wildcards: 10 + int(wildcards.M) ** 2 * int(wildcards.d) // 2000,
    script:
        "../scripts/truncation_error.py"


rule paper2_fig1:
    """Paper 2, Figure 1: tied softmax SGD against truncations of order M and the matrix flow."""
    input:
        runs=lambda wildcards: [run["path"] for run in figure1_moment_runs(wildcards.scale)],
        flows=lambda wildcards: [run["flow_path"] for run in figure1_moment_runs(wildcards.scale)],
        truncations=lambda wildcards: [run["truncations_path"]
                                       for run in figure1_moment_runs(wildcards.scale)],
        code=script_code("paper2_fig1.py"),
    output:
        **p2_figure_outputs("paper2_fig1", "paper2_fig1.rst", "Figure 1"),
    params:
        runs=lambda wildcards: figure1_moment_runs(wildcards.scale),
        orders=config.get("paper2", {}).get("figure1", {}).get("orders"),
    log:
        "results/{scale}/logs/figures/paper2_fig1.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/paper2_fig1.py"


rule paper2_fig4:
    """Paper 2, Figure 4: the exactly solvable case, SGD against truncations and the Riccati flow."""
    input:
        runs=lambda wildcards: [run["path"] for run in figure4_moment_runs(wildcards.scale)],
        exact=lambda wildcards: [run["exact_path"] for run in figure4_moment_runs(wildcards.scale)],
        truncations=lambda wildcards: [run["truncations_path"]
                                       for run in figure4_moment_runs(wildcards.scale)],
        code=script_code("paper2_fig4.py"),
    output:
        **p2_figure_outputs("paper2_fig4", "paper2_fig4.rst", "Figure 4"),
    params:
        runs=lambda wildcards: figure4_moment_runs(wildcards.scale),
        orders=config.get("paper2", {}).get("figure4", {}).get("orders"),
    log:
        "results/{scale}/logs/figures/paper2_fig4.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/paper2_fig4.py"


rule paper2_figS6:
    """Paper 2, Figure S6: truncation error against M at fixed times, per weight decay."""
    input:
        tables=lambda wildcards: [table["path"] for table in figureS6_tables(wildcards.scale)],
        code=script_code("paper2_figS6.py"),
    output:
        **p2_figure_outputs("paper2_figS6", "paper2_figS6.rst", "Figure S6"),
    params:
        tables=lambda wildcards: figureS6_tables(wildcards.scale),
        times=config.get("paper2", {}).get("figureS6", {}).get("times"),
        matrix_scale=config.get("paper2", {}).get("figureS6", {}).get("matrix_scale"),
    log:
        "results/{scale}/logs/figures/paper2_figS6.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/paper2_figS6.py"


rule claims_paper2_moments:
    """Paper 2's claims on the moment hierarchy and its truncations as measured rows (paper2.md §4)."""
    input:
        s6=lambda wildcards: [table["path"] for table in figureS6_tables(wildcards.scale)],
        figure1=lambda wildcards: [run[key] for run in figure1_moment_runs(wildcards.scale)
                                   for key in ("path", "flow_path", "truncations_path")],
        figure4=lambda wildcards: [run[key] for run in figure4_moment_runs(wildcards.scale)
                                   for key in ("path", "exact_path", "truncations_path")],
        code=script_code("claims_paper2_moments.py"),
    output:
        table="results/{scale}/claims/paper2_moments.tsv",
        sidecar="results/{scale}/claims/paper2_moments.json",
    params:
        s6=lambda wildcards: figureS6_tables(wildcards.scale),
        figure1=lambda wildcards: figure1_moment_runs(wildcards.scale),
        figure4=lambda wildcards: figure4_moment_runs(wildcards.scale),
        short_times={figure: config.get("paper2", {}).get(figure, {}).get("short_time")
                     for figure in MOMENT_SECTIONS},
        matrix_scale=config.get("paper2", {}).get("figureS6", {}).get("matrix_scale"),
        orders={figure: config.get("paper2", {}).get(figure, {}).get("orders")
                for figure in ("figure1", "figure4")},
    log:
        "results/{scale}/logs/claims/paper2_moments.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/claims_paper2_moments.py"
