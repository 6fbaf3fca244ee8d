"""``snakemake --report`` on a small run: a clean build, every figure with its caption, the opening text.

A docutils error in a caption does not stop Snakemake's report build: it is
printed on stderr and drawn into the page.  These tests build the real report
of conftest's ``tiny_run`` (paper 1's two figures with SE curves, AMP and GD
markers, and the claims table) and fail on any docutils message in the build
log or the page.  The captions of the figures this run does not draw are
rendered one by one in tests/unit/test_report_text.py.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import DOCUTILS_MESSAGE, REPO, git, run_snakemake

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def report(tiny_run):
    """(repository copy, completed ``snakemake --report``, report HTML) of the tiny paper-1 run.

    report.html is ignored by git and read by no job: the run stays clean and complete for the others.
    """
    built = run_snakemake(tiny_run, "--cores", "2", "--report", "report.html")
    return tiny_run, built, (tiny_run / "report.html").read_text(encoding="utf-8")


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
    head = git(workdir, "rev-parse", "HEAD")
    assert re.search(rf"Built on \d{{4}}-\d\d-\d\d \d\d:\d\d UTC at commit "
                     rf'<tt class="docutils literal">{head[:10]}</tt>\. '
                     rf"The 3 results shown were made at that commit", text), text
