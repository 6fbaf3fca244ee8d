"""The claims table: each checkable claim of the papers as a measured row.

:mod:`~aimrepro.claims.table`
    The machinery: :class:`~aimrepro.claims.table.ClaimRow`, one fragment
    per topic, the merge into ``results/{scale}/claims.md``.

One module per topic, named as its rule (``claims_<topic>``):
:mod:`~aimrepro.claims.paper1_theory`, :mod:`~aimrepro.claims.paper1_amp`,
:mod:`~aimrepro.claims.paper1_gd`, :mod:`~aimrepro.claims.paper2_dynamics`,
:mod:`~aimrepro.claims.paper2_moments`, :mod:`~aimrepro.claims.paper2_untied`.
Claims modules read results and the science; nothing imports them but
their rules.
"""
