"""A Workflow Run RO-Crate of results' lineage: what to deposit with a paper.

:func:`write_crate` describes the lineage of one or more results or figures
(:mod:`aimrepro.records.lineage`) as a *Provenance Run Crate*, the most
detailed profile of Workflow Run RO-Crate (https://w3id.org/ro/wfrun/provenance/0.5,
on RO-Crate 1.1), which WorkflowHub and Zenodo accept: a directory (or a
zip file) holding ``ro-crate-metadata.json`` and the files it describes.

What the crate holds
--------------------
* The workflow: ``Snakefile`` (the main entity, a ``ComputationalWorkflow``
  in Snakemake), its rule files, planners, schema, profiles and
  ``config.yaml``, ``pyproject.toml``, ``LICENSE`` and ``CITATION.cff``.
* Per rule of the lineage, a tool (``SoftwareApplication``) made of its
  code files (the script's import closure its sidecars recorded), with the
  software versions it ran with, and a ``HowToStep`` of the workflow.
* Per job (per sidecar), a ``CreateAction``: the rule as instrument, the
  data inputs and the parameters (``PropertyValue`` per parameter:
  wildcards, rule params, solver settings, seed, config hash) as object,
  the outputs as result, start and end times, the host as location, CPU
  time, wall time and peak memory as resource usage; a ``ControlAction``
  ties it to its step, and one ``OrganizeAction`` (the Snakemake engine)
  orchestrates them all into the run of the workflow (a ``CreateAction``
  whose result is the targets).
* Every file with its sha256 (the ``sha256`` term of the workflow-run
  vocabulary), each result with its sidecar beside it.  A result reused from
  another working directory (Snakemake's shared cache) says where it was
  made; a file the lineage no longer has (a temporary dataset of the paper
  scale) is described by its recorded sha256 but not included.
* License and citation from the repository's ``LICENSE`` (its SPDX
  identifier) and ``CITATION.cff`` (title, version, authors, and the
  papers reproduced, as ``citation``).

A crate is only written of a lineage that verifies
(:func:`aimrepro.records.lineage.check_lineage`): otherwise it would
describe files that are not what made the results.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import tempfile
import zipfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aimrepro.records.files import PathLike, atomic_path, file_sha256
from aimrepro.records.lineage import LineageNode, _workdir_of, check_lineage, lineage
from aimrepro.records.sidecars import flattened, sidecar_path

__all__ = ["CrateError", "CrateSummary", "PROFILES", "write_crate"]

#: RO-Crate 1.1 with the workflow-run vocabulary: the contexts of Workflow Run RO-Crate 0.5.
CONTEXT = ["https://w3id.org/ro/crate/1.1/context", "https://w3id.org/ro/terms/workflow-run/context"]
#: The profiles the crate conforms to: (permalink, name, version).
PROFILES = (("https://w3id.org/ro/wfrun/process/0.5", "Process Run Crate", "0.5"),
            ("https://w3id.org/ro/wfrun/workflow/0.5", "Workflow Run Crate", "0.5"),
            ("https://w3id.org/ro/wfrun/provenance/0.5", "Provenance Run Crate", "0.5"),
            ("https://w3id.org/workflowhub/workflow-ro-crate/1.0", "Workflow RO-Crate", "1.0"))
SNAKEMAKE_LANGUAGE = "https://w3id.org/workflowhub/workflow-ro-crate#snakemake"
#: The profile of the main workflow (Workflow RO-Crate recommends Bioschemas' ComputationalWorkflow).
BIOSCHEMAS_WORKFLOW = "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"
#: ``actionStatus`` of a finished job (Process Run Crate wants the IRI as a string).
COMPLETED = "http://schema.org/CompletedActionStatus"
#: Where each piece of software of the sidecars' ``versions`` is published: a URL per version.
SOFTWARE_URLS = {"python": "https://www.python.org/downloads/release/python-{compact}/"}
PYPI = "https://pypi.org/project/{name}/{version}/"
METADATA = "ro-crate-metadata.json"

#: The workflow's own files, below the repository, as glob patterns.
WORKFLOW_FILES = ("Snakefile", "config.yaml", "pyproject.toml", "workflow/rules/*.smk",
                  "workflow/lib/aimrepro_workflow/*.py", "workflow/schemas/*.yaml",
                  "profiles/*/config.yaml", "LICENSE", "CITATION.cff", "README.md")
#: Licenses recognised from the first line of LICENSE: SPDX identifier and name.
LICENSES = {"MIT License": ("MIT", "MIT License"),
            "Apache License": ("Apache-2.0", "Apache License 2.0"),
            "BSD 3-Clause License": ("BSD-3-Clause", "BSD 3-Clause License"),
            "GNU GENERAL PUBLIC LICENSE": ("GPL-3.0-or-later", "GNU General Public License v3.0 or later")}
MEDIA_TYPES = {".csv": "text/csv", ".tsv": "text/tab-separated-values", ".json": "application/json",
               ".md": "text/markdown", ".pdf": "application/pdf", ".png": "image/png",
               ".npz": "application/zip", ".py": "text/x-python", ".yaml": "application/yaml",
               ".toml": "application/toml", ".cff": "application/yaml", ".smk": "text/x-python"}
#: Resource usage recorded in a sidecar: (field, name, UN/CEFACT unit code).
RESOURCE_USAGE = (("cpu_seconds", "CPU time", "SEC"), ("wall_seconds", "wall time", "SEC"),
                  ("peak_rss_bytes", "peak resident memory", "AD"))


class CrateError(ValueError):
    """The crate cannot be written (the lineage does not verify, a bad target); one line."""


@dataclass(frozen=True)
class CrateSummary:
    """What a written crate holds."""

    path: Path
    n_jobs: int
    n_rules: int
    n_files: int
    n_missing: int
    n_entities: int
    entities: dict[str, int]

    def describe(self) -> str:
        """One line: jobs, rules, files, and the entities by type (one with several types under each)."""
        counts = ", ".join(f"{n} {kind}" for kind, n in self.entities.items())
        missing = f" ({self.n_missing} described but absent)" if self.n_missing else ""
        return (f"{self.path}: {self.n_jobs} jobs of {self.n_rules} rules, {self.n_files} files"
                f"{missing}; {self.n_entities} entities, by type: {counts}")


def write_crate(targets: Sequence[PathLike], out: PathLike, *, repository: PathLike | None = None,
                published: _dt.datetime | None = None) -> CrateSummary:
    """Write a Provenance Run Crate of the lineage of ``targets`` to ``out``.

    Parameters
    ----------
    targets : sequence of paths
        Results or figures of one working directory.
    out : path
        A new directory, or a ``.zip`` file (the crate zipped).  Must not exist.
    repository : path, optional
        The working directory the workflow ran in (with ``Snakefile``,
        ``LICENSE``, ``CITATION.cff``); default: inferred from the first
        target's sidecar.
    published : datetime, optional
        ``datePublished`` of the crate; default now.

    Returns
    -------
    CrateSummary

    Raises
    ------
    CrateError
        No target, ``out`` exists, a target has no sidecar, or the lineage
        does not verify (a file or code file changed since it was used).
    """
    if not targets:
        raise CrateError("give at least one result or figure")
    out = Path(out)
    if out.exists():
        raise CrateError(f"{out} exists; the crate goes to a new directory or .zip file")
    roots = []
    for target in targets:
        checked = check_lineage(target)
        problems = _refusals(checked.root)
        if problems:
            raise CrateError(f"the lineage of {target} does not verify ({len(problems)} problem"
                             f"{'s' * (len(problems) > 1)}, first: {problems[0]}; see "
                             f"`aimrepro provenance --check {target}`)")
        if checked.root.sidecar is None:
            raise CrateError(f"{target} has no sidecar: not a result of the pipeline")
        roots.append(checked.root)
    workdirs = {_workdir_of(root.resolved, root.sidecar, _output_key(root)) for root in roots}
    if len(workdirs) > 1:
        # one crate describes one run: its config, workflow and code files are those of one repository
        raise CrateError(f"the targets come from {len(workdirs)} working directories "
                         f"({', '.join(sorted(map(str, workdirs)))}); a crate describes one run: "
                         f"make one crate per working directory")
    repo = Path(os.path.abspath(repository)) if repository is not None else workdirs.pop()
    builder = _CrateBuilder(repo, published or _dt.datetime.now(_dt.timezone.utc))
    graph = builder.build(roots)
    files = builder.files
    metadata = json.dumps({"@context": CONTEXT, "@graph": graph}, indent=2, ensure_ascii=False)
    if out.suffix == ".zip":
        _write_zip(out, metadata, files)
    else:
        _write_directory(out, metadata, files)
    types = Counter(kind for entity in graph for kind in _types(entity))
    return CrateSummary(path=out, n_jobs=len(builder.jobs), n_rules=len(builder.rules),
                        n_files=len(files), n_missing=len(builder.missing), n_entities=len(graph),
                        entities=dict(sorted(types.items(), key=lambda item: (-item[1], item[0]))))


def _refusals(root: LineageNode) -> list[str]:
    """What in a lineage forbids a crate: every problem of ``--check`` but two.

    A data file gone since it was used (a temporary dataset) and a raw input
    without a sidecar that matches its consumer's record are described from
    the records; a changed file, a changed or missing code file, a malformed
    sidecar are not.
    """
    problems = []
    for node in root.walk():
        if node.status not in ("ok", "missing", "no sidecar"):
            problems.append(f"{node.path}: {node.status}")
        problems += [f"{node.path}: code {code}: {state}" for code, state in node.code_status.items()
                     if state != "ok"]
    return list(dict.fromkeys(problems))


def _types(entity: Mapping[str, Any]) -> list[str]:
    kinds = entity["@type"]
    return [kinds] if isinstance(kinds, str) else list(kinds)


def _output_key(node: LineageNode) -> str:
    for name in node.sidecar["outputs"]:
        if Path(name).name == node.resolved.name:
            return name
    return next(iter(node.sidecar["outputs"]))


def _write_directory(out: Path, metadata: str, files: Mapping[str, Path]) -> None:
    """The crate as a directory, built beside ``out`` and renamed into place when complete."""
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        for name, source in files.items():
            destination = building / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
        (building / METADATA).write_text(metadata + "\n", encoding="utf-8")
        os.replace(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def _write_zip(out: Path, metadata: str, files: Mapping[str, Path]) -> None:
    with atomic_path(out) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(METADATA, metadata + "\n")
            for name, source in files.items():
                archive.write(source, name)


def _uri(path: str) -> str:
    """A relative path as the @id of a data entity (percent-encoded where needed)."""
    return quote(path, safe="/._-+=,~")


class _CrateBuilder:
    """Collects the entities of one crate: files, tools, steps, jobs."""

    def __init__(self, repository: Path, published: _dt.datetime) -> None:
        self.repo = repository
        self.published = published
        self.entities: dict[str, dict[str, Any]] = {}
        self.files: dict[str, Path] = {}  # crate name -> source
        self.missing: set[str] = set()
        self.jobs: dict[str, dict[str, Any]] = {}  # sidecar name -> its action
        self.rules: dict[str, dict[str, Any]] = {}  # rule -> its tool

    # --- entities ---------------------------------------------------------------------

    def add(self, entity: dict[str, Any]) -> dict[str, Any]:
        """Add an entity, or merge its properties into the one with the same @id."""
        existing = self.entities.get(entity["@id"])
        if existing is None:
            self.entities[entity["@id"]] = entity
            return entity
        for key, value in entity.items():
            if key not in existing:
                existing[key] = value
            elif isinstance(existing[key], list) and isinstance(value, list):
                existing[key] += [v for v in value if v not in existing[key]]
        return existing

    def file(self, path: Path, *, sha256: str | None = None, **properties: Any) -> dict[str, Any]:
        """The data entity of a file of the working directory, copied into the crate if present."""
        name = self.crate_name(path)
        present = path.is_file()
        entity = {"@id": _uri(name), "@type": "File", "name": name,
                  "encodingFormat": MEDIA_TYPES.get(path.suffix, "application/octet-stream")}
        if present:
            self.files[name] = path
            entity["sha256"] = file_sha256(path) if sha256 is None else sha256
            entity["contentSize"] = str(path.stat().st_size)
        else:
            self.missing.add(name)
            entity["sha256"] = sha256
            entity["description"] = ("Not included: absent when the crate was written (a temporary "
                                     "result); the sha256 is the one recorded when it was used. "
                                     f"`snakemake {name}` rebuilds it.")
        entity.update(properties)
        return self.add(entity)

    def crate_name(self, path: Path) -> str:
        absolute = Path(os.path.abspath(path))
        try:
            return absolute.relative_to(self.repo).as_posix()
        except ValueError:
            return f"external/{absolute.name}"

    def ref(self, entity_or_id: Mapping[str, Any] | str) -> dict[str, str]:
        return {"@id": entity_or_id if isinstance(entity_or_id, str) else entity_or_id["@id"]}

    # --- the graph ----------------------------------------------------------------------

    def build(self, roots: Sequence[LineageNode]) -> list[dict[str, Any]]:
        nodes = self.job_nodes(roots)
        workflow = self.workflow()
        engine_versions = set()
        controls = []
        steps: dict[str, dict[str, Any]] = {}
        for position, (name, node) in enumerate(nodes.items()):
            rule = node.sidecar["rule"]
            if rule not in self.rules:
                self.rules[rule] = self.tool(rule, node)
                steps[rule] = self.add({
                    "@id": f"#step-{rule}", "@type": "HowToStep", "name": f"rule {rule}",
                    "position": str(len(steps)), "workExample": self.ref(self.rules[rule])})
            self.extend_tool(self.rules[rule], node)
            action = self.job(name, node, self.rules[rule])
            engine_versions.add((node.sidecar.get("versions") or {}).get("snakemake"))
            controls.append(self.add({
                "@id": f"#control-{name}", "@type": "ControlAction",
                "name": f"orchestrate rule {rule} for {name}",
                "instrument": self.ref(steps[rule]), "object": self.ref(action),
                "actionStatus": COMPLETED}))
        workflow["hasPart"] = [self.ref(tool) for tool in self.rules.values()]
        workflow["step"] = [self.ref(step) for step in steps.values()]
        run = self.workflow_run(roots, nodes, workflow)
        versions = sorted(v for v in engine_versions if v)
        engine = self.add(_software("snakemake", versions[0]) if len(versions) == 1 else {
            "@id": "#snakemake", "@type": "SoftwareApplication", "name": "Snakemake",
            "url": {"@id": "https://snakemake.readthedocs.io"}, "version": ", ".join(versions)})
        self.add({"@id": "#engine-run", "@type": "OrganizeAction",
                  "name": f"Run of Snakemake {engine['version']}", "instrument": self.ref(engine),
                  "description": "The workflow engine, which ran the jobs of the lineage (its own "
                                 "times: the first job's start and the last job's end).",
                  "object": [self.ref(c) for c in controls], "result": self.ref(run),
                  "startTime": run["startTime"], "endTime": run["endTime"],
                  "actionStatus": COMPLETED})
        self.root(roots, workflow, run)
        # RO-Crate 1.1 (its JSON-LD recommendations): one value, not a list of one
        return [{key: value[0] if isinstance(value, list) and len(value) == 1 and key != "@type"
                 else value for key, value in entity.items()}
                for entity in self.entities.values()]

    def job_nodes(self, roots: Sequence[LineageNode]) -> dict[str, LineageNode]:
        """Every job of the lineages, once, keyed by its sidecar's crate name, inputs first."""
        found: dict[str, LineageNode] = {}

        def visit(node: LineageNode) -> None:
            for child in node.children:
                visit(child)
            if node.sidecar is not None:
                found.setdefault(self.crate_name(sidecar_path(node.resolved)), node)

        for root in roots:
            visit(root)
        return found

    def workflow(self) -> dict[str, Any]:
        for pattern in WORKFLOW_FILES:
            for path in sorted(self.repo.glob(pattern)):
                if path.name != "Snakefile":
                    self.file(path)
        self.add({"@id": SNAKEMAKE_LANGUAGE, "@type": "ComputerLanguage", "name": "Snakemake",
                  "identifier": {"@id": "https://snakemake.readthedocs.io"},
                  "url": {"@id": "https://snakemake.readthedocs.io"}})
        config = self.add({"@id": "#param-config", "@type": "FormalParameter", "name": "config",
                           "additionalType": "File", "encodingFormat": "application/yaml",
                           "description": "The configuration: scale presets and the science of "
                                          "each figure (config.yaml)."})
        targets = self.add({"@id": "#param-targets", "@type": "FormalParameter", "name": "targets",
                            "additionalType": "File",
                            "description": "The results and figures asked for."})
        return self.file(self.repo / "Snakefile", **{
            "@type": ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"],
            "name": "Snakefile", "programmingLanguage": self.ref(SNAKEMAKE_LANGUAGE),
            "input": [self.ref(config)], "output": [self.ref(targets)],
            "conformsTo": self.ref(self.add({"@id": BIOSCHEMAS_WORKFLOW, "@type": "CreativeWork",
                                             "name": "Bioschemas ComputationalWorkflow profile",
                                             "version": "1.0-RELEASE"})),
            "description": "The aimrepro workflow: one config.yaml to every figure of both papers."})

    def tool(self, rule: str, node: LineageNode) -> dict[str, Any]:
        return self.add({
            "@id": f"#rule-{rule}", "@type": "SoftwareApplication", "name": f"rule {rule}",
            "description": f"The Snakemake rule {rule}: its script and every module of the "
                           "package it imports (the code files it is made of).",
            "hasPart": [], "input": [],
            "output": [self.ref(self.add({
                "@id": f"#rule-{rule}-outputs", "@type": "FormalParameter", "name": "outputs",
                "additionalType": "File"}))],
            "softwareRequirements": [], "version": _version_of(node.sidecar)})

    def extend_tool(self, tool: dict[str, Any], node: LineageNode) -> None:
        record = node.sidecar
        workdir = _workdir_of(node.resolved, record, _output_key(node))
        for code, sha in sorted(record["code"].items()):
            path = Path(code) if Path(code).is_absolute() else workdir / code
            entity = self.file(path, sha256=sha)
            if self.ref(entity) not in tool["hasPart"]:
                tool["hasPart"].append(self.ref(entity))
        versions = {**(record.get("versions") or {}), "aimrepro": record.get("aimrepro_version")}
        for name, version in sorted(versions.items()):
            if version is None:
                continue
            software = self.add(_software(name, str(version)))
            if self.ref(software) not in tool["softwareRequirements"]:
                tool["softwareRequirements"].append(self.ref(software))

    def parameter(self, tool: dict[str, Any], key: str) -> dict[str, Any]:
        rule = tool["@id"].removeprefix("#rule-")
        formal = self.add({"@id": f"#rule-{rule}-param-{key}", "@type": "FormalParameter",
                           "name": key, "additionalType": "Text"})
        if self.ref(formal) not in tool["input"]:
            tool["input"].append(self.ref(formal))
        return formal

    def job(self, name: str, node: LineageNode, tool: dict[str, Any]) -> dict[str, Any]:
        record = node.sidecar
        rule = record["rule"]
        workdir = _workdir_of(node.resolved, record, _output_key(node))
        action_id = f"#job-{name}"
        inputs = []
        for child in node.children:
            formal = self.add({"@id": f"#rule-{rule}-inputs", "@type": "FormalParameter",
                               "name": "data inputs", "additionalType": "File"})
            if self.ref(formal) not in tool["input"]:
                tool["input"].insert(0, self.ref(formal))
            entity = self.file(child.resolved, sha256=record["inputs"].get(child.path))
            self.link_parameter(entity, formal["@id"])
            inputs.append(self.ref(entity))
        outputs = []
        for output, sha in record["outputs"].items():
            path = Path(output) if Path(output).is_absolute() else workdir / output
            entity = self.file(path, sha256=sha)
            self.link_parameter(entity, f"#rule-{rule}-outputs")
            outputs.append(self.ref(entity))
        side = self.file(sidecar_path(node.resolved), **{
            "about": [self.ref(o) for o in outputs], "conformsTo": self.ref("#sidecar-schema")})
        self.add({"@id": "#sidecar-schema", "@type": "CreativeWork", "name": "aimrepro.sidecar/1",
                  "description": "aimrepro's provenance sidecar (docs/design.md, 'Provenance "
                                 "sidecar'): sha256 of outputs, inputs and code, parameters, "
                                 "software, host and times of the step."})
        values = []
        params = flattened({**(record.get("params") or {}), "seed": record.get("seed"),
                           "config_hash": record.get("config_hash")})
        for key, value in params.items():
            formal = self.parameter(tool, key)
            values.append(self.ref(self.add({
                "@id": f"{action_id}-param-{key}", "@type": "PropertyValue", "name": key,
                "value": value if isinstance(value, (int, float, str, bool)) else json.dumps(value),
                "exampleOfWork": self.ref(formal)})))
        host = record.get("host") or "unknown"
        location = self.add({"@id": f"#host-{host}", "@type": "Place", "name": host,
                             "description": "the host a job ran on"})
        usage = []
        for field, label, unit in RESOURCE_USAGE:
            if isinstance(record.get(field), (int, float)):
                usage.append(self.ref(self.add({
                    "@id": f"{action_id}-{field}", "@type": "PropertyValue", "name": label,
                    "propertyID": field, "value": record[field], "unitCode": unit})))
        description = [f"rule {rule}, in {record.get('workdir')} on {host}",
                       f"commit {(record.get('git') or {}).get('commit')}"
                       + (" with uncommitted changes" if (record.get("git") or {}).get("dirty") else "")]
        if record.get("slurm_job_id"):
            description.append(f"Slurm job {record['slurm_job_id']}")
        if node.reused is not None:
            description.append("reused here from " + (
                f"the shared cache entry {node.reused['cache_entry']}" if node.reused["cache_entry"]
                else "another working directory"))
        action = {"@id": action_id, "@type": "CreateAction", "name": f"Run of rule {rule} for {name}",
                  "description": "; ".join(description), "instrument": self.ref(tool),
                  "object": inputs + values, "result": outputs + [self.ref(side)],
                  "startTime": _iso(record.get("started")), "endTime": _iso(record.get("ended")),
                  "location": self.ref(location), "resourceUsage": usage,
                  "actionStatus": COMPLETED}
        self.jobs[name] = self.add({k: v for k, v in action.items() if v is not None})
        return self.jobs[name]

    def link_parameter(self, entity: dict[str, Any], formal: str) -> None:
        linked = entity.setdefault("exampleOfWork", [])
        if self.ref(formal) not in linked:
            linked.append(self.ref(formal))

    def workflow_run(self, roots: Sequence[LineageNode], nodes: Mapping[str, LineageNode],
                     workflow: Mapping[str, Any]) -> dict[str, Any]:
        config = self.file(self.repo / "config.yaml")
        self.link_parameter(config, "#param-config")
        raw = [child for node in nodes.values() for child in node.children if child.sidecar is None]
        results = []
        for root in roots:
            for output in root.sidecar["outputs"]:
                entity = self.entities[_uri(self.crate_name(
                    _workdir_of(root.resolved, root.sidecar, _output_key(root)) / output))]
                self.link_parameter(entity, "#param-targets")
                results.append(self.ref(entity))
        return self.add({
            "@id": "#workflow-run", "@type": "CreateAction",
            "name": "Run of the aimrepro workflow for " + ", ".join(r["@id"] for r in results),
            "instrument": self.ref(workflow),
            "object": [self.ref(config)] + [self.ref(self.file(c.resolved)) for c in raw],
            "result": results,
            "startTime": min(job["startTime"] for job in self.jobs.values()),
            "endTime": max(job["endTime"] for job in self.jobs.values()),
            "description": "The jobs of the run that made the targets, from the sidecars; each is "
                           "a CreateAction orchestrated by the OrganizeAction #engine-run.",
            "actionStatus": COMPLETED})

    def root(self, roots: Sequence[LineageNode], workflow: Mapping[str, Any],
             run: Mapping[str, Any]) -> None:
        citation = _read_citation(self.repo / "CITATION.cff")
        license_ = _license_of(self.repo / "LICENSE")
        self.add({"@id": METADATA, "@type": "CreativeWork", "about": {"@id": "./"},
                  "conformsTo": [{"@id": "https://w3id.org/ro/crate/1.1"},
                                 {"@id": "https://w3id.org/workflowhub/workflow-ro-crate/1.0"}]})
        for uri, name, version in PROFILES:
            self.add({"@id": uri, "@type": "CreativeWork", "name": name, "version": version})
        root = {"@id": "./", "@type": "Dataset",
                "name": f"{citation.get('title', 'aimrepro')}: the lineage of "
                        + ", ".join(node.path for node in roots),
                "description": (f"A Provenance Run Crate of {len(self.jobs)} jobs of "
                                f"{len(self.rules)} rules that made "
                                + ", ".join(node.path for node in roots)
                                + ": each job with its inputs, outputs, parameters, code files "
                                  "and their sha256, times and host, from the provenance sidecars "
                                  "of the aimrepro pipeline."),
                "datePublished": self.published.astimezone(_dt.timezone.utc).isoformat(
                    timespec="seconds").replace("+00:00", "Z"),
                "conformsTo": [{"@id": uri} for uri, _, _ in PROFILES],
                "mainEntity": self.ref(workflow),
                "mentions": [self.ref(run), *(self.ref(job) for job in self.jobs.values())],
                "hasPart": []}
        workflow["version"] = _version_of(roots[0].sidecar)
        readme = self.entities.get("README.md")
        if readme is not None:
            readme["about"] = {"@id": "./"}
        if license_ is not None:
            spdx, name = license_
            root["license"] = self.ref(self.add({"@id": f"https://spdx.org/licenses/{spdx}",
                                                 "@type": "CreativeWork", "name": name,
                                                 "identifier": spdx}))
        if "version" in citation:
            root["version"] = str(citation["version"])
        if citation.get("keywords"):
            root["keywords"] = ", ".join(citation["keywords"])
        authors = [self.add(_person(author, f"#author-{i}"))
                   for i, author in enumerate(citation.get("authors") or [], start=1)]
        if authors:
            root["author"] = [self.ref(a) for a in authors]
        papers = [self.add(_work(reference, f"#reference-{i}"))
                  for i, reference in enumerate(citation.get("references") or [], start=1)]
        if papers:
            root["citation"] = [self.ref(p) for p in papers]
        self.entities = {METADATA: self.entities.pop(METADATA), "./": root, **self.entities}
        root["hasPart"] = [{"@id": e["@id"]} for e in self.entities.values()
                           if "File" in _types(e) and e["@id"] != "./"]


def _license_of(path: Path) -> tuple[str, str] | None:
    if not path.is_file():
        return None
    first = path.read_text(encoding="utf-8").strip().splitlines()[:1]
    for opening, license_ in LICENSES.items():
        if first and first[0].strip().startswith(opening):
            return license_
    return None


def _read_citation(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    import yaml

    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _person(author: Mapping[str, Any], fallback_id: str) -> dict[str, Any]:
    """A CITATION.cff author as a Person (given and family names) or an Organization (a name)."""
    orcid = author.get("orcid")
    if "family-names" in author:
        name = " ".join(str(author[k]) for k in ("given-names", "family-names") if author.get(k))
        entity = {"@id": orcid or fallback_id, "@type": "Person", "name": name,
                  "familyName": str(author["family-names"])}
        if author.get("given-names"):
            entity["givenName"] = str(author["given-names"])
        return entity
    return {"@id": orcid or fallback_id, "@type": "Organization", "name": str(author.get("name"))}


def _work(reference: Mapping[str, Any], fallback_id: str) -> dict[str, Any]:
    """A CITATION.cff reference as a ScholarlyArticle, identified by its DOI where it has one."""
    doi = reference.get("doi")
    entity: dict[str, Any] = {
        "@id": f"https://doi.org/{doi}" if doi else fallback_id, "@type": "ScholarlyArticle",
        "name": str(reference.get("title"))}
    names = [" ".join(str(a[k]) for k in ("given-names", "family-names") if a.get(k)) or str(a.get("name"))
             for a in reference.get("authors") or []]
    entity["author"] = ", ".join(names)
    if reference.get("year"):
        entity["datePublished"] = str(reference["year"])
    if reference.get("url"):
        entity["url"] = {"@id": str(reference["url"])}
    if doi:
        entity["identifier"] = f"https://doi.org/{doi}"
    venue = reference.get("collection-title") or reference.get("journal")
    entity["description"] = f"In {venue}." if venue else f"{str(reference.get('status', '')).capitalize()}.".lstrip(".")
    if not entity["description"]:
        del entity["description"]
    return entity


def _iso(timestamp: str | None) -> str | None:
    """A sidecar's UTC time (``...Z``) as Process Run Crate writes it (``...+00:00``)."""
    return None if timestamp is None else timestamp.replace("Z", "+00:00")


def _software(name: str, version: str) -> dict[str, Any]:
    """A package of the sidecars' ``versions``, identified by where that version is published."""
    if name == "python":
        url = SOFTWARE_URLS["python"].format(compact=version.replace(".", ""))
    elif name == "aimrepro":
        return {"@id": f"#software-aimrepro-{version}", "@type": "SoftwareApplication",
                "name": "aimrepro", "version": version,
                "description": "This package (the crate's src/aimrepro files)."}
    else:
        url = PYPI.format(name=name, version=version)
    return {"@id": url, "@type": "SoftwareApplication", "name": name, "version": version,
            "url": {"@id": url}}


def _version_of(record: Mapping[str, Any]) -> str:
    """aimrepro's version and the commit a job ran at (``+dirty`` with uncommitted changes)."""
    git = record.get("git") or {}
    commit = str(git.get("commit", "unknown"))
    return f"{record.get('aimrepro_version')} (commit {commit}{'+dirty' if git.get('dirty') else ''})"
