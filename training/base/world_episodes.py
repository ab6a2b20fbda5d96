"""Whole episodes of the pretraining world, played by the simulator's solver, as training samples.

Each pretraining task instance (`phonesim.pretrain`, never a target template) is solved by the
simulator's solver and replayed; the replay is judged by the template's judge and kept only on a
clean success. Every step becomes what a rollout of the element-list policy shows at that point:
the screen's rows, the task's instruction, the "Done:" lines of the steps before (written as the
rollout writes them: the echoed row, else `describe_action`), and the solver's action said the
way the policy says it (`ops.remedial.corrective_teaching.ScriptedPolicy`); after the last step, on the
screen where the goal holds, the target is to stop. Some episodes also get a detour: a wrong tap
(or back) at one step, then the solver's next action from the state it led to, so that recovering
is learned as well as the happy path.

`solve_episode` takes a target template as well: `benchmarks/target_steps.py` scores a base on the
target's solver episodes (`episode_move` / `move_sample` give every move in order), never trains on them.

`world_step_sample` turns a step into a `GroundingSample`, optionally with critic hints as attempts
2..K carry them (`ops.agent.hint_marks.corrective_summary` over `ops.agent.hint_marks.describe_step_action`,
the programmatic critic's own wording): a hint about this step (the row it names is marked), about
another step of the episode (on another screen: nothing here is marked), or "finish the task".
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ops.actions import Action, ActionType
from ops.actions.formats import label_echo
from ops.remedial.corrective_teaching import ScriptedPolicy
from ops.agent.episode import Observation
from ops.agent.hint_marks import corrective_summary, describe_step_action
from ops.rollout.engine import describe_action
from phonesim.phone import Phone
from phonesim.solver import shortest_path
from phonesim.tasks import TaskInstance, instantiate
from training.base.grounding_data import GroundingSample, critic_view
from training.base.sim_grounding import SimScreen, sim_screen
from training.base.world_solutions import solution

FINISH = Action(ActionType.TERMINATE, status="success")
_VOICE = ScriptedPolicy("elements", version="solver:elements")


@dataclass(frozen=True, slots=True)
class WorldStep:
    """One step as the element-list policy sees and says it."""

    screen: SimScreen
    action: Action  # element actions name the element's index
    done_line: str  # the "Done:" line a rollout writes after it


@dataclass(frozen=True, slots=True)
class Detour:
    """A wrong step taken instead of step `at`, and the solver's next step from where it led."""

    at: int
    wrong: WorldStep
    recover: WorldStep


@dataclass(frozen=True, slots=True)
class WorldEpisode:
    """A solved pretraining task: its steps, the screen where the goal holds, optional detours."""

    template_id: str
    seed: int
    instruction: str
    steps: tuple[WorldStep, ...]
    final: SimScreen
    detours: tuple[Detour, ...] = ()


def world_step(phone: Phone, action: Action) -> WorldStep:
    """The step `action` on `phone`'s current screen, said as the element-list policy says it."""
    obs = phone.observe()
    spoken = _VOICE.spoken(action, Observation(b"", obs.elements, obs.a11y, obs.app, obs.screen))
    screen = sim_screen(obs)
    labels = [e.label for e in screen.elements]
    parsed = label_echo.parse_labelled(label_echo.render_target(spoken, labels), labels)
    return WorldStep(screen, spoken, parsed.conclusion or describe_action(parsed.action))


def _detour(rng: random.Random, task: TaskInstance, phone: Phone, at: int, right: Action) -> Detour | None:
    """A wrong tap (or back) from `phone`'s state instead of `right`, and the way back on track;
    None when it changed nothing, left a side effect or leaves the goal out of reach."""
    obs = phone.observe()
    taps = [e["index"] for e in obs.elements if e["clickable"]]
    wrong = (Action(ActionType.SYSTEM_BUTTON, button="back") if not taps or rng.random() < 0.2
             else Action(ActionType.CLICK, element=rng.choice(taps)))
    probe = phone.fork()
    wrong_step = world_step(probe, wrong)
    if wrong_step.action == world_step(phone, right).action:
        return None
    before = probe.snapshot()
    if not probe.step(wrong).ok or probe.snapshot() == before or task.judge(probe).side_effects:
        return None
    if probe.current_app in probe.apps and probe.current_app not in task.apps:
        return None  # into another app (maybe a held-out one): its screens are not this task's to show
    rest = shortest_path(probe, task)
    if not rest:
        return None
    return Detour(at, wrong_step, world_step(probe, rest[0]))


def solve_episode(template_id: str, seed: int, rng: random.Random, detour_rate: float = 0.5) -> WorldEpisode | None:
    """The solver's episode of one instance (None when it finds no clean solution; a pretraining instance's
    solution is the store's where usable, `training.base.world_solutions`); with probability `detour_rate`,
    one detour at a random step."""
    return episode_along(template_id, seed, solution(template_id, seed), rng, detour_rate)


def episode_along(template_id: str, seed: int, path: Sequence[Action] | None, rng: random.Random,
                  detour_rate: float = 0.5) -> WorldEpisode | None:
    """`solve_episode` along a `solution` found already (None for none, or for an unclean end)."""
    if not path:
        return None
    task = instantiate(template_id, seed)
    phone = task.make_phone()
    detour_at = rng.randrange(len(path)) if rng.random() < detour_rate else None
    steps, detours = [], []
    for t, action in enumerate(path):
        if t == detour_at and (d := _detour(rng, task, phone, t, action)) is not None:
            detours.append(d)
        steps.append(world_step(phone, action))
        phone.step(action)
    verdict = task.judge(phone)
    if not (verdict.success and verdict.clean):
        return None
    return WorldEpisode(template_id, seed, task.instruction, tuple(steps), sim_screen(phone.observe()),
                        tuple(detours))


def _hint(step_screen: SimScreen, action: Action) -> str:
    """The programmatic critic's one-line hint naming `action` on `step_screen`."""
    fix = "finish the task" if action.type == ActionType.TERMINATE else describe_step_action(
        action, critic_view(step_screen.elements))
    return corrective_summary(step_screen.name, fix, "")


@dataclass(frozen=True, slots=True)
class EpisodeMove:
    """One move of an episode as a sample asks it: the screen, the target action on it, the "Done:"
    lines before it, and the sample kind (`world_click`, `world_done`, `world_recover`, ...)."""

    screen: SimScreen
    target: Action
    history: tuple[str, ...]
    kind: str


def episode_move(episode: WorldEpisode, t: int) -> EpisodeMove:
    """Move `t` of `episode`: its solver steps (0 .. n-1), the stop on the final screen (n), then one
    recovery per detour (n+1 ..), 1 + n + len(detours) moves in all."""
    stop = len(episode.steps)
    if not 0 <= t <= stop + len(episode.detours):
        raise IndexError(f"move {t} outside the {stop + 1 + len(episode.detours)} moves of {episode.template_id}")
    done = [s.done_line for s in episode.steps]
    if t > stop:  # a detour: the wrong step is the last Done line, the recovery is the target
        detour = episode.detours[t - stop - 1]
        return EpisodeMove(detour.recover.screen, detour.recover.action, (*done[:detour.at], detour.wrong.done_line),
                           "world_recover")
    if t == stop:
        return EpisodeMove(episode.final, FINISH, tuple(done), "world_done")
    step = episode.steps[t]
    return EpisodeMove(step.screen, step.action, tuple(done[:t]), f"world_{step.action.type.value}")


def move_sample(episode: WorldEpisode, move: EpisodeMove, hints: tuple[str, ...] = ()) -> GroundingSample:
    """`move` of `episode` as a sample, with the critic's `hints` if any (its kind then ends in `_hinted`)."""
    kind = move.kind + ("_hinted" if hints else "")
    return GroundingSample(None, move.screen.elements, episode.instruction, move.target, kind, hints=hints,
                           history=move.history, screen=move.screen.name)


def world_step_sample(rng: random.Random, episode: WorldEpisode, hint_rate: float = 0.0) -> GroundingSample:
    """One move of `episode` drawn uniformly (a step, its stop on the final screen, or a detour's recovery)
    as a sample."""
    move = episode_move(episode, rng.randrange(len(episode.steps) + 1 + len(episode.detours)))
    hints: tuple[str, ...] = ()
    if rng.random() < hint_rate:
        hints = _episode_hints(rng, episode, move.screen, move.target)
    return move_sample(episode, move, hints)


def _episode_hints(rng: random.Random, episode: WorldEpisode, screen: SimScreen, target: Action) -> tuple[str, ...]:
    """Hints an attempt at `episode` could carry at `screen`: about this very step, or about a step
    on another screen (which leaves this step to the instruction), sometimes both."""
    here = _hint(screen, target)
    elsewhere = [s for s in episode.steps if s.screen.name != screen.name]
    away = rng.choice(elsewhere) if elsewhere else None
    other = _hint(away.screen, away.action) if away is not None else None
    pick = rng.random()
    if pick < 0.5 or other is None:
        return (here,)
    if pick < 0.8:
        return (other,)
    return (other, here) if rng.random() < 0.5 else (here, other)
