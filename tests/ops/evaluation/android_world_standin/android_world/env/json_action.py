"""STAND-IN: android_world.env.json_action.JSONAction (same fields and validation)."""

import dataclasses
from typing import Optional

_ACTION_TYPES = ("click", "double_tap", "scroll", "swipe", "input_text", "navigate_home", "navigate_back",
                 "keyboard_enter", "open_app", "status", "wait", "long_press", "answer", "unknown")
_SCROLL_DIRECTIONS = ("left", "right", "down", "up")


@dataclasses.dataclass()
class JSONAction:
  action_type: Optional[str] = None
  index: Optional[str | int] = None
  x: Optional[int] = None
  y: Optional[int] = None
  text: Optional[str] = None
  direction: Optional[str] = None
  goal_status: Optional[str] = None
  app_name: Optional[str] = None
  keycode: Optional[str] = None
  clear_text: Optional[bool] = None

  def __post_init__(self):
    if self.action_type not in _ACTION_TYPES:
      raise ValueError(f"Invalid action type: {self.action_type}")
    if self.index is not None:
      self.index = int(self.index)
      if self.x is not None or self.y is not None:
        raise ValueError("Either an index or a <x, y> should be provided.")
    if self.direction and self.direction not in _SCROLL_DIRECTIONS:
      raise ValueError(f"Invalid scroll direction: {self.direction}")
