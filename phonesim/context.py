"""`Ctx`: what screen builders and transition effects see of the phone (one app, one page)."""

from __future__ import annotations

from typing import Any, Protocol

from phonesim.widgets import Tap


class Device(Protocol):
    """What a `Ctx` uses of the phone it belongs to (`phonesim.phone.Phone` is one)."""

    state: dict[str, Any]

    def world(self, app: str) -> dict[str, Any]: ...

    def push_page(self, app: str, screen: str, params: dict[str, Any]) -> None: ...

    def pop_page(self, app: str) -> None: ...


def new_page(screen: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """UI state of one page on an app's back stack (kept while the app is in the background)."""
    return {"screen": screen, "params": dict(params or {}), "scroll": 0, "fields": {}, "focus": None,
            "ui": {}, "dialog": None, "menu": None}


class Ctx:
    """One app's view of the phone while a screen builds or a transition runs: `app` is the
    app's name, `page` its top page (UI state)."""

    def __init__(self, phone: Device, app: str, page: dict[str, Any]):
        self.phone, self.app, self.page = phone, app, page

    # data -----------------------------------------------------------------------------------
    @property
    def world(self) -> dict[str, Any]:
        """Read-only world data shared by every phone with the same world seed."""
        return self.phone.world(self.app)

    @property
    def data(self) -> dict[str, Any]:
        """This app's mutable runtime data (JSON)."""
        return self.phone.state["data"][self.app]

    @property
    def system(self) -> dict[str, Any]:
        """Device settings owned by the OS (wifi, bluetooth, brightness, dark theme, ...)."""
        return self.phone.state["data"]["system"]

    @property
    def params(self) -> dict[str, Any]:
        return self.page["params"]

    # page UI state ----------------------------------------------------------------------------
    def field(self, fid: str) -> str:
        return self.page["fields"].get(fid, "")

    def set_field(self, fid: str, value: str) -> None:
        self.page["fields"][fid] = value

    def focused(self, fid: str) -> bool:
        return self.page["focus"] == fid

    def ui(self, key: str, default: Any = None) -> Any:
        return self.page["ui"].get(key, default)

    def set_ui(self, key: str, value: Any) -> None:
        self.page["ui"][key] = value

    # OS services ------------------------------------------------------------------------------
    def toast(self, text: str) -> None:
        self.phone.state["os"]["toast"] = text

    def dialog(self, title: str, message: str = "", *, options: list[tuple[str, Tap, bool]] = (),
               buttons: list[tuple[str, Tap]] = ()) -> None:
        self.page["dialog"] = {
            "title": title, "message": message,
            "options": [{"text": t, "tap": tp, "checked": c} for t, tp, c in options],
            "buttons": [{"text": t, "tap": tp} for t, tp in buttons],
        }

    def menu(self, items: list[tuple[str, Tap]]) -> None:
        self.page["menu"] = [{"text": t, "tap": tp} for t, tp in items]

    def close_overlay(self) -> None:
        self.page["dialog"] = None
        self.page["menu"] = None

    def go(self, screen: str, **params: Any) -> None:
        """Push a page (effects use it when the destination depends on data)."""
        self.phone.push_page(self.app, screen, params)

    def back(self) -> None:
        self.phone.pop_page(self.app)
