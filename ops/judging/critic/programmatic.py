"""Programmatic critic for the simulator: labels from ground truth and navigation distance.

Decision: the simulator's judge. Step t is reasonable iff it brings the state closer to the
goal (the shortest remaining action count drops), or it is a required terminal step (a
correct answer, or terminating after success); a navigation or toggle task's distance is the
route to its screen (plus the tap, for a toggle whose data does not hold yet), an entry-action
task's the route through its chain of pages to its taps (`ops.judging.critic.goal_distance`).

The hint is MobileForge's corrective hint (§2.3.2, prompt 4), filled from the steps and their
labels: the key mistake at the first wrong step (or where an attempt of right steps stopped),
what to avoid (the attempt's wrong actions), the suggested approach (the action that would have
made progress there: by default that one action, so K attempts walk at most K-1 steps further
than the first), the insights (outcome, the steps that were right, the distance left) and a
one-line summary; once the goal holds, "finish the task". `hint_steps` > 1 adds the next
actions of a shortest solution, one sentence per screen, and `from_start` the attempt's own
steps before the wrong one: with both, the hint is the solver's whole plan from the start, an
oracle demonstration that only the named ablation uses (`--experiment oracle-plans`).

Because the decision is the simulator's judge, `critic_calibration` does not measure this
critic against it; it is the reference the LLM critics are measured against.
"""

from __future__ import annotations

import itertools
import json
from typing import Callable

from ops.actions import Action, ActionType
from ops.judging.critic.goal_distance import UNREACHABLE, better_tap, goal_distance_fn
from ops.agent.episode import AttemptRecord, CriticFeedback, Hint, StepLabel, StepRecord, TaskSpec
from ops.agent.hint_marks import describe_step_action, element_name, hit_name, plan_summary
from ops.judging.judges import PROGRAMMATIC_CRITIC
from phonesim.phone import Phone
from phonesim.solver import solve
from phonesim.tasks import TaskInstance, instantiate, world_phone

MAX_LISTED = 3  # steps a hint's insights and what-to-avoid list name before "..."


class ProgrammaticCritic:
    """`Critic` over phonesim attempts whose task is a template or a goal-screen task."""

    name = PROGRAMMATIC_CRITIC

    def __init__(self, world_seed: int = 0, hint_steps: int = 1, direct_plans: bool = False,
                 from_start: bool = False):
        if hint_steps < 1:
            raise ValueError(f"hint_steps must be at least 1, got {hint_steps}")
        self.world_seed = world_seed
        self.hint_steps = hint_steps
        # hint a template task's plan without long presses and searches where one fits the
        # budget (taps and scrolls a small policy can follow); distances stay the shortest plan's
        self.direct_plans = direct_plans
        # the hint also names the attempt's steps before the wrong one: the next attempt's prompt
        # carries the hint from its first screen on, and a greedy policy that got those steps right
        # without a hint need not get them right again under one
        self.from_start = from_start

    def evaluate(self, attempt: AttemptRecord) -> CriticFeedback:
        gt = attempt.ground_truth
        if gt is None:
            raise ValueError(f"{attempt.task.task_id}: the programmatic critic needs a verifiable "
                             "task (a simulator template or a goal screen)")
        distance = self._distance_fn(attempt)
        states = [s.state for s in attempt.steps] + [attempt.final_state]
        dist = [distance(s) for s in states]
        labels = []
        for t, step in enumerate(attempt.steps):
            ok, why = self._judge_step(step, dist[t], dist[t + 1], gt.success)
            labels.append(StepLabel(step=t, reasonable=ok, rationale=why, goal_held=dist[t] == 0))
        wrong = [lab.step for lab in labels if not lab.reasonable]
        failure_step = None if gt.success else (wrong[0] if wrong else len(labels) - 1 if labels else None)
        reason = ("the task's goal checks pass in the final state" if gt.success
                  else f"goal not reached: progress {gt.progress:.2f}, attempt ended by {attempt.end_reason}")
        hint = None
        if not gt.success or wrong:
            hint = self._hint(attempt, labels, dist, reason, distance)
        return CriticFeedback(decision=int(gt.success), reason=reason, failure_step=failure_step,
                              task_feasible=True, step_analysis=labels, hint=hint, critic=self.name)

    # --- distances ------------------------------------------------------------------------
    def _distance_fn(self, attempt: AttemptRecord) -> Callable[[str | None], int]:
        return goal_distance_fn(attempt.task, self.world_seed)

    @staticmethod
    def _judge_step(step: StepRecord, before: int, after: int, success: bool) -> tuple[bool, str]:
        if step.action is None:
            return False, f"the output was not a valid action ({step.parse_error})"
        action = Action.from_dict(step.action)
        if action.type == ActionType.TERMINATE:
            if action.status == "success":
                return (before == 0, "declared completion with the goal reached" if before == 0
                        else f"declared completion {before} actions short of the goal")
            return False, "gave up on a feasible task"
        if not step.env_ok:
            return False, f"the action had no effect ({step.env_reason})"
        if after < before:
            return True, f"moved closer to the goal ({before} -> {after} actions left)"
        if after == before == 0:
            return False, "acted after the goal was already reached instead of finishing"
        left = f"{after} actions left" if after < UNREACHABLE else "no route to it from there"
        return False, f"did not move closer to the goal ({before} -> {left})"

    # --- hints ----------------------------------------------------------------------------
    def _hint(self, attempt: AttemptRecord, labels: list[StepLabel], dist: list[int], reason: str,
              distance: Callable[[str | None], int]) -> Hint:
        """MobileForge prompt 4's hint, every field from this attempt: at the first wrong step, or
        where the attempt stopped when every step was right."""
        wrong = next((lab for lab in labels if not lab.reasonable), None)
        at = wrong.step if wrong is not None else len(attempt.steps)
        app, screen = ((attempt.steps[at].app, attempt.steps[at].screen) if wrong is not None
                       else self._where(attempt.task, attempt.final_state))
        fixes = self._plan(attempt, at, distance)
        insights = [reason]
        if at:
            right = [f"{_describe(s)} on '{s.screen}'" for s in attempt.steps[:at]]
            insights.append(f"{'step 1' if at == 1 else f'steps 1-{at}'} moved closer to the goal: "
                            + "; ".join(right[:MAX_LISTED])
                            + ("; ..." if at > MAX_LISTED else ""))
        if dist[at] < UNREACHABLE:
            insights.append(f"on the {app} '{screen}' screen the goal was {dist[at]} action(s) away")
        if wrong is None:
            stopped = ("the step budget ran out" if attempt.end_reason == "budget"
                       else f"the attempt ended ({attempt.end_reason})")
            key_mistake = f"{stopped}{f' on the {app} {screen!r} screen' if app else ''} before the goal was reached"
            avoid = ["spending the step budget before the goal is reached" if attempt.end_reason == "budget"
                     else "ending the attempt before every part of the task is done"]
            did = "stopping"
        else:
            step = attempt.steps[at]
            did = _describe(step)
            key_mistake = f"step {at + 1}: {did} on the {step.app} '{step.screen}' screen; {wrong.rationale}"
            avoid = list(dict.fromkeys(f"{_describe(s)} on the '{s.screen}' screen"
                                       for s, lab in zip(attempt.steps, labels) if not lab.reasonable))[:MAX_LISTED]
        approach = [f"on the {on_app} '{on}' screen, {fix}" for on_app, on, fix in fixes] or [
            f"on the {app} '{screen}' screen, look for another element that leads toward the task's goal"]
        summary = (plan_summary(screen, [(on, fix) for _, on, fix in fixes], did) if fixes or wrong is not None
                   else "Finish every part of the task before terminating.")
        return Hint(attempt=attempt.attempt, key_mistake=key_mistake, what_to_avoid=avoid,
                    suggested_approach=approach, important_insights=insights, hint_summary=summary)

    def _where(self, task: TaskSpec, state: str | None) -> tuple[str, str]:
        """(app, screen) of a stored phone state of `task`; ("", "") when there is none."""
        if state is None:
            return "", ""
        phone = world_phone(task.template_id, self.world_seed)
        phone.restore(json.loads(state))
        return phone.current_app, phone.current_screen

    def _plan(self, attempt: AttemptRecord, at: int,
              distance: Callable[[str | None], int]) -> list[tuple[str, str, str]]:
        """(app, screen, action in words) of up to `hint_steps` actions of a shortest solution from the
        state before step `at` (the final state when `at` is past the last step; with `from_start`,
        after the attempt's own steps before it): the template's solver, or for a goal-screen or
        goal-state task the taps that bring the goal closest one after another. A screen may come
        back (a dialog over its page) only while no step's element is on screen at another step of
        that screen under another name, so a screen's marked rows never point two ways at once;
        otherwise the plan stops there."""
        state = attempt.steps[at].state if at < len(attempt.steps) else attempt.final_state
        if state is None:
            return []
        fixes: list[tuple[str, str, str]] = []
        seen: dict[str, list[tuple[set[str], str | None]]] = {}  # screen -> (names on it, step's element)

        def add(app: str, screen: str, elements: list[dict], action: Action) -> bool:
            names, target = {element_name(e) for e in elements}, hit_name(action, elements)
            earlier = seen.setdefault(screen, [])
            if earlier and (target is None or any(t is None or (target in n and target != t)
                                                  or (t in names and t != target) for n, t in earlier)):
                return False
            earlier.append((names, target))
            fixes.append((app, screen, describe_step_action(action, elements)))
            return True

        if self.from_start and not all(add(d.app, d.screen, d.elements, Action.from_dict(d.action))
                                       for d in attempt.steps[:at]):
            fixes.clear()  # the steps done point a screen two ways: hint from the wrong step only
            seen.clear()
        phone = world_phone(attempt.task.template_id, self.world_seed)
        phone.restore(json.loads(state))
        here = (phone.current_app, phone.current_screen)
        if attempt.task.template_id:
            instance: TaskInstance = instantiate(attempt.task.template_id, attempt.task.seed, self.world_seed)
            try:
                actions = self._solution(instance, phone)
            except RuntimeError:
                return fixes
            if not actions:
                return [*fixes, (*here, "finish the task")]
            next_action = iter(actions)
        elif distance(state) == 0:
            return [*fixes, (*here, "finish the task")]
        else:
            next_action = iter(lambda: better_tap(phone, distance), None)
        for action in itertools.islice(next_action, self.hint_steps):
            obs = phone.observe()
            if not add(obs.app, obs.screen, obs.elements, action):
                break
            phone.step(action)
        return fixes

    def _solution(self, instance: TaskInstance, phone: Phone) -> list:
        if self.direct_plans:
            try:
                return solve(phone, instance, shortcuts=False)
            except RuntimeError:  # no plan without shortcuts within the budget
                pass
        return solve(phone, instance)


def _describe(step: StepRecord) -> str:
    if step.action is None:
        return "an unparseable output"
    return describe_step_action(Action.from_dict(step.action), step.elements)
