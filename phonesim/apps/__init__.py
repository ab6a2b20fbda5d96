"""App registry: every sub-package `phonesim/apps/<name>/` exposing `APP` (an `App`) and
`TEMPLATES` (task templates) is discovered automatically. See README.md for the pattern."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from phonesim.app import App


@lru_cache(maxsize=1)
def load_apps() -> dict[str, App]:
    """name -> App for every app package, in name order; templates attached to their app."""
    apps: dict[str, App] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        app = getattr(module, "APP", None)
        if app is None:
            raise ImportError(f"phonesim app package {info.name!r} defines no APP")
        if app.name != info.name:
            raise ImportError(f"app package {info.name!r} declares APP.name={app.name!r}; they must match")
        app.templates = list(getattr(module, "TEMPLATES", []))
        apps[app.name] = app
    return apps
