"""One style for every figure, and the saving of figures with provenance.

The papers' figures share a layout (``docs/paper1.md`` §7): two panels side by
side in a 6.8 × 2.35 inch figure, tight layout, rasters at 400 dpi, one
colour per width ratio ρ taken in order from a fixed palette, theory as lines
and simulations as small dots with error bars.

Theory points whose solver did not converge are never drawn as part of a
line: :func:`plot_theory` breaks the line there and marks the point with a
hollow red circle, and :func:`annotate_unconverged` writes their count on the
figure.

The module uses :class:`matplotlib.figure.Figure` directly, never
``pyplot``: no global figure registry, no GUI backend, nothing shown.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

import aimrepro
from aimrepro.records.files import atomic_path

__all__ = [
    "FIGSIZE",
    "LIMIT_COLOUR",
    "RASTER_DPI",
    "RHO_PALETTE",
    "annotate_unconverged",
    "figure_style",
    "new_figure",
    "plot_theory",
    "read_figure_metadata",
    "rho_colours",
    "save_figure",
]

#: Width × height in inches of every two-panel figure (docs/paper1.md §7).
FIGSIZE = (6.8, 2.35)
#: Resolution of raster (PNG) output.
RASTER_DPI = 400
#: Colours assigned to the ρ values of a figure, smallest ρ first (§7: the
#: same ρ gets the same colour in both panels of a figure).
RHO_PALETTE = ("#577590", "#4d908e", "#43aa8b", "#90be6d", "#f9c74f", "#f8961e", "#f3722c")
#: Colour of limiting curves (ρ → 0, ρ → ∞) and of single-curve panels.
LIMIT_COLOUR = "black"
#: Simulation dots: marker size and error-bar line width (§7: ``ms=2``, ``lw=0.8``).
MARKER_SIZE = 2.0
ERRORBAR_WIDTH = 0.8
#: Theory lines.
LINE_WIDTH = 1.2
#: Unconverged theory points: hollow red circles, larger than the dots.
UNCONVERGED_STYLE = {
    "linestyle": "none",
    "marker": "o",
    "markersize": 3.5,
    "markerfacecolor": "none",
    "markeredgecolor": "red",
    "markeredgewidth": 0.8,
    "zorder": 5,
}

_RC_STYLE = {
    "font.size": 8,
    "axes.labelsize": 9,
    "axes.titlesize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "lines.linewidth": LINE_WIDTH,
    "lines.markersize": MARKER_SIZE,
    "savefig.dpi": RASTER_DPI,
    # Text as text in PDFs (editable, searchable) rather than Type 3 glyphs.
    "pdf.fonttype": 42,
}

#: PNG text-chunk / PDF keyword prefix of the provenance metadata.
_META_PREFIX = "aimrepro:"


@contextlib.contextmanager
def figure_style() -> Iterator[None]:
    """Context in which figures are built and saved with the shared style.

    Font sizes are read from rcParams when artists are created, so build the
    whole figure inside this context.
    """
    with matplotlib.rc_context(_RC_STYLE):
        yield


def new_figure() -> tuple[Figure, tuple[Axes, Axes]]:
    """A figure of size :data:`FIGSIZE` with two panels side by side."""
    fig = Figure(figsize=FIGSIZE)
    ax_left, ax_right = fig.subplots(1, 2)
    return fig, (ax_left, ax_right)


def rho_colours(rhos: Iterable[float]) -> dict[float, str]:
    """Map each distinct ρ to a palette colour, smallest ρ first.

    Parameters
    ----------
    rhos : iterable of float
        All finite ρ > 0 drawn in one figure (both panels together).

    Returns
    -------
    dict of float to str

    Raises
    ------
    ValueError
        If there are more distinct ρ than palette colours.
    """
    distinct = sorted({float(r) for r in rhos})
    if len(distinct) > len(RHO_PALETTE):
        raise ValueError(
            f"a figure can show at most {len(RHO_PALETTE)} values of rho, got {len(distinct)}"
        )
    return dict(zip(distinct, RHO_PALETTE))


def plot_theory(
    ax: Axes,
    x: np.ndarray,
    y: np.ndarray,
    converged: np.ndarray,
    *,
    colour: str,
    label: str | None = None,
    linestyle: str = "-",
    linewidth: float = LINE_WIDTH,
) -> int:
    """Draw a theory curve; unconverged points break the line and show as hollow red circles.

    Parameters
    ----------
    ax : Axes
    x, y : (n,) arrays
    converged : (n,) bool array
        Per-point convergence flag of the solver.
    colour, label, linestyle, linewidth
        Line style.

    Returns
    -------
    int
        Number of unconverged points (for :func:`annotate_unconverged`).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    converged = np.asarray(converged, dtype=bool)
    if not (x.shape == y.shape == converged.shape and x.ndim == 1):
        raise ValueError(f"x, y, converged must be equal-length 1-D, got "
                         f"{x.shape}, {y.shape}, {converged.shape}")
    ax.plot(x, np.where(converged, y, np.nan), color=colour, label=label,
            linestyle=linestyle, linewidth=linewidth)
    bad = ~converged
    if bad.any():
        ax.plot(x[bad], y[bad], **UNCONVERGED_STYLE)
    return int(bad.sum())


#: Colour of a note on runs that ended as the theory predicts (e.g. an erratum's divergence).
EXPLAINED_NOTE_COLOUR = "0.35"


def annotate_unconverged(fig: Figure, n_unconverged: int, n_unconverged_runs: int = 0,
                         extra: Iterable[str] = (), explained: Iterable[str] = ()) -> None:
    """Write the numbers of unconverged theory points and simulation runs at the figure's top right (if any).

    Unconverged simulation runs (e.g. AMP stopped at its iteration cap) are
    drawn as hollow markers apart from the converged mean.  ``extra``: further
    notes of the same kind (e.g. diverged GD students), appended as given.
    These are warnings, in red.  ``explained``: runs that did not converge
    because the theory says they cannot (e.g. AMP with the published hardmax
    g_out, erratum B1), said in grey so that the reader is told what they are
    instead of being alarmed.
    """
    parts = []
    if n_unconverged > 0:
        parts.append(f"{n_unconverged} unconverged SE point(s): hollow red circles")
    if n_unconverged_runs > 0:
        parts.append(f"{n_unconverged_runs} unconverged simulation run(s): hollow markers")
    parts.extend(extra)
    explained = list(explained)
    if parts:
        # As a suptitle, so that tight_layout reserves room for it.
        fig.suptitle("; ".join(parts), x=0.995, ha="right", fontsize=6, color="red")
    if explained:
        # a second line under the warnings (or in their place), in grey
        fig.text(0.005, 0.995, "; ".join(explained), ha="left", va="top", fontsize=6,
                 color=EXPLAINED_NOTE_COLOUR)
        if not parts:
            fig.suptitle(" ", fontsize=6)  # reserves the same room at the top


def save_figure(
    fig: Figure,
    pdf_path: str | os.PathLike,
    png_path: str | os.PathLike,
    metadata: Mapping[str, Any],
) -> None:
    """Save a figure as PDF and PNG, atomically, with provenance metadata.

    Parameters
    ----------
    fig : Figure
    pdf_path, png_path : path
        Destinations.  Each is written to a temporary file in its directory
        and moved into place, so a failure leaves no half-written figure.
    metadata : mapping of str to str
        At least ``commit`` and ``config_hash``.  Stored in the PDF's
        ``Keywords`` (``aimrepro:commit=...; aimrepro:config_hash=...``) and
        as PNG text chunks (``aimrepro:commit``, ...); ``title``, if given,
        also becomes the PDF/PNG title.  Read back with
        :func:`read_figure_metadata`.

    Notes
    -----
    The PDF gets no creation date, so re-rendering the same figure from the
    same inputs gives the same bytes.
    """
    missing = {"commit", "config_hash"} - set(metadata)
    if missing:
        raise ValueError(f"figure metadata needs {sorted(missing)}")
    fields = {str(k): str(v) for k, v in metadata.items()}
    for key, value in fields.items():
        if re.search(r"[;=()\\\n]", key + value) and key != "title":
            raise ValueError(f"metadata {key}={value!r} contains a reserved character")
    keywords = "; ".join(f"{_META_PREFIX}{k}={v}" for k, v in fields.items() if k != "title")
    creator = f"aimrepro {aimrepro.__version__}, matplotlib {matplotlib.__version__}"
    pdf_info = {"Keywords": keywords, "Creator": creator, "CreationDate": None}
    png_info = {f"{_META_PREFIX}{k}": v for k, v in fields.items() if k != "title"}
    png_info["Software"] = creator
    if "title" in fields:
        pdf_info["Title"] = fields["title"]
        png_info["Title"] = fields["title"]

    # Some style settings (PDF font type) are read when saving.
    with figure_style():
        fig.tight_layout()
        with atomic_path(pdf_path) as tmp:
            fig.savefig(tmp, format="pdf", metadata=pdf_info)
        with atomic_path(png_path) as tmp:
            fig.savefig(tmp, format="png", dpi=RASTER_DPI, metadata=png_info)


def read_figure_metadata(path: str | os.PathLike) -> dict[str, str]:
    """Provenance metadata embedded by :func:`save_figure` in a PDF or PNG.

    Returns
    -------
    dict of str to str
        ``{"commit": ..., "config_hash": ..., ...}`` without the prefix;
        empty if the file carries none.
    """
    path = os.fspath(path)
    if path.endswith(".png"):
        from PIL import Image  # pillow comes with matplotlib

        with Image.open(path) as image:
            text = dict(getattr(image, "text", {}))
        return {k[len(_META_PREFIX):]: v for k, v in text.items() if k.startswith(_META_PREFIX)}
    with open(path, "rb") as handle:
        raw = handle.read()
    # matplotlib writes the info dictionary uncompressed: /Keywords (...)
    found = re.search(rb"/Keywords \(([^)]*)\)", raw)
    if not found:
        return {}
    pairs = found.group(1).decode("latin-1").split("; ")
    result = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key.startswith(_META_PREFIX):
            result[key[len(_META_PREFIX):]] = value
    return result
