"""Paper 2: learning dynamics of attention-indexed models (``paper2.md``).

Modules, from the bottom up:

:mod:`~aimrepro.dynamics.losses`
    Output links (softmax β, hardmax, h₁ = linear, h₂, h₃) with the first and
    second derivatives SGD and Price's theorem need; the teacher–student
    loss ℒ = c‖F_s(G₁) − F_t(G₂)‖².
:mod:`~aimrepro.dynamics.matrices`
    Attention matrices as factors (S = c L Rᵀ + s I) or dense; their indices
    on a batch of tokens and the trace order parameters t, Ψ, Ω.
:mod:`~aimrepro.dynamics.population`
    Theorem 1: the Gaussian-equivalent law of the indices (:class:`IndexLaw`,
    the §3.2 sampler), the potential Φ(μ, Ω, Ψ) and its gradients
    (:class:`Potential`: ``.tied(q)``, ``.gamma(q)``, ``.evaluate(law)``),
    the closed forms of §3.3, and the finite-d loss of the Theorem-1 check.
:mod:`~aimrepro.dynamics.trajectory`
    :class:`OrderParameters` (``as_vector``/``from_vector``) and
    :class:`Trajectory` (order parameters on a ``t_ode`` grid, blow-up,
    weak-recovery time, CSV round trip).
:mod:`~aimrepro.dynamics.sgd`
    Online SGD for direct, tied and untied students (:class:`ProblemSpec`,
    :func:`initial_problem`, :class:`SGDSettings`, :func:`run_sgd`,
    :class:`SGDRun`).
:mod:`~aimrepro.dynamics.flows`
    Reference flows as pure ``rhs(t, y, params)``: the tied matrix flow and
    the closed ODE of direct S; :func:`reference_flow` starts either from
    the initial state of an SGD replicate.
:mod:`~aimrepro.dynamics.experiments`, :mod:`~aimrepro.dynamics.claims`
    The result tables of Figures S1, S2 and the ``paper2_dynamics`` claim rows.
:mod:`~aimrepro.dynamics.moments`
    The tied matrix-moment hierarchy over bracelet classes of words
    (:class:`WordBasis`, :func:`hierarchy_rhs`), its zero truncations
    (:func:`solve_truncation`), and the exactly solvable Riccati case
    (:func:`riccati_solution`, :func:`spectral_first_moment`,
    :func:`explicit_truncation`), ``paper2.md`` §4.
:mod:`~aimrepro.dynamics.moment_experiments`, :mod:`~aimrepro.dynamics.moment_claims`
    The result tables of Figures 1, 4, S6 and the ``paper2_moments`` claim rows.
"""
