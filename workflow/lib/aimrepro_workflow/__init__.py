"""The plain-Python side of the workflow: plans, paths and checks, testable without Snakemake.

:mod:`~aimrepro_workflow.paths`
    One path specification per kind of result: pattern, constraints, log,
    format and parse.
:mod:`~aimrepro_workflow.plans`
    From the config, the results each figure and claims topic needs.
:mod:`~aimrepro_workflow.checks`
    Cross-key config checks the JSON schema cannot express.
:mod:`~aimrepro_workflow.costs`
    What each job costs (CPU seconds, memory, disk) from its wildcards: the
    rules' threads, mem_mb and runtime, and ``aimrepro cost``.
:mod:`~aimrepro_workflow.codeinputs`
    Each rule's code inputs: the import closure of its script.
:mod:`~aimrepro_workflow.report`
    The report's sentence on when and from which commits it was built.

The rule files in ``workflow/rules/`` only declare: they take their
patterns, inputs and params from here.
"""
