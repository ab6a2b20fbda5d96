"""A run's config checked against the stage assets' Config classes and the resources, and turned
into each stage's run config."""

from __future__ import annotations

from typing import Any

import dagster as dg
from dagster._config import validate_config
from dagster._core.definitions.decorators.op_decorator import DecoratedOpFunction
from pydantic import BaseModel, ValidationError

from pipelines.start_point import ConfigError
from resources.stage_config import config_problems, constraints_only
from resources.validation_messages import validation_problems

def stage_jobs(defs: dg.Definitions) -> list[dg.JobDefinition]:
    """The stage jobs (pipelines.definitions.STAGES) of `defs`, in run order."""
    from pipelines.definitions import STAGES

    return [defs.resolve_job_def(stage.name) for stage in STAGES]


def config_classes(jobs: list[dg.JobDefinition]) -> dict[str, type[BaseModel]]:
    """The Config class of every asset (op) of `jobs` that takes config, by op name."""
    classes: dict[str, type[BaseModel]] = {}
    for job in jobs:
        for node in job.nodes:
            config_class = _config_class(node.definition)
            if config_class is not None:
                classes[node.name] = config_class
    return classes


def _config_class(definition: dg.NodeDefinition) -> type[BaseModel] | None:
    """The Config class an op takes; a graph-backed (sharded, assets.sharding) asset's: the one its ops share."""
    if isinstance(definition, dg.GraphDefinition):
        found = {_config_class(node.definition) for node in definition.nodes} - {None}
        return found.pop() if len(found) == 1 else None
    compute = getattr(definition, "compute_fn", None)
    if isinstance(compute, DecoratedOpFunction) and compute.has_config_arg():
        annotation = compute.get_config_arg().annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
    return None


def stage_config_schemas(jobs: list[dg.JobDefinition]) -> dict[str, dict[str, Any]]:
    """The JSON schema (constraints only) of every config-taking asset of `jobs`, by asset name:
    what `resources/stage_config_schema.json` stores for the CLI's check before the graph loads."""
    return {asset: constraints_only(cls.model_json_schema()) for asset, cls in sorted(config_classes(jobs).items())}


def check_config(config: dict[str, Any], jobs: list[dg.JobDefinition]) -> None:
    """Raise ConfigError naming `asset.field` for every unknown asset or field and every value the
    asset's Config class (its schema, its model validators) or Dagster's run config check at launch
    would reject: milliseconds once the graph is imported, so bad config fails before any stage."""
    classes = config_classes(jobs)
    problems = config_problems(config, stage_config_schemas(jobs))
    # the rules below assume known assets and well-typed fields: schema problems are reported first
    for asset, fields in ([] if problems else config.items()):
        try:
            classes[asset](**fields)
        except ValidationError as error:
            problems += validation_problems(error, asset)
            continue
        # what the schema admits and the launch would not (e.g. 2.0 for an int)
        schema = next(job for job in jobs if job.has_node_named(asset)).graph.node_named(asset).definition
        result = validate_config(schema.config_schema.config_type, fields)
        problems += [f"{asset}: {e.message}" for e in result.errors or []]
    if problems:
        raise ConfigError("invalid run config:\n  " + "\n  ".join(problems))


def stage_run_config(job: dg.JobDefinition, config: dict[str, dict[str, Any]],
                     resources: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The run config of `job`: each of its assets' config, the `resources` section
    (`resource_run_config`) if any, and INFO logs (the assets' progress lines without Dagster's
    per-event DEBUG lines)."""
    ops = {name: {"config": fields} for name, fields in config.items() if job.has_node_named(name)}
    run_config: dict[str, Any] = {"ops": ops, "loggers": {"console": {"config": {"log_level": "INFO"}}}}
    if resources:
        run_config["resources"] = resources
    return run_config


def resource_run_config(defs: dg.Definitions, overrides: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The run config's `resources` section that sets `overrides` ({resource: {field: value}}, e.g. a
    named ablation's `resources.experiment_names.ABLATION_RESOURCES`) on `defs`' resources: each named
    resource's whole configured value with the overrides on top, since a resource given some fields
    at launch takes its class defaults for the others. ConfigError naming `resource.field` for an
    unknown resource or field and for a value the resource refuses, before anything runs."""
    section, problems = {}, []
    for name, fields in overrides.items():
        resource = defs.resources.get(name)
        if not isinstance(resource, dg.ConfigurableResource):
            problems.append(f"{name}: no configurable resource by this name; these are: "
                            f"{', '.join(sorted(k for k, r in defs.resources.items() if isinstance(r, dg.ConfigurableResource)))}")
            continue
        unknown = sorted(set(fields) - set(type(resource).model_fields))
        if unknown:
            problems += [f"{name}.{field}: {type(resource).__name__} has no such field" for field in unknown]
            continue
        try:  # the configured values as given (a setting read from the environment stays a dg.EnvVar)
            type(resource)(**{**dict(resource), **fields})
        except ValidationError as error:
            problems += validation_problems(error, name)
            continue
        # as run config: EnvVar settings as {"env": NAME}, so the run's own process reads them
        section[name] = {"config": {**resource._convert_to_config_dictionary(), **fields}}
    if problems:
        raise ConfigError("invalid resource settings:\n  " + "\n  ".join(problems))
    return section
