"""aimrepro: reproducible replication of the attention-indexed-model papers.

The package holds the science (pure numpy/scipy functions); the Snakemake
workflow under ``workflow/`` only calls it.  Nothing here reads the config.
"""

__version__ = "0.1.0"
