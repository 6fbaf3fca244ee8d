"""Validate a configuration mapping against a JSON schema, with one-line errors.

The workflow validates ``config.yaml`` before any job runs (docs/design.md,
"Config validation").  jsonschema's own messages print the whole offending
sub-document and schema; :func:`validate_config` instead raises
:class:`ConfigError` with a single line naming the key path, the value and
the allowed range, e.g.::

    invalid config: paper1.figure1.left.rhos[0] = -1; allowed: a number > 0 (width ratio rho = r/d)

The module only interprets a schema and a mapping; it does not know where
either came from (the Snakefile loads both).

One rule changes the schema's meaning everywhere: a ``number`` is finite.
YAML reads ``.nan`` and ``.inf`` as floats that satisfy every bound JSON
schema can state (NaN compares false), so they would reach a job; here they
are refused like any value of the wrong type.

Before anything else, a preset of ``scales`` may extend another
(:func:`expand_presets`): ``scales.referee: {extends: quick, trends: ...}``
is the quick preset with the keys the referee states replacing the quick
ones (mappings merged key by key, every other value replaced whole), so a
preset says only how it differs.  The expanded presets are what the schema
validates and what the workflow reads.

Beyond the schema, one structural rule is checked: every mapping with the
keys ``spacing``, ``lo`` and ``hi`` is a grid (``aimrepro.numerics.grids.grid_values``)
and needs ``lo < hi``, and ``lo > 0`` when ``spacing`` is ``log``.  JSON
schema cannot compare two values.  A caller may add its own check of the
valid config (``plan_check``); the workflow's (its cross-key checks and the
plan against ``limits``) lives with the workflow, in
``workflow/lib/aimrepro_workflow/checks.py``.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["ConfigError", "SCALES", "configured_scales", "describe_allowed", "describe_error",
           "expand_presets", "key_path", "source_key", "validate_config"]

#: The numerical presets a config may define (``scales.<name>``), smallest first: ``quick``
#: rebuilds every figure in minutes, ``referee`` decides every claim on a 2-core laptop,
#: ``paper`` is the papers' resolution.  ``quick`` and ``paper`` are required, ``referee``
#: is optional (small test configs leave it out).
SCALES = ("quick", "referee", "paper")


def configured_scales(config: Mapping[str, Any]) -> list[str]:
    """The presets of :data:`SCALES` that ``config["scales"]`` defines, in that order."""
    return [scale for scale in SCALES if scale in config.get("scales", {})]

_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a finite number",
    "string": "a string",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}


class ConfigError(ValueError):
    """An invalid configuration; the message is one line."""


def validate_config(config: dict[str, Any], schema: Mapping[str, Any], *,
                    plan_check: Callable[[Mapping[str, Any]], str | None] | None = None
                    ) -> dict[str, Any]:
    """Fill schema defaults into ``config`` in place, then validate it.

    Parameters
    ----------
    config : dict
        The loaded configuration (modified in place: missing keys that have a
        ``default`` in the schema are added, recursively).
    schema : mapping
        A JSON schema (draft 2020-12); its ``number`` means a finite number.
    plan_check : callable or None
        Cross-key check of the valid config, returning the first problem as
        one line or None (the workflow's: ``aimrepro_workflow.checks.validated``).

    Returns
    -------
    dict
        ``config``, for chaining.

    Raises
    ------
    ConfigError
        One line: ``invalid config: <key path> = <value>; allowed: <range>``.
    """
    import jsonschema  # installed with snakemake; imported lazily for `import aimrepro`

    overrides = {name: copy.deepcopy(preset) for name, preset in config.get("scales", {}).items()
                 if isinstance(preset, Mapping) and "extends" in preset}
    expand_presets(config)
    _fill_defaults(config, schema, schema)
    validator = _finite_number_validator()(schema)
    # a value a preset inherits is reported where it is written, in its base preset
    errors = [e for e in validator.iter_errors(config) if not _inherited(list(e.absolute_path), overrides)]
    error = jsonschema.exceptions.best_match(errors)
    if error is not None:
        raise ConfigError(describe_error(error, root_schema=schema))
    problem = _check_grids(config, ())
    if problem is None and plan_check is not None:
        problem = plan_check(config)
    if problem is not None:
        raise ConfigError(problem)
    return config


def _merged(base: Any, override: Any) -> Any:
    """``override`` on top of ``base``: mappings merged key by key, any other value replaced whole."""
    if isinstance(base, Mapping) and isinstance(override, Mapping):
        merged = {key: copy.deepcopy(value) for key, value in base.items()}
        for key, value in override.items():
            merged[key] = _merged(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    return copy.deepcopy(override)


def _inherited(path: Sequence[Any], overrides: Mapping[str, Any]) -> bool:
    """The key path lies in a preset's part taken from its base (not written in ``overrides``)."""
    if len(path) < 3 or path[0] != "scales" or path[1] not in overrides:
        return False
    node: Any = overrides[path[1]]
    for part in path[2:]:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return not isinstance(node, list)  # inside a list the preset wrote it whole
    return False


def _value_at(node: Any, parts: Sequence[str | int]) -> tuple[bool, Any]:
    for part in parts:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False, None
    return True, node


def _parse_key(key: str) -> list[str | int]:
    parts: list[str | int] = []
    for piece in key.replace("]", "").split("."):
        name, *indices = piece.split("[")
        parts.append(name)
        parts.extend(int(i) for i in indices)
    return parts


def source_key(config: Mapping[str, Any], key: str) -> str:
    """Where an expanded preset's value is written: ``scales.referee.gd.d`` -> ``scales.quick.gd.d``.

    Follows ``extends`` from the key's preset while the base holds the same
    value at the same path, so that a message names the key a user edits.
    Any other key comes back unchanged.
    """
    parts = _parse_key(key)
    presets = config.get("scales", {})
    if len(parts) < 3 or parts[0] != "scales" or parts[1] not in presets:
        return key
    name, seen = parts[1], set()
    while True:
        base = presets[name].get("extends") if isinstance(presets[name], Mapping) else None
        if base not in presets or base in seen:
            break
        found, value = _value_at(presets[name], parts[2:])
        found_base, base_value = _value_at(presets[base], parts[2:])
        if not (found and found_base and value == base_value):
            break
        seen.add(name)
        name = base
    return key_path(["scales", name, *parts[2:]])


def expand_presets(config: dict[str, Any]) -> dict[str, Any]:
    """Expand every ``scales.<name>.extends: <base>`` into a whole preset, in place.

    The preset becomes its base (expanded first, so a chain of presets
    works) with its own keys merged on top (:func:`_merged`); ``extends``
    stays in it, so the expanded config still says where it came from.
    Expanding twice changes nothing.  A base that is not a preset, or a
    cycle, raises :class:`ConfigError` naming the key.
    """
    presets = config.get("scales")
    if not isinstance(presets, dict):
        return config
    done: dict[str, Any] = {}

    def expand(name: str, chain: tuple[str, ...]) -> Any:
        if name in done:
            return done[name]
        preset = presets[name]
        base = preset.get("extends") if isinstance(preset, Mapping) else None
        if base is None:
            done[name] = preset
            return preset
        where = f"scales.{name}.extends"
        if not isinstance(base, str) or base not in presets:
            known = ", ".join(repr(p) for p in presets if p != name)
            raise ConfigError(f"invalid config: {where} = {_show(base)}; allowed: the name of another "
                              f"preset under scales ({known})")
        if base in chain or base == name:
            raise ConfigError(f"invalid config: {where} = {_show(base)}; allowed: a preset that does "
                              f"not extend {name!r} in turn (cycle {' -> '.join((*chain, name, base))})")
        done[name] = _merged(expand(base, (*chain, name)), preset)
        return done[name]

    for name in list(presets):
        presets[name] = expand(name, ())
    return config


@functools.cache
def _finite_number_validator():
    """Draft 2020-12 whose ``number`` excludes NaN and ±inf (``integer`` never admitted them)."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine(
        "number", lambda check, value: base.TYPE_CHECKER.is_type(value, "number")
        and not (isinstance(value, float) and not math.isfinite(value)))
    return jsonschema.validators.extend(base, type_checker=checker)


def key_path(parts: Sequence[str | int]) -> str:
    """Dotted key path with list indices in brackets: ``a.b[0].c``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "<top level>"


def describe_error(error: Any, *, root_schema: Mapping[str, Any] | None = None) -> str:
    """One-line description of a ``jsonschema.ValidationError``.

    Parameters
    ----------
    error : jsonschema.exceptions.ValidationError
        Read through its attributes ``absolute_path``, ``validator``,
        ``validator_value``, ``instance`` and ``schema``.
    root_schema : mapping, optional
        The whole schema, to resolve local ``$ref`` (``#/$defs/...``) when
        describing a missing key.
    """
    path = list(error.absolute_path)
    kind = error.validator
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance

    if kind == "required" and isinstance(instance, Mapping):
        missing = next(k for k in error.validator_value if k not in instance)
        sub = _resolve_ref(schema.get("properties", {}).get(missing, {}), root_schema)
        return (f"invalid config: {key_path([*path, missing])} is missing; "
                f"allowed: {describe_allowed(sub, root_schema)}")
    if kind == "additionalProperties" and isinstance(instance, Mapping):
        known = list(schema.get("properties", {}))
        unknown = [k for k in instance if k not in known]
        where = key_path(path) if path else "the top level"
        return (f"invalid config: {key_path([*path, unknown[0]])} is not a known key; "
                f"allowed keys under {where}: {', '.join(known)}")
    return (f"invalid config: {key_path(path)} = {_show(instance)}; "
            f"allowed: {describe_allowed(schema, root_schema)}")


def describe_allowed(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> str:
    """Plain-words range of a (sub)schema: type, bounds, choices, description.

    Parameters
    ----------
    schema : mapping
        The subschema.
    root : mapping, optional
        The whole schema, to resolve local ``$ref``.
    """
    schema = _resolve_ref(schema, root)
    if "enum" in schema:
        text = "one of " + ", ".join(_show(v) for v in schema["enum"])
    elif "const" in schema:
        text = f"exactly {_show(schema['const'])}"
    else:
        types = schema.get("type", "")
        types = [types] if isinstance(types, str) else list(types)
        names = [_TYPE_NAMES.get(t, t) for t in types if t]
        text = " or ".join(names) if names else "a value"
        bounds = _bounds(schema)
        if bounds:
            text += " " + bounds
        if "array" in types:
            text += _array_words(schema, root)
    if schema.get("description"):
        text += f" ({schema['description']})"
    return text


def _bounds(schema: Mapping[str, Any]) -> str:
    low = next(((schema[k], k == "minimum") for k in ("minimum", "exclusiveMinimum")
                if k in schema), None)
    high = next(((schema[k], k == "maximum") for k in ("maximum", "exclusiveMaximum")
                 if k in schema), None)
    if low and high:
        if low[0] == high[0] and low[1] and high[1]:
            return f"equal to {_show(low[0])}"
        opening, closing = ("[" if low[1] else "("), ("]" if high[1] else ")")
        return f"in {opening}{_show(low[0])}, {_show(high[0])}{closing}"
    if low:
        return f"{'>=' if low[1] else '>'} {_show(low[0])}"
    if high:
        return f"{'<=' if high[1] else '<'} {_show(high[0])}"
    return ""


def _array_words(schema: Mapping[str, Any], root: Mapping[str, Any] | None) -> str:
    words = []
    if "items" in schema and isinstance(schema["items"], Mapping):
        item = _resolve_ref(schema["items"], root)
        item = describe_allowed({k: v for k, v in item.items() if k != "description"}, root)
        words.append(f" of {item}")
    if "minItems" in schema:
        words.append(f", at least {schema['minItems']} item(s)")
    if "maxItems" in schema:
        words.append(f", at most {schema['maxItems']} item(s)")
    if schema.get("uniqueItems"):
        words.append(", without repeats")
    return "".join(words)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # nan, inf, -inf (json.dumps would write NaN, Infinity)
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _resolve_ref(schema: Any, root: Mapping[str, Any] | None) -> Any:
    """Merge a local ``$ref`` target (``#/a/b``) under the schema's own keys."""
    if not isinstance(schema, Mapping) or "$ref" not in schema or root is None:
        return schema
    ref = schema["$ref"]
    if not ref.startswith("#/"):
        return schema
    target: Any = root
    for part in ref[2:].split("/"):
        target = target[part]
    merged = dict(_resolve_ref(target, root))
    merged.update({k: v for k, v in schema.items() if k != "$ref"})
    return merged


def _fill_defaults(instance: Any, schema: Any, root: Mapping[str, Any]) -> None:
    """Recursively add ``default`` values for missing properties of mappings."""
    schema = _resolve_ref(schema, root)
    if not isinstance(instance, dict) or not isinstance(schema, Mapping):
        return
    for name, sub in schema.get("properties", {}).items():
        sub = _resolve_ref(sub, root)
        if name not in instance and isinstance(sub, Mapping) and "default" in sub:
            instance[name] = copy.deepcopy(sub["default"])
        if name in instance:
            _fill_defaults(instance[name], sub, root)


def _check_grids(node: Any, path: tuple) -> str | None:
    if isinstance(node, Mapping):
        if {"spacing", "lo", "hi"} <= set(node):
            lo, hi, spacing = node["lo"], node["hi"], node["spacing"]
            if not lo < hi:
                return (f"invalid config: {key_path([*path, 'hi'])} = {_show(hi)}; "
                        f"allowed: a number > lo = {_show(lo)}")
            if spacing == "log" and not lo > 0:
                return (f"invalid config: {key_path([*path, 'lo'])} = {_show(lo)}; "
                        f"allowed: a number > 0 (log spacing)")
        for key, value in node.items():
            found = _check_grids(value, (*path, key))
            if found:
                return found
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found = _check_grids(value, (*path, i))
            if found:
                return found
    return None
