# Paper 2, part 1: population landscape and online SGD of direct, tied and
# untied attention (paper2.md §1-3, §5.1-5.2, §6): SGD runs, their reference
# flows, the Theorem-1 check, the landscape, Figures 2, S1, S2, S3 and the
# claims topic paper2_dynamics.
#
# Paths name every parameter, e.g.
#   results/quick/sgd/tied_h2_T1_rho0.5_unit_variance_d100/lr0.05_B256_wd0_t3_n121_stopnone_seed0.csv
# Numbers are written with fmt_number (common.smk); `stopnone` means the run
# goes to its horizon, `stop0.5` that it stops at overlap ratio 0.5.
# Replicate s of a figure uses seed paper2.seed + s, and the path holds that seed.

import math
import sys


# Tokens of a path (fmt_number spellings).
P2_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?"


def p2_sizes(scale):
    return config["scales"][scale]["paper2"]


def p2_stop_text(stop):
    return "none" if stop is None else fmt_number(stop)


def sgd_run_path(scale, *, param, link, T, rho, normalisation, d, lr, batch, weight_decay,
                 horizon, records, stop, seed):
    """Result path of one online-SGD run (rule sgd_run)."""
    return (f"results/{scale}/sgd/{param}_{link}_T{int(T)}_rho{fmt_number(rho)}_{normalisation}"
            f"_d{int(d)}/lr{fmt_number(lr)}_B{int(batch)}_wd{fmt_number(weight_decay)}"
            f"_t{fmt_number(horizon)}_n{int(records)}_stop{p2_stop_text(stop)}_seed{int(seed)}.csv")


def reference_flow_path(scale, *, param, link, T, rho, normalisation, d, weight_decay, horizon,
                        records, seed):
    """Result path of the reference flow (tied matrix flow, direct closed ODE) of one replicate."""
    return (f"results/{scale}/theory/{param}_flow/{link}_T{int(T)}_rho{fmt_number(rho)}"
            f"_{normalisation}_d{int(d)}/wd{fmt_number(weight_decay)}_t{fmt_number(horizon)}"
            f"_n{int(records)}_seed{int(seed)}.csv")


def p2_lr_rule(eta, batch, d):
    """Step size with per-sample rate lr/batch = eta/(d ln d) (paper2.md §2.4), 6 digits."""
    return float(fmt_number(batch * eta / (d * math.log(d))))


def figure2_runs(scale):
    """Runs of Figure 2: every parametrisation, link and replicate, with its reference flow."""
    science, sizes = config["paper2"]["figure2"], p2_sizes(scale)["figure2"]
    runs = []
    for param in ("tied", "direct"):
        for link in science["links"]:
            for s in range(sizes["seeds"]):
                seed = config["paper2"]["seed"] + s
                common = dict(param=param, link=link, T=science["T"], rho=science["rho"],
                              normalisation=science["normalisation"], d=sizes["d"],
                              weight_decay=science["weight_decay"], horizon=science["horizon"],
                              records=sizes["records"], seed=seed)
                lr = sizes["lr"][param][link]
                runs.append({**common, "lr": lr, "batch": sizes["batch"],
                             "path": sgd_run_path(scale, lr=lr, batch=sizes["batch"], stop=None,
                                                  **common),
                             "flow_path": reference_flow_path(scale, **common)})
    return runs


def figureS3_runs(scale):
    """Runs of Figure S3 (per parametrisation, link, d, replicate; lr = B eta/(d ln d)) and flows."""
    science, sizes = config["paper2"]["figureS3"], p2_sizes(scale)["figureS3"]
    if science["stop_overlap"] < config["paper2"]["threshold"]:
        sys.exit("aimrepro: invalid config: paper2.figureS3.stop_overlap = "
                 f"{science['stop_overlap']}; allowed: a number >= paper2.threshold "
                 f"({config['paper2']['threshold']})")
    runs = []
    for param in ("tied", "direct"):
        for link in science["links"]:
            for d in sizes["dims"][param]:
                lr = p2_lr_rule(science["eta"], sizes["batch"], d)
                for s in range(sizes["seeds"]):
                    seed = config["paper2"]["seed"] + s
                    common = dict(param=param, link=link, T=science["T"], rho=science["rho"],
                                  normalisation=science["normalisation"], d=d, weight_decay=0.0,
                                  horizon=science["horizon"][param], records=sizes["records"],
                                  seed=seed)
                    runs.append({**common, "lr": lr, "batch": sizes["batch"],
                                 "path": sgd_run_path(scale, lr=lr, batch=sizes["batch"],
                                                      stop=science["stop_overlap"], **common),
                                 "flow_path": reference_flow_path(scale, **common)})
    return runs


def theorem1_path(scale, d):
    science, sizes = config["paper2"]["figureS1"], p2_sizes(scale)["figureS1"]
    return (f"results/{scale}/population/theorem1/{'-'.join(science['links'])}_T{science['T']}"
            f"_rho{fmt_number(science['rho'])}_beta{fmt_number(science['beta'])}"
            f"_n{sizes['n_samples']}_seed{config['paper2']['seed']}/d{int(d)}.csv")


def landscape_path(scale, link):
    science, n_grid = config["paper2"]["figureS2"], p2_sizes(scale)["figureS2"]["n_grid"]
    n_grid += 1 - n_grid % 2  # the grid must contain q12 = 0 and q11 = q22: odd
    return (f"results/{scale}/population/landscape/{link}_T{science['T']}"
            f"_rho{fmt_number(science['rho'])}_beta{fmt_number(science['beta'])}_n{n_grid}.csv")


def p2_runtime_minutes(wildcards):
    """Generous Slurm budget: steps × (B T d r or B T d²) at ~1 GFlop/s, plus 10 minutes."""
    d, T, B = int(wildcards.d), int(wildcards.T), int(wildcards.B)
    unit = 4.0 if wildcards.param == "tied" else 1.0
    steps = float(wildcards.horizon) * d / (unit * float(wildcards.lr))
    # width: d for direct S (B T d² per step), at most d for the factors
    return 10 + int(steps * 6 * B * T * d * d / 1e9 / 60)


rule sgd_run:
    """Online SGD of one teacher-student problem, one replicate (paper2.md §2)."""
    input:
        code=script_code("sgd_run.py"),
    output:
        table="results/{scale}/sgd/{param}_{link}_T{T}_rho{rho}_{normalisation}_d{d}/lr{lr}_B{B}_wd{wd}_t{horizon}_n{records}_stop{stop}_seed{seed}.csv",
        sidecar="results/{scale}/sgd/{param}_{link}_T{T}_rho{rho}_{normalisation}_d{d}/lr{lr}_B{B}_wd{wd}_t{horizon}_n{records}_stop{stop}_seed{seed}.json",
    log:
        "results/{scale}/logs/sgd/{param}_{link}_T{T}_rho{rho}_{normalisation}_d{d}/lr{lr}_B{B}_wd{wd}_t{horizon}_n{records}_stop{stop}_seed{seed}.log",
    wildcard_constraints:
        param="direct|tied|untied",
        link="softmax|linear|h1|h2|h3",
        T="[0-9]+",
        rho=P2_NUMBER,
        normalisation="unit_variance|aim",
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


rule reference_flow:
    """Theory curve of one replicate: tied matrix flow or direct closed ODE (paper2.md §4.3, §2.1)."""
    input:
        code=script_code("reference_flow.py"),
    output:
        table="results/{scale}/theory/{param}_flow/{link}_T{T}_rho{rho}_{normalisation}_d{d}/wd{wd}_t{horizon}_n{records}_seed{seed}.csv",
        sidecar="results/{scale}/theory/{param}_flow/{link}_T{T}_rho{rho}_{normalisation}_d{d}/wd{wd}_t{horizon}_n{records}_seed{seed}.json",
    log:
        "results/{scale}/logs/theory/{param}_flow/{link}_T{T}_rho{rho}_{normalisation}_d{d}/wd{wd}_t{horizon}_n{records}_seed{seed}.log",
    wildcard_constraints:
        param="direct|tied",
        link="softmax|linear|h1|h2|h3",
        T="[0-9]+",
        rho=P2_NUMBER,
        normalisation="unit_variance|aim",
        d="[0-9]+",
        wd=P2_NUMBER,
        horizon=P2_NUMBER,
        records="[0-9]+",
        seed="[0-9]+",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/reference_flow.py"


rule theorem1:
    """Finite-d population loss against Phi(q) at one d (paper2.md §3.1, Figure S1)."""
    input:
        code=script_code("theorem1.py"),
    output:
        table="results/{scale}/population/theorem1/{links}_T{T}_rho{rho}_beta{beta}_n{n}_seed{seed}/d{d}.csv",
        sidecar="results/{scale}/population/theorem1/{links}_T{T}_rho{rho}_beta{beta}_n{n}_seed{seed}/d{d}.json",
    log:
        "results/{scale}/logs/population/theorem1/{links}_T{T}_rho{rho}_beta{beta}_n{n}_seed{seed}/d{d}.log",
    wildcard_constraints:
        links="[a-z0-9]+(?:-[a-z0-9]+)*",
        T="[0-9]+",
        rho=P2_NUMBER,
        beta=P2_NUMBER,
        n="[0-9]+",
        seed="[0-9]+",
        d="[0-9]+",
    threads: 1
    resources:
        mem_mb=3000,
        runtime=lambda wildcards: 10 + int(wildcards.n) * int(wildcards.d) ** 2 // 10**10,
    script:
        "../scripts/theorem1.py"


rule landscape:
    """Phi over (q11, q12) at the AIM teacher norm, one link (paper2.md §3.3-3.4, Figure S2)."""
    input:
        code=script_code("landscape.py"),
    output:
        table="results/{scale}/population/landscape/{link}_T{T}_rho{rho}_beta{beta}_n{n}.csv",
        sidecar="results/{scale}/population/landscape/{link}_T{T}_rho{rho}_beta{beta}_n{n}.json",
    log:
        "results/{scale}/logs/population/landscape/{link}_T{T}_rho{rho}_beta{beta}_n{n}.log",
    wildcard_constraints:
        link="softmax|hardmax|linear|h1|h2|h3",
        T="[0-9]+",
        rho=P2_NUMBER,
        beta=P2_NUMBER,
        n="[0-9]+",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/landscape.py"


def p2_figure_outputs(name, caption, subcategory):
    return {
        "pdf": f"figures/{{scale}}/{name}.pdf",
        "png": report(f"figures/{{scale}}/{name}.png", caption=f"../report/{caption}",
                      category="Paper 2", subcategory=subcategory),
        "sidecar": f"figures/{{scale}}/{name}.json",
    }


rule paper2_fig2:
    """Paper 2, Figure 2: tied W vs direct S for h1, h2, h3 (SGD over seeds, reference flows)."""
    input:
        runs=lambda wildcards: [run["path"] for run in figure2_runs(wildcards.scale)],
        flows=lambda wildcards: [run["flow_path"] for run in figure2_runs(wildcards.scale)],
        code=script_code("paper2_fig2.py"),
    output:
        **p2_figure_outputs("paper2_fig2", "paper2_fig2.rst", "Figure 2"),
    params:
        runs=lambda wildcards: figure2_runs(wildcards.scale),
        threshold=config.get("paper2", {}).get("threshold"),
    log:
        "results/{scale}/logs/figures/paper2_fig2.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/paper2_fig2.py"


rule paper2_figS1:
    """Paper 2, Figure S1: Theorem 1 at finite d, loss against Phi(q) and the gap against d."""
    input:
        tables=lambda wildcards: [theorem1_path(wildcards.scale, d)
                                  for d in p2_sizes(wildcards.scale)["figureS1"]["dims"]],
        code=script_code("paper2_figS1.py"),
    output:
        **p2_figure_outputs("paper2_figS1", "paper2_figS1.rst", "Figure S1"),
    params:
        links=config.get("paper2", {}).get("figureS1", {}).get("links"),
    log:
        "results/{scale}/logs/figures/paper2_figS1.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/paper2_figS1.py"


rule paper2_figS2:
    """Paper 2, Figure S2: the population landscape, with the tied uninformative point."""
    input:
        tables=lambda wildcards: [landscape_path(wildcards.scale, link)
                                  for link in config["paper2"]["figureS2"]["links"]],
        code=script_code("paper2_figS2.py"),
    output:
        **p2_figure_outputs("paper2_figS2", "paper2_figS2.rst", "Figure S2"),
    params:
        links=config.get("paper2", {}).get("figureS2", {}).get("links"),
        rho=config.get("paper2", {}).get("figureS2", {}).get("rho"),
    log:
        "results/{scale}/logs/figures/paper2_figS2.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/paper2_figS2.py"


rule paper2_figS3:
    """Paper 2, Figure S3: weak-recovery time (t_ode) and samples/(d^2 ln d) against d."""
    input:
        runs=lambda wildcards: [run["path"] for run in figureS3_runs(wildcards.scale)],
        flows=lambda wildcards: [run["flow_path"] for run in figureS3_runs(wildcards.scale)],
        code=script_code("paper2_figS3.py"),
    output:
        **p2_figure_outputs("paper2_figS3", "paper2_figS3.rst", "Figure S3"),
    params:
        runs=lambda wildcards: figureS3_runs(wildcards.scale),
        threshold=config.get("paper2", {}).get("threshold"),
        eta=config.get("paper2", {}).get("figureS3", {}).get("eta"),
    log:
        "results/{scale}/logs/figures/paper2_figS3.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/paper2_figS3.py"


rule claims_paper2_dynamics:
    """Paper 2's landscape and weak-recovery claims as measured rows (paper2.md §3, §5)."""
    input:
        theorem1=lambda wildcards: [theorem1_path(wildcards.scale, d)
                                    for d in p2_sizes(wildcards.scale)["figureS1"]["dims"]],
        figure2=lambda wildcards: [run["path"] for run in figure2_runs(wildcards.scale)],
        figureS3=lambda wildcards: [run["path"] for run in figureS3_runs(wildcards.scale)],
        figureS3_flows=lambda wildcards: [run["flow_path"]
                                          for run in figureS3_runs(wildcards.scale)],
        code=script_code("claims_paper2_dynamics.py"),
    output:
        table="results/{scale}/claims/paper2_dynamics.tsv",
        sidecar="results/{scale}/claims/paper2_dynamics.json",
    params:
        figure2=lambda wildcards: figure2_runs(wildcards.scale),
        figureS3=lambda wildcards: figureS3_runs(wildcards.scale),
        theorem1_links=config.get("paper2", {}).get("figureS1", {}).get("links"),
        threshold=config.get("paper2", {}).get("threshold"),
        eta=config.get("paper2", {}).get("figureS3", {}).get("eta"),
    log:
        "results/{scale}/logs/claims/paper2_dynamics.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/claims_paper2_dynamics.py"
