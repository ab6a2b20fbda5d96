"""MobileWizard's format ("structure") and reasoning rewards (MobileWizard §3.4.2) on hand-made
responses, and as options of the GUI action reward (off by default, each its own component)."""

from __future__ import annotations

import math

import pytest

from ops.actions import REASONING_PARTS, Action, ReasoningParts, render_structured
from ops.judging.reasoning_reward import EmbedderError, part_similarities, reasoning_reward, structure_reward
from ops.judging.action_reward import COMPONENTS, RewardConfig, RewardInputError, score_output
from ops.judging.reward_columns import ANNOTATION_COLUMNS, make_trl_reward
from tests.support.embedders import HashingEmbedder

ANNOTATION = ReasoningParts(
    self_verification="The Settings app opened as intended.",
    screen_analysis="Settings lists Network, Display and Sound.",
    planning="Open the display settings.",
    action_guidance="Click Display in the list.",
)
TARGET = Action(type="click", point=(500, 300))
ANSWER = "<answer>CLICK(500, 300)</answer>"


def _blocks(*names: str, texts: dict[str, str] | None = None) -> str:
    texts = texts or dict(zip(REASONING_PARTS, ANNOTATION.texts(), strict=True))
    return "\n".join(f"<{n}>{texts[n]}</{n}>" for n in names)


def _think(body: str) -> str:
    return f"<think>\n{body}\n</think>\n"


RIGHT = render_structured(TARGET, ANNOTATION)
OUT_OF_ORDER = _think(_blocks("screen_analysis", "self_verification", "planning", "action_guidance")) + ANSWER
MISSING_PLAN = _think(_blocks("self_verification", "screen_analysis", "action_guidance")) + ANSWER
EMPTY_PLAN = _think(_blocks(*REASONING_PARTS).replace(ANNOTATION.planning, " ")) + ANSWER
FREE_TEXT = _think("I will open Display.") + ANSWER
NO_ANSWER = _think(_blocks(*REASONING_PARTS))


@pytest.mark.parametrize(("text", "structure", "reasoning"), [
    (RIGHT, 1.0, 1.0),
    (OUT_OF_ORDER, 0.5, 1.0),  # the parts still match their annotations; order is the format's business
    (MISSING_PLAN, 0.5, 0.75),
    (EMPTY_PLAN, 0.5, 0.75),
    (FREE_TEXT, 0.5, 0.0),
    (NO_ANSWER, 0.5, 1.0),
    (RIGHT + "\nDone.", 0.5, 1.0),
    ("Sure! " + RIGHT, 0.0, 0.0),  # no leading <think> block: no parts are read
    (ANSWER, 0.0, 0.0),
    ("", 0.0, 0.0),
])
def test_hand_made_cases(text, structure, reasoning):
    embed = HashingEmbedder()
    assert structure_reward(text) == structure
    assert reasoning_reward(text, ANNOTATION, embed) == pytest.approx(reasoning)


def test_a_part_that_says_something_else_scores_by_its_similarity():
    other = dict(zip(REASONING_PARTS, ANNOTATION.texts(), strict=True),
                 planning="Open the sound settings.", action_guidance="Swipe up twice.")
    text = _think(_blocks(*REASONING_PARTS, texts=other)) + ANSWER
    scores = part_similarities(text, ANNOTATION, HashingEmbedder())
    assert scores[:2] == pytest.approx((1.0, 1.0))
    assert 0.3 < scores[2] < 1.0 and scores[3] == 0.0  # "open the … settings" shared; nothing shared


def test_the_embedder_is_called_once_with_the_present_parts_and_their_annotations():
    embed = HashingEmbedder()
    reasoning_reward(MISSING_PLAN, ANNOTATION, embed)
    [call] = embed.calls
    a = ANNOTATION
    assert call == [a.self_verification, a.screen_analysis, a.action_guidance,
                    a.self_verification, a.screen_analysis, a.action_guidance]
    reasoning_reward("no parts at all", ANNOTATION, embed)
    assert len(embed.calls) == 1  # nothing to compare, no call


@pytest.mark.parametrize(("output", "match"), [
    (lambda texts: [[1.0, 0.0]] * (len(texts) - 1), "vectors for"),
    (lambda texts: [[math.nan, 1.0]] * len(texts), "non-finite"),
    (lambda texts: [[1.0, 0.0], [1.0]] * (len(texts) // 2), "different lengths"),
    (lambda texts: ["ab"] * len(texts), "not a list of number vectors"),
])
def test_a_faulty_embedder_is_a_clear_error(output, match):
    with pytest.raises(EmbedderError, match=match):
        reasoning_reward(RIGHT, ANNOTATION, output)


def test_unreadable_text_scores_zero_without_embedding():
    embed = HashingEmbedder()
    for text in (RIGHT.replace("intended", "\ud800"), RIGHT + " " * 100_001, None, b"bytes"):
        assert structure_reward(text) == 0.0 and reasoning_reward(text, ANNOTATION, embed) == 0.0
    assert embed.calls == []


def test_off_by_default_and_each_on_is_added_and_reported():
    plain = score_output(RIGHT, "mobilewizard", TARGET)
    assert RewardConfig().components() == COMPONENTS and plain.to_dict() == {
        "reward": 1.0, "type": 1.0, "arg": 1.0, "format_ok": True}
    config = RewardConfig(structure_weight=0.1, reasoning_weight=0.2)
    assert config.components() == (*COMPONENTS, "structure", "reasoning")
    b = score_output(MISSING_PLAN, "mobilewizard", TARGET, config=config, annotation=ANNOTATION, embed=HashingEmbedder())
    assert (b.structure, b.reasoning) == (0.5, pytest.approx(0.75))
    assert b.reward == pytest.approx(1.0 + 0.1 * 0.5 + 0.2 * 0.75)
    logged_only = score_output(RIGHT, "mobilewizard", TARGET, config=RewardConfig(structure_weight=0))
    assert (logged_only.reward, logged_only.structure, logged_only.reasoning) == (1.0, 1.0, None)
    assert logged_only.to_dict()["structure"] == 1.0 and "reasoning" not in logged_only.to_dict()


def test_misconfigured_structured_rewards_fail_with_the_reason():
    with pytest.raises(ValueError, match="action format is 'qwen3vl'"):
        score_output(RIGHT, "qwen3vl", TARGET, config=RewardConfig(structure_weight=1.0))
    with pytest.raises(ValueError, match="needs an embedder"):
        score_output(RIGHT, "mobilewizard", TARGET, config=RewardConfig(reasoning_weight=1.0))
    with pytest.raises(RewardInputError, match="annotated parts"):
        score_output(RIGHT, "mobilewizard", TARGET, config=RewardConfig(reasoning_weight=1.0), embed=HashingEmbedder())
    with pytest.raises(ValueError, match="component must be one of"):
        make_trl_reward("mobilewizard", RewardConfig(), "structure")
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        RewardConfig(reasoning_weight=-1)


def test_trl_components_read_the_annotation_columns_and_count_bad_rows():
    config = RewardConfig(structure_weight=0.5, reasoning_weight=0.5)
    annotation = dict(zip(ANNOTATION_COLUMNS, ([t] * 3 for t in ANNOTATION.texts()), strict=True))
    annotation["target_planning"] = [ANNOTATION.planning, ANNOTATION.planning, None]
    columns = {"target_action": [TARGET.to_json()] * 3, **annotation}
    completions = [RIGHT, [{"role": "assistant", "content": OUT_OF_ORDER}], RIGHT]
    rewards = {c: make_trl_reward("mobilewizard", config, c, embed=HashingEmbedder()) for c in config.components()}
    assert rewards["structure"].__name__ == "gui_action_structure"
    assert rewards["structure"](completions, **columns) == [1.0, 0.5, 0.0]
    assert rewards["reasoning"](completions, **columns) == pytest.approx([1.0, 1.0, 0.0])
    assert rewards["overall"](completions, **columns) == pytest.approx([2.0, 1.75, 0.0])
    assert rewards["reasoning"].failures == {"malformed target": 1}
    with pytest.raises(ValueError, match="needs an embedder"):
        make_trl_reward("mobilewizard", config, "overall")
