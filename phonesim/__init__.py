"""Embedded phone simulator: JSON state, declarative apps, deterministic judges. No Dagster/torch.

Typical use::

    from phonesim import instantiate, Episode, distance_to_goal
    task = instantiate("contacts.edit_phone", seed=3)
    ep = Episode(task)
    obs = ep.phone.observe()          # obs.elements, obs.a11y, obs.screenshot (lazy), obs.png
    ep.step({"type": "open_app", "args": {"app": "Contacts"}})
    distance_to_goal(ep.phone, task)  # min actions left (programmatic critic)
    ep.metrics()                      # success, progress, side effects, shaped reward
"""

from importlib import import_module

# name -> the module that defines it; loaded on first use, so importing one module of the package
# (e.g. phonesim.actions, the action vocabulary the project shares) does not load the simulator
_EXPORTS = {
    "AnswerSpec": "answers", "match_answer": "answers",
    "App": "app", "Screen": "app", "Transition": "app",
    "load_apps": "apps",
    "Episode": "metrics", "EpisodeMetrics": "metrics", "run_actions": "metrics", "shaped_reward": "metrics",
    "Observation": "observation", "StepResult": "observation", "Phone": "phone", "parse_short": "phone_input",
    "PhonePool": "pool",
    "candidate_actions": "solver", "distance_to_goal": "solver", "shortest_path": "solver", "solve": "solver",
    "TaskTemplate": "task_template",
    "JudgeResult": "tasks", "TaskInstance": "tasks", "all_templates": "tasks", "instantiate": "tasks",
    "templates": "tasks",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f"phonesim.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'phonesim' has no attribute {name!r}")
