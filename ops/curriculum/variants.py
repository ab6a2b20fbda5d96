"""New task variants for the rounds and epochs after the first: RFT's fresh variant set
(UI-Voyager §3.2: each round's policy attempts new variants of the tasks) and AdaGRPO's fresh
instance per epoch (MobileRL §2.1).

Two twins behind one interface, chosen by the environment:

- `TemplateVariants` (the simulator): a template task re-instantiated at a new seed, so the
  instance the simulator builds and judges is the one the instruction describes.
- `WrittenVariants` (a user's devices): no template exists, so the curriculum LLM writes new
  instructions of the same function from a task and the steps of an attempt that solved it (or
  the task alone); the critic judges them. Online RL on a device re-runs the task itself: a
  device cannot re-seed an app's data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from pydantic import BaseModel, Field

from ops.agent.episode import TaskSpec
from ops.agent.llm import JSONRequest, LLMClient
from ops.agent.llm_errors import LLMCallError

MAX_WRITTEN_PER_TASK = 3  # variants the LLM writes per task


class TaskVariants(Protocol):
    def variants(self, pool: Sequence[TaskSpec], solved: Sequence[TaskSpec], round_index: int,
                 max_tasks: int | None, steps_of: dict[str, list[str]]) -> list[TaskSpec]:
        """Round `round_index`'s new tasks from `pool`, varying first the tasks the previous round solved
        (`solved`). `steps_of`: task id -> the steps of an attempt that solved it."""

    def instance(self, task: TaskSpec, seed: int, tag: str) -> TaskSpec:
        """A fresh instance of `task` for an online-RL epoch drawn at `seed`."""

    def key(self, task: TaskSpec) -> str:
        """What online RL's failure curriculum counts failures by (a template, or the task)."""

    def rl_pool(self, tasks: Sequence[TaskSpec]) -> list[TaskSpec]:
        """The curriculum tasks online RL trains on."""


class TemplateVariants:
    """The simulator's template tasks re-instantiated at new seeds (`training.methods.rft.rounds`)."""

    def __init__(self, world_seed: int, seed_offset: int) -> None:
        self.world_seed, self.seed_offset = world_seed, seed_offset

    def variants(self, pool: Sequence[TaskSpec], solved: Sequence[TaskSpec], round_index: int,
                 max_tasks: int | None, steps_of: dict[str, list[str]]) -> list[TaskSpec]:
        from ops.curriculum.template_variants import fresh_variants

        return fresh_variants(pool, {t.template_id for t in solved if t.template_id}, round_index, self.seed_offset,
                              max_tasks, world_seed=self.world_seed)

    def instance(self, task: TaskSpec, seed: int, tag: str) -> TaskSpec:
        from ops.environments.simulator import template_instance_spec

        return template_instance_spec(task.template_id, seed, self.world_seed, f"{task.template_id}#{seed}~{tag}")

    def key(self, task: TaskSpec) -> str:
        return task.template_id or task.task_id

    def rl_pool(self, tasks: Sequence[TaskSpec]) -> list[TaskSpec]:
        """Template tasks of the train split (the held-out splits are the benchmark's)."""
        from phonesim.tasks import all_templates

        known = all_templates()
        return [t for t in tasks if t.template_id and known[t.template_id].split == "train"]


class WrittenVariant(BaseModel):
    instruction: str = Field(min_length=8, max_length=400)
    step_budget: int = Field(ge=1, le=60)


class WrittenVariantsOutput(BaseModel):
    variants: list[WrittenVariant] = Field(min_length=1, max_length=8)


def variant_prompt(task: TaskSpec, steps: Sequence[str], count: int) -> list[dict]:
    """UI-Voyager's iterative-RFT step as a prompt: a task of an app, how it was solved, and a request for
    `count` new tasks of the same function with other parameters (names, values, times, items)."""
    solved = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, start=1)) or "(no solved attempt yet)"
    text = (f"You write tasks for training a phone agent on the app '{task.app}'.\n"
            f"Task: {task.instruction}\nStep budget: {task.step_budget}\n"
            f"Steps of an attempt that solved it:\n{solved}\n\n"
            f"Write {count} new tasks that exercise the same function of the app with different parameters "
            "(other names, values, items or settings that the screens above make plausible). Each must be "
            "self-contained, doable within a similar number of steps, and different from the task and from "
            'each other. Answer with JSON only: {"variants": [{"instruction": "...", "step_budget": N}, ...]}')
    return [{"role": "user", "content": text}]


class WrittenVariants:
    """New instructions written by the curriculum LLM from the tasks and their solved attempts."""

    def __init__(self, client: LLMClient, per_task: int = MAX_WRITTEN_PER_TASK) -> None:
        self.client, self.per_task = client, per_task
        self.errors: list[str] = []  # calls that failed, with why (the round goes on without their tasks)

    def variants(self, pool: Sequence[TaskSpec], solved: Sequence[TaskSpec], round_index: int,
                 max_tasks: int | None, steps_of: dict[str, list[str]]) -> list[TaskSpec]:
        solved_ids = {t.task_id for t in solved}
        ordered = list(solved) + [t for t in pool if t.task_id not in solved_ids]
        needed = max_tasks if max_tasks is not None else len(ordered) * self.per_task
        chosen = ordered[:max(1, -(-needed // self.per_task))] if ordered else []
        answers = self.client.map_json([JSONRequest(variant_prompt(t, steps_of.get(t.task_id, []), self.per_task),
                                                    WrittenVariantsOutput, key=t.task_id) for t in chosen])
        seen = {t.instruction.strip().lower() for t in pool}
        out: list[TaskSpec] = []
        for task, answer in zip(chosen, answers, strict=True):
            if isinstance(answer, LLMCallError):
                self.errors.append(f"{task.task_id}: {answer}")
                continue
            for k, written in enumerate(answer.value.variants, start=1):
                text = written.instruction.strip()
                if text.lower() in seen:
                    continue
                seen.add(text.lower())
                out.append(TaskSpec(task_id=f"{task.task_id.split('~r')[0]}~r{round_index}.{k}", instruction=text,
                                    step_budget=written.step_budget, app=task.app))
        return out[:max_tasks] if max_tasks is not None else out

    def instance(self, task: TaskSpec, seed: int, tag: str) -> TaskSpec:
        return replace(task, task_id=f"{task.task_id}#{seed}~{tag}")

    def key(self, task: TaskSpec) -> str:
        return task.task_id.split("#")[0]  # an instance's id is its task's, then "#<seed>~<tag>"

    def rl_pool(self, tasks: Sequence[TaskSpec]) -> list[TaskSpec]:
        return list(tasks)
