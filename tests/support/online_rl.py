"""AdaGRPO's arguments for a run on the embedded simulator, as `assets.training_services` gives them."""

from functools import partial

from ops.agent.episode import SIMULATOR_JUDGE
from ops.curriculum.variants import TemplateVariants
from ops.environments.simulator import ForkingSimEnvironment, template_instance_spec
from ops.judging.judges import EnvironmentJudge


def simulator_setting(templates: list[str], size: tuple[int, int] = (270, 600), world_seed: int = 0) -> dict:
    """`tasks`, `judge`, `variants` and `group_envs` of `run_adagrpo` for `templates` on the simulator."""
    return {"tasks": [template_instance_spec(t, 0, world_seed, f"{t}#0") for t in templates],
            "judge": EnvironmentJudge(SIMULATOR_JUDGE), "variants": TemplateVariants(world_seed, 1000),
            "group_envs": lambda: partial(ForkingSimEnvironment, {}, size, world_seed), "world_seed": world_seed}
