"""The simulator's fresh variants for rejection fine-tuning rounds after the first (UI-Voyager §3.2:
each round runs the previous round's policy on new task variants): template tasks re-instantiated.
Imported only where the environment is the simulator (`ops.curriculum.variants.TemplateVariants`)."""

from __future__ import annotations

from typing import Collection, Sequence

from ops.curriculum.model import canonical_params
from ops.agent.episode import TaskSpec
from ops.environments.simulator import template_task_spec
from phonesim.tasks import instantiate


def fresh_variants(pool: Sequence[TaskSpec], solved_templates: Collection[str], round_index: int,
                   seed_offset: int, max_tasks: int | None, *, world_seed: int) -> list[TaskSpec]:
    """New instances of `pool`'s template tasks for round `round_index`: each template task's
    template instantiated at seed + round_index * seed_offset in world `world_seed`, so the
    instruction, params, step budget and app shown are those of the instance the simulator builds
    and judges. Templates in `solved_templates` come first (the policy solved them last round, so
    verified successes are likely), then the others in pool order; an instance whose params repeat
    an earlier one of this round is skipped; at most `max_tasks`.

    Only the template is carried over: a pool task's own wording (a paraphrase of the template) is
    not, the new instance is phrased by the template. Tasks without a template (navigation, toggle
    and entry-action variants) have no new instances and are left out."""
    templated = [t for t in pool if t.template_id]
    ordered = ([t for t in templated if t.template_id in solved_templates]
               + [t for t in templated if t.template_id not in solved_templates])
    variants: list[TaskSpec] = []
    seen: set[tuple[str, str]] = set()
    for task in ordered:
        if max_tasks is not None and len(variants) >= max_tasks:
            break
        instance = instantiate(task.template_id, task.seed + round_index * seed_offset, world_seed)
        key = (instance.template.id, canonical_params(instance.params))
        if key not in seen:
            seen.add(key)
            variants.append(template_task_spec(instance, f"{instance.id}~r{round_index}"))
    return variants


def solved_templates(tasks: Sequence[TaskSpec], succeeded: Collection[str]) -> set[str]:
    """Templates of the tasks in `tasks` whose id is in `succeeded`."""
    return {t.template_id for t in tasks if t.template_id and t.task_id in succeeded}
