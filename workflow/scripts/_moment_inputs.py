"""Reading the replicates of a moment-hierarchy figure (rules paper2_fig1, paper2_fig4, claims).

Each replicate of Figures 1 and 4 is an SGD run (``path``), its
infinite-order reference (``flow_path``: matrix flow; ``exact_path``:
Riccati closed form) and its truncation table (``truncations_path``), as
planned by Plan.figure1_moment_runs and Plan.figure4_moment_runs.
"""

from aimrepro.paper2.moment_experiments import population_loss, read_truncations
from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.records.tables import read_table


def load_replicates(runs, reference_key):
    """{"runs", "references", "reference_losses", "truncations"}: lists over the replicates.

    The reference's loss is its ``loss`` column (Riccati tables) or Φ along
    its q (matrix flows, whose tables have none).
    """
    out = {"runs": [], "references": [], "reference_losses": [], "truncations": []}
    potential = None
    for run in runs:
        d = run["d"]
        reference = Trajectory.from_columns(read_table(run[reference_key]), d)
        if "loss" in reference.extra:
            loss = reference.column("loss")
        else:
            if potential is None:
                spec = ProblemSpec("tied", run["link"], run["T"], d, rho=run["rho"],
                                   normalisation=run["normalisation"],
                                   loss_prefactor=run["c"])
                potential = Potential(spec.loss(), spec.T)
            loss = population_loss(reference, potential)
        out["runs"].append(Trajectory.from_columns(read_table(run["path"]), d))
        out["references"].append(reference)
        out["reference_losses"].append(loss)
        out["truncations"].append(read_truncations(read_table(run["truncations_path"]), d))
    return out
