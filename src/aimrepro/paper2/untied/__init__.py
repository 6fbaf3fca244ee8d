"""Untied attention S = U Vᵀ: the fast–slow mechanism and the weak-recovery dichotomy.

Paper 2 §4 ([P eqs. 24–49], ``docs/paper2.md`` §2.3, §5.3).  The student mean
m = Tr(U Vᵀ)/√d moves at order lr per SGD step, the normalised moments at
order lr/d, so two time scales follow:

:mod:`~aimrepro.paper2.untied.fast`
    The mean on the fast time t = n·lr, moments frozen, and its fixed point.
:mod:`~aimrepro.paper2.untied.slow`
    The factors on the slow time τ = n·lr/d: the slaved slow flow (the
    d → ∞ limit) and the stiff population flow of U, V (the per-run
    reference at finite d).
:mod:`~aimrepro.paper2.untied.dichotomy`
    The weak-recovery dichotomy of the slow phase and the fast-state table.
:mod:`~aimrepro.paper2.untied.hierarchy`
    The moment hierarchy of the slow flow over words in the factors.
:mod:`~aimrepro.paper2.untied.truncation`
    Its truncation at order M [P App. F.2, Cor. 8].
"""
