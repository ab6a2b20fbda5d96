"""`mobileforge deploy`: what a cluster deployment of the graph runs, from the deployment settings
(resources/deployment.py; docs/deploy.md)."""

from __future__ import annotations

import os
from pathlib import Path

import click


def _use(deployment: str | None) -> None:
    if deployment is not None:  # before the graph loads: its op tags are read from the settings
        os.environ["MOBILEFORGE_DEPLOYMENT"] = str(Path(deployment).resolve())


_DEPLOYMENT = click.option("--deployment", type=click.Path(exists=True, dir_okay=False), default=None,
                           help="Deployment settings (YAML); default $MOBILEFORGE_DEPLOYMENT, else the local ones.")


@click.group()
def deploy() -> None:
    """Render and configure a cluster deployment (Kubernetes or ECS) of the graph."""


@deploy.command()
@_DEPLOYMENT
@click.option("--stage", "stages", multiple=True, help="Only these stages (repeatable); default all five.")
def k8s(deployment: str | None, stages: tuple[str, ...]) -> None:
    """Print the Kubernetes jobs of the default graph: each stage's run worker and one job per step, as
    dagster-k8s builds them, each validated by the kubernetes client's V1Job model."""
    _use(deployment)
    from pipelines.definitions import STAGES, defs
    from pipelines.deploy.k8s import render_jobs, render_yaml
    from resources.deployment import load_deployment

    names = [job.name for job in STAGES]
    unknown = sorted(set(stages) - set(names))
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)}: the stages are {', '.join(names)}", param_hint="--stage")
    click.echo(render_yaml(render_jobs(defs, list(stages) or names, load_deployment())))


@deploy.command()
@_DEPLOYMENT
@click.option("--apply", is_flag=True, help="Write the limits to the instance at $DAGSTER_HOME.")
def pools(deployment: str | None, apply: bool) -> None:
    """Show the concurrency pools' limits of the deployment settings, and with --apply set them on the
    instance (Dagster keeps pool limits in its storage)."""
    _use(deployment)
    from resources.deployment import load_deployment

    settings = load_deployment()
    for pool, limit in sorted(settings.pools.items()):
        click.echo(f"{pool}: {limit}")
    if apply:
        import dagster as dg

        from pipelines.run.instance import apply_pool_limits

        with dg.DagsterInstance.get() as instance:
            changed = apply_pool_limits(instance, settings)
        click.echo(f"set on the instance: {changed or 'nothing changed'}")
