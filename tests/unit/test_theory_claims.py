"""The theory claims rows (docs/paper1.md §3–§4, §9): what they measure and how they judge."""

import pytest

from aimrepro.claims import paper1_theory as theory_claims


def test_measured_threshold_is_the_solvers_transition():
    assert theory_claims.measured_softmax_threshold(0.5, 2) == pytest.approx(0.1875, rel=1e-8)
    assert theory_claims.measured_softmax_threshold(0.2, 3) == pytest.approx(0.36 / 10, rel=1e-8)


def test_rows_report_the_erratum_with_its_evidence():
    rows = {r.id: r for r in theory_claims.paper1_theory_claims(theory_claims.TheoryInputs(softmax_rhos=[0.5], collapse_T_values=[3]))}
    assert rows["p1-alpha-pr-T2-rho0.5"].passed
    assert rows["p1-softmax-collapse"].passed
    assert rows["p1-alphabar-c-hardmax_paper"].passed
    corrected = rows["p1-alphabar-c-hardmax"]
    assert corrected.verdict == "erratum" and corrected.measured == pytest.approx(0.40341, abs=1e-5)
    assert corrected.expected == rows["p1-alphabar-c-hardmax_paper"].measured
    assert "B1" in corrected.note
    mmse = rows["p1-hardmax-mmse-hardmax"]
    assert mmse.verdict == "erratum" and "hardmax-mmse-hardmax_paper" not in rows
    assert mmse.measured == pytest.approx(0.374, abs=2e-3)
    # expected is the published formula's SE computed here, not a number read off the figure
    assert mmse.expected > mmse.measured + 0.2 and "p1-amp-beats-published-hardmax" in mmse.note


def test_the_perfect_recovery_claim_states_the_threshold_right_beyond_rho_one():
    rows = {r.id: r for r in theory_claims.paper1_theory_claims(theory_claims.TheoryInputs(softmax_rhos=[2.0], collapse_T_values=[3]))}
    row = rows["p1-alpha-pr-T2-rho2"]
    assert row.passed and "min(" not in row.claim and "1 beyond" in row.claim
