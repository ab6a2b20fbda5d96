"""One module per model's native action syntax; `FORMATS` maps each name to its format."""

from ops.actions.formats import (
    androidworld,
    canonical,
    label_echo,
    guiowl,
    mobilegym,
    mobilerl,
    mobilewizard,
    qwen3vl,
)
from ops.actions.formats.base import ActionFormat, ParsedOutput, UnsupportedAction

FORMATS: dict[str, ActionFormat] = {
    module.FORMAT.name: module.FORMAT
    for module in (qwen3vl, guiowl, androidworld, mobilegym, mobilerl, mobilewizard, canonical, label_echo)
}

__all__ = ["FORMATS", "ActionFormat", "ParsedOutput", "UnsupportedAction"]
