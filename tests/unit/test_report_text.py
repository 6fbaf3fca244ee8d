"""The report's texts: every caption and the opening text render without a docutils message.

``snakemake --report`` renders each caption (workflow/report/*.rst) as a Jinja
template, appends link targets for the report's categories and files, and
converts the result with docutils; a docutils error does not stop the build,
it only shows up in the page and on stderr.  These tests render every caption
the same way, including the captions of figures a small test run does not draw,
and fail on any docutils warning or error.  tests/workflow/test_report.py
builds the real report once.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
import yaml
from docutils.core import publish_parts

from aimrepro.records.sidecars import write_sidecar
from aimrepro_workflow.report import build_note, describe_commit

from conftest import REPO

REPORT_DIR = REPO / "workflow" / "report"
CAPTIONS = sorted(path for path in REPORT_DIR.glob("*.rst") if path.name != "workflow.rst")

#: What docutils prints for a message at warning level or above: "(WARNING/2)".
DOCUTILS_MESSAGE = re.compile(r"\((?:DEBUG|INFO|WARNING|ERROR|SEVERE)/\d\)")


def link_targets(categories, files) -> str:
    """The reST link targets Snakemake appends to each text, so that ``Claims_`` resolves."""
    names = ["Workflow", "Statistics", *categories]
    lines = [f".. _{name}: javascript:void(0)" for name in names]
    lines += [f".. _{Path(path).name}: javascript:void(0)" for path in files]
    return "\n\n" + "\n".join(lines) + "\n"


def render_report_text(text: str, *, categories=(), files=(), **context) -> tuple[str, list[str]]:
    """(HTML, docutils messages) of one report text, rendered as Snakemake renders it.

    Jinja with Snakemake's settings (trim_blocks, lstrip_blocks), but strict
    about undefined names, then docutils' HTML writer with every message of
    warning level or above captured instead of printed.
    """
    environment = jinja2.Environment(trim_blocks=True, lstrip_blocks=True,
                                     undefined=jinja2.StrictUndefined)
    records = [_file_record(path) for path in files]
    shown_categories = {_Category(name): {} for name in categories}
    rst = environment.from_string(text).render(categories=shown_categories, files=records,
                                                **context)
    rst += link_targets(categories, files)
    messages = io.StringIO()
    html = publish_parts(rst, writer="html", settings_overrides={
        "warning_stream": messages, "report_level": 2, "halt_level": 5})["html_body"]
    return html, messages.getvalue().splitlines()


class _Category:
    """A stand-in for Snakemake's report category: a hashable name."""

    def __init__(self, name: str):
        self.name = name


def _file_record(path) -> SimpleNamespace:
    """A stand-in for Snakemake's report file record, as the opening text uses it."""
    path = Path(path)
    note = lambda shown: build_note([record.path for record in shown], repository=REPO)  # noqa: E731
    rule = SimpleNamespace(module_globals={"report_build_note": note})
    return SimpleNamespace(path=path, target=path.name, job=SimpleNamespace(rule=rule))


def snakemake_for(scale: str) -> SimpleNamespace:
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["scale"] = scale
    return SimpleNamespace(config=config, wildcards={"scale": scale}, params={}, input=[],
                           output=[], log=[], rule="")


def test_the_report_has_captions_to_check():
    names = {path.stem for path in CAPTIONS}
    assert {"claims", "paper1_fig1", "paper1_fig2", "paper2_fig1", "paper2_figS6"} <= names


def test_every_caption_a_figure_rule_names_exists():
    rules = (REPO / "workflow" / "rules" / "figures.smk").read_text()
    named = set(re.findall(r'figure_outputs\("(\w+)"', rules))
    assert named and {f"{name}.rst" for name in named} <= {path.name for path in CAPTIONS}


@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda path: path.stem)
def test_caption_renders_without_a_docutils_message(caption):
    html, messages = render_report_text(caption.read_text(encoding="utf-8"),
                                        snakemake=snakemake_for("quick"))
    assert messages == []
    assert "system-message" not in html and "problematic" not in html


def test_the_check_catches_a_bar_read_as_a_substitution():
    html, messages = render_report_text("the overlap |p₁₂|/p₂₂", snakemake=snakemake_for("quick"))
    assert any("Undefined substitution referenced" in line for line in messages)
    assert all(DOCUTILS_MESSAGE.search(line) for line in messages if "(ERROR/3)" in line)


def test_absolute_values_render_as_bars():
    html, messages = render_report_text(r"the overlap \|p₁₂\|/p₂₂ and \|s\| = \|Tr(S)\|")
    assert messages == []
    assert "the overlap |p₁₂|/p₂₂ and |s| = |Tr(S)|" in html


@pytest.mark.parametrize("scale", ["quick", "paper"])
@pytest.mark.parametrize("with_results", [True, False], ids=["results", "empty"])
def test_opening_text_names_both_papers_the_scale_and_the_claims_table(scale, with_results):
    files = [REPO / "config.yaml", Path("results") / scale / "claims.md"] if with_results else []
    categories = ["Claims", "Paper 1", "Paper 2"] if with_results else []
    html, messages = render_report_text(
        (REPORT_DIR / "workflow.rst").read_text(encoding="utf-8"), categories=categories,
        files=files, snakemake=snakemake_for(scale))
    assert messages == []
    html = " ".join(html.split())
    assert "Bayes optimal learning of attention-indexed models" in html
    assert "High-Dimensional Learning Dynamics of Attention-Indexed Models" in html
    assert "companion" not in html
    assert f"This report shows the <strong>{scale}</strong> scale" in html
    assert ("claims table</a>" in html) == with_results
    assert ("Built on" in html) == with_results


# --- build_note --------------------------------------------------------------------


def _git(repository: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@invalid", "-c", "commit.gpgsign=false",
         *args], cwd=repository, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repository(tmp_path, monkeypatch) -> Path:
    """A git repository with one commit and an ignored results/, as the working directory.

    Snakemake builds the report in the repository, and sidecars name their
    outputs relative to it.
    """
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("results/\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "first")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _result(repository: Path, name: str, *, ended: str = "2026-01-02T03:04:05.000Z",
            commit: str | None = None, dirty: bool = False) -> Path:
    """A result under results/ with a sidecar recording ``ended``, ``commit`` and ``dirty``."""
    path = Path("results") / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{name}\n")
    moment = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    sidecar = write_sidecar(path, rule="r", params={}, inputs=[], code=[], diagnostics={},
                            started=moment, ended=moment, repo=repository)
    record = json.loads(sidecar.read_text())
    record["ended"] = ended
    record["git"] = {"commit": commit or _git(repository, "rev-parse", "HEAD"), "dirty": dirty}
    sidecar.write_text(json.dumps(record))
    return path


NOW = dt.datetime(2026, 3, 4, 5, 6, tzinfo=dt.timezone.utc)


def test_build_note_results_made_at_the_checkout_commit(repository):
    shown = [_result(repository, "a.csv"), _result(repository, "b.csv",
                                                   ended="2026-01-02T09:08:00.000Z")]
    head = _git(repository, "rev-parse", "HEAD")
    note = build_note(shown, repository=repository, now=NOW)
    assert note == (f"Built on 2026-03-04 05:06 UTC at commit ``{head[:10]}``.  The 2 results "
                    "shown were made at that commit, the last one on 2026-01-02 09:08 UTC.")


def test_build_note_names_each_commit_of_the_results(repository):
    old, older = "a" * 40, "b" * 40
    shown = [_result(repository, "a.csv", commit=old), _result(repository, "b.csv", commit=old),
             _result(repository, "c.csv", commit=older, dirty=True)]
    note = build_note(shown, repository=repository, now=NOW)
    assert ("The 3 results shown were made at 2 commits: ``aaaaaaaaaa`` (2 results), "
            "``bbbbbbbbbb`` (with uncommitted changes) (1 result)") in note


def test_build_note_counts_results_without_a_sidecar_or_changed_since(repository):
    changed = _result(repository, "a.csv")
    changed.write_text("edited by hand\n")
    bare = Path("results") / "bare.csv"
    bare.write_text("no sidecar\n")
    (repository / "untracked.txt").write_text("makes the checkout dirty\n")
    note = build_note([changed, bare], repository=repository, now=NOW)
    assert "(with uncommitted changes).  The 1 result shown was made at commit ``" in note
    assert "1 shown file has no readable sidecar." in note
    assert "1 shown file no longer matches its sidecar" in note


def test_build_note_outside_a_repository(tmp_path):
    note = build_note([], repository=tmp_path, now=NOW)
    assert note == "Built on 2026-03-04 05:06 UTC at an unknown commit."


def test_build_note_needs_an_aware_time(tmp_path):
    with pytest.raises(ValueError, match="now must be timezone-aware"):
        build_note([], repository=tmp_path, now=dt.datetime(2026, 1, 1))


def test_describe_commit():
    assert describe_commit("0123456789abcdef", False) == "``0123456789``"
    assert describe_commit("0123456789abcdef", True) == "``0123456789`` (with uncommitted changes)"
    assert describe_commit(None, None) == "an unknown commit"
