"""What one action and one look at the screen give back: `StepResult` and `Observation`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from phonesim import layout as L
from phonesim.actions import Action


@dataclass(frozen=True, slots=True)
class StepResult:
    """Outcome of one action. `ok=False` means a recorded no-op; `reason` says why."""

    ok: bool
    reason: str | None = None
    event: str = ""  # what the action did, e.g. "tap contacts.open_detail"
    action: Action | None = None


@dataclass
class Observation:
    """What an agent sees. The screenshot is rendered (and PNG-encoded) only when accessed."""

    app: str
    screen: str
    elements: list[dict[str, Any]]
    a11y: dict[str, Any]
    size: tuple[int, int]
    _frame: L.Frame = field(repr=False)
    _dark: bool = field(repr=False, default=False)
    _image: Any = field(default=None, repr=False)
    _png: bytes | None = field(default=None, repr=False)

    @property
    def screenshot(self):
        """PIL image of the screen (cached per identical screen across phones)."""
        if self._image is None:
            from phonesim.render import render_frame
            self._image = render_frame(self._frame, self.size, self._dark)
        return self._image

    @property
    def png(self) -> bytes:
        if self._png is None:
            from phonesim.render import render_png
            self._png = render_png(self._frame, self.size, self._dark)
        return self._png

    def to_dict(self) -> dict[str, Any]:
        """JSON-able view without the image."""
        return {"app": self.app, "screen": self.screen, "size": list(self.size), "elements": self.elements,
                "a11y": self.a11y}
