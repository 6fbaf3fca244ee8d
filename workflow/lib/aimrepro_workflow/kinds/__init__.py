"""The registry of result kinds: each kind of job is declared once, here.

A *kind* is what one rule makes: an SE curve, an AMP run, an untied SGD run, a
flow ensemble, a figure, a claims fragment.  Its :class:`Kind` declares

* ``path``: how its result is named (:class:`~.paths.ResultPath`; None for
  the figures and claims, whose outputs have fixed names);
* ``reads``: the config keys it reads beyond its path (the test-set size of a
  dataset, the iteration cap of AMP), by :class:`Read`;
* ``params``: its typed parameters, built from the job's values with the
  science's own spec dataclasses where the science has one
  (:class:`~aimrepro.paper1.data.DatasetSpec`, :class:`~aimrepro.paper2.sgd.ProblemSpec`
  and :class:`~aimrepro.paper2.sgd.SGDSettings`, ...);
* ``work``: what one job costs, counted from those parameters
  (:class:`~.prices.Work`: CPU work, memory from :mod:`aimrepro.resources`,
  disk, threads);
* ``sizes``: which values make a job large, each with a typical (quick-scale)
  value: the config check names the key whose value, set back to the typical
  one, shrinks the job most (``checks._driver``);
* ``inputs``: the results a job reads, when they follow from its own values
  (the dataset of an AMP run);
* ``cached``: whether Snakemake's shared result cache (``snakemake --cache``)
  may serve its results: the expensive kinds (SGD, untied SGD, GD, AMP, the
  flows), whose rules take ``cache:`` and their path's values as a param from
  here (docs/design.md, "Shared result cache").

A :class:`Job` is one job of a kind, made by the plan (:meth:`.plans.Plan.job`;
from a rule's wildcards, :meth:`.plans.Plan.job_of`): its scale, its *values*
(the fields of its path, as the job reads them back, and what it reads from the
config) and, when the planner made it, the config key each value came from
(``keys``).  Every
reader of the plan goes through these two classes: the planner
(:mod:`.plans`) makes jobs, the rules' resources and the cost model
(:mod:`.costs`) price them, and the config check (:mod:`.checks`) sizes them.

Adding a kind: docs/design.md, "Adding a result kind".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..paths import ResultPath
from ..prices import Work

__all__ = ["KINDS", "Job", "Kind", "Read", "register"]

_REQUIRED = object()


@dataclass(frozen=True)
class Read:
    """A value a kind reads from the config, not from its path.

    ``key`` is a key path with ``{scale}`` for the scale's preset
    (``scales.{scale}.data.test_samples``); ``default`` where the key may be absent.
    """

    key: str
    default: Any = _REQUIRED

    def key_at(self, scale: str) -> str:
        return self.key.format(scale=scale)

    def value(self, config: Mapping[str, Any], scale: str) -> Any:
        node: Any = config
        for part in self.key_at(scale).split("."):
            if not isinstance(node, Mapping) or part not in node:
                if self.default is _REQUIRED:
                    raise KeyError(f"config key {self.key_at(scale)} is missing")
                return self.default
            node = node[part]
        return node


@dataclass(frozen=True)
class Kind:
    """One kind of job, declared once (see the module notes).

    Attributes
    ----------
    name : the rule that makes it (datasets: one rule per scale, ``aim_dataset_<scale>``)
    path : how its result is named; None for figures and claims
    params : the typed parameters of a job (called with the :class:`Job`)
    work : what one job costs (called with the :class:`Job`)
    sizes : size-bearing values and their typical (quick-scale) value
    reads : values read from the config, by name
    inputs : the data inputs of a job, by name, when its values say what they are
    group : its row of ``aimrepro cost`` (all figures share one, all claims another)
    outputs : the outputs of a job without a path (figures, claims)
    per_scale : one rule per scale (``<name>_<scale>``)
    cached : its results may come from the shared result cache (``snakemake --cache``)
    """

    name: str
    path: ResultPath | None
    params: Callable[[Job], Any]
    work: Callable[[Job], Work]
    sizes: Mapping[str, Any] = field(default_factory=dict)
    reads: Mapping[str, Read] = field(default_factory=dict)
    inputs: Callable[[Job], Mapping[str, Any]] | None = None
    group: str | None = None
    outputs: Callable[[str], list[str]] | None = None
    per_scale: bool = False
    cached: bool = False

    def rule(self, scale: str) -> str:
        return f"{self.name}_{scale}" if self.per_scale else self.name


class Job:
    """One job of a kind: scale, values, and the config key of each planned value.

    ``values`` hold the path's fields as the job reads them back (typed,
    6-significant-digit numbers) and the kind's config reads; ``keys`` map a
    value's name to the config key it came from (a list of keys for a list of
    values, one per entry), for messages.  ``params`` and ``work`` are computed
    once, on first use.
    """

    __slots__ = ("plan", "kind", "scale", "values", "keys", "_params", "_work", "_path")

    def __init__(self, plan: Any, kind: Kind, scale: str, values: Mapping[str, Any],
                 keys: Mapping[str, Any] | None = None, path: str | None = None) -> None:
        self.plan, self.kind, self.scale = plan, kind, scale
        self.values = dict(values)
        self.keys = dict(keys or {})
        self._params = self._work = None
        self._path = path

    def __repr__(self) -> str:
        return f"Job({self.rule}, {self.path or self.scale})"

    @property
    def rule(self) -> str:
        return self.kind.rule(self.scale)

    @property
    def path(self) -> str | None:
        """The result's path (None for figures and claims)."""
        if self._path is None and self.kind.path is not None:
            spec = self.kind.path
            self._path = spec.format(self.scale, **{name: self.values[name] for name in spec.fields})
        return self._path

    @property
    def outputs(self) -> list[str]:
        """Every file the job writes: its result and sidecar, or a figure's or claims' files."""
        if self.kind.path is not None:
            return [self.path, self.path.removesuffix(self.kind.path.suffix) + ".json"]
        return self.kind.outputs(self.scale)

    @property
    def params(self) -> Any:
        """The typed parameters (:attr:`Kind.params`); ValueError if the science refuses them."""
        if self._params is None:
            self._params = self.kind.params(self)
        return self._params

    @property
    def work(self) -> Work:
        if self._work is None:
            self._work = self.kind.work(self)
        return self._work

    def inputs(self) -> dict[str, Any]:
        """The data inputs its values name (:attr:`Kind.inputs`), by input name."""
        return dict(self.kind.inputs(self)) if self.kind.inputs else {}

    def with_values(self, **changes: Any) -> Job:
        """The same job with some values replaced (the config check's what-if)."""
        return Job(self.plan, self.kind, self.scale, {**self.values, **changes}, self.keys)


class Registry(dict):
    """The kinds by name, with the lookups the rules and the cost model need."""

    def of_rule(self, rule: str) -> Kind:
        """The kind a rule makes (``aim_dataset_quick`` → ``aim_dataset``)."""
        if rule in self:
            return self[rule]
        name, _, scale = rule.rpartition("_")
        if name in self and self[name].per_scale:
            return self[name]
        raise ValueError(f"rule {rule!r} is not a registered kind; known: {sorted(self)}")

    def results(self) -> list[Kind]:
        """The kinds with a result path (every rule but the figures and claims)."""
        return [kind for kind in self.values() if kind.path is not None]

    def cached(self) -> list[Kind]:
        """The kinds the shared result cache may serve (:attr:`Kind.cached`)."""
        return [kind for kind in self.values() if kind.cached]


#: Every kind, by name.
KINDS = Registry()


def register(kind: Kind) -> Kind:
    if kind.name in KINDS:
        raise ValueError(f"kind {kind.name!r} is declared twice")
    KINDS[kind.name] = kind
    return kind


# The declarations register themselves.
from . import paper1, paper2, outputs  # noqa: E402,F401
