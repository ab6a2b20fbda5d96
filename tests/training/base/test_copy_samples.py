"""Verbatim-copy samples: drawn launchers as rollouts see them, nothing of the target or held-out apps."""

from __future__ import annotations

import dataclasses
import random
from functools import lru_cache

import pytest
import torch

from ops.agent.policy_prompt import build_policy_prompt
from phonesim.disjoint import TargetMatcher, target_entities
from phonesim.phone import Phone
from phonesim.pretrain import HELD_OUT_APPS, PHONES, load_pretrain_apps, phone_catalog, pretrain_specs
from tests.training.base.test_world_recipe import _hint, _replayed_observations
from training.base.bundled import pretrain_embedded_base
from training.base.copy_samples import (LAUNCHER_FORMS, forbidden_labels, in_app_sampler, launcher_sampler,
                                        launcher_screen)
from training.base.pretrain import RESUME_FILE, BasePretrainConfig, _load_resume
from training.base.sample_text import prompt_text
from training.base.sim_grounding import sim_screen
from training.base.world_episodes import solve_episode

TEMPLATES = ("albums.rename", "plants.open_item", "tools.option_on", "gen00.open_prefs", "gen03.pin")
NAV_ROWS = 3  # Back, Home, Overview close every screen's element list


@lru_cache(maxsize=1)
def episodes():
    return [solve_episode(t, 0, random.Random(0), detour_rate=0.0) for t in TEMPLATES]


@lru_cache(maxsize=1)
def launcher_samples():
    labels = {name: app.label for name, app in load_pretrain_apps().items()}
    sample = launcher_sampler(episodes(), labels, forbidden_labels())
    rng = random.Random(5)
    return [sample(rng, False) for _ in range(300)]


def _app_rows(sample) -> list[str]:
    return [e.label for e in sample.elements if e.clickable][:-NAV_ROWS]


@pytest.mark.parametrize("world_seed", range(3))
def test_a_drawn_launcher_is_what_a_world_phone_shows(world_seed):
    """Stand-in apps with a world phone's labels give that phone's launcher, row for row."""
    catalog = phone_catalog("gen00")
    labels = [catalog[name].label for name in PHONES["generated1"]]
    assert launcher_screen(labels, world_seed) == sim_screen(Phone(world_seed=world_seed, catalog=catalog).observe())


def test_launcher_samples_are_the_prompts_rollouts_build_on_such_a_launcher():
    """A phone of real collection apps carrying the drawn labels, at its launcher: the rollout engine's
    prompt there (instruction, hint line, marked row) is the sample's, byte for byte; the target clicks
    the row the instruction or the hint names."""
    real = [load_pretrain_apps()[f"gen{i:02d}"] for i in range(12)]
    for sample in launcher_samples()[:60]:
        rows = _app_rows(sample)
        catalog = {app.name: dataclasses.replace(app, label=label) for app, label in zip(real, rows)}
        prompts = set()
        for world_seed in range(3):  # the clock and date come from the world seed
            obs = Phone(world_seed=world_seed, catalog=catalog).observe()
            [message] = build_policy_prompt("elements", sample.instruction, [], [_hint(h) for h in sample.hints],
                                            obs.elements, screen=obs.screen)
            prompts.add(message["content"][-1]["text"])
        assert prompt_text(sample) in prompts
        clicked = sample.elements[sample.target.element].label
        assert clicked in rows and (clicked in sample.instruction or f"Hint: {clicked}" in prompt_text(sample))
        assert (f"{clicked} #{sample.target.element} (hint)" in prompt_text(sample)) == bool(sample.hints)
    assert {s.kind for s in launcher_samples()} == set(LAUNCHER_FORMS)


def test_drawn_launchers_never_repeat_and_show_nothing_of_the_target_or_held_out_apps():
    forbidden = forbidden_labels()
    assert {"trails", "clock", "plants"} <= forbidden  # a held-out, a target and a trained app's label
    launchers = [tuple(_app_rows(s)) for s in launcher_samples()]
    assert len(set(launchers)) == len(launchers) and {len(rows) for rows in launchers} == set(range(8, 13))
    assert len({s.target.element for s in launcher_samples()}) == 12  # any row may be the one named
    matcher = TargetMatcher(target_entities())
    held_out = TargetMatcher({title for name, spec in pretrain_specs().items() if name in HELD_OUT_APPS
                              for title in spec.titles + spec.new_titles})
    for sample in launcher_samples():
        assert not {row.lower() for row in _app_rows(sample)} & forbidden
        assert matcher.find(prompt_text(sample)) is None and held_out.find(prompt_text(sample)) is None


def test_in_app_copies_are_the_prompts_rollouts_build_and_name_their_row():
    episode = episodes()[0]
    observations = _replayed_observations(TEMPLATES[0], episode)
    done = [s.done_line for s in episode.steps]
    sample_fn, rng, kinds = in_app_sampler([episode]), random.Random(2), set()
    for _ in range(40):
        sample = sample_fn(rng, False)
        t = len(sample.history)
        obs = observations[t]
        [message] = build_policy_prompt("elements", episode.instruction, done[:t], [_hint(h) for h in sample.hints],
                                        obs.elements, screen=obs.screen)
        assert prompt_text(sample) == message["content"][-1]["text"] and obs.screen != "launcher"
        row = sample.elements[sample.target.element]
        assert (row.name in episode.instruction) if sample.kind == "copy_named" else ("(hint)" in prompt_text(sample))
        kinds.add(sample.kind)
    assert kinds == {"copy_named", "copy_hinted"}


def test_copy_samples_come_from_the_world_recipe_only(tmp_path):
    with pytest.raises(ValueError, match="world recipe"):
        pretrain_embedded_base(tmp_path, BasePretrainConfig(copy_share=0.3), 0.5, 0.0, "test", recipe="sim")


def test_a_run_saved_before_copy_share_existed_resumes_at_its_default(tmp_path):
    config = BasePretrainConfig()
    saved = {k: v for k, v in config.model_dump().items() if k != "copy_share"}
    torch.save({"config": saved}, tmp_path / RESUME_FILE)
    assert _load_resume(tmp_path, config)["config"] == saved
    with pytest.raises(ValueError, match="copy_share"):
        _load_resume(tmp_path, config.model_copy(update={"copy_share": 0.3}))
