"""``snakemake --report`` on a small run: a clean build, every figure with its caption, the opening text.

A docutils error in a caption does not stop Snakemake's report build: it is
printed on stderr and drawn into the page.  These tests build the real report
of a small run (paper 1's two figures and the claims table, theory only) and
fail on any docutils message in the build log or the page.  The captions of the
figures this run does not draw are rendered one by one in
tests/unit/test_report_text.py.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from conftest import REPO, copy_repository, run_snakemake, science_api_missing

pytestmark = pytest.mark.workflow

#: Paper 1's two figures from four state-evolution curves of three points each,
#: no simulations (no AMP or GD sizes at this scale): eight jobs.
REPORT_CONFIG = {
    "scale": "quick",
    "scales": {
        "quick": {"se_points": {"softmax": 3, "hardmax": 3, "small_width": 3}},
        "paper": {"se_points": {"softmax": 3, "hardmax": 3, "small_width": 3}},
    },
    "paper1": {
        "figure1": {
            "T": 2,
            "channels": ["hardmax"],
            "left": {"rhos": [0.5], "alpha": {"spacing": "log", "lo": 0.1, "hi": 3}},
            "right": {"rhos": [0.5], "alphabar": {"spacing": "log", "lo": 0.2, "hi": 6},
                      "small_width_limit": False},
        },
        "figure2": {
            "left": {"T": 2, "rhos": [0.5], "alphapr": {"spacing": "lin", "lo": 0.01, "hi": 1},
                     "rho_infinity": False},
            "right": {"T": 2, "rho": 0.5, "alphaT": {"spacing": "lin", "lo": 0.01, "hi": 1}},
        },
    },
}

#: How docutils reports a message in a build log: "<string>:1: (ERROR/3) Undefined ...".
DOCUTILS_MESSAGE = re.compile(r"\((?:DEBUG|INFO|WARNING|ERROR|SEVERE)/\d\)")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """(repository copy, completed ``snakemake --report``, report HTML) of the small run."""
    if science_api_missing():
        pytest.skip(science_api_missing())
    workdir = copy_repository(tmp_path_factory.mktemp("report") / "aimrepro", REPORT_CONFIG)
    run_snakemake(workdir, "--cores", "2")
    built = run_snakemake(workdir, "--cores", "2", "--report", "report.html")
    return workdir, built, (workdir / "report.html").read_text(encoding="utf-8")


def embedded(html: str, name: str):
    """A JSON value the report embeds as ``var <name> = ...;``."""
    for found in re.finditer(rf"^\s*var {name} = (.*);$", html, re.MULTILINE):
        try:
            return json.loads(found.group(1))
        except json.JSONDecodeError:
            continue  # the same name in the report's own scripts
    pytest.fail(f"the report embeds no JSON {name}")


def test_report_builds_without_a_docutils_message(report):
    _, built, html = report
    log = built.stdout + built.stderr
    assert "Report created." in log
    assert DOCUTILS_MESSAGE.findall(log) == [], log
    assert "system-message" not in html and 'class="problematic"' not in html


def test_every_figure_is_shown_with_its_caption(report):
    workdir, _, html = report
    results = embedded(html, "results")
    figures = sorted((workdir / "figures" / "quick").glob("*.png"))
    assert [path.stem for path in figures] == ["paper1_fig1", "paper1_fig2"]
    for figure in figures:
        caption = (REPO / "workflow" / "report" / f"{figure.stem}.rst").read_text(encoding="utf-8")
        title = re.match(r"\*\*(.+?)\*\*", caption).group(1)
        shown = results[f"figures/quick/{figure.name}"]
        assert shown["caption"].startswith(f"<p><strong>{title}</strong>")
    assert "results/quick/claims.md" in results


def test_opening_text_names_the_papers_scale_claims_and_commit(report):
    workdir, _, html = report
    text = " ".join(embedded(html, "workflow_desc").split())
    assert "Bayes optimal learning of attention-indexed models" in text
    assert "High-Dimensional Learning Dynamics of Attention-Indexed Models" in text
    assert "This report shows the <strong>quick</strong> scale" in text
    assert ("href=\"javascript:app.showResultInfo('results/quick/claims.md')\">claims table</a>"
            in text)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=workdir, check=True,
                          capture_output=True, text=True).stdout.strip()
    assert re.search(rf"Built on \d{{4}}-\d\d-\d\d \d\d:\d\d UTC at commit "
                     rf'<tt class="docutils literal">{head[:10]}</tt>\. '
                     rf"The 3 results shown were made at that commit", text), text
