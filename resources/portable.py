"""A Dagster resource across a process boundary: configured resources do not pickle, so a worker
process gets the resource's class and field values and builds its own copy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import dagster as dg

R = TypeVar("R", bound=dg.ConfigurableResource)


@dataclass(frozen=True)
class PortableResource(Generic[R]):
    """What rebuilds a resource: its class and field values (nested resources likewise)."""

    cls: type[R]
    fields: dict[str, Any]

    @classmethod
    def of(cls, resource: R) -> PortableResource[R]:
        values = {}
        for name in type(resource).model_fields:
            value = getattr(resource, name)
            values[name] = cls.of(value) if isinstance(value, dg.ConfigurableResource) else value
        return cls(type(resource), values)

    def rebuild(self) -> R:
        return self.cls(**{name: value.rebuild() if isinstance(value, PortableResource) else value
                           for name, value in self.fields.items()})
