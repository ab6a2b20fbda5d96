"""Reading attempts back from the Parquet store and relabelling them with another critic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ops.data.attempt_store import ParquetAttemptStore, load_attempt
from ops.judging.critic.llm_critic import CriticError
from ops.judging.critic.rejudge import rejudge
from ops.agent.episode import AttemptRecord, CriticFeedback, StepLabel
from tests.ops.judging.scripted import (
    CLICK_ELEMENT,
    CLICK_POINT,
    TERMINATE,
    CriticScript,
    decision_json,
    make_attempt,
    request_text,
)
from tests.support.openai_server import Reply


def _original_feedback(record: AttemptRecord) -> CriticFeedback:
    return CriticFeedback(
        decision=1, reason="original verdict", failure_step=None, task_feasible=True,
        step_analysis=[StepLabel(s.step, True, "fine") for s in record.steps], hint=None,
        critic="programmatic", step_descriptions=[],
    )


def _stored(tmp_path: Path) -> tuple[ParquetAttemptStore, list[AttemptRecord]]:
    store = ParquetAttemptStore.from_uri(str(tmp_path / "rollouts"))
    records = []
    for task_id, instruction in (("wifi", "Turn on Wi-Fi"), ("dark", "Enable dark mode")):
        for attempt in (1, 2):
            record = make_attempt([CLICK_POINT, CLICK_ELEMENT, TERMINATE], task_id=task_id, attempt=attempt,
                                  instruction=instruction)
            record.feedback = _original_feedback(record)
            store.save(record)
            records.append(record)
    return store, records


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_load_attempt_is_the_inverse_of_save(tmp_path):
    store, records = _stored(tmp_path)
    for record in records:
        assert load_attempt(store, "p0", record.task.task_id, record.attempt) == record


def test_load_attempt_of_a_missing_attempt_names_it(tmp_path):
    store, _ = _stored(tmp_path)
    with pytest.raises(FileNotFoundError, match="attempt 3 of task 'wifi'"):
        load_attempt(store, "p0", "wifi", 3)


def test_load_attempt_rejects_a_summary_that_disagrees_with_its_steps(tmp_path):
    store, _ = _stored(tmp_path)
    path = tmp_path / "rollouts" / "p0" / "wifi" / "attempt_1.json"
    summary = json.loads(path.read_text())
    summary["n_steps"] = 5
    path.write_text(json.dumps(summary))
    with pytest.raises(ValueError, match="attempt_1.json is damaged"):  # its digest no longer matches
        load_attempt(store, "p0", "wifi", 1)


@pytest.mark.parametrize("max_workers", [1, 3])
def test_rejudge_relabels_without_touching_the_originals(tmp_path, critic_on, max_workers):
    store, records = _stored(tmp_path)
    before = _files(tmp_path)

    def decide(request):
        if "Enable dark mode" in request_text(request):
            return Reply(status=400)  # the new judge fails on every 'dark' attempt
        return Reply(decision_json(0, {1: True, 2: False, 3: False}, failure_step=2))

    critic = critic_on(CriticScript(decide=decide), name="llm:ablation")
    results = rejudge(store, "p0", ["wifi", "dark"], critic, max_workers=max_workers)

    assert [(r.task_id, r.attempt) for r in results] == [("wifi", 1), ("wifi", 2), ("dark", 1), ("dark", 2)]
    for r in results[:2]:
        assert isinstance(r.outcome, CriticFeedback)
        assert (r.outcome.critic, r.outcome.decision, r.outcome.failure_step) == ("llm:ablation", 0, 1)
        assert r.outcome.hint is not None and r.outcome.hint.attempt == r.attempt
    for r in results[2:]:
        assert isinstance(r.outcome, CriticError)
        assert (r.outcome.stage, r.outcome.kind, r.outcome.attempt_id) == ("decide", "rejected", f"dark#{r.attempt}")
    assert _files(tmp_path) == before
    for record in records:
        assert load_attempt(store, "p0", record.task.task_id, record.attempt).feedback == record.feedback


def test_rejudge_collects_load_errors(tmp_path, critic_on):
    store, _ = _stored(tmp_path)
    (tmp_path / "rollouts" / "p0" / "wifi" / "attempt_2.parquet").unlink()
    script = CriticScript(decide=[decision_json(1, {1: True, 2: True, 3: True})])
    results = rejudge(store, "p0", ["wifi"], critic_on(script))
    assert isinstance(results[0].outcome, CriticFeedback) and results[0].outcome.decision == 1
    assert isinstance(results[1].outcome, FileNotFoundError)
