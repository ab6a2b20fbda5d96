"""Offline curriculum for the simulator: grounded, verifiable task variants without an LLM.

Two kinds of task come out of the explored trajectories:

- Template variants. A train-split simulator template is grounded when, for each of its apps,
  exploration reached the deepest screen its solution passes through (the BFS solution of each
  instance, replayed on a fresh phone). Each grounded instance (several seeds: parameter
  variants, each phrased by one of the template's paraphrases) becomes a verifiable task
  linked to the shortest trajectory reaching that screen. Test-split templates are the held-out
  benchmark and never enter the curriculum.
- Navigation variants. Every screen the trajectories reach becomes "open <screen>" with a
  screen-reach goal and a budget from the trajectory length plus slack.
- Toggle variants (`ops.curriculum.state_tasks`). Every switch exploration flipped becomes
  "turn <switch> on/off", judged by the data the flip changed.
- Entry-action variants (`ops.curriculum.entry_tasks`). Every other press that changed data
  becomes "open <entry> and tap <button>" (or "go to <screen> and tap <button>"), judged the
  same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ops.actions import Action
from ops.curriculum.model import (
    MINED_SEEDS,
    CurriculumTask,
    ScreenReach,
    Trajectory,
    budget_with_slack,
    canonical_params,
    screens_reached,
    stable_phrase,
)
from ops.curriculum.entry_tasks import entry_tasks
from ops.curriculum.state_tasks import toggle_tasks
from phonesim.apps import load_apps
from phonesim.phone import DEFAULT_SIZE
from phonesim.solver import solve
from phonesim.task_template import TaskTemplate
from phonesim.tasks import TaskInstance, all_templates, instantiate, templates

NAV_PHRASES = (
    "In {app}, open {title}.",
    "Open the {title} screen of {app}.",
    "Go to {title} in {app}.",
)
HOME_PHRASE = "Open the {app} app."
ANY_ENTRY = " Any entry will do."  # screens with page parameters (e.g. one contact's details)


@dataclass(frozen=True)
class SimCurriculumConfig:
    world_seed: int = 0  # must match the simulator the tasks will run in
    screen_size: tuple[int, int] = DEFAULT_SIZE  # the explored phone's (toggle variants replay its actions)
    variants_per_template: int = 3  # MobileForge prompt 1: at most 3 parameter variations per function
    max_seed_tries: int = MINED_SEEDS  # seeds tried per template to find that many distinct parameter sets
    nav_slack_ratio: float = 0.5  # navigation budget = steps + max(min, ratio * steps)
    nav_min_slack: int = 2
    entry_actions: bool = True  # mine entry-action variants (False: the curriculum before them)

    def __post_init__(self) -> None:
        if self.variants_per_template < 1 or self.max_seed_tries < self.variants_per_template:
            raise ValueError("SimCurriculumConfig: need 1 <= variants_per_template <= max_seed_tries")
        if self.nav_slack_ratio < 0 or self.nav_min_slack < 0:
            raise ValueError("SimCurriculumConfig: navigation slack must be >= 0")


@dataclass
class SimCurriculumResult:
    tasks: list[CurriculumTask]
    grounded: dict[str, str] = field(default_factory=dict)  # template id -> trajectory of its first variant
    ungrounded: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # template id -> unreached screens
    unsolved: list[str] = field(default_factory=list)  # instances BFS could not solve (counted, skipped)
    solutions: dict[str, tuple[Action, ...]] = field(default_factory=dict)  # task id -> solving actions
    entries_unwalkable: list[str] = field(default_factory=list)  # entry actions the critic cannot walk (skipped)

    def summary(self) -> dict[str, int]:
        return {"tasks": len(self.tasks), "template_tasks": sum(t.template_id is not None for t in self.tasks),
                "navigation_tasks": sum(t.goal_screen is not None for t in self.tasks),
                "toggle_tasks": sum(t.goal_state is not None and not t.goal_state.taps for t in self.tasks),
                "entry_tasks": sum(t.goal_state is not None and bool(t.goal_state.taps) for t in self.tasks),
                "entry_actions_unwalkable": len(self.entries_unwalkable),
                "templates_grounded": len(self.grounded), "templates_ungrounded": len(self.ungrounded),
                "instances_unsolved": len(self.unsolved)}


def mine_simulator_tasks(paths: Sequence[Trajectory], config: SimCurriculumConfig = SimCurriculumConfig(),
                         template_ids: Sequence[str] | None = None) -> SimCurriculumResult:
    """Template, navigation, toggle and entry-action variants grounded in `paths` (trajectories of any explored apps).
    `template_ids` defaults to every train-split template whose apps were all explored; naming a
    test-split or unknown template is an error."""
    reach = screens_reached(paths)
    explored = {app for app, _ in reach}
    foreign = sorted(explored - set(load_apps()))
    if foreign:
        raise ValueError(f"trajectories of apps the simulator does not have: {foreign}")
    result = SimCurriculumResult(tasks=[])
    for template in _candidates(template_ids, explored):
        _add_template_variants(template, reach, config, result)
    result.tasks += navigation_tasks(reach, config)
    result.tasks += toggle_tasks(paths, config.world_seed, config.screen_size, config.nav_slack_ratio,
                                 config.nav_min_slack)
    if config.entry_actions:
        entries = entry_tasks(paths, config.world_seed, config.screen_size, config.nav_slack_ratio,
                              config.nav_min_slack)
        result.tasks += entries.tasks
        result.entries_unwalkable = entries.unwalkable
    return result


def _candidates(template_ids: Sequence[str] | None, explored: set[str]) -> list[TaskTemplate]:
    if template_ids is None:
        return [t for t in templates(split="train") if set(t.apps) <= explored]
    known = all_templates()
    unknown = [tid for tid in template_ids if tid not in known]
    held_out = [tid for tid in template_ids if tid in known and known[tid].split != "train"]
    if unknown or held_out:
        raise ValueError(f"curriculum templates must be known train-split templates; unknown: {unknown}, "
                         f"held out (test split): {held_out}")
    return [known[tid] for tid in template_ids]


def _add_template_variants(template: TaskTemplate, reach: dict[tuple[str, str], ScreenReach],
                           config: SimCurriculumConfig, result: SimCurriculumResult) -> None:
    seen_params: set[str] = set()
    for seed in range(config.max_seed_tries):
        if len(seen_params) >= config.variants_per_template:
            return
        instance = instantiate(template.id, seed, config.world_seed)
        key = canonical_params(instance.params)
        if key in seen_params:
            continue
        seen_params.add(key)
        try:
            solution = solve(instance.make_phone(), instance)
        except RuntimeError:
            result.unsolved.append(instance.id)
            continue
        required = solution_screens(instance, solution)
        missing = [s for s in required if s not in reach]
        if missing:
            if template.id not in result.grounded:
                result.ungrounded.setdefault(template.id, missing)
            continue
        source = reach[required[-1]]
        result.grounded.setdefault(template.id, source.trajectory_id)
        result.ungrounded.pop(template.id, None)
        result.solutions[instance.id] = tuple(solution)
        result.tasks.append(template_task(instance, source))


def solution_screens(instance: TaskInstance, solution: Sequence[Action]) -> list[tuple[str, str]]:
    """The screens exploration must have reached for `solution` to be grounded: per app of the
    template, the deepest screen (the last one the replayed solution enters for the first time),
    ordered by when the solution first enters it. A solution that never enters its app (e.g. an
    answer read off the status bar) needs only the app's first screen."""
    apps = instance.template.apps
    phone = instance.make_phone()
    first_entry: dict[tuple[str, str], int] = {}

    def visit(i: int) -> None:
        where = (phone.current_app, phone.current_screen)
        if where[0] in apps and where not in first_entry:
            first_entry[where] = i

    visit(0)
    for i, action in enumerate(solution, start=1):
        phone.step(action)
        visit(i)
    deepest: dict[str, tuple[str, str]] = {}
    for where, _ in sorted(first_entry.items(), key=lambda kv: kv[1]):
        deepest[where[0]] = where
    if not deepest:
        app = apps[0]
        return [(app, load_apps()[app].home)]
    return sorted(deepest.values(), key=lambda where: first_entry[where])


def core_functionality_of(template: TaskTemplate) -> str:
    """`settings.toggle_wifi` -> `settings: toggle wifi`."""
    app, _, name = template.id.partition(".")
    return f"{app}: {name.replace('_', ' ')}"


def template_task(instance: TaskInstance, source: ScreenReach) -> CurriculumTask:
    return CurriculumTask(
        task_id=instance.id, app=source.app, instruction=instance.instruction, step_budget=instance.step_budget,
        core_functionality=core_functionality_of(instance.template), variation_type="parameter_change",
        prerequisites=None, source_trace_id=source.trajectory_id, verifiable=True,
        template_id=instance.template.id, template_seed=instance.seed, template_params=dict(instance.params))


def navigation_tasks(reach: dict[tuple[str, str], ScreenReach], config: SimCurriculumConfig) -> list[CurriculumTask]:
    """One "open <screen>" task per reached screen, starting from the home screen (so the
    budget counts opening the app), ordered by app then steps."""
    apps = load_apps()
    out = []
    for r in sorted(reach.values(), key=lambda r: (r.app, r.steps, r.screen)):
        app = apps[r.app]
        screen = app.screens[r.screen]
        title = screen.doc or r.screen
        phrase = stable_phrase(NAV_PHRASES, f"{r.app}/{r.screen}")
        if r.screen == app.home:
            instruction = HOME_PHRASE.format(app=app.label)
        else:
            instruction = phrase.format(app=app.label, title=title) + (ANY_ENTRY if screen.params else "")
        steps = r.steps + 1  # + open the app from the home screen
        out.append(CurriculumTask(
            task_id=f"nav:{r.app}/{r.screen}", app=r.app, instruction=instruction,
            step_budget=budget_with_slack(steps, config.nav_slack_ratio, config.nav_min_slack),
            core_functionality=f"{r.app}: open {title}", variation_type="simplification", prerequisites=None,
            source_trace_id=r.trajectory_id, verifiable=True, goal_screen=r.screen))
    return out
