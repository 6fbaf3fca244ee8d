"""Where each result lives: one path specification per kind of result.

A result's path names its parameters (docs/design.md, "Readable paths"),
e.g. ``results/quick/se/hardmax_T2_rho0.5/alpha_log_0.03_10_n24.csv``.  Each
kind of result is one :class:`ResultPath`, which gives, from a single
template,

* the Snakemake output pattern of its rule (:meth:`ResultPath.outputs`),
  with its sidecar, and the log pattern (:meth:`ResultPath.log`);
* the wildcard constraints (:meth:`ResultPath.constraints`), built from
  the package's registries (channels, links, axes, ...), so that a name the
  package does not know never matches;
* the path of one result from its values (:meth:`ResultPath.format`), as
  the planners and target lists use it, and the inverse
  (:meth:`ResultPath.parse`).

A pattern is spelled once, here, so rules, planners and tests cannot drift
apart.  Numbers are written with Python's ``:g`` (:func:`fmt_number`:
``0.5``, ``1``, ``1e-05``, ``inf``); a job reads them back from its
wildcards, so a planned value is the 6-significant-digit number of its path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aimrepro.config import SCALES
from aimrepro.model import LINKS
from aimrepro.numerics.grids import SPACINGS
from aimrepro.paper1.channels import CHANNELS
from aimrepro.paper1.data import link_token
from aimrepro.paper1.thresholds import AXES
from aimrepro.paper2.sgd import NORMALISATIONS, PARAMETRISATIONS

__all__ = ["ResultPath", "fmt_number", "SCALES"]

#: A non-negative number as :func:`fmt_number` writes it: 0.5, 1, 0.0001, 1e-05.
NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?"
SIGNED = rf"-?{NUMBER}"
INTEGER = "[0-9]+"


def fmt_number(value: float) -> str:
    """Numbers in paths: Python's ``:g`` (0.5, 1, 2, 0.05, 1e-05), ``inf`` for infinity."""
    value = float(value)
    return "inf" if math.isinf(value) else f"{value:g}"


def _alternatives(names: Sequence[str]) -> str:
    # Longest first: "hardmax_paper" must be tried before "hardmax".
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


@dataclass(frozen=True)
class Field:
    """How one parameter is written into a path, and the regex of its wildcard."""

    regex: str
    write: Callable[[Any], str] = str


NUMBER_FIELD = Field(NUMBER, fmt_number)
SIGNED_FIELD = Field(SIGNED, fmt_number)
INTEGER_FIELD = Field(INTEGER, lambda value: str(int(value)))
SEED = INTEGER_FIELD


def choice(names: Sequence[str]) -> Field:
    return Field(_alternatives(names))


#: A stop overlap, or ``none`` for a run to its horizon.
STOP = Field(f"none|{NUMBER}", lambda stop: "none" if stop is None else fmt_number(stop))
#: A link or channel with its inverse temperature where it has one: softmax_beta1, hardmax.
LINK_TOKEN = Field(rf"softmax_beta{NUMBER}|{_alternatives([n for n in LINKS if n != 'softmax'])}")
CHANNEL_TOKEN = Field(
    rf"softmax_beta{NUMBER}|{_alternatives([n for n in CHANNELS if n != 'softmax'])}")
PAPER2_LINK = choice([name for name in LINKS if name != "hardmax"])


@dataclass(frozen=True)
class ResultPath:
    """One kind of result.

    Parameters
    ----------
    kind : str
        Directory below ``results/{scale}/`` (``se``, ``untied/sgd``); the log
        goes below ``results/{scale}/logs/`` under the same name.
    template : str
        The rest of the path without suffix, with ``{field}`` placeholders.
    suffix : str
        ``.csv``, ``.npz``, ...
    fields : mapping of str to Field
        One entry per placeholder.
    output : str
        The name of the result among the rule's outputs (``table``, ``run``).
    """

    kind: str
    template: str
    suffix: str
    fields: Mapping[str, Field]
    output: str = "table"
    _regex: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = re.findall(r"{(\w+)}", self.template)
        if set(names) != set(self.fields) or len(names) != len(set(names)):
            raise ValueError(f"{self.kind}: template fields {names} differ from {sorted(self.fields)}")
        regex = re.escape(self._path("{scale}", self.template, self.suffix))
        for name in ["scale", *names]:
            allowed = _alternatives(SCALES) if name == "scale" else self.fields[name].regex
            regex = regex.replace(re.escape("{" + name + "}"), f"(?P<{name}>{allowed})", 1)
        object.__setattr__(self, "_regex", re.compile(regex))

    def _path(self, scale: str, rest: str, suffix: str, root: str = "results") -> str:
        return f"{root}/{scale}/{self.kind}/{rest}{suffix}"

    # --- for rules -------------------------------------------------------

    def pattern(self, suffix: str | None = None, **fixed: Any) -> str:
        """The Snakemake pattern: wildcards ``{scale}`` and every field not ``fixed``."""
        scale, rest = self._fill(fixed)
        return self._path(scale, rest, self.suffix if suffix is None else suffix)

    def outputs(self, wrap: Callable[[str], Any] = lambda pattern: pattern,
                **fixed: Any) -> dict[str, Any]:
        """``{output: pattern, "sidecar": pattern.json}``; ``wrap`` marks the result (``temp``)."""
        return {self.output: wrap(self.pattern(**fixed)), "sidecar": self.pattern(".json", **fixed)}

    def log(self, **fixed: Any) -> str:
        scale, rest = self._fill(fixed)
        return f"results/{scale}/logs/{self.kind}/{rest}.log"

    def constraints(self) -> dict[str, str]:
        return {name: spec.regex for name, spec in self.fields.items()}

    def _fill(self, fixed: Mapping[str, Any]) -> tuple[str, str]:
        unknown = set(fixed) - set(self.fields) - {"scale"}
        if unknown:
            raise ValueError(f"{self.kind}: unknown fields {sorted(unknown)}")
        values = {name: "{" + name + "}" for name in self.fields}
        values.update({name: self.fields[name].write(v) for name, v in fixed.items() if name != "scale"})
        return str(fixed.get("scale", "{scale}")), self.template.format(**values)

    # --- for planners and tests -----------------------------------------

    def format(self, scale: str, **values: Any) -> str:
        """The path of one result; every field must be given."""
        missing = set(self.fields) - set(values)
        extra = set(values) - set(self.fields)
        if missing or extra:
            raise ValueError(f"{self.kind}: missing fields {sorted(missing)}, unknown {sorted(extra)}")
        written = {name: self.fields[name].write(value) for name, value in values.items()}
        path = self._path(scale, self.template.format(**written), self.suffix)
        if not self._regex.fullmatch(path):
            raise ValueError(f"{self.kind}: {path} does not match its own pattern (a bad value?)")
        return path

    def parse(self, path: str) -> dict[str, str]:
        """The wildcard values of a path of this kind, as strings; ValueError if it is not one."""
        match = self._regex.fullmatch(str(path))
        if match is None:
            raise ValueError(f"{path} is not a {self.kind} result path")
        return match.groupdict()


def figure_paths(scale: str, name: str) -> dict[str, str]:
    """A figure's PDF, PNG and sidecar."""
    return {ext: f"figures/{scale}/{name}.{ext}" for ext in ("pdf", "png", "json")}


# ---------------------------------------------------------------------------
# Paper 1
# ---------------------------------------------------------------------------

#: A state-evolution curve along one grid of one axis; rho 0 is the rho -> 0
#: limit (axis alphabar), inf rho -> infinity (softmax).
SE_CURVE = ResultPath(
    "se", "{channel}_T{T}_rho{rho}/{axis}_{spacing}_{lo}_{hi}_n{n}", ".csv",
    {"channel": choice(list(CHANNELS)), "T": INTEGER_FIELD, "rho": Field(f"{NUMBER}|inf", fmt_number),
     "axis": choice(AXES), "spacing": choice(SPACINGS), "lo": NUMBER_FIELD, "hi": NUMBER_FIELD,
     "n": INTEGER_FIELD})

#: Bayes-optimal and plug-in generalisation errors along one grid (through the SE
#: overlap, aimrepro.paper1.generalisation): softmax (beta 1) and the corrected hardmax.
GEN_CURVE = ResultPath(
    "se_gen", "{channel}_T{T}_rho{rho}/{axis}_{spacing}_{lo}_{hi}_n{n}", ".csv",
    {"channel": choice(["softmax", "hardmax"]), "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
     "axis": choice(["alpha", "alphaT"]), "spacing": choice(SPACINGS), "lo": NUMBER_FIELD,
     "hi": NUMBER_FIELD, "n": INTEGER_FIELD})

#: One teacher with its training and test sequences.  "seed" is the index of
#: the draw; its random numbers come from the config's seed and the dataset's
#: parameters (aimrepro.paper1.data.dataset_seed).
DATASET = ResultPath(
    "data", "{link}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}", ".npz",
    {"link": LINK_TOKEN, "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "d": INTEGER_FIELD,
     "alpha": NUMBER_FIELD, "seed": SEED}, output="data")

AMP_RUN = ResultPath(
    "amp", "{channel}_T{T}_rho{rho}_d{d}/alpha{alpha}_seed{seed}", ".npz",
    {"channel": CHANNEL_TOKEN, "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "d": INTEGER_FIELD,
     "alpha": NUMBER_FIELD, "seed": SEED}, output="run")

AMP_SUMMARY = ResultPath(
    "amp", "{channel}_T{T}_rho{rho}_d{d}/summary_seeds{n}", ".csv",
    {"channel": CHANNEL_TOKEN, "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "d": INTEGER_FIELD,
     "n": INTEGER_FIELD})

_GD_FIELDS = {"link": Field(rf"softmax_beta{NUMBER}"), "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
              "d": INTEGER_FIELD, "inits": INTEGER_FIELD}
GD_RUN = ResultPath(
    "gd", "{link}_T{T}_rho{rho}_d{d}_inits{inits}/alpha{alpha}_seed{seed}", ".npz",
    {**_GD_FIELDS, "alpha": NUMBER_FIELD, "seed": SEED}, output="run")
GD_SUMMARY = ResultPath(
    "gd", "{link}_T{T}_rho{rho}_d{d}_inits{inits}/summary_seeds{n}", ".csv",
    {**_GD_FIELDS, "n": INTEGER_FIELD})


#: The Fisher-information table F_T(m) of hardmax attention with T tokens
#: (aimrepro.paper1.hardmax_tokens, docs/paper1.md §3.6): nodes x = sqrt(1 - m)
#: from x_min to 1, n_k = nref/x_k samples at node k, fitted at degree deg
#: (the fit, FisherFit.to_dict, is in the sidecar's diagnostics; readers refit
#: the table, which is deterministic and takes milliseconds).
FISHER_TABLE = ResultPath(
    "fisher", "hardmax_T{T}_x{x_min}_k{nodes}_nref{nref}_deg{degree}_seed{seed}", ".csv",
    {"T": INTEGER_FIELD, "x_min": NUMBER_FIELD, "nodes": INTEGER_FIELD, "nref": INTEGER_FIELD,
     "degree": INTEGER_FIELD, "seed": SEED})

#: The SE curve of hardmax attention with T tokens through a Fisher table
#: (named by its nref and seed), with the MMSE's standard error.
TOKENS_SE_CURVE = ResultPath(
    "se", "hardmax_tokens_T{T}_rho{rho}/alpha_{spacing}_{lo}_{hi}_n{n}_nref{nref}_seed{seed}", ".csv",
    {"T": INTEGER_FIELD, "rho": NUMBER_FIELD, "spacing": choice(SPACINGS), "lo": NUMBER_FIELD,
     "hi": NUMBER_FIELD, "n": INTEGER_FIELD, "nref": INTEGER_FIELD, "seed": SEED})



#: GAMP-RIE with the hardmax channel of T tokens whose g_out is sampled with K proposals
#: (aimrepro.paper1.hardmax_tokens.HardmaxTokens) on the hardmax dataset of the same values.
TOKENS_AMP_RUN = ResultPath(
    "amp", "hardmax_tokens_T{T}_rho{rho}_d{d}/alpha{alpha}_K{proposals}_seed{seed}", ".npz",
    {"T": INTEGER_FIELD, "rho": NUMBER_FIELD, "d": INTEGER_FIELD, "alpha": NUMBER_FIELD,
     "proposals": INTEGER_FIELD, "seed": SEED}, output="run")


def dataset_link(name: str, beta: float | None) -> str:
    """The link token of a dataset or AMP channel (``softmax_beta1``, ``hardmax``)."""
    return link_token(name, beta)


def dataset_of(wildcards: Mapping[str, Any]) -> str:
    """The dataset an AMP or GD run reads, from the run's wildcards.

    Both hardmax channels (the published and the corrected formula) read the
    hardmax data: the channel is the algorithm's, the data are the model's.
    """
    link = wildcards.get("link") or (
        "hardmax" if wildcards["channel"].startswith("hardmax") else wildcards["channel"])
    return DATASET.format(wildcards["scale"], link=link, T=wildcards["T"], rho=wildcards["rho"],
                          d=wildcards["d"], alpha=wildcards["alpha"], seed=wildcards["seed"])


# ---------------------------------------------------------------------------
# Paper 2
# ---------------------------------------------------------------------------

_PROBLEM = {"link": PAPER2_LINK, "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
            "normalisation": choice(NORMALISATIONS), "d": INTEGER_FIELD}

#: Online SGD of one replicate; c is the loss prefactor of L = c|F(G1) - F(G2)|^2.
SGD_RUN = ResultPath(
    "sgd", "{param}_{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/"
           "lr{lr}_B{B}_wd{wd}_t{horizon}_n{records}_stop{stop}_seed{seed}", ".csv",
    {"param": choice(PARAMETRISATIONS), **_PROBLEM, "c": NUMBER_FIELD, "lr": NUMBER_FIELD,
     "B": INTEGER_FIELD, "wd": NUMBER_FIELD, "horizon": NUMBER_FIELD, "records": INTEGER_FIELD,
     "stop": STOP, "seed": SEED})

#: The deterministic reference of one replicate: tied matrix flow or direct closed ODE.
REFERENCE_FLOW = ResultPath(
    "theory", "{param}_flow/{link}_T{T}_rho{rho}_{normalisation}_d{d}/"
              "wd{wd}_t{horizon}_n{records}_seed{seed}", ".csv",
    {"param": choice(["direct", "tied"]), **_PROBLEM, "wd": NUMBER_FIELD,
     "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "seed": SEED})

#: The flows of :data:`aimrepro.paper2.theory_tables.FLOWS`, spelled here so that parsing the
#: workflow does not import the flows (a unit test keeps the two equal).
ENSEMBLE_FLOWS = ("tied", "direct", "exact")
#: Links with a polynomial loss (the exact finite-d drift and flow).
POLYNOMIAL_LINKS = ("h1", "h2", "h3", "linear")

#: Deterministic flows of replicates seed, seed + 1, ..., seed + n − 1 of one problem in one
#: table (a ``seed`` column): the tied matrix flow (tied), the closed ODE of direct S (direct)
#: or the exact finite-d tied population flow (exact); the finite-size trends of the claims.
FLOW_ENSEMBLE = ResultPath(
    "theory/ensembles", "{flow}_{link}_T{T}_rho{rho}_{normalisation}_d{d}/"
                        "wd{wd}_t{horizon}_n{records}_seed{seed}x{n}", ".csv",
    {"flow": choice(ENSEMBLE_FLOWS), **_PROBLEM, "wd": NUMBER_FIELD, "horizon": NUMBER_FIELD,
     "records": INTEGER_FIELD, "seed": SEED, "n": INTEGER_FIELD})

#: Several dimensions in one path: 100-200-400.
DIMS_FIELD = Field(f"{INTEGER}(?:-{INTEGER})*", lambda dims: "-".join(str(int(d)) for d in dims))

#: dp12/dt at W(0) of n tied replicates at each d: [P eq. 17], the matrix flow, the exact SGD drift.
TIED_VELOCITY = ResultPath(
    "theory/tied_velocity", "{link}_T{T}_rho{rho}_{normalisation}/d{dims}_seed{seed}x{n}", ".csv",
    {"link": PAPER2_LINK, "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
     "normalisation": choice(NORMALISATIONS), "dims": DIMS_FIELD, "seed": SEED,
     "n": INTEGER_FIELD})

THEOREM1 = ResultPath(
    "population/theorem1", "{links}_T{T}_rho{rho}_beta{beta}_n{n}_seed{seed}/d{d}", ".csv",
    {"links": Field(rf"(?:{_alternatives(LINKS)})(?:-(?:{_alternatives(LINKS)}))*",
                    lambda links: "-".join(links)),
     "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "beta": NUMBER_FIELD, "n": INTEGER_FIELD,
     "seed": SEED, "d": INTEGER_FIELD})

LANDSCAPE = ResultPath(
    "population/landscape", "{link}_T{T}_rho{rho}_beta{beta}_n{n}", ".csv",
    {"link": choice(LINKS), "T": INTEGER_FIELD, "rho": NUMBER_FIELD, "beta": NUMBER_FIELD,
     "n": INTEGER_FIELD})

TRUNCATIONS = ResultPath(
    "moments/truncations", "{link}_T{T}_rho{rho}_{normalisation}_c{c}_d{d}/"
                           "wd{wd}_t{horizon}_n{records}_M{orders}_seed{seed}", ".csv",
    {**_PROBLEM, "c": NUMBER_FIELD, "wd": NUMBER_FIELD, "horizon": NUMBER_FIELD,
     "records": INTEGER_FIELD,
     "orders": Field(f"{INTEGER}(?:-{INTEGER})*",
                     lambda orders: "-".join(str(int(m)) for m in sorted(orders))),
     "seed": SEED})

_LINEAR = {"rho": NUMBER_FIELD, "normalisation": choice(NORMALISATIONS), "c": NUMBER_FIELD,
           "d": INTEGER_FIELD}
RICCATI = ResultPath(
    "theory/riccati", "linear_T1_rho{rho}_{normalisation}_c{c}_d{d}/"
                      "wd{wd}_t{horizon}_n{records}_seed{seed}", ".csv",
    {**_LINEAR, "wd": NUMBER_FIELD, "horizon": NUMBER_FIELD, "records": INTEGER_FIELD,
     "seed": SEED})

TRUNCATION_ERROR = ResultPath(
    "moments/truncation_error", "linear_T1_rho{rho}_{normalisation}_c{c}_scale{s}_d{d}/"
                                "wd{wd}_t{tmin}-{horizon}_n{records}_M{M}_seed{seed}", ".csv",
    {**_LINEAR, "s": NUMBER_FIELD, "wd": NUMBER_FIELD, "tmin": NUMBER_FIELD,
     "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "M": INTEGER_FIELD, "seed": SEED})

#: The radius of convergence of the linear-case truncations at n replicates' W(0), S*.
RADIUS = ResultPath(
    "moments/radius", "linear_T1_rho{rho}_{normalisation}_c{c}_scale{s}_d{d}/"
                      "wd{wd}_seed{seed}x{n}", ".csv",
    {**_LINEAR, "s": NUMBER_FIELD, "wd": NUMBER_FIELD, "seed": SEED, "n": INTEGER_FIELD})

_UNTIED_PROBLEM = "{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}_m0{m0}_d{d}"
_UNTIED_SCHEDULE = "wd{wd}_tau{horizon}_n{records}_fast{fh}x{nf}_stop{stop}"
_UNTIED_FIELDS = {
    **_PROBLEM, "sU": NUMBER_FIELD, "sV": NUMBER_FIELD, "m2": SIGNED_FIELD,
    "m0": Field(f"none|{SIGNED}", lambda m0: "none" if m0 is None else fmt_number(m0)),
    "wd": NUMBER_FIELD, "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "fh": NUMBER_FIELD,
    "nf": INTEGER_FIELD, "stop": STOP, "seed": SEED}

#: Online SGD of untied attention, with fast (t = lr n) and slow (tau = lr n/d) records.
UNTIED_SGD = ResultPath(
    "untied/sgd", f"{_UNTIED_PROBLEM}/lr{{lr}}_B{{B}}_{_UNTIED_SCHEDULE}_seed{{seed}}", ".csv",
    {**_UNTIED_FIELDS, "lr": NUMBER_FIELD, "B": INTEGER_FIELD})

#: Theory of one untied replicate: the population flow (kind flow, with its
#: integrator, e.g. "_RK45-1e-06") or the slaved slow flow (kind limit, no method).
UNTIED_THEORY = ResultPath(
    "untied", f"{{kind}}/{_UNTIED_PROBLEM}/{_UNTIED_SCHEDULE}{{method}}_seed{{seed}}", ".csv",
    {**_UNTIED_FIELDS, "kind": choice(["flow", "limit"]),
     "method": Field(rf"|_[A-Za-z0-9]+-{NUMBER}")})

#: The untied replicate tables' problem fields (their students start from independent factors).
_UNTIED_REPLICATE_FIELDS = {"link": PAPER2_LINK, "T": INTEGER_FIELD, "rho": NUMBER_FIELD,
                            "normalisation": choice(NORMALISATIONS), "sU": NUMBER_FIELD,
                            "sV": NUMBER_FIELD, "m2": SIGNED_FIELD}

#: dq12/dtau after the fast phase of n untied replicates at each d: [P eq. 42], the slaved slow flow.
UNTIED_VELOCITY = ResultPath(
    "untied/velocity", "{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}/"
                       "d{dims}_seed{seed}x{n}", ".csv",
    {**_UNTIED_REPLICATE_FIELDS, "dims": DIMS_FIELD, "seed": SEED, "n": INTEGER_FIELD})

#: s(tau) of the slaved slow flow and the untied truncations M = 2 .. max_order, n replicates.
UNTIED_TRUNCATION = ResultPath(
    "untied/truncation", "{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}_d{d}/"
                         "tau{horizon}_n{records}_M{M}_seed{seed}x{n}", ".csv",
    {**_UNTIED_REPLICATE_FIELDS, "d": INTEGER_FIELD, "horizon": NUMBER_FIELD,
     "records": INTEGER_FIELD, "M": INTEGER_FIELD, "seed": SEED, "n": INTEGER_FIELD})

#: The untied population flow of n replicates to late tau, its excess loss and the decay of its
#: linearisation from tau0 = {start} on ([P App. F.4, Cor. 9]).
UNTIED_DECAY = ResultPath(
    "untied/decay", "{link}_T{T}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{m2}_d{d}/"
                    "tau{start}to{horizon}_n{records}_seed{seed}x{n}", ".csv",
    {**_UNTIED_REPLICATE_FIELDS, "d": INTEGER_FIELD, "start": NUMBER_FIELD,
     "horizon": NUMBER_FIELD, "records": INTEGER_FIELD, "seed": SEED, "n": INTEGER_FIELD})

#: The fast state m*(m2), the dichotomy factors and the teacher mean at which m = 0 is unstable
#: at the initial moments, over teacher means.
FAST_STATES = ResultPath(
    "untied/fast_states", "{link}_rho{rho}_{normalisation}_sU{sU}_sV{sV}_m2{lo}to{hi}_n{n}", ".csv",
    {"link": choice([name for name in LINKS if name not in ("softmax", "hardmax")]),
     "rho": NUMBER_FIELD, "normalisation": choice(NORMALISATIONS), "sU": NUMBER_FIELD,
     "sV": NUMBER_FIELD, "lo": SIGNED_FIELD, "hi": SIGNED_FIELD, "n": INTEGER_FIELD})

# ---------------------------------------------------------------------------
# Claims
# ---------------------------------------------------------------------------

#: One topic's claim rows, merged into results/{scale}/claims.md.
CLAIM_FRAGMENT = ResultPath("claims", "{topic}", ".tsv", {"topic": Field(r"[a-z0-9_]+")})


def claims_table(scale: str) -> str:
    return f"results/{scale}/claims.md"
