"""The figures: one module per figure family, drawing what the rules computed.

:mod:`~aimrepro.figures.style`
    The house style, colours and the save with provenance metadata.
:mod:`~aimrepro.figures.paper1`
    Paper 1, Figures 1 and 2.
:mod:`~aimrepro.figures.paper2_dynamics`
    Paper 2, Figures 2, S1, S2, S3.
:mod:`~aimrepro.figures.paper2_moments`
    Paper 2, Figures 1, 4, S6.
:mod:`~aimrepro.figures.paper2_untied`
    Paper 2, Figures 3, S4, S5.

Figure modules draw from result tables and the science; they never import
the claims.
"""
