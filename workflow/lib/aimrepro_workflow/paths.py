"""How a result is named: the path machinery every result kind uses.

A result's path names its parameters (docs/design.md, "Readable paths"),
e.g. ``results/quick/se/hardmax_T2_rho0.5/alpha_log_0.03_10_n24.csv``.  Each
kind of result (:mod:`.kinds`) declares one :class:`ResultPath`, which gives,
from a single template,

* the Snakemake output pattern of its rule (:meth:`ResultPath.outputs`),
  with its sidecar, and the log pattern (:meth:`ResultPath.log`);
* the wildcard constraints (:meth:`ResultPath.constraints`), built from
  the package's registries (channels, links, axes, ...), so that a name the
  package does not know never matches;
* the path of one result from its values (:meth:`ResultPath.format`), as
  the planner and target lists use it, and the inverse: the wildcard strings
  (:meth:`ResultPath.parse`) and the typed values (:meth:`ResultPath.values`).

Numbers are written with Python's ``:g`` (:func:`fmt_number`: ``0.5``, ``1``,
``1e-05``, ``inf``); a job reads them back from its wildcards, so a planned
value is the 6-significant-digit number of its path (:meth:`ResultPath.values`
of the formatted path is what a job sees).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aimrepro.config import SCALES
from aimrepro.model import LINKS
from aimrepro.paper1.channels import CHANNELS
from aimrepro.paper1.data import link_token

__all__ = ["Field", "ResultPath", "choice", "fmt_number", "figure_paths", "claims_table",
           "dataset_link", "SCALES"]

#: A non-negative number as :func:`fmt_number` writes it: 0.5, 1, 0.0001, 1e-05.
NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?"
SIGNED = rf"-?{NUMBER}"
INTEGER = "[0-9]+"


def fmt_number(value: float) -> str:
    """Numbers in paths: Python's ``:g`` (0.5, 1, 2, 0.05, 1e-05), ``inf`` for infinity."""
    value = float(value)
    return "inf" if math.isinf(value) else f"{value:g}"


def alternatives(names: Sequence[str]) -> str:
    # Longest first: "hardmax_paper" must be tried before "hardmax".
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


def _none_or(read: Callable[[str], Any]) -> Callable[[str], Any]:
    return lambda text: None if text == "none" else read(text)


@dataclass(frozen=True)
class Field:
    """How one parameter is written into a path, the regex of its wildcard, and how it reads back."""

    regex: str
    write: Callable[[Any], str] = str
    read: Callable[[str], Any] = str


NUMBER_FIELD = Field(NUMBER, fmt_number, float)
SIGNED_FIELD = Field(SIGNED, fmt_number, float)
INTEGER_FIELD = Field(INTEGER, lambda value: str(int(value)), int)
SEED = INTEGER_FIELD


def choice(names: Sequence[str]) -> Field:
    return Field(alternatives(names))


def integer_list(separator: str = "-", *, ordered: bool = False) -> Field:
    """Several integers in one path (100-200-400), ``ordered``: sorted when written."""
    def write(values):
        values = sorted(values) if ordered else values
        return separator.join(str(int(v)) for v in values)
    return Field(f"{INTEGER}(?:{separator}{INTEGER})*", write,
                 lambda text: [int(v) for v in text.split(separator)])


#: A stop overlap, or ``none`` for a run to its horizon.
STOP = Field(f"none|{NUMBER}", lambda stop: "none" if stop is None else fmt_number(stop),
             _none_or(float))
#: A signed number or ``none``.
SIGNED_OR_NONE = Field(f"none|{SIGNED}", lambda v: "none" if v is None else fmt_number(v),
                       _none_or(float))
#: A link or channel with its inverse temperature where it has one: softmax_beta1, hardmax.
LINK_TOKEN = Field(rf"softmax_beta{NUMBER}|{alternatives([n for n in LINKS if n != 'softmax'])}")
CHANNEL_TOKEN = Field(
    rf"softmax_beta{NUMBER}|{alternatives([n for n in CHANNELS if n != 'softmax'])}")
PAPER2_LINK = choice([name for name in LINKS if name != "hardmax"])
#: Several dimensions in one path: 100-200-400.
DIMS_FIELD = integer_list()


@dataclass(frozen=True)
class ResultPath:
    """How one kind of result is named.

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
            allowed = alternatives(SCALES) if name == "scale" else self.fields[name].regex
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

    # --- for the planner and the cost model ------------------------------------

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

    def values(self, wildcards: Mapping[str, str]) -> dict[str, Any]:
        """The typed values of a job's wildcards (or of :meth:`parse`), as the job reads them."""
        return {name: spec.read(str(wildcards[name])) for name, spec in self.fields.items()}

    def read_back(self, scale: str, **values: Any) -> tuple[str, dict[str, Any]]:
        """The path of ``values`` and the values as a job reads them back from it (6 digits)."""
        written = {name: self.fields[name].write(value) for name, value in values.items()}
        missing = set(self.fields) - set(written)
        if missing or len(written) != len(self.fields):
            raise ValueError(f"{self.kind}: missing fields {sorted(missing)}, "
                             f"unknown {sorted(set(written) - set(self.fields))}")
        path = self._path(scale, self.template.format(**written), self.suffix)
        if not self._regex.fullmatch(path):
            raise ValueError(f"{self.kind}: {path} does not match its own pattern (a bad value?)")
        return path, {name: self.fields[name].read(text) for name, text in written.items()}


def figure_paths(scale: str, name: str) -> dict[str, str]:
    """A figure's PDF, PNG and sidecar."""
    return {ext: f"figures/{scale}/{name}.{ext}" for ext in ("pdf", "png", "json")}


def claims_table(scale: str) -> str:
    return f"results/{scale}/claims.md"


def dataset_link(name: str, beta: float | None) -> str:
    """The link token of a dataset or AMP channel (``softmax_beta1``, ``hardmax``)."""
    return link_token(name, beta)
