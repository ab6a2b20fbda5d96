"""The repository's store of the pretraining world's solutions: complete for the recipe, the solver's own, and
never trusted where today's world disagrees."""

from __future__ import annotations

import gzip
import json

import pytest

from phonesim.actions import Action
from phonesim.source import source_digest
from training.base import world_recipe, world_solutions
from training.base.world_recipe import collect_episodes, recipe_jobs
from training.base.world_solutions import (SolutionStore, load_store, replays_cleanly, search_all, solutions, stored,
                                           write_store)

QUICK = [("gen00.delete", 0), ("gen00.delete", 1), ("gen00.flag_on", 0), ("gen00.open_group", 1)]


def test_the_store_holds_every_instance_the_recipe_solves_and_each_replays_cleanly():
    jobs = recipe_jobs()
    store = load_store()
    assert set(jobs) <= set(store.paths)
    solved = solutions(jobs)  # a fresh clone's pretraining run searches nothing
    assert solved.from_store == len(jobs)
    assert sum(path is None for path in solved.paths) == sum(path is None for path in store.paths.values())


def test_a_sample_searched_afresh_is_as_short_as_the_stored_solution():
    # every 61st instance of the store (100 of 6,102, hand-written, generated and held-out apps of every kind): the
    # store is the solver's answer, not merely a clean one
    sample = sorted(load_store().paths)[::61]
    assert {tid.split(".")[0] for tid, _ in sample} >= {"albums", "gen00"} and len(sample) >= 90
    for job, found in zip(sample, search_all(sample)):
        kept = load_store().paths[job]
        assert (found is None) == (kept is None), job
        assert found is None or len(found) == len(kept), job


def test_a_stored_path_that_no_longer_solves_is_searched_again(tmp_path):
    good = write_store(QUICK, path=tmp_path / "store.json.gz")
    job = QUICK[0]
    wrong = (Action("system_button", button="back"),) * len(good.paths[job])
    stale = SolutionStore(good.digest, {**good.paths, job: wrong})
    assert not replays_cleanly(*job, wrong)
    assert stored(job, stale) == (False, None)
    again = solutions(QUICK, store=stale)
    assert again.from_store == len(QUICK) - 1 and again.paths == [list(good.paths[j]) for j in QUICK]


def test_a_stored_none_is_trusted_only_on_the_simulator_it_was_found_on():
    job = QUICK[0]
    assert stored(job, SolutionStore(source_digest(), {job: None})) == (True, None)
    assert stored(job, SolutionStore("0" * 16, {job: None})) == (False, None)
    assert stored(job, SolutionStore(source_digest(), {})) == (False, None)


def test_the_store_is_written_the_same_for_the_same_world_and_read_back(tmp_path):
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    written = write_store(list(reversed(QUICK)), path=first)
    write_store(QUICK, workers=2, path=second)  # searched in two processes, a template's instances in one
    assert first.read_bytes() == second.read_bytes()
    assert load_store(first) == written and written.digest == source_digest()
    assert [row[:2] for row in json.loads(gzip.decompress(first.read_bytes()))["solutions"]] == sorted(
        [list(job) for job in QUICK])


def test_a_malformed_store_is_an_error_naming_the_file(tmp_path):
    for name, content in (("not-gzip", b"{}"), ("wrong-format", gzip.compress(b'{"format": 0}')),
                          ("bad-action", gzip.compress(b'{"format": 1, "digest": "", "solutions": '
                                                       b'[["gen00.delete", 0, [{"type": "fly"}]]]}'))):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ValueError, match=f"{name}: not a solutions store"):
            load_store(path)


def test_episodes_are_the_same_whether_solutions_are_stored_or_searched_in_workers(tmp_path, monkeypatch):
    # detours are drawn after the solving, in job order: the same episodes wherever the solutions came from
    templates = ["gen00.delete", "gen00.flag_on", "gen00.open_group"]
    from_store = collect_episodes(templates, 2, seed=5, detour_rate=1.0)
    assert len(from_store) == 6 and any(episode.detours for episode in from_store)
    monkeypatch.setattr(world_solutions, "STORE", tmp_path / "absent.json.gz")
    monkeypatch.setattr(world_recipe.world_solutions, "load_store", lambda: SolutionStore("", {}))
    assert collect_episodes(templates, 2, seed=5, detour_rate=1.0, workers=2) == from_store


def test_only_pretraining_instances_missing_from_the_store_are_warned_of(caplog, monkeypatch):
    # the store keeps the pretraining world's solutions; a target template (benchmarks/target_steps.py) has none
    with caplog.at_level("WARNING", logger=world_recipe.LOG.name):
        assert len(collect_episodes(["clock.alarm_off", "gen00.delete"], 1, seed=0, detour_rate=0.0)) == 2
    assert caplog.records == []
    monkeypatch.setattr(world_recipe.world_solutions, "load_store", lambda: SolutionStore("", {}))
    with caplog.at_level("WARNING", logger=world_recipe.LOG.name):
        collect_episodes(["clock.alarm_off", "gen00.delete"], 1, seed=0, detour_rate=0.0)
    assert [r.getMessage()[:36] for r in caplog.records] == ["searched 1 of 1 pretraining instance"]
