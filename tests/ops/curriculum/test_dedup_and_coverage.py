"""Near-duplicate removal (paraphrases go, distinct tasks stay) and the coverage table."""

from __future__ import annotations

import pytest

from ops.curriculum import CurriculumTask, coverage, deduplicate, normalize_instruction, similarity


def task(task_id: str, instruction: str, app: str = "settings", function: str = "misc", **judge) -> CurriculumTask:
    verifiable = bool(judge.get("template_id") or judge.get("goal_screen"))
    if judge.get("template_id"):
        judge.setdefault("template_seed", 0)
    return CurriculumTask(task_id=task_id, app=app, instruction=instruction, step_budget=5,
                          core_functionality=function, variation_type="parameter_change", prerequisites=None,
                          source_trace_id=f"{app}-g0.0", verifiable=verifiable, **judge)


def test_normalisation_masks_values_and_drops_filler():
    assert normalize_instruction('Please rename the phone to "Mei\'s Pixel" and set volume to 40%.') == \
        "rename phone to <q> and set volume to <n>"
    assert normalize_instruction("Call +1 859-555-5704 now") == "call <n> now"


def test_paraphrase_duplicates_are_removed_and_distinct_tasks_kept():
    tasks = [
        task("a", "Turn on Wi-Fi."),
        task("b", "Please turn on the Wi-Fi"),  # filler words only
        task("c", "Turn off Wi-Fi."),  # opposite action: distinct
        task("d", "Add Bob Lee to favourites.", app="contacts"),
        task("e", "Add Bob Lee to favorites", app="contacts"),  # spelling variant
        task("f", "Create a contact named 'Ann' with number 555-1234.", app="contacts"),
        task("g", "Create a contact named 'Bo' with number 555-9999.", app="contacts"),  # only values differ
        task("h", "Delete the contact Bob Lee.", app="contacts"),
        task("i", "Turn on Wi-Fi.", app="contacts"),  # same words, other app
        task("j", "How many Bluetooth devices are paired with this phone?"),
    ]
    result = deduplicate(tasks)
    assert [t.task_id for t in result.kept] == ["a", "c", "d", "f", "h", "i", "j"]
    assert {(d.task.task_id, d.kept_task_id, d.reason) for d in result.dropped} == {
        ("b", "a", "similar_text"), ("e", "d", "similar_text"), ("g", "f", "similar_text")}
    assert similarity("Turn on Wi-Fi.", "Turn off Wi-Fi.") < 0.8
    assert similarity("Turn on Wi-Fi.", "Please turn on the Wi-Fi") == 1.0


def test_judges_decide_for_verifiable_tasks():
    tasks = [
        task("b30", "Set the screen brightness to 30%.", template_id="settings.set_brightness",
             template_params={"value": 30}),
        task("b90", "Set the screen brightness to 90%.", template_id="settings.set_brightness",
             template_params={"value": 90}),  # same text once masked, but another judge
        task("b30again", "Adjust brightness to about 30 percent.", template_id="settings.set_brightness",
             template_seed=7, template_params={"value": 30}),  # other wording, same judge
        task("nav1", "In Settings, open Wi-Fi.", goal_screen="wifi"),
        task("nav2", "Go to Wi-Fi in Settings.", goal_screen="wifi"),
        task("llm", "Set the screen brightness to 55%."),  # no judge: text duplicate of b30
    ]
    result = deduplicate(tasks)
    assert [t.task_id for t in result.kept] == ["b30", "b90", "nav1"]
    assert {(d.task.task_id, d.reason) for d in result.dropped} == {
        ("b30again", "same_judge"), ("nav2", "same_judge"), ("llm", "similar_text")}


def test_dedup_is_deterministic_and_keeps_the_first():
    tasks = [task("x", "Open the Display settings."), task("y", "Open Display settings")]
    assert [t.task_id for t in deduplicate(tasks).kept] == ["x"]
    assert [t.task_id for t in deduplicate(tasks[::-1]).kept] == ["y"]
    assert deduplicate(tasks) == deduplicate(list(tasks))


def test_dedup_rejects_bad_input():
    with pytest.raises(ValueError, match="appears twice"):
        deduplicate([task("x", "Turn on Wi-Fi."), task("x", "Turn on Bluetooth.")])
    with pytest.raises(ValueError, match="threshold"):
        deduplicate([], threshold=0.0)


def test_offline_curriculum_has_no_duplicates_and_its_paraphrases_are_caught(settings_curriculum):
    mined = settings_curriculum.tasks
    assert deduplicate(mined).dropped == []
    rephrased = [task(f"llm{i}", "Please " + t.instruction[0].lower() + t.instruction[1:])
                 for i, t in enumerate(mined)]
    result = deduplicate(mined + rephrased)
    assert result.kept == mined and len(result.dropped) == len(rephrased)


def test_coverage_counts_functionality_by_app():
    tasks = [task("1", "a", function="Wi-Fi"), task("2", "b", function="wi-fi "), task("3", "c", function="Display"),
             task("4", "d", app="contacts", function="Favourites"), task("5", "e", app="contacts", function="Wi-Fi")]
    table = coverage(tasks)
    assert table.columns == ["core_functionality", "contacts", "settings", "total", "percent"]
    assert table.rows() == [("wi-fi", 1, 2, 3, 60.0), ("display", 0, 1, 1, 20.0), ("favourites", 1, 0, 1, 20.0)]


def test_coverage_of_the_offline_curriculum_sums_to_its_size(settings_curriculum):
    table = coverage(settings_curriculum.tasks)
    assert table["total"].sum() == table["settings"].sum() == len(settings_curriculum.tasks)
    assert abs(table["percent"].sum() - 100.0) < 1.0
