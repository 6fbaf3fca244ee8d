"""The token-law tables of paper 1 as the figure and the claims read them (rules paper1_token_laws,
claims_paper1_token_laws): per trend point {(law, d): table}, and the GD tables.

The rules' params list the planned records (``Plan.token_law_amp_runs``, ``.token_law_gd_runs``):
each a point name (AMP), a law, a d and the path of its table.
"""

from aimrepro.paper1.token_law_runs import amp_table_from_columns
from aimrepro.records.tables import read_table


def amp_tables(points, runs) -> list[dict]:
    """Per point (in order), {(law token, d): ``token_law_runs.amp_replicates`` table}."""
    by_point = {point["name"]: {} for point in points}
    for run in runs:
        by_point[run["point"]][(run["law"], int(run["d"]))] = amp_table_from_columns(read_table(run["path"]))
    return [by_point[point["name"]] for point in points]


def gd_tables(runs) -> dict:
    """{(law token, d): ``token_law_runs.gd_replicates`` table}."""
    return {(run["law"], int(run["d"])): read_table(run["path"]) for run in runs}
