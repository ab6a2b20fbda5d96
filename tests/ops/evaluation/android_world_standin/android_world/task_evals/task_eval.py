"""STAND-IN: android_world.task_evals.task_eval.TaskEval's interface, and two made-up tasks."""

import random
from typing import Any


class TaskEval:
  template = ""

  def __init__(self, params: dict[str, Any]):
    self._params = params
    self.initialized = False

  @property
  def name(self) -> str:
    return self.__class__.__name__

  @property
  def params(self) -> dict[str, Any]:
    return self._params

  @property
  def goal(self) -> str:
    return self.template.format(**self.params)

  @classmethod
  def set_device_time(cls, env) -> None:
    pass

  def initialize_task(self, env) -> None:
    self.initialized = True

  def tear_down(self, env) -> None:
    self.initialized = False


class OpenAppTask(TaskEval):
  """Made up: open one of three apps, chosen by the instance's parameters."""

  app_names = ("contacts",)
  complexity = 1
  template = "Open the {app} app"

  @classmethod
  def generate_random_params(cls) -> dict[str, Any]:
    return {"app": random.choice(["contacts", "clock", "settings"])}

  def is_successful(self, env) -> float:
    return 1.0 if env.phone.current_app == self.params["app"] else 0.0


class AnswerTask(TaskEval):
  """Made up: answer a question; needs the answer action to reach the environment."""

  app_names = ("clock",)
  complexity = 2.5
  template = "What is {a} plus {b}? Answer with the number."

  @classmethod
  def generate_random_params(cls) -> dict[str, Any]:
    return {"a": random.randint(1, 9), "b": random.randint(1, 9)}

  def is_successful(self, env) -> float:
    return 1.0 if env.interaction_cache.strip() == str(self.params["a"] + self.params["b"]) else 0.0
