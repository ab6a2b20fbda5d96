"""The world pretraining recipe: episodes as rollouts show them, nothing of the target world, resumable runs."""

from __future__ import annotations

import random
from functools import lru_cache

import pytest
import torch
from safetensors.torch import load_file

from ops.agent.episode import Hint
from ops.agent.policy_prompt import build_policy_prompt
from phonesim import all_templates, instantiate
from phonesim.pretrain import HELD_OUT_APPS, load_pretrain_apps, pretrain_specs, pretrain_templates
from phonesim.disjoint import TargetMatcher, target_entities, target_strings
from training.base.grounding_data import synthetic_sample
from training.base.pretrain import BasePretrainConfig, pretrain_base_policy
from training.base.sample_text import answer_text, prompt_text
from training.base.world_episodes import solve_episode, world_step_sample
from training.base.world_recipe import collect_episodes, world_sampler


@lru_cache(maxsize=1)
def recipe():
    # generated apps: grounding only; copies on, so that every check below also covers them
    return world_sampler(handmade_seeds=1, generated_seeds=0, n_screens=60, copy_share=0.3)


@lru_cache(maxsize=1)
def recipe_samples():
    rng = random.Random(3)
    return [recipe()(rng, False) for _ in range(1500)]


def _hint(summary: str) -> Hint:
    return Hint(attempt=1, key_mistake="", what_to_avoid=[], suggested_approach=[], important_insights=[],
                hint_summary=summary)


def _replayed_observations(template_id: str, episode) -> list:
    """The phone's observation before each step of `episode` and after the last."""
    task = instantiate(template_id, 0)
    phone = task.make_phone()
    observations = []
    for step in episode.steps:
        observations.append(phone.observe())
        assert phone.step(step.action).ok  # said by element index, the action does what the solver's did
    observations.append(phone.observe())
    verdict = task.judge(phone, phone.answer)
    assert verdict.success and verdict.clean
    return observations


@pytest.mark.parametrize("template_id", ["albums.rename", "plants.query_then_pin_pot", "tools.option_on"])
@pytest.mark.parametrize("hint_rate", [0.0, 1.0])
def test_episode_samples_are_the_prompts_rollouts_build(template_id, hint_rate):
    """Every on-path step (and the stop) as a sample has the user text the rollout engine builds on
    the replayed screen with the same Done lines and hints; hinted rows carry their mark."""
    episode = solve_episode(template_id, 0, random.Random(0), detour_rate=0.0)
    observations = _replayed_observations(template_id, episode)
    done = [s.done_line for s in episode.steps]
    rng, compared, marked = random.Random(1), 0, 0
    for _ in range(80):
        sample = world_step_sample(rng, episode, hint_rate)
        t = len(sample.history)
        obs = observations[t]
        [message] = build_policy_prompt("elements", episode.instruction, done[:t], [_hint(h) for h in sample.hints],
                                        obs.elements, screen=obs.screen)
        assert sample.history == tuple(done[:t]) and sample.screen == obs.screen
        assert prompt_text(sample) == message["content"][-1]["text"]
        compared += 1
        marked += "(hint)" in prompt_text(sample)
    assert compared == 80 and (marked > 0) == (hint_rate > 0)


def test_recipe_samples_name_no_target_entity_and_no_target_instruction():
    matcher = TargetMatcher(target_entities())
    instructions = set(target_strings())
    kinds = {s.kind for s in recipe_samples()}
    assert {"world_click", "world_done", "click", "launcher_named", "copy_named"} <= kinds  # every part comes through
    copies = sum(s.kind.startswith(("launcher_", "copy_")) for s in recipe_samples())
    assert abs(copies / len(recipe_samples()) - 0.3) < 0.05
    for s in recipe_samples():
        assert matcher.find(prompt_text(s) + "\n" + answer_text(s)) is None
        assert s.instruction not in instructions


def test_recipe_samples_show_no_target_app_and_nothing_of_the_held_out_apps():
    target_labels = {t.lower() for t in target_entities() if " " not in t}  # the target apps' names and labels
    held_out = {title for name, spec in pretrain_specs().items() if name in HELD_OUT_APPS
                for title in spec.titles}
    held_out_matcher = TargetMatcher(held_out)  # whole words: a held-out title inside another word is no title
    for s in recipe_samples():
        rows = {e.label for e in s.elements}
        assert not {r.lower() for r in rows} & target_labels
        assert held_out_matcher.find(prompt_text(s)) is None


def test_held_out_apps_have_templates_but_no_recipe_episodes():
    held = {t for t in pretrain_templates() if t.split(".")[0] in HELD_OUT_APPS}
    assert held and not held & set(all_templates())
    assert set(HELD_OUT_APPS) <= set(load_pretrain_apps())


class _Crash(RuntimeError):
    pass


def _samples_until(limit: int):
    calls = {"n": 0}

    def sample(rng, render):
        calls["n"] += 1
        if calls["n"] > limit:
            raise _Crash("killed")
        return synthetic_sample(rng, render)
    return sample


def test_an_interrupted_run_resumes_to_the_uninterrupted_weights(tmp_path):
    config = BasePretrainConfig(max_steps=6, checkpoint_every=2, batch_size=4, eval_samples=0,
                                tokenizer_corpus_samples=50, warmup_steps=2)
    whole = pretrain_base_policy(tmp_path / "whole", config, synthetic_sample)
    corpus = config.tokenizer_corpus_samples
    with pytest.raises(_Crash):  # dies in step 5: the save after step 4 is the last one
        pretrain_base_policy(tmp_path / "cut", config, _samples_until(corpus + 4 * config.batch_size + 2))
    assert (tmp_path / "cut" / "resume.pt").is_file()
    with pytest.raises(ValueError, match="another config"):
        pretrain_base_policy(tmp_path / "cut", config.model_copy(update={"learning_rate": 1e-3}), synthetic_sample)
    resumed = pretrain_base_policy(tmp_path / "cut", config, synthetic_sample)
    assert resumed.steps == whole.steps == 6 and not (tmp_path / "cut" / "resume.pt").exists()
    a, b = load_file(tmp_path / "whole" / "model.safetensors"), load_file(tmp_path / "cut" / "model.safetensors")
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    assert resumed.final_loss == pytest.approx(whole.final_loss, rel=1e-5)


def test_the_solver_steps_pipeline_renders_pretraining_episodes_in_the_structured_style():
    """Corrective teaching's solver, critic and annotator run on pretraining tasks (their phones have
    the pretraining apps), so the episodes also come as MobileWizard's four-part samples."""
    from ops.actions import parse_structured
    from ops.environments.simulator import SimEnvironment, template_task_spec
    from training.trainers.solver_steps import solver_step_samples

    task = instantiate("plants.pin", 0)
    result = solver_step_samples([template_task_spec(task)], "mobilewizard", lambda: SimEnvironment(size=(270, 600)))
    assert result.rows.height >= 3 and not result.teaching.failures
    for response in result.rows["target_response"].to_list():
        parsed = parse_structured(response)
        assert parsed.reasoning is not None and parsed.reasoning.planning


def test_structured_samples_train_beside_the_element_list_ones(tmp_path):
    """Every n-th step is a batch of MobileWizard-style samples: loss on the response only, counted, scored."""
    from training.base.structured_pool import chat_batch, structured_samples

    pool = structured_samples(["plants.pin", "tools.flag_on"], 1, tmp_path / "cache")
    assert pool and all(s.response.startswith("<think>") for s in pool)
    config = BasePretrainConfig(max_steps=4, structured_every=2, structured_batch=2, batch_size=4, eval_samples=4,
                                tokenizer_corpus_samples=50)
    report = pretrain_base_policy(tmp_path / "ck", config, synthetic_sample, structured=pool,
                                  structured_eval=pool[:2])
    assert report.data_seen["structured"] == 2 * config.structured_batch
    assert report.structured["n"] == 2 and 0 <= report.structured["format_valid"] <= 1
    from training.models.tiny import load_tiny
    _, processor = load_tiny(tmp_path / "ck")
    batch = chat_batch(processor, pool[:2])
    learned = batch["input_ids"][batch["labels"] != -100]
    assert processor.tokenizer.decode(learned).startswith("<think>")  # the prompt is not a target


def test_episodes_start_at_the_first_seed_asked_and_are_cached_apart(tmp_path):
    template_id = sorted(pretrain_templates())[0]
    later = collect_episodes([template_id], 2, 0, 0.0, tmp_path, first_seed=5)
    assert [e.seed for e in later] == [5, 6]
    assert [e.seed for e in collect_episodes([template_id], 2, 0, 0.0, tmp_path)] == [0, 1]
    assert len(list(tmp_path.glob("world_episodes_*.pkl"))) == 2
