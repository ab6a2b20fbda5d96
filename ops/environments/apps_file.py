"""The target apps as data: an apps file (YAML) names each app the loop adapts to, or the devices
list their third-party packages and a filter picks some. An app's name becomes its exploration
partition (so it is a path segment: letters, digits, `_`, `-`, `.`).

Apps file: a list of apps, or `{apps: [...]}`; each app `name`, `package`, optional `description`
(what the app is for, in words) and `launch_activity` (started instead of the package's launcher
entry). Adding a line adds the app to the next run; removing one leaves its stored traces alone.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

MAX_APPS = 500
PACKAGE = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$"  # an Android application id


class AppsFileError(ValueError):
    """The apps file cannot be read or names an app wrongly (the message names the file and the app)."""


class AppSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    package: str = Field(max_length=200, pattern=PACKAGE)
    description: str = Field(default="", max_length=1000)
    launch_activity: str | None = Field(default=None, max_length=300, pattern=r"^[A-Za-z0-9_.$]+$")


def load_apps_file(path: str | Path) -> list[AppSpec]:
    """The apps `path` names, in file order; names and packages unique."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AppsFileError(f"{path}: cannot read the apps file ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise AppsFileError(f"{path}: not YAML ({exc})") from None
    data = data.get("apps") if isinstance(data, dict) else data
    if not isinstance(data, list) or not data:
        raise AppsFileError(f"{path}: expected a non-empty list of apps (or {{apps: [...]}}), each with name and package")
    if len(data) > MAX_APPS:
        raise AppsFileError(f"{path}: {len(data)} apps, at most {MAX_APPS}")
    apps: list[AppSpec] = []
    for number, record in enumerate(data, start=1):
        try:
            apps.append(AppSpec.model_validate(record))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'app'}: {e['msg']}" for e in exc.errors())
            raise AppsFileError(f"{path}: app {number}: {problems}") from None
    for field in ("name", "package"):
        values = [getattr(a, field) for a in apps]
        repeated = sorted({v for v in values if values.count(v) > 1})
        if repeated:
            raise AppsFileError(f"{path}: {field} repeats: {', '.join(repeated)}")
    return apps


def apps_from_packages(packages: Iterable[str], patterns: Sequence[str]) -> list[AppSpec]:
    """Apps for the listed packages that match one of `patterns` (shell globs, e.g. `com.example.*`), each
    named by its package's last segment (the whole package where two share it)."""
    if not patterns:
        raise AppsFileError("apps from the devices need package patterns (e.g. com.example.*): a device lists "
                            "dozens of third-party packages, and exploring each costs minutes")
    chosen = sorted({p for p in packages if re.fullmatch(PACKAGE, p) and any(fnmatch.fnmatchcase(p, pat)
                                                                              for pat in patterns)})
    last = [p.rsplit(".", 1)[-1] for p in chosen]
    return [AppSpec(name=short if last.count(short) == 1 and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", short)
                    else package, package=package)
            for package, short in zip(chosen, last)]
