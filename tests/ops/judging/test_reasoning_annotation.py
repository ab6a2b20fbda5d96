"""Reasoning annotation of kept steps (MobileWizard App. C.1): the programmatic annotator from the
simulator's state, and the LLM annotator over real HTTP against the local scripted OpenAI-compatible
server; every step that cannot be annotated is a counted failure, never an exception."""

from __future__ import annotations

import json

import pytest

from ops.actions import Action, ActionType, ReasoningParts
from ops.judging.critic.reasoning_annotation import AnnotationFailure, LLMAnnotator, ProgrammaticAnnotator, StepToAnnotate
from ops.agent.episode import StepLabel, StepRecord, TaskSpec
from ops.agent.llm import LLMClient, LLMConfig
from ops.judging.critic.annotation_prompts import ANNOTATION_SYSTEM
from ops.environments.simulator import SimEnvironment, template_task_spec
from phonesim.tasks import instantiate
from tests.ops.judging.scripted import decode_image, make_attempt
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply

ANSWER = {"self_verification": "Settings opened as intended.", "screen_analysis": "Network & internet is listed.",
          "planning": "Open the network settings.", "action_guidance": "Click Network & internet.", "confidence": 0.9}


def _by_label(observation, text: str) -> int:
    return next(e["index"] for e in observation.elements if e.get("text", "").startswith(text))


def _walk(task: TaskSpec, taps: list[str]) -> tuple[list[StepRecord], bytes]:
    """Steps that tap the elements labelled `taps` in turn, as the rollout engine records them."""
    env = SimEnvironment(size=(270, 600))
    observation, steps = env.reset(task), []
    for t, label in enumerate(taps):
        action = Action(ActionType.CLICK, element=_by_label(observation, label))
        state = env.snapshot()
        result = env.step(action)
        steps.append(StepRecord(step=t, screenshot_png=observation.screenshot_png, elements=observation.elements,
                                a11y=None, app=observation.app, screen=observation.screen, prompt="[]",
                                raw_output="", action=action.to_dict(), parse_error=None, conclusion="",
                                latency_s=0.0, env_ok=result.ok, env_reason=result.reason, state=state))
        observation = env.observe()
    return steps, observation.screenshot_png


@pytest.fixture(scope="module")
def wifi_walk():
    task = template_task_spec(instantiate("settings.connect_wifi", 0))
    steps, final = _walk(task, ["Settings", "Network & internet"])
    labels = [StepLabel(0, True, "moved closer"), StepLabel(1, True, "moved closer")]
    return task, steps, final, labels


def _item(walk, index: int, action: Action | None = None) -> StepToAnnotate:
    task, steps, final, labels = walk
    return StepToAnnotate(task, steps, index, action or Action.from_dict(steps[index].action), labels, final)


def test_the_programmatic_parts_come_from_the_screens_the_element_and_the_task(wifi_walk):
    [first, second] = ProgrammaticAnnotator().annotate([_item(wifi_walk, 0), _item(wifi_walk, 1)])
    assert first.self_verification == "Nothing has been done yet: the task starts on the 'launcher' screen."
    assert first.planning.startswith("Go to the settings app ('main' screen), toward the task: ")
    assert first.action_guidance.startswith("Click 'Settings' at (")
    assert second.self_verification == ("The previous action, click 'Settings', worked: it led from the 'launcher' "
                                        "screen to the 'main' screen. It brought the task closer to its goal.")
    assert "Relevant to the task: 'Network & internet" in second.screen_analysis  # "network" is in the task
    assert second.planning.startswith("Get from the 'main' screen to the 'network' screen, toward the task: ")
    task, *_ = wifi_walk
    assert second.planning.endswith(task.instruction.rstrip(".") + ".")


def test_a_finish_target_and_a_missing_state_are_annotated_or_counted(wifi_walk):
    finish = Action(ActionType.TERMINATE, status="success")
    [done] = ProgrammaticAnnotator().annotate([_item(wifi_walk, 1, finish)])
    assert done.planning.startswith("The task is done (") and done.action_guidance == "Terminate with status success."
    task, steps, final, labels = wifi_walk
    stateless = [StepRecord(**{**vars(steps[0]), "state": None})]
    [failure] = ProgrammaticAnnotator().annotate([StepToAnnotate(task, stateless, 0, finish, labels, final)])
    assert failure == AnnotationFailure("no_state", "step 0: no simulator state to annotate from")


class AnnotationScript:
    """Answers each annotation request with `reply(request)`; keeps the requests."""

    def __init__(self, reply) -> None:
        self.reply, self.requests = reply, []

    def __call__(self, request: RecordedRequest) -> Reply:
        assert request.messages[0]["content"] == ANNOTATION_SYSTEM
        self.requests.append(request)
        return self.reply(request)


@pytest.fixture
def annotator_on():
    servers = []

    def make(script: AnnotationScript, **kwargs) -> LLMAnnotator:
        server = OpenAICompatibleServer(script).start()
        servers.append(server)
        client = LLMClient(LLMConfig(model="openai/scripted-model", api_base=server.base_url, timeout_s=10.0,
                                     max_retries=0, backoff_initial_s=0.01, backoff_max_s=0.05))
        return LLMAnnotator(client, name="llm:test", **kwargs)

    yield make
    for server in servers:
        server.stop()


def _attempt_items() -> list[StepToAnnotate]:
    attempt = make_attempt([{"type": "click", "args": {"element": 0}}, None, {"type": "click", "args": {"element": 1}}])
    attempt.final_screenshot_png = attempt.steps[0].screenshot_png
    labels = [StepLabel(t, True, "ok") for t in range(3)]
    return [StepToAnnotate(attempt.task, attempt.steps, t, Action.from_dict(attempt.steps[t].action), labels,
                           attempt.final_screenshot_png) for t in (0, 2)]


def test_the_llm_sees_the_three_screens_the_task_and_the_steps_before(annotator_on):
    script = AnnotationScript(lambda r: Reply(json.dumps(ANSWER)))
    annotator = annotator_on(script)
    first, third = annotator.annotate(_attempt_items())
    assert first == third == ReasoningParts(*(ANSWER[k] for k in ("self_verification", "screen_analysis",
                                                                   "planning", "action_guidance")))
    by_step = {("Step 1:" in r.messages[1]["content"][0]["text"]): r for r in script.requests}
    opening, later = by_step[False], by_step[True]
    assert "(none: this is the first step)" in opening.messages[1]["content"][0]["text"]
    text = later.messages[1]["content"][0]["text"]
    assert "The task: Turn on Wi-Fi" in text and "Step 2: [invalid]" in text and "the previous screen" in text
    [url] = later.image_urls()
    width_three, width_two = decode_image(url).width, decode_image(opening.image_urls()[0]).width
    assert width_three > width_two * 1.4  # previous, current and next screen against current and next
    assert annotator.counts.summary() == {"calls": 2, "repaired": 0}


def test_unusable_answers_are_counted_failures(annotator_on):
    answers = iter([{**ANSWER, "confidence": 0.2}, {**ANSWER, "planning": "<think>tap</think>"}])
    annotator = annotator_on(AnnotationScript(lambda r: Reply(json.dumps(next(answers)))))
    low, tagged = annotator.annotate(_attempt_items())
    assert {low.reason, tagged.reason} == {"low_confidence", "unwritable"}
    broken = annotator_on(AnnotationScript(lambda r: Reply("I cannot see the screen.")))
    failures = broken.annotate(_attempt_items())
    assert [f.reason for f in failures] == ["llm_invalid_json"] * 2
    assert broken.counts.summary() == {"calls": 2, "repaired": 0, "failures_invalid_json": 2}
    with pytest.raises(ValueError, match="min_confidence"):
        LLMAnnotator(broken.client, "llm:test", min_confidence=1.5)
