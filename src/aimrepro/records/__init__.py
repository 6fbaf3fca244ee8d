"""Run records: how every result of the pipeline is written, described and checked.

:mod:`~aimrepro.records.files`
    Atomic writes (never a half-written result), stale temporaries, sha256.
:mod:`~aimrepro.records.tables`
    The CSV format of every tabular result.
:mod:`~aimrepro.records.sidecars`
    The provenance sidecar beside each result, and the check of an input
    against it before a job uses it.
:mod:`~aimrepro.records.lineage`
    A result's lineage tree through the sidecars, and its verification
    (``aimrepro provenance [--check]``).
:mod:`~aimrepro.records.diff`
    Two result trees compared result by result (``aimrepro diff A B``).
:mod:`~aimrepro.records.crate`
    A Workflow Run RO-Crate of a lineage (``aimrepro provenance --crate``).
:mod:`~aimrepro.records.logs`
    A step's log file.
"""
