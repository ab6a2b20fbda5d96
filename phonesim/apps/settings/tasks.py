"""Settings task templates (operate / query / hybrid; atomic, sequential, deep-dive)."""

from __future__ import annotations

from phonesim.answers import AnswerSpec
from phonesim.apps.settings.screens import FONT_SIZES, TIMEOUTS
from phonesim.apps.settings.world import NETWORK_NAMES
from phonesim.task_template import TaskTemplate


def sysdata(phone) -> dict:
    return phone.state["data"]["system"]


def _toggle_template(key: str, label: str, split: str, phrasing: tuple[str, ...], scene=None) -> TaskTemplate:
    """Turn a boolean device setting on or off; setup makes it the opposite first. `scene(rng)`, if
    given, draws other device settings the agent sees on the way (params["scene"]; setup applies it)."""
    def sample(rng, phone):
        on = rng.random() < 0.5
        return {"on": on, "state": "on" if on else "off", "label": label} | ({"scene": scene(rng)} if scene else {})

    def setup(phone, p):
        sysdata(phone).update(p.get("scene", {}))
        sysdata(phone)[key] = not p["on"]
        if key in ("wifi", "bluetooth", "mobile_data"):
            sysdata(phone)["airplane"] = False

    return TaskTemplate(
        id=f"settings.toggle_{key}", apps=("settings",), objective="operate", composition="atomic",
        difficulty=1, split=split, step_budget=15, instructions=phrasing, sample=sample, setup=setup,
        checks=lambda phone, p: [(f"{key} {p['state']}", sysdata(phone)[key] == p["on"])],
        expected=lambda p: [f"system.{key}", "system.wifi_network", "settings.bt_connected"], tags=("settings",))


def _sample_brightness(rng, phone):
    return {"value": rng.choice([10, 20, 30, 80, 90, 100])}


def _sample_volume_dnd(rng, phone):
    return {"value": rng.choice([10, 20, 40, 80, 90])}


def _sample_choice(options):
    def sample(rng, phone):
        current = sysdata(phone)
        return {"value": rng.choice([o for o in options if o not in (current["font_size"], current["screen_timeout"])])}
    return sample


def _sample_network(rng, phone):
    current = sysdata(phone)["wifi_network"]
    nets = [n["name"] for n in phone.world("settings")["networks"] if n["name"] != current]
    return {"network": rng.choice(nets)}


def _sample_device_name(rng, phone):
    owner = rng.choice(["Alex", "Sam", "Priya", "Jordan", "Mei", "Omar", "Lena", "Diego"])
    return {"name": f"{owner}'s {rng.choice(['Phone', 'Pixel', 'Android', 'Mobile'])}"}


def _display_scene(rng) -> dict:
    """The rest of the Display page: font size and brightness."""
    return {"font_size": rng.choice(FONT_SIZES), "brightness": rng.choice([20, 40, 60, 80, 100])}


def _look_scene(rng) -> dict:
    """What every screen shows: the theme, and the battery level in the status bar."""
    return {"dark_theme": rng.random() < 0.5, "battery": rng.randint(15, 100)}


def _sample_font_change(rng, phone):
    start = rng.choice(FONT_SIZES)
    return {"start": start, "value": rng.choice([f for f in FONT_SIZES if f != start])}


ANDROID_VERSIONS = tuple(str(v) for v in range(7, 17))


def _install_version(phone, p):
    phone.data("settings")["android_version"] = p["version"]


def _wifi_on(phone, p):
    sysdata(phone).update(wifi=True, airplane=False)


TEMPLATES = [
    _toggle_template("wifi", "Wi-Fi", "train", ("Turn {state} Wi-Fi.", "Switch Wi-Fi {state}.",
                                                "Please make sure Wi-Fi is {state}.")),
    _toggle_template("bluetooth", "Bluetooth", "train", ("Turn {state} Bluetooth.", "Switch Bluetooth {state}.")),
    _toggle_template("dark_theme", "Dark theme", "test", ("Turn {state} dark theme.",
                                                          "Set the dark theme setting to {state}."), _display_scene),
    _toggle_template("battery_saver", "Battery Saver", "train", ("Turn {state} Battery Saver.",)),
    _toggle_template("location", "Location", "test", ("Turn {state} location access.",
                                                      "Switch the phone's location setting {state}."), _look_scene),
    TaskTemplate(
        id="settings.airplane_on", apps=("settings",), objective="operate", composition="atomic", difficulty=1,
        split="train", step_budget=15, instructions=("Turn on airplane mode.", "Put the phone in airplane mode."),
        sample=lambda rng, phone: {}, setup=lambda phone, p: sysdata(phone).update(airplane=False),
        checks=lambda phone, p: [("airplane on", sysdata(phone)["airplane"])],
        expected=lambda p: ["system.airplane", "system.wifi", "system.bluetooth", "system.mobile_data",
                            "settings.bt_connected"], tags=("settings",)),
    TaskTemplate(
        id="settings.set_brightness", apps=("settings",), objective="operate", composition="atomic", difficulty=2,
        split="train", step_budget=15,
        instructions=("Set the screen brightness to {value}%.", "Adjust brightness to about {value} percent."),
        sample=_sample_brightness,
        checks=lambda phone, p: [("brightness", abs(sysdata(phone)["brightness"] - p["value"]) <= 5)],
        expected=lambda p: ["system.brightness"], hints=lambda p: [p["value"]], tags=("settings",)),
    TaskTemplate(
        id="settings.set_font_size", apps=("settings",), objective="operate", composition="sequential",
        difficulty=2, split="test", step_budget=15, instructions=("Change the font size to {value}.",),
        sample=_sample_font_change, setup=lambda phone, p: sysdata(phone).update(font_size=p["start"]),
        checks=lambda phone, p: [("font size", sysdata(phone)["font_size"] == p["value"])],
        expected=lambda p: ["system.font_size"], tags=("settings",)),
    TaskTemplate(
        id="settings.set_screen_timeout", apps=("settings",), objective="operate", composition="sequential",
        difficulty=2, split="train", step_budget=15,
        instructions=("Set the screen timeout to {value}.", "Make the screen turn off after {value} of inactivity."),
        sample=_sample_choice(TIMEOUTS),
        checks=lambda phone, p: [("screen timeout", sysdata(phone)["screen_timeout"] == p["value"])],
        expected=lambda p: ["system.screen_timeout"], tags=("settings",)),
    TaskTemplate(
        id="settings.connect_wifi", apps=("settings",), objective="operate", composition="deep_dive", difficulty=2,
        split="train", step_budget=20,
        instructions=("Connect to the Wi-Fi network {network}.", "Join the {network} Wi-Fi network."),
        sample=_sample_network, setup=_wifi_on,
        checks=lambda phone, p: [("wifi on", sysdata(phone)["wifi"]),
                                 ("network", sysdata(phone)["wifi_network"] == p["network"])],
        expected=lambda p: ["system.wifi_network"], tags=("settings", "nav")),
    TaskTemplate(
        id="settings.rename_device", apps=("settings",), objective="operate", composition="deep_dive", difficulty=3,
        split="test", step_budget=20,
        instructions=("Rename this phone to \"{name}\".", "Change the device name to {name}."),
        sample=_sample_device_name,
        checks=lambda phone, p: [("device name", sysdata(phone)["device_name"] == p["name"])],
        expected=lambda p: ["system.device_name"], hints=lambda p: [p["name"]], tags=("settings", "edit")),
    TaskTemplate(
        id="settings.dnd_and_volume", apps=("settings",), objective="operate", composition="sequential",
        difficulty=3, split="train", step_budget=20,
        instructions=("Turn on Do Not Disturb and set the media volume to {value}%.",
                      "Set media volume to {value} percent, then enable Do Not Disturb."),
        sample=_sample_volume_dnd, setup=lambda phone, p: sysdata(phone).update(dnd=False),
        checks=lambda phone, p: [("dnd on", sysdata(phone)["dnd"]),
                                 ("media volume", abs(sysdata(phone)["media_volume"] - p["value"]) <= 5)],
        expected=lambda p: ["system.dnd", "system.media_volume"], hints=lambda p: [p["value"]],
        tags=("settings",)),
    TaskTemplate(
        id="settings.query_battery", apps=("settings",), objective="query", composition="deep_dive", difficulty=1,
        split="train", step_budget=15,
        instructions=("What is the current battery level?", "How much battery is left, in percent?"),
        sample=lambda rng, phone: {},
        answer=lambda phone, p: AnswerSpec("number", float(sysdata(phone)["battery"]), hint="a number (percent)"),
        evidence=lambda p, spec: [f"{spec.gold:g}%"], tags=("extract",)),
    TaskTemplate(
        id="settings.query_android_version", apps=("settings",), objective="query", composition="deep_dive",
        difficulty=2, split="test", step_budget=15,
        instructions=("Which Android version is this phone running?",),
        sample=lambda rng, phone: {"version": rng.choice(ANDROID_VERSIONS)}, setup=_install_version,
        answer=lambda phone, p: AnswerSpec("number", float(phone.data("settings")["android_version"]),
                                           hint="the version number"),
        tags=("extract",)),
    TaskTemplate(
        id="settings.query_paired_count", apps=("settings",), objective="query", composition="deep_dive",
        difficulty=2, split="train", step_budget=15,
        instructions=("How many Bluetooth devices are paired with this phone?",),
        sample=lambda rng, phone: {},
        answer=lambda phone, p: AnswerSpec("number", float(len(phone.world("settings")["paired"])), hint="a number"),
        evidence=lambda p, spec: [f"Paired devices ({spec.gold:g})"], tags=("extract",)),
    TaskTemplate(
        id="settings.hybrid_wifi_off", apps=("settings",), objective="hybrid", composition="sequential",
        difficulty=3, split="test", step_budget=20,
        instructions=("Tell me which Wi-Fi network the phone is connected to, then turn Wi-Fi off.",),
        sample=lambda rng, phone: {"network": rng.choice(NETWORK_NAMES)},
        setup=lambda phone, p: sysdata(phone).update(wifi=True, airplane=False, wifi_network=p["network"]),
        checks=lambda phone, p: [("wifi off", not sysdata(phone)["wifi"])],
        answer=lambda phone, p: AnswerSpec("text", sysdata(phone)["wifi_network"], hint="the network name"),
        expected=lambda p: ["system.wifi"], tags=("extract", "settings")),
]
