"""STAND-IN: android_world.registry.TaskRegistry's get_registry over the stand-in tasks."""

from .task_evals import task_eval


class TaskRegistry:
  ANDROID_WORLD_FAMILY = "android_world"

  def get_registry(self, family: str):
    if family != self.ANDROID_WORLD_FAMILY:
      raise ValueError(f"Unsupported family: {family}")
    return {"OpenAppTask": task_eval.OpenAppTask, "AnswerTask": task_eval.AnswerTask}
