"""The simulator's apps under other names: each app served with the package and launcher label a
brand gives it, so a client of the served simulator (`mobileforge sim adb-server --brands FILE`) sees
apps whose names appear nowhere in this package, as it would see a user's own apps."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from phonesim.phone import Phone


@dataclass(frozen=True)
class Brand:
    package: str
    label: str


def brands_from(data: Any) -> dict[str, Brand]:
    """`{app: {package, label}}` (as read from YAML or JSON) as brands; a clear error for anything else."""
    if not isinstance(data, Mapping) or not data:
        raise ValueError("brands: expected a mapping of simulator app -> {package, label}")
    out = {}
    for app, brand in data.items():
        if not isinstance(brand, Mapping) or set(brand) != {"package", "label"}:
            raise ValueError(f"brands: {app}: expected {{package, label}}, got {brand!r}")
        out[str(app)] = Brand(str(brand["package"]), str(brand["label"]))
    packages = [b.package for b in out.values()]
    if len(set(packages)) != len(packages):
        raise ValueError(f"brands: packages repeat: {packages}")
    return out


def branded_phone(world_seed: int, size: tuple[int, int], brands: Mapping[str, Brand]) -> Phone:
    """A phone holding only the branded apps, each under its brand's package and label."""
    phone = Phone(world_seed, size, apps=list(brands))
    phone.apps = {name: replace(app, package=brands[name].package, label=brands[name].label)
                  for name, app in phone.apps.items()}
    return phone
