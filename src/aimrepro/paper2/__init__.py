"""Paper 2: learning dynamics of attention-indexed models (``docs/paper2.md``).

Modules, from the bottom up:

:mod:`~aimrepro.paper2.losses`
    Output links (softmax β, hardmax, h₁ = linear, h₂, h₃) with the first and
    second derivatives SGD and Price's theorem need; the teacher–student
    loss ℒ = c‖F_s(G₁) − F_t(G₂)‖².
:mod:`~aimrepro.paper2.matrices`
    Attention matrices as factors (S = c L Rᵀ + s I) or dense; their indices
    on a batch of tokens and the trace order parameters t, Ψ, Ω.
:mod:`~aimrepro.paper2.population`
    Theorem 1: the Gaussian-equivalent law of the indices (:class:`IndexLaw`,
    the §3.2 sampler), the potential Φ(μ, Ω, Ψ) and its gradients
    (:class:`Potential`: ``.tied(q)``, ``.gamma(q)``, ``.evaluate(law)``),
    the closed forms of §3.3, and the finite-d loss of the Theorem-1 check.
:mod:`~aimrepro.paper2.trajectory`
    :class:`OrderParameters` (``as_vector``/``from_vector``) and
    :class:`Trajectory` (order parameters on a ``t_ode`` grid, blow-up,
    weak-recovery time, CSV round trip).
:mod:`~aimrepro.paper2.sgd`
    Online SGD for direct, tied and untied students (:class:`ProblemSpec`,
    :func:`initial_problem`, :class:`SGDSettings`, :func:`run_sgd`,
    :class:`SGDRun`).
:mod:`~aimrepro.paper2.flows`
    Reference flows as pure ``rhs(t, y, params)``: the tied matrix flow and
    the closed ODE of direct S; :func:`reference_flow` starts either from
    the initial state of an SGD replicate.
:mod:`~aimrepro.paper2.experiments`
    The result tables of Figures S1 (Theorem 1 at finite d) and S2 (the landscape).
:mod:`~aimrepro.paper2.analysis`
    Measurements on trajectories (weak-recovery and escape times, initial
    slopes, the untied student mean) shared by the claims and the figures.
:mod:`~aimrepro.paper2.moments`
    The tied matrix-moment hierarchy over bracelet classes of words
    (:class:`WordBasis`, :func:`hierarchy_rhs`), its zero truncations
    (:func:`solve_truncation`), and the exactly solvable Riccati case
    (:func:`riccati_solution`, :func:`spectral_first_moment`,
    :func:`explicit_truncation`), ``docs/paper2.md`` §4.
:mod:`~aimrepro.paper2.moment_experiments`
    The result tables of Figures 1, 4 and S6.
:mod:`~aimrepro.paper2.initial_velocity`
    Initial velocities at an uninformative start: tied [P eqs. 17, 356],
    the sign of Γ₁₂ [P eq. 23], untied [P eq. 42].
:mod:`~aimrepro.paper2.finite_d_drift`
    The exact finite-d expected SGD step and population flow of tied
    attention for polynomial links (what SGD follows at finite d).
:mod:`~aimrepro.paper2.strong_recovery`
    Strong-recovery rates by linearisation at the teacher [P App. D.5, F.4].
:mod:`~aimrepro.paper2.truncation_radius`
    The radius of convergence of the linear-case truncations.
:mod:`~aimrepro.paper2.untied`
    Untied attention S = U Vᵀ: the fast and slow phases, the dichotomy, the
    hierarchy of the slow flow (§2.3, §5.3).
"""
