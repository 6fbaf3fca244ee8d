"""The tests' reader of ``snakemake --summary`` (conftest.parse_summary), on summaries as Snakemake 9 prints them.

The workflow tests take what Snakemake plans from this parser; here it must
group the rows into jobs, keep their status, and refuse anything it does not
understand rather than guess.
"""

from __future__ import annotations

import pytest

from conftest import parse_summary

HEADER = "output_file\tdate\trule\tlog-file(s)\tstatus\tplan"


def summary(*rows: str) -> str:
    return "\n".join([HEADER, *rows]) + "\n"


FIGURE = ["figures/quick/paper1_fig2.pdf\t-\tpaper1_fig2\t-\tmissing\tupdate pending",
          "figures/quick/paper1_fig2.png\t-\tpaper1_fig2\t-\tmissing\tupdate pending",
          "figures/quick/paper1_fig2.json\t-\tpaper1_fig2\t-\tmissing\tupdate pending"]
CURVE = ["results/quick/se/softmax_T2_rho0.5/alphapr_lin_0.01_1_n4.csv\tMon Dec  1 16:00:00 2026\t"
         "se_curve\t-\tok\tno update",
         "results/quick/se/softmax_T2_rho0.5/alphapr_lin_0.01_1_n4.json\tMon Dec  1 16:00:00 2026\t"
         "se_curve\t-\tok\tno update"]
DATASET = ["results/paper/data/hardmax_T2_rho0.5_d200/alpha0.312222_seed1.npz\t-\taim_dataset_paper\t-\t"
           "removed temp file\tupdate pending",
           "results/paper/data/hardmax_T2_rho0.5_d200/alpha0.312222_seed1.json\t-\taim_dataset_paper\t-\t"
           "missing\tupdate pending"]


def test_rows_are_grouped_into_jobs_by_their_sidecar():
    plan = parse_summary(summary(*FIGURE, *CURVE, *DATASET))
    assert [(job.rule, job.outputs) for job in plan.jobs] == [
        ("paper1_fig2", ("figures/quick/paper1_fig2.pdf", "figures/quick/paper1_fig2.png",
                         "figures/quick/paper1_fig2.json")),
        ("se_curve", ("results/quick/se/softmax_T2_rho0.5/alphapr_lin_0.01_1_n4.csv",
                      "results/quick/se/softmax_T2_rho0.5/alphapr_lin_0.01_1_n4.json")),
        ("aim_dataset_paper", ("results/paper/data/hardmax_T2_rho0.5_d200/alpha0.312222_seed1.npz",
                               "results/paper/data/hardmax_T2_rho0.5_d200/alpha0.312222_seed1.json"))]
    figure, curve, dataset = plan.jobs
    assert figure.pending and not curve.pending and dataset.pending
    assert figure.output == "figures/quick/paper1_fig2.pdf"
    assert dataset.statuses == ("removed temp file", "missing")
    assert plan.pending_pairs() == [("aim_dataset_paper", dataset.output),
                                    ("paper1_fig2", "figures/quick/paper1_fig2.pdf")]
    assert plan.rule_counts() == {"paper1_fig2": 1, "aim_dataset_paper": 1}
    assert plan.outputs("se_curve") == set() and plan.outputs("paper1_fig2") == {figure.output}


def test_an_empty_dag_is_an_empty_plan():
    plan = parse_summary(summary())
    assert plan.jobs == [] and plan.pending() == [] and plan.rule_counts() == {}


@pytest.mark.parametrize("text, message", [
    ("Building DAG of jobs...\n" + summary(*CURVE), "not a Snakemake summary"),
    (summary(*CURVE).replace("\tplan", "\tplanned"), "not a Snakemake summary"),
    (summary(CURVE[0] + "\textra", CURVE[1]), "with 7 fields"),
    (summary(CURVE[0].replace("no update", "maybe"), CURVE[1]), "unknown plan 'maybe'"),
    (summary(CURVE[0]), "has no sidecar"),
    (summary(CURVE[0], CURVE[1].replace("se_curve", "paper1_fig1")), "belong to several jobs"),
    (summary(CURVE[0], CURVE[1].replace("no update", "update pending")), "belong to several jobs"),
])
def test_anything_unexpected_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        parse_summary(text)
