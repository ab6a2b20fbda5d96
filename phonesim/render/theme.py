"""Colour schemes of the simulated UI (light and dark) and the colour helpers drawing needs."""

from __future__ import annotations

from functools import lru_cache

from PIL import ImageColor

ColourScheme = dict[str, str]  # role ("bg", "text", "accent", ...) → "#rrggbb"

LIGHT: ColourScheme = {
    "bg": "#ffffff", "surface": "#f3f5f9", "text": "#1b1b1f", "muted": "#5f6368", "accent": "#1a73e8",
    "divider": "#e3e6ea", "track": "#c4c7cc", "status": "#eef1f6", "nav": "#eef1f6", "field": "#ffffff",
    "key": "#ffffff", "keyboard": "#d5d9e0", "card": "#ffffff", "toast": "#303134", "ontoast": "#ffffff",
    "launcher": "#dbe7f5", "dialog": "#ffffff"}
DARK: ColourScheme = {
    "bg": "#121316", "surface": "#1e2025", "text": "#e6e7eb", "muted": "#a4a8b0", "accent": "#8ab4f8",
    "divider": "#2c2f35", "track": "#5f636a", "status": "#1a1c20", "nav": "#1a1c20", "field": "#1e2025",
    "key": "#3a3d43", "keyboard": "#25272c", "card": "#26282d", "toast": "#e6e7eb", "ontoast": "#1b1b1f",
    "launcher": "#1c2733", "dialog": "#2a2c31"}

SCRIM_ALPHA = 110  # opacity (of 255) of the scrim behind a dialog or menu


@lru_cache(maxsize=64)
def rgb(colour: str) -> tuple[int, int, int]:
    """`colour` ("#rrggbb" or a name) as an (r, g, b) triple."""
    return ImageColor.getrgb(colour)[:3]


@lru_cache(maxsize=256)
def under_scrim(colour: str) -> str:
    """`colour` as it looks under the scrim (blended with black at `SCRIM_ALPHA`)."""
    return "#%02x%02x%02x" % tuple(round(v * (1 - SCRIM_ALPHA / 255)) for v in rgb(colour))
