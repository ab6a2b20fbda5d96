"""MobileWizard's format and reasoning rewards as options of AdaGRPO's trajectory reward (§3.4.2, eq. 3):
per-step means over a hand-made episode, and a short run that logs each as its own curve."""

import contextlib
import dataclasses
from collections.abc import Sequence

import pytest

from training.methods.adagrpo.rules import FailureCurriculum
from ops.actions import Action, ActionType, ReasoningParts, render_structured
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.judging.critic.reasoning_annotation import ProgrammaticAnnotator, StepToAnnotate
from ops.agent.episode import PolicyOutput, PolicyRequest
from ops.judging.episode_reasoning_reward import EpisodeReasoningReward
from ops.agent.policy import PromptedPolicy
from ops.agent.messages import messages_to_json
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.environments.simulator import SimEnvironment, template_task_spec
from phonesim.tasks import instantiate
from tests.support.embedders import HashingEmbedder
from tests.support.scripted_policy import RandomClickPolicy, StructuredClickPolicy
from training.models.tiny import build_tiny_model
from training.methods.adagrpo.trainer import run_adagrpo
from tests.support.online_rl import simulator_setting
from training.methods.adagrpo.config import AdaGRPOConfig

WIFI = template_task_spec(instantiate("settings.connect_wifi", 0))
PARTS = ReasoningParts("Nothing to check yet.", "Settings is open.", "Open the network page.", "Click the first row.")


class Texts(PromptedPolicy):
    """Says the given texts in order (the structured style's prompts and parser)."""

    def __init__(self, texts: Sequence[str]):
        super().__init__("mobilewizard", "texts")
        self.texts = list(texts)

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]:
        return [PolicyOutput(self.texts.pop(0), messages_to_json(self.prompt_for(r)), 0.0) for r in requests]


class Collect:
    def __init__(self):
        self.records = []

    def completed(self, task_id, policy_version):
        return {}

    def save(self, record):
        self.records.append(record)


def _episode(texts: Sequence[str]):
    store = Collect()
    run_rollouts([dataclasses.replace(WIFI, step_budget=len(texts))], lambda: SimEnvironment((270, 600)), Texts(texts),
                 ProgrammaticCritic(), store, RolloutConfig(attempts=1, use_hints=False))
    [record] = store.records
    return record


def test_the_format_term_is_the_mean_over_the_episodes_responses():
    click = Action(ActionType.CLICK, point=(500, 145))
    texts = [render_structured(click, PARTS),  # 1.0
             "<think>I tap the first row.</think><answer>CLICK(500, 145)</answer>",  # free text in the envelope: 0.5
             "tap it"]  # 0.0
    record = _episode(texts)
    score = EpisodeReasoningReward(structure_weight=0.2).score(record)
    assert score.structure == pytest.approx(0.5) and score.reasoning is None
    assert EpisodeReasoningReward(structure_weight=0.2).bonus(score) == pytest.approx(0.1)
    assert EpisodeReasoningReward(structure_weight=0).bonus(score) == 0.0  # logged, not added


def test_the_reasoning_term_compares_each_step_with_its_programmatic_annotation():
    click = Action(ActionType.CLICK, point=(500, 145))
    record = _episode([render_structured(click, PARTS), "tap it"])
    # step 0 rewritten with exactly the annotation the annotator writes for it: similarity 1; step 1 has no action: 0
    [annotation] = ProgrammaticAnnotator().annotate([StepToAnnotate(record.task, record.steps, 0, click, (),
                                                                    record.final_screenshot_png)])
    assert isinstance(annotation, ReasoningParts)
    steps = [dataclasses.replace(record.steps[0], raw_output=render_structured(click, annotation)), record.steps[1]]
    terms = EpisodeReasoningReward(None, 0.2, ProgrammaticAnnotator(), HashingEmbedder())
    score = terms.score(dataclasses.replace(record, steps=steps))
    assert score.reasoning == pytest.approx(0.5) and score.structure is None
    assert terms.unscored == {"no_action": 1}
    # the agent's own parts share few words with the annotation: less than 1 for that step
    assert terms.score(record).reasoning < 0.5
    with pytest.raises(ValueError, match="annotator"):
        EpisodeReasoningReward(None, 0.2)


def _run(tmp_path, policy, **weights):
    base = build_tiny_model(tmp_path / "tiny")
    config = AdaGRPOConfig.cpu_tiny(epochs=1, tasks_per_epoch=1, group_size=3, adapr=False, **weights)

    @contextlib.contextmanager
    def act(checkpoint_dir, epoch):
        yield policy

    return run_adagrpo(base_dir=base, workdir=tmp_path, config=config, act=act, failures=FailureCurriculum(),
                       log=lambda line: None, embed=HashingEmbedder(), **simulator_setting(["settings.connect_wifi"]))


def test_adagrpo_logs_each_mobilewizard_term_as_its_own_curve_beside_the_reward(tmp_path):
    result = _run(tmp_path, StructuredClickPolicy(seed=2, stop_prob=0.2, invalid_every=3),
                  structure_weight=0.2, reasoning_weight=0.2)
    curves = {name: values[0][1] for name, values in result.curves.items()}
    assert {"structure", "reasoning"} <= set(curves)
    assert 0 < curves["structure"] < 1 and 0 <= curves["reasoning"] < 1  # every third output is free text
    # the logged reward is the outcome plus both weighted terms (episode means, before SPA)
    assert curves["reward"] == pytest.approx(curves["success"] + 0.2 * curves["structure"] + 0.2 * curves["reasoning"])
    assert result.unscored_steps.get("no_action", 0) > 0  # the free-text steps
    print(f"AdaGRPO with both terms: {curves}; unscored {result.unscored_steps}; trained: {result.report is not None}")


def test_without_the_options_no_term_is_logged_and_another_style_is_refused(tmp_path):
    assert not {"structure", "reasoning"} & set(_run(tmp_path / "off", StructuredClickPolicy(seed=2)).curves)
    with pytest.raises(ValueError, match="'mobilewizard' format"):
        _run(tmp_path / "elements", RandomClickPolicy(seed=2), structure_weight=0.2)
