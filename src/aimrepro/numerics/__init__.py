"""Numerical building blocks shared by both papers.

:mod:`~aimrepro.numerics.gauss`
    Gaussian special functions (log Φ, log Φ2 with a tail-accurate regime,
    Owen's T) and Gauss quadrature rules.
:mod:`~aimrepro.numerics.grids`
    The linear and logarithmic grids of the config.
:mod:`~aimrepro.numerics.ode`
    Record times and blow-up events of the flows, and the rank-one stiff
    solver ROS2.
:mod:`~aimrepro.numerics.stats`
    Means over runs with their errors, and the control-variate mean.
"""
