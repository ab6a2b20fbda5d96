"""Who judges and who writes new tasks in this run, from the environment resource and the critic LLM:
the one place that picks the simulator's judges (where the environment has them) or the critic's
verdict (everywhere else), so no asset or method asks the simulator itself."""

from __future__ import annotations

from typing import Literal

from ops.agent.episode import Critic
from ops.curriculum.variants import TaskVariants, TemplateVariants, WrittenVariants
from ops.judging.critic.hint_settings import CorrectiveHintSettings
from ops.judging.critic.llm_critic import LLMCritic
from ops.judging.judges import CriticJudge, EnvironmentJudge, Judge
from resources.environment import AdbDeviceResource, SimulatorResource
from resources.llm import LLMResource

CriticKind = Literal["auto", "programmatic", "llm"]


def llm_critic(llm: LLMResource) -> LLMCritic:
    return LLMCritic(llm.get_client(), name=f"llm:{llm.model}")


def rollout_critic(kind: CriticKind, environment: SimulatorResource | AdbDeviceResource, llm: LLMResource,
                   hints: CorrectiveHintSettings) -> Critic:
    """The hierarchical critic of the rollouts: 'programmatic' (the simulator's judge and navigation distance;
    only where the environment is the simulator), 'llm' (the critic LLM), 'auto': programmatic where the
    environment has the simulator's judges, else the LLM critic."""
    if kind == "auto":
        kind = "programmatic" if environment.judge_name else "llm"
    if kind == "llm":
        return llm_critic(llm)
    if not environment.judge_name:
        raise ValueError("critic 'programmatic' reads the simulator's state, which a device does not have; "
                         "use 'llm' or 'auto' (the critic LLM) on devices")
    from ops.judging.critic.programmatic import ProgrammaticCritic

    return ProgrammaticCritic(environment.world_seed, hints.hint_steps, hints.direct_plans, hints.hint_from_start)


def episode_judge(environment: SimulatorResource | AdbDeviceResource, llm: LLMResource) -> Judge:
    """The verdict on an episode: the environment's judge where it has one, else the critic's."""
    if environment.judge_name:
        return EnvironmentJudge(environment.judge_name)
    return CriticJudge(llm_critic(llm))


def task_variants(environment: SimulatorResource | AdbDeviceResource, llm: LLMResource,
                  seed_offset: int) -> TaskVariants:
    """Fresh variants: re-seeded templates on the simulator, LLM-written instructions elsewhere."""
    if environment.judge_name:
        return TemplateVariants(environment.world_seed, seed_offset)
    return WrittenVariants(llm.get_client())
