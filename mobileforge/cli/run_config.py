"""The run config `mobileforge run` reads from `--config FILE` and `--set ASSET.FIELD=VALUE`,
refused with a message (never a traceback) when it is not a small YAML/JSON mapping.

YAML is read by PyYAML's safe loader without aliases — an alias bomb of a few hundred bytes
(each level naming the one before it nine times) costs nothing to parse but gigabytes and tens
of CPU seconds once anything walks it — and at most `MAX_DEPTH` levels deep, from a file of at
most `MAX_CONFIG_BYTES`; no library imported here is heavier than PyYAML.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml
from yaml.composer import ComposerError

MAX_CONFIG_BYTES = 1 << 20  # a run config is a mapping of a few dozen fields
MAX_VALUE_CHARS = 1 << 16  # one --set value
MAX_DEPTH = 32  # nesting of mappings and lists


class _ConfigLoader(yaml.SafeLoader):
    """The safe loader, refusing aliases and nesting deeper than MAX_DEPTH."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise ComposerError(None, None, "aliases (*name) are not accepted in a run config: write the value out",
                                self.peek_event().start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml(text: str, what: str, param_hint: str) -> Any:
    """`text` parsed as YAML (or JSON) by the bounded loader; click.BadParameter naming `what`."""
    try:
        return yaml.load(text, Loader=_ConfigLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as error:
        raise click.BadParameter(f"{what}: not valid YAML/JSON ({str(error)[:400]})", param_hint=param_hint) from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise click.BadParameter(f"{what}: {str(error)[:200]}", param_hint=param_hint) from None


def read_config_file(path: str | Path | None) -> Any:
    """The parsed --config file; None when absent or empty. Refused with a message when larger
    than MAX_CONFIG_BYTES, not UTF-8 text, or not valid YAML/JSON."""
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise click.BadParameter(f"{path}: cannot be read ({error.strerror})", param_hint="--config") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise click.BadParameter(f"{path}: over {MAX_CONFIG_BYTES} bytes; a run config is a small mapping "
                                 "asset -> {field: value}", param_hint="--config")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise click.BadParameter(f"{path}: not UTF-8 text (byte {error.start} is {data[error.start:error.start + 1]!r}); "
                                 "expected a YAML/JSON mapping", param_hint="--config") from None
    if "\x00" in text:
        raise click.BadParameter(f"{path}: a binary file (it holds NUL bytes); expected a YAML/JSON mapping",
                                 param_hint="--config")
    return load_yaml(text, str(path), "--config")


def parse_overrides(pairs: tuple[str, ...], option: str = "--set") -> dict[str, dict[str, Any]]:
    """`asset.field=value` pairs of `option` (value parsed as YAML) into {asset: {field: value}}."""
    config: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        target, sep, raw = pair.partition("=")
        asset, dot, field = target.partition(".")
        if not sep or not dot or not asset or not field:
            raise click.BadParameter(f"{pair[:80]!r}: expected NAME.FIELD=VALUE", param_hint=option)
        if len(raw) > MAX_VALUE_CHARS:
            raise click.BadParameter(f"{target[:80]}: a value of {len(raw)} characters, over {MAX_VALUE_CHARS}",
                                     param_hint=option)
        config.setdefault(asset, {})[field] = load_yaml(raw, repr(pair[:120]), option)
    return config


def experiment_config(experiment: str, file_config: Any, overrides: tuple[str, ...]
                      ) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The run config of `experiment`: its named ablation's overrides (`resources.experiment_names.
    NAMED_ABLATIONS`; none for other names) under the --config mapping's values under --set
    values; and the ablation settings that took effect, as `asset.field=value`."""
    from resources.experiment_names import ablation_overrides

    explicit = {} if file_config is None else file_config
    if not isinstance(explicit, dict):
        raise click.BadParameter(f"expected a mapping asset -> {{field: value}}, got a {type(explicit).__name__} "
                                 f"({explicit!r:.60})", param_hint="--config")
    for asset, fields in explicit.items():
        if not isinstance(fields, dict):
            raise click.BadParameter(f"expected a mapping asset -> {{field: value}}; {asset!r:.60} maps to a "
                                     f"{type(fields).__name__} ({fields!r:.60})", param_hint="--config")
    for asset, fields in parse_overrides(overrides).items():
        explicit.setdefault(asset, {}).update(fields)
    ablation = ablation_overrides(experiment)
    config = {asset: {**ablation.get(asset, {}), **explicit.get(asset, {})}
              for asset in [*ablation, *(a for a in explicit if a not in ablation)]}
    applied = [f"{asset}.{field}={json.dumps(value)}" for asset, fields in ablation.items()
               for field, value in fields.items() if field not in explicit.get(asset, {})]
    return config, applied
