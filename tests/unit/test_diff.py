"""aimrepro.records.diff and ``aimrepro diff``: two result trees compared result by result."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from aimrepro.claims.table import ClaimRow, render_claims_markdown, write_claims
from aimrepro.records import diff as rdiff
from aimrepro.records.sidecars import write_sidecar
from aimrepro.records.tables import write_table

from conftest import assert_usage_error, run_cli

T0 = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.timezone.utc)
T1 = T0 + dt.timedelta(seconds=1)


def claim(measured=0.5, verdict="pass", note="grid n = 24") -> ClaimRow:
    return ClaimRow(id="p1-x", paper="paper1", section="§3", claim="x is one half",
                    expected=0.5, measured=measured, tolerance=0.01, verdict=verdict, note=note)


def build_tree(root: Path, *, value=0.25, lr=0.1, code="pass\n", measured=0.5,
               verdict="pass", commit="a" * 40) -> Path:
    """A repository-like tree: a table, an array file, a claims fragment, claims.md, a log.

    Its sidecars record paths relative to ``root``, as the workflow's do.
    """
    root.mkdir(parents=True)
    with contextlib.chdir(root):
        _build_tree(Path("."), value=value, lr=lr, code=code, measured=measured, verdict=verdict,
                    commit=commit)
    return root


def _build_tree(root: Path, *, value, lr, code, measured, verdict, commit) -> None:
    (root / "src").mkdir()
    (root / "src" / "science.py").write_text(code)
    results = root / "results" / "quick"
    (results / "curves").mkdir(parents=True)
    (results / "logs").mkdir()
    (results / "claims").mkdir()
    table = results / "curves" / "curve.csv"
    write_table(table, {"alpha": np.array([0.1, 0.2, 0.3]), "mse": np.array([1.0, 0.5, value]),
                        "converged": np.array([True, True, True]), "n": np.array([1, 2, 3])})
    arrays = results / "curves" / "run.npz"
    np.savez(arrays, S=np.eye(2) * value, labels=np.array(["a", "b"]))
    for path in (table, arrays):
        write_sidecar(path, rule="curve", params={"optimizer": {"lr": lr}, "wildcards": {"n": "3"}},
                      inputs=[], code=[root / "src" / "science.py"], diagnostics={"cpu_seconds": 1.0},
                      started=T0, ended=T1)
    fragment = results / "claims" / "paper1.tsv"
    write_claims(fragment, [claim(measured, verdict)])
    write_sidecar(fragment, rule="claims_paper1", params={}, inputs=[table], code=[],
                  diagnostics={}, started=T0, ended=T1)
    (results / "claims.md").write_text(render_claims_markdown([claim(measured, verdict)], scale="quick",
                                                              commit=commit))
    (results / "logs" / "curve.log").write_text(f"started at {Path.cwd()}\n")


@pytest.fixture
def trees(tmp_path):
    return build_tree(tmp_path / "a"), tmp_path / "b"


def statuses(compared: rdiff.TreeDiff) -> dict[str, str]:
    return {result.path: result.status for result in compared.results}


def test_two_equal_trees_are_the_same_result_by_result(trees):
    a, b = trees
    build_tree(b)
    compared = rdiff.diff_trees(a, b)
    # sidecars, logs and src/ are not results; the sidecars record other times and paths
    assert statuses(compared) == {
        "results/quick/claims.md": "same", "results/quick/claims/paper1.tsv": "same",
        "results/quick/curves/curve.csv": "same", "results/quick/curves/run.npz": "same"}
    assert compared.equal and compared.counts()["same"] == 4
    assert "4 results: 4 same" in rdiff.render_diff(compared)


def test_a_changed_value_is_measured_column_by_column_and_judged_by_the_tolerance(trees):
    a, b = trees
    build_tree(b, value=0.25 + 1e-6)
    compared = rdiff.diff_trees(a, b)
    table = next(r for r in compared.results if r.path.endswith("curve.csv"))
    assert table.status == "differs" and not compared.equal
    [column] = table.columns
    assert column.name == "mse" and column.n_beyond == 1 and column.n_values == 3
    assert column.max_abs == pytest.approx(1e-6, rel=1e-9)
    assert column.max_rel == pytest.approx(1e-6 / (0.25 + 1e-6), rel=1e-9)
    arrays = next(r for r in compared.results if r.path.endswith("run.npz"))
    assert [c.name for c in arrays.columns] == ["S"] and arrays.columns[0].n_beyond == 2
    # within a relative tolerance just above the change, and not just below it
    assert rdiff.diff_trees(a, b, rtol=4.1e-6).equal
    assert not rdiff.diff_trees(a, b, rtol=3.9e-6).equal
    assert rdiff.diff_trees(a, b, atol=1.01e-6).equal
    assert statuses(rdiff.diff_trees(a, b, atol=1.01e-6))["results/quick/curves/curve.csv"] == "close"


def test_what_differs_is_read_from_the_sidecars(trees):
    a, b = trees
    build_tree(b, value=0.3, lr=0.2, code="pass  # edited\n")
    compared = rdiff.diff_trees(a, b)
    table = next(r for r in compared.results if r.path.endswith("curve.csv"))
    assert [(c.key, c.a, c.b) for c in table.params] == [("optimizer.lr", 0.1, 0.2)]
    [code] = table.code
    assert code.key == "src/science.py" and code.a != code.b
    assert table.diagnostics == []  # cpu_seconds is how long it ran, not what it computed
    fragment = next(r for r in compared.results if r.path.endswith("paper1.tsv"))
    assert fragment.status == "same"  # same bytes: its sidecar's differing input is no concern
    assert "params: optimizer.lr 0.1 -> 0.2" in table.reason()


def test_changed_claim_verdicts_differ_whatever_the_tolerance(trees):
    a, b = trees
    build_tree(b, measured=0.5 + 1e-9, verdict="FAIL")
    compared = rdiff.diff_trees(a, b, rtol=1e-3)
    fragment = next(r for r in compared.results if r.path.endswith("paper1.tsv"))
    assert fragment.status == "differs"
    changes = {c.key: (c.a, c.b) for c in fragment.claims}
    assert changes["p1-x.verdict"] == ("pass", "FAIL")
    assert changes["p1-x.measured"] == (0.5, 0.5 + 1e-9)
    assert "1 verdict" in fragment.reason()
    assert "claims (1 fragment in both): 1 verdict changed: p1-x pass -> FAIL" in rdiff.render_diff(compared)
    assert "claims (1 fragment in both): no verdict changed" in rdiff.render_diff(rdiff.diff_trees(a, a))
    # claims.md: text equal but for numbers, and a verdict word that changed
    assert statuses(compared)["results/quick/claims.md"] == "differs"


def test_a_claim_value_within_tolerance_is_close(trees):
    a, b = trees
    build_tree(b, measured=0.5 + 1e-9)
    compared = rdiff.diff_trees(a, b, rtol=1e-6)
    assert statuses(compared)["results/quick/claims/paper1.tsv"] == "close"
    assert statuses(compared)["results/quick/claims.md"] == "same"  # 3 significant digits
    assert not rdiff.diff_trees(a, b).equal


def test_a_claims_table_computed_at_another_commit_is_close(trees):
    a, b = trees
    build_tree(b, commit="b" * 40)
    compared = rdiff.diff_trees(a, b)
    table = next(r for r in compared.results if r.path == "results/quick/claims.md")
    assert (table.status, table.note) == ("close", "the same claims; only the commit in its header differs")
    assert compared.equal


def test_a_claims_table_at_another_commit_with_another_verdict_differs(trees):
    a, b = trees
    build_tree(b, commit="b" * 40, verdict="FAIL")
    assert statuses(rdiff.diff_trees(a, b))["results/quick/claims.md"] == "differs"


def test_results_in_one_tree_only(trees):
    a, b = trees
    build_tree(b)
    (b / "results" / "quick" / "curves" / "run.npz").unlink()
    extra = b / "results" / "quick" / "curves" / "extra.csv"
    write_table(extra, {"x": np.array([1.0])})
    compared = rdiff.diff_trees(a, b)
    assert statuses(compared)["results/quick/curves/run.npz"] == "only in A"
    assert statuses(compared)["results/quick/curves/extra.csv"] == "only in B"
    assert compared.counts() == {"same": 3, "close": 0, "differs": 0, "only in A": 1, "only in B": 1}
    assert not compared.equal


def test_nan_matches_only_nan_in_the_same_place():
    tolerance = rdiff.Tolerance(rtol=0.5)
    nan, inf = float("nan"), float("inf")
    assert list(tolerance.close([nan, inf, -inf, 1.0], [nan, inf, -inf, 1.4])) == [True] * 4
    assert list(tolerance.close([nan, 1.0, inf], [1.0, nan, -inf])) == [False] * 3
    with pytest.raises(ValueError, match="rtol"):
        rdiff.Tolerance(rtol=-1.0)


def draw(path_stem: Path, commit: str, *, line=(0, 1)) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aimrepro.figures.style import save_figure

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], list(line))
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path_stem.with_suffix(".pdf"), path_stem.with_suffix(".png"),
                metadata={"commit": commit, "config_hash": "c" * 64, "dirty": commit == "x",
                          "title": "fig"})
    plt.close(fig)
    with contextlib.chdir(path_stem.parents[2]):  # the figure's sidecar, as the workflow writes it
        stem = path_stem.relative_to(path_stem.parents[2])
        write_sidecar([stem.with_suffix(".pdf"), stem.with_suffix(".png")], rule="fig", params={}, inputs=[], code=[],
                      diagnostics={}, started=T0, ended=T1)


def test_a_figure_that_differs_only_in_its_embedded_provenance_is_close(tmp_path):
    a, b, c = (tmp_path / name / "figures" / "quick" / "fig" for name in "abc")
    draw(a, "1" * 40)
    draw(b, "x")  # another commit, another length of the metadata: the offsets shift
    draw(c, "1" * 40, line=(0, 2))
    same_drawing = rdiff.diff_trees(tmp_path / "a", tmp_path / "b")
    assert a.with_suffix(".pdf").read_bytes() != b.with_suffix(".pdf").read_bytes()
    assert statuses(same_drawing) == {"figures/quick/fig.pdf": "close", "figures/quick/fig.png": "close"}
    other_drawing = rdiff.diff_trees(tmp_path / "a", tmp_path / "c")
    assert statuses(other_drawing) == {"figures/quick/fig.pdf": "differs",
                                       "figures/quick/fig.png": "differs"}
    png = next(r for r in other_drawing.results if r.path.endswith(".png"))
    assert png.note.startswith("the pixels differ:")


def test_cli_diff_prints_a_summary_and_exits_by_equality(trees, capsys):
    from aimrepro.cli import main

    a, b = trees
    build_tree(b)
    assert main(["diff", str(a), str(b)]) == 0
    assert "equal" in capsys.readouterr().out
    shutil.rmtree(b)
    build_tree(b, value=0.5)
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "NOT equal" in lines[2] and lines[3].startswith("by rule: curve 2 differs")
    assert any(line.startswith("differs  results/quick/curves/curve.csv") for line in lines)
    assert "column mse" not in out  # the breakdown only on request
    assert main(["diff", "--details", str(a), str(b)]) == 1
    assert "    column mse: max |a-b| 0.25, max rel 0.5, 1 of 3 beyond tolerance" in capsys.readouterr().out
    assert main(["diff", "--json", "--atol", "0.3", str(a), str(b)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["equal"] and record["atol"] == 0.3 and record["counts"]["close"] == 2


def test_cli_diff_refuses_bad_arguments_in_one_line(tmp_path):
    assert_usage_error(run_cli("diff", str(tmp_path), str(tmp_path / "missing")), ["B", "missing"])
    assert_usage_error(run_cli("diff", "--rtol", "-1", str(tmp_path), str(tmp_path)), ["--rtol"])


def test_a_tree_without_results_is_refused_not_called_equal(tmp_path, trees):
    a, _ = trees
    (tmp_path / "empty").mkdir()
    assert_usage_error(run_cli("diff", str(tmp_path / "empty"), str(tmp_path / "empty")),
                       ["A", "holds no results of the pipeline"])
    # a repository before its first run: no results/ or figures/, only other JSON files
    clone = tmp_path / "clone"
    (clone / "benchmarks" / "results").mkdir(parents=True)
    (clone / "benchmarks" / "results" / "amp.json").write_text('{"seconds": 1.0}\n')
    assert_usage_error(run_cli("diff", str(a), str(clone)), ["B", "holds no results of the pipeline"])


def test_the_summary_shows_a_structured_param_by_the_leaves_that_changed():
    runs_a = [{"seed": seed, "lr": 0.05, "path": f"results/sgd/lr0.05_seed{seed}.csv"} for seed in range(4)]
    runs_b = [{**run, "lr": 0.04, "path": run["path"].replace("0.05", "0.04")} for run in runs_a]
    result = rdiff.ResultDiff("figures/quick/fig.png", rdiff.DIFFERS, "figure",
                              params=[rdiff.FieldChange("runs", runs_a, runs_b)])
    reason = result.reason()
    assert reason == "params: runs[0].lr 0.05 -> 0.04, runs[1].lr 0.05 -> 0.04, runs[2].lr 0.05 -> 0.04 (+5)"
    # a list that changed length is one leaf, cut to a readable width
    longer = rdiff.ResultDiff("x.csv", rdiff.DIFFERS, "table",
                              params=[rdiff.FieldChange("dims", list(range(30)), list(range(31)))])
    assert longer.reason().startswith("params: dims [0, 1, 2") and "…" in longer.reason()
