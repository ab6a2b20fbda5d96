"""The simulator cache keeps first apps across runs, and never serves another simulator's results."""

from __future__ import annotations

from ops.evaluation.benchmark import first_app_key, first_apps, template_tasks
from phonesim.source import source_digest
from phonesim.tasks import instantiate
from resources.simulator_cache import SimulatorCache
from resources.storage import StorageLocation


def _tasks():
    return [t for t, _ in template_tasks("test", 1)][:3]


def test_first_apps_searches_only_what_it_does_not_know():
    tasks = _tasks()
    known = {first_app_key(instantiate(tasks[0].template_id, tasks[0].seed, 0), 0): "planted"}
    expected = first_apps(tasks, 0, known)
    assert expected[tasks[0].task_id][1] == "planted"  # read, not searched
    assert len(known) == 3 and expected == first_apps(tasks, 0, dict(known))
    assert {app for _, app in first_apps(tasks[1:], 0).values()} == {known[first_app_key(i, 0)]
                                                                    for i, _ in list(expected.values())[1:]}


def test_the_cache_round_trips_under_the_simulators_digest(tmp_path):
    storage = StorageLocation(root=str(tmp_path))
    cache = SimulatorCache(storage, "first_apps")
    assert cache.load(print) == {}
    cache.save({"0:abc": "settings"})
    assert SimulatorCache(storage, "first_apps").load(print) == {"0:abc": "settings"}
    assert (tmp_path / "_cache" / f"first_apps-{source_digest()}.json").exists()
    assert len(source_digest()) == 16 and source_digest() == source_digest()


def test_an_unreadable_cache_is_recomputed_with_a_warning(tmp_path):
    cache = SimulatorCache(StorageLocation(root=str(tmp_path)), "first_apps")
    warnings: list[str] = []
    (tmp_path / "_cache").mkdir()
    for text in ("{not json", '["a list"]', '{"k": 3}'):
        (tmp_path / "_cache" / f"first_apps-{source_digest()}.json").write_text(text)
        assert cache.load(warnings.append) == {}
    assert len(warnings) == 3 and "computed again" in warnings[0]
