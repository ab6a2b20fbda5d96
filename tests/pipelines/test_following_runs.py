"""Following a launched run: its events on every poll, its status (the costlier query) only once its events show
the run ended, or every `STATUS_SECONDS` in case the end came from elsewhere."""

from __future__ import annotations

import time

import dagster as dg
from dagster._core.events import DagsterEvent
from dagster._core.storage.dagster_run import DagsterRunStatus
from dagster._core.test_utils import create_run_for_test

from pipelines.run import launcher
from pipelines.run.launcher import CodeLocationRunner, _Launched
from pipelines.run.observer import LineObserver


def _following(monkeypatch):
    instance = dg.DagsterInstance.ephemeral()
    reads = []
    get_run_by_id = instance.get_run_by_id
    monkeypatch.setattr(instance, "get_run_by_id", lambda run_id: reads.append(run_id) or get_run_by_id(run_id))
    run = create_run_for_test(instance, job_name="interaction", status=DagsterRunStatus.STARTED)
    return instance, CodeLocationRunner(instance, None), _Launched("interaction", run.run_id), run, reads


def test_a_run_is_seen_finished_at_the_poll_after_its_end_event_without_status_reads_before(monkeypatch):
    instance, runner, launched, run, reads = _following(monkeypatch)
    for _ in range(5):
        assert runner.follow(launched, LineObserver(log=lambda _: None)) is None
    assert reads == []  # polls read the (empty) events only
    instance.report_run_failed(run, "the worker died")
    reads.clear()  # reporting reads the run itself
    finished = runner.follow(launched, LineObserver(log=lambda _: None))
    assert finished is not None and finished.status == DagsterRunStatus.FAILURE and launched.ended
    assert reads == [run.run_id] and launched.errors == ["run: the worker died"]


def test_a_run_that_ended_without_an_event_is_seen_within_the_status_interval(monkeypatch):
    monkeypatch.setattr(launcher, "STATUS_SECONDS", 0.3)
    instance, runner, launched, run, reads = _following(monkeypatch)
    ended = DagsterEvent(dg.DagsterEventType.RUN_SUCCESS.value, job_name="interaction", message="")
    instance.run_storage.handle_run_event(run.run_id, ended)  # the status only, no event in the run's log
    assert runner.follow(launched, LineObserver(log=lambda _: None)) is None and reads == []
    time.sleep(0.35)
    finished = runner.follow(launched, LineObserver(log=lambda _: None))
    assert finished is not None and finished.status == DagsterRunStatus.SUCCESS and reads == [run.run_id]
