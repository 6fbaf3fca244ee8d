"""Loading the untied runs a figure or claims rule names (paper2_untied.smk, figures.smk, claims.smk), grouped by a key."""

from aimrepro.paper2.trajectory import Trajectory
from aimrepro.records.tables import read_table


def load_groups(runs, key, path="path"):
    """{key(run): [Trajectory, ...]} in the rule's order; ``path`` selects the SGD or theory file."""
    groups = {}
    for run in runs:
        groups.setdefault(key(run), []).append(
            Trajectory.from_columns(read_table(run[path]), run["d"]))
    return groups
