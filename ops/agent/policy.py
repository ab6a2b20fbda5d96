"""Policy backends behind the `ops.agent.episode.Policy` protocol: the shared prompt step, and the
endpoint policy that asks any OpenAI-compatible server (vLLM, hosted VLMs) through litellm.

The local transformers twin lives in `training/inference/local_policy.py` (it needs torch). Both return
raw text; turning it into an action is `ops.actions`' job.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from ops.actions import ParsedOutput, parse_structured, parse_with_context
from ops.agent.episode import Hint, Observation, PolicyOutput, PolicyRequest
from ops.agent.llm import LLMClient, LLMConfig
from ops.agent.llm_errors import LLMCallError
from ops.agent.messages import Message, fill_image_placeholders, messages_to_json
from ops.agent.policy_prompt import OUTPUT_FORMATS, PromptStyle, build_policy_prompt, element_label, writes_structured_reasoning
from ops.agent.reasoning_memory import ReasoningMemory
from ops.agent.messages import count_image_placeholders


class PolicyCallError(RuntimeError):
    """A policy batch that could not be answered (the rollout engine counts and retries it)."""


class PromptedPolicy(ABC):
    """A policy that renders each request with one prompt style and returns the model's text.

    The structured-reasoning style (`mobilewizard`, MobileWizard §3.3) `keeps_memory`: its requests
    carry the attempt's `ReasoningMemory` instead of history lines (the rollout engine keeps one per
    attempt), and its outputs are read strictly (`parse_structured`): anything but the four parts
    in order followed by the action is an invalid step.
    """

    def __init__(self, style: PromptStyle | str, version: str) -> None:
        self.style = PromptStyle(style)
        self.version = version
        self.output_format = OUTPUT_FORMATS[self.style]
        self.keeps_memory = writes_structured_reasoning(self.style)

    def prompt_for(self, request: PolicyRequest) -> list[Message]:
        """The step prompt with one image placeholder for the screenshot."""
        elements = request.observation.elements if self.style == PromptStyle.ELEMENTS else None
        return build_policy_prompt(self.style, request.instruction, request.history, request.hints, elements,
                                   screen=request.observation.screen, memory=request.memory)

    def act(
        self, observation: Observation, instruction: str, history: Sequence[str] = (), hints: Sequence[Hint] = (),
        memory: ReasoningMemory | None = None,
    ) -> PolicyOutput:
        """One step for one observation (a batch of one); `memory` for a policy that `keeps_memory`."""
        [output] = self.act_batch([PolicyRequest(observation, instruction, list(history), list(hints), memory)])
        return output

    def parse(self, raw_text: str, observation: Observation) -> ParsedOutput:
        """The action in one of this policy's outputs. The element-list style resolves the
        echoed element label against the observation's elements (see label_echo); the
        structured-reasoning style also reads the four parts (`ParsedOutput.reasoning`)."""
        if self.keeps_memory:
            return parse_structured(raw_text)
        labels = [element_label(e) for e in observation.elements] if self.style == PromptStyle.ELEMENTS else None
        return parse_with_context(raw_text, self.output_format, labels=labels)

    @abstractmethod
    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]:
        """One output per request, in order; `PolicyOutput.prompt` is the prompt's JSON with the
        screenshot as a placeholder (the screenshot is stored beside it)."""


class EndpointPolicy(PromptedPolicy):
    """Policy served over HTTP (OpenAI chat completions) via `ops.agent.llm.LLMClient`."""

    def __init__(self, config: LLMConfig, style: PromptStyle | str, version: str | None = None) -> None:
        super().__init__(style, version or f"endpoint:{config.model}")
        self.client = LLMClient(config)

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]:
        """Requests run concurrently (bounded by the client). If any request still fails after
        the client's retries, the batch raises `PolicyCallError` naming how many failed."""
        prompts = [self.prompt_for(r) for r in requests]
        filled = [fill_image_placeholders(p, [r.observation.screenshot_png] if count_image_placeholders(p) else [])
                  for p, r in zip(prompts, requests)]
        results = self.client.map_complete(filled)
        errors = [r for r in results if isinstance(r, LLMCallError)]
        if errors:
            raise PolicyCallError(f"{len(errors)} of {len(results)} policy calls failed; first: {errors[0]}")
        return [
            PolicyOutput(raw_text=c.text, prompt=messages_to_json(p), latency_s=c.latency_s)
            for p, c in zip(prompts, results)
        ]
