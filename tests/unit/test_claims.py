"""aimrepro.claims.table: claim fragments (TSV) and the merged claims.md."""

from __future__ import annotations

import pytest

from aimrepro.claims.table import (VERDICTS, ClaimRow, claim_row, merge_claims, read_claims,
                                   render_claims_markdown, write_claims)

ROW = ClaimRow(id="p1-alpha-c", paper="paper1", section="§3.5",
               claim="weak recovery at alphabar_c (rho -> 0)", expected=0.40341,
               measured=0.403412, tolerance=1e-4, verdict="pass", note="corrected g_out")
FAILING = ClaimRow(id="p1-collapse", paper="paper1", section="§4", claim="a | b collapse",
                   expected="continuous", measured="jump", tolerance="-", verdict="FAIL")
ERRATUM = ClaimRow(id="p1-b1", paper="paper1", section="§9", claim="published MMSE 0.63",
                   expected=0.63, measured=0.374, tolerance=0.01, verdict="erratum",
                   note="corrected SE 0.374; AMP reaches 0.37")


def test_fragment_round_trip(tmp_path):
    path = tmp_path / "claims" / "paper1_theory.tsv"
    write_claims(path, [ROW, FAILING])
    header = path.read_text().splitlines()[0].split("\t")
    assert header == ["id", "paper", "section", "claim", "expected", "measured", "tolerance",
                      "verdict", "note"]
    assert read_claims(path) == [ROW, FAILING]
    write_claims(path, [ERRATUM])
    assert read_claims(path) == [ERRATUM]


def test_merge_keeps_order_and_rejects_duplicate_ids(tmp_path):
    write_claims(tmp_path / "a.tsv", [ROW])
    write_claims(tmp_path / "b.tsv", [FAILING])
    assert merge_claims([tmp_path / "a.tsv", tmp_path / "b.tsv"]) == [ROW, FAILING]
    write_claims(tmp_path / "c.tsv", [ROW])
    with pytest.raises(ValueError, match="duplicate claim id 'p1-alpha-c'"):
        merge_claims([tmp_path / "a.tsv", tmp_path / "c.tsv"])


def test_render_markdown_table():
    text = render_claims_markdown([ROW, FAILING, ERRATUM], scale="quick", commit="0123456789abcdef",
                                  dirty=True,
                                  not_measured={"paper2_dynamics": "no paper2 section"})
    lines = text.splitlines()
    assert lines[0] == "# Claims of the papers, measured"
    assert "Scale **quick**" in lines[2] and "0123456789ab (uncommitted changes)" in lines[2]
    assert "3 claims: 1 pass, 1 erratum, 0 overstated, 0 informational, 1 FAIL" in lines[2]
    assert "Not measured at this scale: paper2_dynamics (no paper2 section)" in text
    # a row's section points at the notes that ship (docs/paperN.md), [P ...] at paper 2 itself
    assert "docs/paper1.md and docs/paper2.md" in text and "*[P ...]*" in text
    table = [line for line in lines if line.startswith("|")]
    assert table[0] == "| claim | expected | measured | tolerance | verdict | note |"
    assert "| 0.40341 | 0.403412 | 0.0001 | pass | corrected g_out |" in table[2]
    assert "a \\| b collapse" in table[3] and "**FAIL**" in table[3]
    assert "| 0.63 | 0.374 | 0.01 | erratum | corrected SE 0.374; AMP reaches 0.37 |" in table[4]


def test_render_without_claims():
    text = render_claims_markdown([], scale="paper", commit="unknown")
    assert "0 claims: 0 pass, 0 erratum, 0 overstated, 0 informational, 0 FAIL" in text
    assert "No claims yet." in text


def test_claim_row_checks_its_fields():
    with pytest.raises(ValueError, match="verdict must be one of"):
        ClaimRow(id="x", paper="p", section="s", claim="c", expected=1, measured=1,
                 tolerance=0, verdict="ok")
    with pytest.raises(ValueError, match="one line"):
        ClaimRow(id="x", paper="p", section="s", claim="two\nlines", expected=1, measured=1,
                 tolerance=0, verdict="pass")
    with pytest.raises(ValueError, match="non-empty"):
        ClaimRow(id=" ", paper="p", section="s", claim="c", expected=1, measured=1,
                 tolerance=0, verdict="pass")


def test_claim_row_takes_a_verdict_or_a_plain_check():
    common = dict(id="x", section="s", claim="c", expected=1, measured=1, tolerance=0)
    assert claim_row("paper2", passed=False, **common).verdict == "FAIL"
    assert claim_row("paper2", passed=True, **common).passed
    informational = claim_row("paper1", verdict="informational", **common)
    assert not informational.passed and not informational.failed
    with pytest.raises(TypeError, match="exactly one"):
        claim_row("paper1", passed=True, verdict="pass", **common)
    assert VERDICTS == ("pass", "erratum", "overstated", "informational", "FAIL")


def test_read_claims_rejects_malformed_files(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("id\tclaim\nx\ty\n")
    with pytest.raises(ValueError, match="header"):
        read_claims(path)
    write_claims(path, [ROW])
    path.write_text(path.read_text().replace("\tpass\t", "\tyes\t"))
    with pytest.raises(ValueError, match="verdict must be one of"):
        read_claims(path)
