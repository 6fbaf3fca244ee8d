"""Paper 1: Bayes-optimal learning of attention-indexed models (``docs/paper1.md``).

Modules, from the bottom up:

:mod:`~aimrepro.paper1.thresholds`
    The sample-ratio axes (α, ᾱ_ρ, ᾱ_T, α/α_PR) and the closed-form softmax
    thresholds (§1.5, §4).
:mod:`~aimrepro.paper1.spectra`
    The prior channel: law of S + √Δ Z, its Stieltjes transform, MMSE and
    the rotation-invariant denoiser (§3.2).
:mod:`~aimrepro.paper1.channels`
    Output channels (softmax, hardmax, the published ``hardmax_paper``) with
    the one contract ``log_z_out`` → ``g_out`` shared by SE and AMP (§3.3–3.4, §9 B1).
:mod:`~aimrepro.paper1.state_evolution`
    The state evolution, its curves and the ρ → 0 limit (§3).
:mod:`~aimrepro.paper1.hardmax_tokens`
    Hardmax attention with T ≥ 3 tokens (beyond the paper): the label map,
    a Nishimori estimator of the channel's information tabulated in
    m = q/Q0, its SE with standard errors, and a sampled g_out for GAMP-RIE.
:mod:`~aimrepro.paper1.data`
    Byte-reproducible AIM datasets: teacher, training and test sequences.
:mod:`~aimrepro.paper1.generalisation`
    The Bayes-optimal and plug-in generalisation errors at the SE overlap,
    the posterior-mean prediction of a new label, held-out errors (§2).
:mod:`~aimrepro.paper1.amp`
    GAMP-RIE on the tokens with its relative stopping rule (§5).
:mod:`~aimrepro.paper1.gd`
    Full-batch Adam on the tied student, K students at once (§6).
"""
