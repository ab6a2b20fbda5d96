"""Settings screens and navigation graph (AOSP-like: top-level list, sub-pages, dialogs)."""

from __future__ import annotations

from typing import Any

from phonesim.app import BACK, Screen, Transition
from phonesim.context import Ctx
from phonesim.system import set_airplane
from phonesim.widgets import Page, button, field_row, header, icon_button, info, item, paragraph, slider, switch, tap

TIMEOUTS = ("15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes", "10 minutes", "30 minutes")
FONT_SIZES = ("Small", "Default", "Large", "Largest")
TOP = [  # (label, summary, glyph, screen)
    ("Network & internet", "Wi-Fi, mobile data, airplane mode", "wifi", "network"),
    ("Connected devices", "Bluetooth, pairing", "bluetooth", "connected"),
    ("Display", "Brightness, dark theme, font size", "display", "display"),
    ("Sound & vibration", "Volume, Do Not Disturb", "sound", "sound"),
    ("Battery", "Usage, Battery Saver", "battery", "battery"),
    ("Location", "On / off", "location", "location"),
    ("About phone", "Device name, Android version", "info", "about"),
]


def on_off(v: bool) -> str:
    return "On" if v else "Off"


def build_main(ctx: Ctx) -> Page:
    rows = [item(label, summary, on_tap=tap(f"open_{screen}"), glyph=glyph, rid=f"pref_{screen}")
            for label, summary, glyph, screen in TOP]
    return Page("Settings", rows, up=False)


def build_network(ctx: Ctx) -> Page:
    s = ctx.system
    wifi_sub = (s["wifi_network"] or "Not connected") if s["wifi"] else "Off"
    return Page("Network & internet", [
        item("Wi-Fi", wifi_sub, on_tap=tap("open_wifi"), glyph="wifi", chevron=True, rid="pref_wifi"),
        switch("Mobile data", s["mobile_data"], tap("toggle", key="mobile_data"), sub="Carrier: Mint",
               rid="mobile_data", enabled=not s["airplane"]),
        switch("Airplane mode", s["airplane"], tap("toggle_airplane"), rid="airplane_mode"),
    ])


def build_wifi(ctx: Ctx) -> Page:
    s = ctx.system
    rows = [switch("Use Wi-Fi", s["wifi"], tap("toggle", key="wifi"), rid="wifi")]
    if s["wifi"]:
        rows.append(header("Available networks"))
        names = [s["wifi_network"]] if s["wifi_network"] else []
        names += [n["name"] for n in ctx.world["networks"] if n["name"] not in names]
        signal = {n["name"]: n for n in ctx.world["networks"]}
        for name in names:
            net = signal.get(name, {"signal": "Excellent", "secured": True})
            sub = "Connected" if name == s["wifi_network"] else f"{net['signal']}" + (" · Secured" if net["secured"] else "")
            rows.append(item(name, sub, on_tap=tap("ask_connect", network=name), glyph="wifi",
                             rid=f"network_{name}"))
    else:
        rows.append(paragraph("To see available networks, turn Wi-Fi on."))
    return Page("Wi-Fi", rows)


def build_connected(ctx: Ctx) -> Page:
    s = ctx.system
    return Page("Connected devices", [
        item("Bluetooth", on_off(s["bluetooth"]), on_tap=tap("open_bluetooth"), glyph="bluetooth", chevron=True,
             rid="pref_bluetooth"),
        item("Connection preferences", "Printing, NFC, Android Auto", glyph="settings"),
    ])


def build_bluetooth(ctx: Ctx) -> Page:
    s, connected = ctx.system, ctx.data["bt_connected"]
    rows = [switch("Use Bluetooth", s["bluetooth"], tap("toggle", key="bluetooth"), rid="bluetooth"),
            header(f"Paired devices ({len(ctx.world['paired'])})")]
    for name in ctx.world["paired"]:
        sub = ("Connected" if name == connected else "Saved") if s["bluetooth"] else "Bluetooth is off"
        rows.append(item(name, sub, on_tap=tap("toggle_device", device=name) if s["bluetooth"] else None,
                         glyph="bluetooth", rid=f"device_{name}"))
    rows.append(item("Device name", s["device_name"], glyph="info"))
    return Page("Bluetooth", rows)


def build_display(ctx: Ctx) -> Page:
    s = ctx.system
    return Page("Display", [
        header("Brightness"),
        slider("Brightness level", s["brightness"], "set_brightness", rid="brightness"),
        switch("Adaptive brightness", s["adaptive_brightness"], tap("toggle", key="adaptive_brightness"),
               sub="Optimise brightness for available light", rid="adaptive_brightness"),
        header("Appearance"),
        switch("Dark theme", s["dark_theme"], tap("toggle", key="dark_theme"), rid="dark_theme"),
        item("Font size", s["font_size"], on_tap=tap("ask_font_size"), rid="font_size"),
        item("Screen timeout", f"After {s['screen_timeout']} of inactivity", on_tap=tap("ask_timeout"),
             rid="screen_timeout"),
    ])


def build_sound(ctx: Ctx) -> Page:
    s = ctx.system
    return Page("Sound & vibration", [
        slider("Media volume", s["media_volume"], "set_media_volume", rid="media_volume"),
        slider("Ring volume", s["ring_volume"], "set_ring_volume", rid="ring_volume"),
        switch("Do Not Disturb", s["dnd"], tap("toggle", key="dnd"), rid="dnd"),
        switch("Vibrate for calls", s["vibrate"], tap("toggle", key="vibrate"), rid="vibrate"),
    ])


def build_battery(ctx: Ctx) -> Page:
    s = ctx.system
    return Page("Battery", [
        info("Battery level", f"{s['battery']}%", glyph="battery", rid="battery_level"),
        info("Estimated time left", f"About {max(1, s['battery'] // 6)} hours", rid="battery_estimate"),
        switch("Battery Saver", s["battery_saver"], tap("toggle", key="battery_saver"), rid="battery_saver"),
    ])


def build_location(ctx: Ctx) -> Page:
    return Page("Location", [
        switch("Use location", ctx.system["location"], tap("toggle", key="location"), rid="location"),
        paragraph("Apps with the location permission can use this phone's location."),
    ])


def build_about(ctx: Ctx) -> Page:
    s, w = ctx.system, ctx.world
    return Page("About phone", [
        item("Device name", s["device_name"], on_tap=tap("open_rename"), chevron=True, rid="device_name"),
        info("Model", w["model"], rid="model"),
        # a task's setup may have installed another version (an update) over the world's factory one
        info("Android version", ctx.data.get("android_version", w["android_version"]), rid="android_version"),
        info("Build number", w["build"], rid="build_number"),
        info("Storage", f"{w['storage_used_gb']} GB used of {w['storage_total_gb']} GB", rid="storage"),
    ])


def open_rename(ctx: Ctx) -> None:
    ctx.set_field("name", ctx.system["device_name"])


def build_rename(ctx: Ctx) -> Page:
    return Page("Device name", [
        field_row("name", "Device name", ctx.field("name"), ctx.focused("name"), rid="device_name_field"),
        button("Save", tap("save_name"), enabled=bool(ctx.field("name").strip())),
    ], actions=[icon_button("check", "Save", tap("save_name"))])


# --- effects ----------------------------------------------------------------------------------

def toggle(ctx: Ctx, p: dict[str, Any]) -> None:
    key = p["key"]
    ctx.system[key] = not ctx.system[key]
    if key == "wifi" and ctx.system["wifi"] and not ctx.system["wifi_network"]:
        ctx.system["wifi_network"] = ctx.world["networks"][0]["name"]
    if key == "bluetooth" and not ctx.system["bluetooth"]:
        ctx.data["bt_connected"] = None


def guard_radio(ctx: Ctx, p: dict[str, Any]) -> str | None:
    if p["key"] == "mobile_data" and ctx.system["airplane"]:
        return "mobile data is unavailable in airplane mode"
    return None


def toggle_airplane(ctx: Ctx, p: dict[str, Any]) -> None:
    set_airplane(ctx.system, not ctx.system["airplane"])


def ask_connect(ctx: Ctx, p: dict[str, Any]) -> None:
    name = p["network"]
    if name == ctx.system["wifi_network"]:
        ctx.dialog(name, "Connected. Signal strength: Excellent.", buttons=[("Forget", tap("forget")),
                                                                            ("Done", tap("dismiss"))])
    else:
        ctx.dialog(f"Connect to {name}?", "The phone will disconnect from the current network.",
                   buttons=[("Cancel", tap("dismiss")), ("Connect", tap("connect", network=name))])


def connect(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.system["wifi_network"] = p["network"]
    ctx.toast(f"Connected to {p['network']}")


def forget(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.system["wifi_network"] = None


def toggle_device(ctx: Ctx, p: dict[str, Any]) -> None:
    d = ctx.data
    d["bt_connected"] = None if d["bt_connected"] == p["device"] else p["device"]


def slider_setter(key: str):
    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.system[key] = int(round(float(p["pos"]) * 100))
    return effect


def choice_dialog(title: str, key: str, options: tuple[str, ...]):
    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.dialog(title, options=[(o, tap("choose", key=key, value=o), ctx.system[key] == o) for o in options],
                   buttons=[("Cancel", tap("dismiss"))])
    return effect


def choose(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.system[p["key"]] = p["value"]


def guard_name(ctx: Ctx, p: dict[str, Any]) -> str | None:
    return None if ctx.field("name").strip() else "device name cannot be empty"


def save_name(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.system["device_name"] = ctx.field("name").strip()
    ctx.toast("Device name saved")


SCREENS = {s.id: s for s in [
    Screen("main", build_main, doc="Settings"),
    Screen("network", build_network, doc="Network & internet"),
    Screen("wifi", build_wifi, doc="Wi-Fi"),
    Screen("connected", build_connected, doc="Connected devices"),
    Screen("bluetooth", build_bluetooth, doc="Bluetooth"),
    Screen("display", build_display, doc="Display"),
    Screen("sound", build_sound, doc="Sound & vibration"),
    Screen("battery", build_battery, doc="Battery"),
    Screen("location", build_location, doc="Location"),
    Screen("about", build_about, doc="About phone"),
    Screen("rename", build_rename, doc="Device name", on_open=open_rename),
]}

TRANSITIONS = {t.id: t for t in [
    *[Transition(f"open_{screen}", ("main",), screen) for _, _, _, screen in TOP],
    Transition("open_wifi", ("network",), "wifi"),
    Transition("open_bluetooth", ("connected",), "bluetooth"),
    Transition("open_rename", ("about",), "rename"),
    Transition("toggle", ("network", "wifi", "bluetooth", "display", "sound", "battery", "location"), None, toggle,
               guard_radio, doc="flip a boolean device setting"),
    Transition("toggle_airplane", ("network",), None, toggle_airplane),
    Transition("ask_connect", ("wifi",), None, ask_connect),
    Transition("connect", ("wifi",), None, connect),
    Transition("forget", ("wifi",), None, forget),
    Transition("dismiss", ("*",), None, None),
    Transition("toggle_device", ("bluetooth",), None, toggle_device),
    Transition("set_brightness", ("display",), None, slider_setter("brightness")),
    Transition("set_media_volume", ("sound",), None, slider_setter("media_volume")),
    Transition("set_ring_volume", ("sound",), None, slider_setter("ring_volume")),
    Transition("ask_font_size", ("display",), None, choice_dialog("Font size", "font_size", FONT_SIZES)),
    Transition("ask_timeout", ("display",), None, choice_dialog("Screen timeout", "screen_timeout", TIMEOUTS)),
    Transition("choose", ("display",), None, choose),
    Transition("save_name", ("rename",), BACK, save_name, guard_name),
]}
