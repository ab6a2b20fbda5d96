"""What one rollout attempt is made of, and the interfaces the rollout engine drives.

`Environment`, `Policy` and `Critic` are protocols so the simulator pool and real devices,
local and served models, programmatic and LLM critics are interchangeable twins.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from ops.actions import Action, ReasoningParts

if TYPE_CHECKING:  # ops.prompts imports this module
    from ops.agent.reasoning_memory import ReasoningMemory, StepOutcome


@dataclass(frozen=True)
class Observation:
    """What the agent may see of the device after a step."""

    screenshot_png: bytes
    elements: list[dict[str, Any]]  # flat element list; `Action.element` indexes into it
    a11y: Any  # uiautomator-style tree as JSON-able data
    app: str
    screen: str


@dataclass(frozen=True)
class Anchor:
    """A structural anchor: a screen/activity the app declares."""

    screen: str
    title: str


@dataclass(frozen=True)
class TaskSpec:
    """A task the rollout engine can run: instruction, budget and how to set the device up."""

    task_id: str
    instruction: str
    step_budget: int
    app: str = ""
    template_id: str | None = None  # simulator template when the task is verifiable
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0


SIMULATOR_JUDGE = "simulator"  # the simulator's task judges (in process or served over adb)
ANDROIDWORLD_JUDGE = "androidworld"  # AndroidWorld's `is_successful`


@dataclass(frozen=True)
class GroundTruth:
    """The environment's own verdict for an attempt (the simulator's judge, AndroidWorld's
    `is_successful`); stored beside, never shown to policy or critic."""

    success: bool
    progress: float
    false_complete: bool
    side_effects: int
    overdue: bool
    judge: str = SIMULATOR_JUDGE  # which environment judge gave it (ops.judging.judges)
    reward: float | None = None  # the judge's shaped reward, where it has one (MobileGym appendix G)


@dataclass(frozen=True)
class EnvStep:
    """Result of applying one action: `ok` False means a recorded no-op with a reason;
    `ends_episode` (a safety guard's block, when so configured) ends the attempt there."""

    ok: bool
    reason: str | None = None
    ends_episode: bool = False


class Environment(Protocol):
    def reset(self, task: TaskSpec) -> Observation: ...

    def step(self, action: Action) -> EnvStep: ...

    def observe(self) -> Observation: ...

    def snapshot(self) -> str | None:
        """JSON state for later re-judging and forking, or None where state is not data."""

    def ground_truth(self, task: TaskSpec, answer: str | None, terminated: bool,
                     n_steps: int) -> GroundTruth | None:
        """The environment's own judge, or None where there is none (real devices)."""


@dataclass(frozen=True)
class PolicyOutput:
    raw_text: str
    prompt: str  # the exact prompt (JSON of chat messages) the model saw
    latency_s: float


class Policy(Protocol):
    version: str
    output_format: str  # ops.actions format name of raw_text (rewards parse with it)
    keeps_memory: bool  # each request carries its attempt's ReasoningMemory (the structured-reasoning style)

    def parse(self, raw_text: str, observation: Observation) -> Any:
        """The `ops.actions.ParsedOutput` of one output, given the observation it answered."""

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]: ...


@dataclass(frozen=True)
class PolicyRequest:
    observation: Observation
    instruction: str
    history: list[str]  # earlier step conclusions of this attempt
    hints: list[Hint]  # corrective hints of earlier attempts (empty when hints are off)
    memory: ReasoningMemory | None = None  # the attempt's memory, for a policy that `keeps_memory` (history stays empty)


@dataclass(frozen=True)
class Hint:
    """Corrective hint of MobileForge prompt 4, reused in later prompts (prompt 5)."""

    attempt: int
    key_mistake: str
    what_to_avoid: list[str]
    suggested_approach: list[str]
    important_insights: list[str]
    hint_summary: str


@dataclass(frozen=True)
class StepLabel:
    step: int
    reasonable: bool
    rationale: str
    goal_held: bool | None = None  # the goal already held when this step was taken; None: the critic cannot tell


@dataclass(frozen=True)
class CriticFeedback:
    """Hierarchical feedback F_k = (z_k, {l_k^t}, h_k) of MobileForge eq. 6–7."""

    decision: int  # 1 success, 0 failure
    reason: str
    failure_step: int | None
    task_feasible: bool
    step_analysis: list[StepLabel]
    hint: Hint | None
    critic: str  # which critic produced it
    step_descriptions: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> CriticFeedback:
        data = json.loads(text)
        data["step_analysis"] = [StepLabel(**s) for s in data["step_analysis"]]
        data["hint"] = Hint(**data["hint"]) if data["hint"] else None
        return cls(**data)


@dataclass
class StepRecord:
    """One agent step as stored: what it saw, what it said, what happened."""

    step: int
    screenshot_png: bytes
    elements: list[dict[str, Any]]
    a11y: Any
    app: str
    screen: str
    prompt: str
    raw_output: str
    action: dict[str, Any] | None  # canonical action, None when the output did not parse
    parse_error: str | None
    conclusion: str
    latency_s: float
    env_ok: bool
    env_reason: str | None
    state: str | None  # environment snapshot before the step (simulator only; never shown)
    # structured-reasoning style only (MobileWizard §3.3): the output's four parts, and the step's
    # verified outcome as it entered the memory (None: another style, or the attempt ended with this step
    # before a next screen was observed)
    reasoning: ReasoningParts | None = None
    verified_outcome: StepOutcome | None = None


@dataclass
class AttemptRecord:
    """One attempt of one task with its steps, critic feedback and ground truth."""

    task: TaskSpec
    attempt: int  # 1-based
    policy_version: str
    hints: list[Hint]
    steps: list[StepRecord]
    end_reason: str  # terminated | budget | loop | blocked_by_guard | error
    answer: str | None
    final_state: str | None
    final_screenshot_png: bytes | None = None  # the screen after the last action
    error: str | None = None
    feedback: CriticFeedback | None = None
    ground_truth: GroundTruth | None = None


class Critic(Protocol):
    name: str

    def evaluate(self, attempt: AttemptRecord) -> CriticFeedback: ...
