"""STAND-IN: android_world.env.interface's State and an AsyncEnv over a phonesim phone."""

import dataclasses
import io
from typing import Any

import numpy as np
from PIL import Image

from phonesim.actions import Action
from phonesim.phone import Phone
from .json_action import JSONAction
from .representation_utils import BoundingBox, UIElement

SIZE = (270, 600)


@dataclasses.dataclass(frozen=True)
class State:
  pixels: np.ndarray
  forest: Any
  ui_elements: list[UIElement]
  auxiliaries: dict[str, Any] | None = None


class AsyncEnv:
  """The AsyncEnv methods ops/evaluation/androidworld.py calls, on a phonesim phone."""

  def __init__(self):
    self.phone = Phone(0, SIZE)
    self.executed: list[dict] = []  # every JSONAction received, as a dict
    self.interaction_cache = ""
    self.closed = False
    self._elements: list[dict] = []

  @property
  def logical_screen_size(self) -> tuple[int, int]:
    return SIZE

  @property
  def foreground_activity_name(self) -> str:
    return f"{self.phone.frame().package}/{self.phone.frame().package}.{self.phone.current_screen}"

  def reset(self, go_home: bool = False) -> State:
    if go_home:
      self.phone = Phone(0, SIZE)
    self.interaction_cache = ""
    return self.get_state()

  def get_state(self, wait_to_stabilize: bool = False) -> State:
    observation = self.phone.observe()
    self._elements = observation.elements
    pixels = np.asarray(Image.open(io.BytesIO(observation.png)).convert("RGB"))
    ui = [UIElement(text=e["text"], content_description=e["desc"], class_name=e["class"],
                    bbox_pixels=BoundingBox(e["bounds"][0], e["bounds"][2], e["bounds"][1], e["bounds"][3]),
                    is_clickable=e["clickable"], is_enabled=e.get("enabled", True), is_scrollable=e["scrollable"],
                    resource_name=e["resource_id"]) for e in observation.elements]
    return State(pixels, None, ui)

  def execute_action(self, action: JSONAction) -> None:
    self.executed.append(dataclasses.asdict(action))
    kind = action.action_type
    if kind == "answer":
      self.interaction_cache = action.text
    elif kind == "open_app":
      self.phone.step(Action(type="open_app", app=action.app_name))
    elif kind in ("navigate_home", "navigate_back"):
      self.phone.step(Action(type="system_button", button=kind.split("_")[1]))
    elif kind == "click":
      if action.index is not None:
        x1, y1, x2, y2 = self._elements[action.index]["bounds"]
        x, y = (x1 + x2) / 2, (y1 + y2) / 2
      else:
        x, y = action.x, action.y
      self.phone.step(Action(type="click", point=(round(x * 1000 / SIZE[0]), round(y * 1000 / SIZE[1]))))

  def close(self) -> None:
    self.closed = True
