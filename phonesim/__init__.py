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

from phonesim.answers import AnswerSpec, match_answer
from phonesim.app import App, Screen, Transition
from phonesim.apps import load_apps
from phonesim.metrics import Episode, EpisodeMetrics, run_actions, shaped_reward
from phonesim.observation import Observation, StepResult
from phonesim.phone import Phone
from phonesim.phone_input import parse_short
from phonesim.pool import PhonePool
from phonesim.solver import candidate_actions, distance_to_goal, shortest_path, solve
from phonesim.task_template import TaskTemplate
from phonesim.tasks import JudgeResult, TaskInstance, all_templates, instantiate, templates

__all__ = [
    "AnswerSpec", "App", "Episode", "EpisodeMetrics", "JudgeResult", "Observation", "Phone", "PhonePool", "Screen",
    "StepResult", "TaskInstance", "TaskTemplate", "Transition", "all_templates", "candidate_actions",
    "distance_to_goal", "instantiate", "load_apps", "match_answer", "parse_short", "run_actions", "shaped_reward",
    "shortest_path", "solve", "templates",
]
