"""Entry point of the `mobileforge` command; subcommand groups live in sibling modules."""

from __future__ import annotations

import importlib

import click

# (module, attribute) of each subcommand group; imported lazily so `mobileforge actions`
# does not pay for importing torch or dagster.
SUBCOMMANDS = {
    "actions": ("mobileforge.cli.actions", "actions"),
    "base": ("mobileforge.cli.base", "base"),
    "deploy": ("mobileforge.cli.deploy", "deploy"),
    "sim": ("mobileforge.cli.sim", "sim"),
    "run": ("mobileforge.cli.run", "run"),
    "serve": ("mobileforge.cli.serve", "serve"),
    "view": ("mobileforge.cli.view", "view"),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in SUBCOMMANDS:
            return None
        module_name, attr = SUBCOMMANDS[name]
        return getattr(importlib.import_module(module_name), attr)


@click.group(cls=LazyGroup)
@click.version_option(package_name="mobileforge")
def cli() -> None:
    """MobileForge: adapt a mobile GUI agent to target apps without annotation."""


if __name__ == "__main__":
    cli()
