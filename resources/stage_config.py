"""The run config `mobileforge run` accepts, checked without importing the asset graph.

`stage_config_schema.json` beside this module is the JSON schema of every stage asset's Config
class, written from the stage jobs by `python -m pipelines.config_snapshot` (a test fails when it
is out of date). `config_problems` checks a config against such schemas: unknown assets and
fields, wrong types, values out of range or not finite, each named `asset.field`. It imports no Dagster, so a
bad `--set` fails in well under a second; rules that span fields (a Config class's model
validators) are checked once the graph is imported (`pipelines.run.config_check.check_config`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

SNAPSHOT = Path(__file__).with_name("stage_config_schema.json")
_UNSTABLE_KEYS = ("title", "description")  # prose, not constraints: left out of the snapshot


def load_snapshot() -> dict[str, dict[str, Any]]:
    """The stored schemas of the stage assets' Config classes, by asset name."""
    return json.loads(SNAPSHOT.read_text())


def constraints_only(schema: Any) -> Any:
    """`schema` without titles and descriptions (what a snapshot stores)."""
    if isinstance(schema, dict):
        return {key: constraints_only(value) for key, value in schema.items()
                if not (key in _UNSTABLE_KEYS and isinstance(value, str))}
    if isinstance(schema, list):
        return [constraints_only(item) for item in schema]
    return schema


def config_problems(config: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> list[str]:
    """Every problem of `config` ({asset: {field: value}}) against `schemas`, one line each,
    starting with `asset` or `asset.field`; [] when it is valid."""
    problems = []
    for asset, fields in config.items():
        schema = schemas.get(asset)
        if schema is None:
            problems.append(f"{asset}: no asset of the stages takes config by this name; "
                            f"these do: {', '.join(sorted(schemas))}")
            continue
        if not isinstance(fields, dict):
            problems.append(f"{asset}: expected a mapping field -> value, got {type(fields).__name__} {fields!r:.80}")
            continue
        properties = schema.get("properties", {})
        problems += [f"{asset}.{name}: {asset} has no such field; its fields: {', '.join(properties)}"
                     for name in sorted(set(fields) - set(properties), key=str)]
        known = {name: value for name, value in fields.items() if name in properties}
        for name in [n for n, value in known.items() if not _finite(value)]:
            problems.append(f"{asset}.{name}: not a finite number ({known.pop(name)!r:.80}); JSON schemas and the "
                            "Config classes take finite numbers only")
        errors = Draft202012Validator(schema).iter_errors(known)
        problems += [f"{asset}.{'.'.join(map(str, error.absolute_path))}: {_describe(error)}"
                     for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])]
    return problems


def _finite(value: Any) -> bool:
    """Whether `value` holds no NaN or infinity (YAML's .nan and .inf), at any depth: a schema's bounds
    do not catch NaN, which compares false with every bound."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _describe(error: ValidationError) -> str:
    if error.validator in ("type", "anyOf"):
        expected = _types(error.schema)
        if expected:
            return f"expected {' or '.join(expected)}, got {error.instance!r:.80}"
    return f"{error.message:.200}"


def _types(schema: dict[str, Any]) -> list[str]:
    """The JSON types a (possibly anyOf) schema admits, e.g. ['number', 'null']."""
    if "anyOf" in schema:
        return [t for option in schema["anyOf"] for t in _types(option)]
    declared = schema.get("type", [])
    return [declared] if isinstance(declared, str) else list(declared)
