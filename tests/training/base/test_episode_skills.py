"""Episode-context pretraining samples: each skill's target follows from its prompt, and the
hint and history lines are the ones rollouts and the programmatic critic really write."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from ops.actions import Action, ActionType
from ops.actions.formats import label_echo
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.agent.episode import AttemptRecord, GroundTruth, StepRecord, TaskSpec
from ops.agent.hint_marks import hint_targets
from ops.agent.policy_prompt import build_policy_prompt, element_context
from training.base.sample_text import prompt_text
from training.base.episode_skills import SKILLS, TASK_VERBS, with_episode_context
from phonesim.tasks import instantiate
from training.base.sim_grounding import sim_sampler


@pytest.fixture(scope="module")
def samples():
    fn = with_episode_context(sim_sampler(n_screens=80, seed=0), share=0.6)
    rng = random.Random(5)
    return [fn(rng, False) for _ in range(1500)]


def test_every_skill_is_drawn(samples):
    kinds = Counter(s.kind for s in samples)
    assert set(SKILLS) <= set(kinds), kinds
    assert kinds["click"] > 0 and any(s.history for s in samples if s.kind == "click")


def test_done_means_the_named_element_was_the_last_step(samples):
    for s in (s for s in samples if s.kind == "done"):
        assert s.target == Action(ActionType.TERMINATE, status="success")
        last = s.history[-1]
        label = last.removeprefix("- ").rsplit(" #", 1)[0]
        named = [s.instruction.removeprefix(f"{verb} ") for verb in TASK_VERBS if s.instruction.startswith(f"{verb} ")]
        assert any(label.startswith(n) for n in named), (s.instruction, label)  # what was done is what it names


def test_plain_clicks_never_show_their_target_as_done(samples):
    for s in (s for s in samples if s.kind == "click" and s.history):
        target = s.elements[s.target.element]
        assert not any(line.removeprefix("- ").rsplit(" #", 1)[0] == target.label for line in s.history)


def _named(part: str) -> str:
    """The element a "<verb> <element>" instruction part names."""
    for verb in sorted(TASK_VERBS, key=len, reverse=True):
        for v in (verb, verb.lower()):
            if part.startswith(f"{v} "):
                return part.removeprefix(f"{v} ")
    raise AssertionError(f"no verb in {part!r}")


def test_sequence_targets_follow_the_done_list(samples):
    for s in (s for s in samples if s.kind == "sequence"):
        first, second = (_named(p) for p in s.instruction.split(", then ", 1))
        done = [line.removeprefix("- ").rsplit(" #", 1)[0] for line in s.history]

        def was_done(name: str) -> bool:
            return any(d == name or d.startswith(f"{name} ") for d in done)

        if s.target.type == ActionType.TERMINATE:
            assert was_done(first) and was_done(second)
        else:  # on the screen itself a row is done when its whole label is in the Done list
            labels = {e.name: " ".join(e.label.split()) for e in s.elements}
            assert labels[second] not in done
            assert s.elements[s.target.element].name == (second if labels[first] in done else first)


def test_hints_name_an_element_on_screen_or_the_instruction_does(samples):
    kinds = {s.kind for s in samples}
    assert {"hint", "stale_hint", "type_hint"} <= kinds
    assert any(" On '" in h for s in samples if s.kind == "hint" for h in s.hints)  # some hints are plans
    for s in (s for s in samples if s.kind in ("hint", "stale_hint", "type_hint")):
        if s.kind == "type_hint":
            [hint] = s.hints
            assert f"typing '{s.target.text}'" in hint and s.target.text not in s.instruction
            continue
        target = s.elements[s.target.element]
        names = {e.name for e in s.elements}
        applicable = [name for h in s.hints for _, name in hint_targets(h) if name in names]
        lines = prompt_text(s).split("\n")
        end = -2 if lines[-1].startswith(label_echo.HINT_PREFIX) else -1  # rows, task line, hint line
        rows = lines[end - len(s.elements):end]
        marked = [i for i, row in enumerate(rows) if row.endswith(label_echo.HINT_MARK)]
        assert (end == -2) == bool(marked)
        if s.kind == "hint":  # exactly one hint step applies here and it names the target; its row is marked
            assert applicable == [target.name]
            assert s.target.element in marked and all(s.elements[i].name == target.name for i in marked)
            assert " ".join(target.label.split()) in lines[-1]
        else:
            assert not applicable and not marked
            assert target.name in s.instruction


def test_only_hint_samples_mark_rows(samples):
    for s in samples:
        has_mark = label_echo.HINT_MARK + "\n" in prompt_text(s)
        assert has_mark == (s.kind == "hint" or (s.kind == "type_hint" and s.elements[s.target.element].named))


def test_hint_text_is_what_the_programmatic_critic_writes():
    """The critic's hint for a wrong tap on the launcher, rendered into the policy prompt, has the
    same shape as the pretraining hints ("On '<screen>', click '<X>'.")."""
    task = instantiate("settings.toggle_dark_theme", 0)
    phone = task.make_phone()
    obs = phone.observe()
    clock = next(e["index"] for e in obs.elements if e.get("text") == "Clock")
    state = phone.snapshot()
    phone.step(Action(ActionType.CLICK, element=clock))

    step = StepRecord(step=0, screenshot_png=b"", elements=obs.elements, a11y=None, app=obs.app, screen=obs.screen,
                      prompt="", raw_output="", action=Action(ActionType.CLICK, element=clock).to_dict(),
                      parse_error=None, conclusion="", latency_s=0.0, env_ok=True, env_reason=None,
                      state=json.dumps(state))
    spec = TaskSpec(task_id=task.id, instruction=task.instruction, step_budget=task.step_budget, app="settings",
                    template_id=task.template.id, seed=0)
    record = AttemptRecord(task=spec, attempt=1, policy_version="p", hints=[], steps=[step], end_reason="budget",
                           answer=None, final_state=json.dumps(phone.snapshot()),
                           ground_truth=GroundTruth(success=False, progress=0.0, false_complete=False,
                                                    side_effects=0, overdue=False))
    hint = ProgrammaticCritic().evaluate(record).hint
    assert hint.hint_summary == "On 'launcher', click 'Settings'."
    assert hint.what_to_avoid == ["click 'Clock' on the 'launcher' screen"]
    [message] = build_policy_prompt("elements", task.instruction, [], [hint], obs.elements, screen=obs.screen)
    text = message["content"][0]["text"]
    assert text.startswith("\n".join(element_context([hint.hint_summary], [])))
    settings = next(e["index"] for e in obs.elements if e.get("text") == "Settings")
    assert [line for line in text.split("\n") if line.endswith(label_echo.HINT_MARK)] == [
        label_echo.render_row(settings, "Settings") + label_echo.HINT_MARK]
    assert text.endswith(f"\n{label_echo.TASK_PREFIX}{task.instruction}\n{label_echo.HINT_PREFIX}Settings")


def test_the_pretraining_stream_does_not_depend_on_the_hash_seed():
    """`mobileforge base pretrain` must see the same samples in every process (set iteration
    order follows PYTHONHASHSEED)."""
    import os
    import subprocess
    import sys

    code = ("import hashlib, random\n"
            "from training.base.episode_skills import with_episode_context\n"
            "from training.base.sim_grounding import sim_sampler\n"
            "from training.base.sample_text import tokenizer_corpus\n"
            "fn = with_episode_context(sim_sampler(n_screens=60, seed=0))\n"
            "print(hashlib.sha256('\\0'.join(tokenizer_corpus(fn, 1500, 1)).encode()).hexdigest())\n")
    digests = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed},
                              capture_output=True, text=True, check=True).stdout.strip()
               for seed in ("1", "2")}
    assert len(digests) == 1, digests


def test_typing_goes_into_a_field_on_screen_and_copies_open_ended_text(samples):
    """Typing is taught only where a text field exists, into that field, with text taken from
    open-ended sources (the old base learned an 18-phrase vocabulary and typed it anywhere)."""
    typed = [s for s in samples if s.target.type == ActionType.TYPE]
    assert len(typed) > 40
    for s in typed:
        if s.target.element is None:  # a hint says to type into the focused field
            assert s.kind == "action_hint" and any(e.editable for e in s.elements)
        else:
            assert s.elements[s.target.element].editable
        assert s.target.text in (s.instruction if s.kind == "type" else s.hints[0])
    assert len({s.target.text for s in typed}) > 0.8 * len(typed)
    fieldless = [s for s in samples if not any(e.editable for e in s.elements)]
    assert fieldless and all(s.target.type != ActionType.TYPE for s in fieldless)
    # quotes in an instruction do not mean "type": quoted names are also tapped
    assert any(s.kind == "click" and '"' in s.instruction for s in samples)
