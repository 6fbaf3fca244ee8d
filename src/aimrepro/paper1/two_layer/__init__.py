"""Beyond paper 1: the Bayes-optimal error of two attention layers (L = 2, T = 2; ``docs/paper1.md`` §14).

Modules, from the bottom up:

:mod:`~aimrepro.paper1.two_layer.model`
    The two-layer AIM with centred indices and skip strength c, its labels,
    and byte-reproducible datasets (§14.1).
:mod:`~aimrepro.paper1.two_layer.fibre`
    The T = 2 reduction of the label to two numbers u = K(d) e and the
    posterior of the index differences on the fibre of u (§14.2–13.3).
:mod:`~aimrepro.paper1.two_layer.fisher`
    The channel's 2×2 Fisher information by randomised quasi-Monte Carlo, its
    V → 0 limit and its table on a (V₁, V₂) grid with the cross-term slope (§14.4, §14.6).
:mod:`~aimrepro.paper1.two_layer.state_evolution`
    The replica-symmetric fixed point with its 2×2 overlap, solved per α
    (iteration into the basin, then a root), the thresholds and the c → ∞ limit (§14.4–13.6).
:mod:`~aimrepro.paper1.two_layer.amp`
    GAMP-RIE for two layers: two coupled RIE denoisers and the two-layer g_out (§14.7).
:mod:`~aimrepro.paper1.two_layer.gd`
    Full-batch Adam on the two-layer tied student (§14.8).
"""
