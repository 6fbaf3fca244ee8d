"""The untied problem and record grid named by an untied result path.

Shared by the scripts of rules untied_sgd_run and untied_theory (kinds
untied_sgd_run and untied_theory in aimrepro_workflow.kinds.paper2), which read
the same wildcards, and by the replicate tables untied_velocity,
untied_truncation and untied_decay, whose student starts from its independent
factors (no m0 wildcard).
"""

from aimrepro.paper2.sgd import ProblemSpec, fast_slow_record_times


def untied_spec(wc) -> ProblemSpec:
    """ProblemSpec of wildcards link, T, rho, normalisation, sU, sV, m2, m0, d."""
    return ProblemSpec("untied", wc.link, int(wc.T), int(wc.d), rho=float(wc.rho),
                       student_rho=float(wc.rho), normalisation=wc.normalisation,
                       init_scale=float(wc.sU), init_scale_v=float(wc.sV),
                       teacher_mean=float(wc.m2),
                       init_mean=None if wc.m0 == "none" else float(wc.m0))


def untied_times(wc):
    """Record times (t_ode) of wildcards horizon, records, fh (fast horizon), nf, d."""
    return fast_slow_record_times(float(wc.horizon), int(wc.records), int(wc.d),
                                  fast_horizon=float(wc.fh), n_fast=int(wc.nf))


def untied_stop(wc):
    """The stop overlap of wildcard stop, or None."""
    return None if wc.stop == "none" else float(wc.stop)


def replicate_untied_spec(wc, d: int) -> ProblemSpec:
    """ProblemSpec of a replicate table's wildcards link, T, rho, normalisation, sU, sV, m2 at ``d``."""
    return ProblemSpec("untied", wc.link, int(wc.T), int(d), rho=float(wc.rho),
                       student_rho=float(wc.rho), normalisation=wc.normalisation,
                       init_scale=float(wc.sU), init_scale_v=float(wc.sV),
                       teacher_mean=float(wc.m2))
