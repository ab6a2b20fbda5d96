"""Durable per-attempt storage that makes rollouts resumable.

Each finished attempt becomes `<root>/<policy>/<task>/attempt_<k>.parquet` (its steps) and then
`attempt_<k>.json` (attempt-level record with the sha256 of its steps, its final screenshot and
itself). The JSON is written last, so its presence means the attempt is complete; a crash between
the two leaves an orphan Parquet that is overwritten on rerun, and a kill mid-write a temp file that
resuming the task removes. An attempt whose files no longer
match its digests is not trusted: it is left out of what is resumed (so it runs again), counted
in `ParquetAttemptStore.damaged` and logged. An attempt staged for a different task under the same
task id (the task's instruction, params or budget changed since: a template or curriculum edit) is
not resumed either: it runs again and is counted in `ParquetAttemptStore.stale`. Works on any
pyarrow filesystem (local or S3).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict
from typing import Any, Sequence

import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ops.actions import REASONING_PARTS, ReasoningParts
from ops.agent.episode import AttemptRecord, CriticFeedback, GroundTruth, Hint, StepRecord, TaskSpec
from ops.agent.reasoning_memory import StepOutcome
from ops.data.schemas import PARQUET_WRITE_OPTIONS, from_rows, with_optional_columns
from ops.data.stored_files import (DamagedFileError, check_digest, file_sha256, read_bytes, remove_abandoned_temps, sha256_hex,
                              write_bytes_atomic)

log = logging.getLogger(__name__)

_SAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def _safe(name: str) -> str:
    return _SAFE.sub("_", name)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def step_rows(record: AttemptRecord) -> list[dict[str, Any]]:
    """Rows of the `steps` table (ops.data.schemas) for one attempt."""
    return [{
        "task_id": record.task.task_id, "attempt": record.attempt, "step": s.step, "app": s.app,
        "screen": s.screen, "screenshot_png": s.screenshot_png, "elements": _json(s.elements),
        "a11y": _json(s.a11y), "prompt": s.prompt, "raw_output": s.raw_output, "action": _json(s.action),
        "parse_error": s.parse_error, "conclusion": s.conclusion, "latency_s": s.latency_s,
        "env_ok": s.env_ok, "env_reason": s.env_reason, "state": s.state,
        **reasoning_cells(s.reasoning),
        "verified_outcome": None if s.verified_outcome is None else StepOutcome(s.verified_outcome).value,
    } for s in record.steps]


def reasoning_cells(parts: ReasoningParts | None) -> dict[str, str | None]:
    """The four reasoning columns of a `steps` row (all None without structured reasoning)."""
    texts = (None,) * len(REASONING_PARTS) if parts is None else parts.texts()
    return dict(zip(REASONING_PARTS, texts, strict=True))


def reasoning_of(row: dict[str, Any]) -> ReasoningParts | None:
    """The structured reasoning of a `steps` row, None when its reasoning columns are empty."""
    texts = [row.get(part) for part in REASONING_PARTS]
    return None if any(t is None for t in texts) else ReasoningParts(*texts)


def attempt_summary(record: AttemptRecord) -> dict[str, Any]:
    """Attempt-level fields of a record as plain JSON data."""
    return {
        "task": _as_stored(record.task),
        "attempt": record.attempt,
        "policy_version": record.policy_version,
        "hints": [asdict(h) for h in record.hints],
        "n_steps": len(record.steps),
        "end_reason": record.end_reason,
        "answer": record.answer,
        "final_state": record.final_state,
        "error": record.error,
        "feedback": json.loads(record.feedback.to_json()) if record.feedback else None,
        "ground_truth": asdict(record.ground_truth) if record.ground_truth else None,
    }


SUMMARY_FILE = re.compile(r"attempt_(\d+)\.json")
DIGESTS = "digests"  # summary key: sha256 of the steps Parquet, the final screenshot and the summary itself


def _summary_digest(summary: dict[str, Any]) -> str:
    """sha256 of a summary's canonical JSON, without its digests entry."""
    rest = {k: v for k, v in summary.items() if k != DIGESTS}
    return sha256_hex(json.dumps(rest, ensure_ascii=False, sort_keys=True).encode())


class ParquetAttemptStore:
    """`AttemptStore` over a directory of per-attempt Parquet + JSON files."""

    def __init__(self, fs: pafs.FileSystem, root: str, *, create: bool = True):
        self.fs, self.root = fs, root.rstrip("/")
        if create:  # False for readers (the viewer), which must not write to the store
            self.fs.create_dir(self.root, recursive=True)
        self.damaged: dict[str, str] = {}  # summary path -> why the attempt was not trusted
        self.stale: dict[str, str] = {}  # summary path -> the task it was made for, when not this one
        # summary path -> its summary, once its files matched their digests: a resume reads every
        # staged attempt two or three times (what is left to run, the rollouts, the tables), and
        # hashes it once; `save` forgets the attempt it rewrites
        self._verified: dict[str, dict[str, Any]] = {}

    @classmethod
    def from_uri(cls, root_uri: str) -> ParquetAttemptStore:
        """A store under a local path or URI pyarrow can open without extra options."""
        return cls(*pafs.FileSystem.from_uri(root_uri))

    def _dir(self, policy_version: str, task_id: str) -> str:
        return f"{self.root}/{_safe(policy_version)}/{_safe(task_id)}"

    def save(self, record: AttemptRecord) -> None:
        base = self._dir(record.policy_version, record.task.task_id)
        sink = pa.BufferOutputStream()
        pq.write_table(from_rows(step_rows(record), "steps").to_arrow(), sink, **PARQUET_WRITE_OPTIONS)
        steps = sink.getvalue()
        write_bytes_atomic(self.fs, f"{base}/attempt_{record.attempt}.parquet", steps)
        png = record.final_screenshot_png
        if png is not None:
            write_bytes_atomic(self.fs, f"{base}/attempt_{record.attempt}.png", png)
        # through JSON once, so the digest is of what a reader parses back
        summary = json.loads(json.dumps(attempt_summary(record), ensure_ascii=False))
        summary[DIGESTS] = {"steps": sha256_hex(steps), "final_screenshot": None if png is None else sha256_hex(png),
                            "summary": _summary_digest(summary)}
        self._verified.pop(f"{base}/attempt_{record.attempt}.json", None)
        write_bytes_atomic(self.fs, f"{base}/attempt_{record.attempt}.json",
                           json.dumps(summary, ensure_ascii=False).encode())

    def attempt_path(self, policy_version: str, task_id: str, attempt: int, ext: str) -> str:
        """Path of one stored attempt's file: ext is json (summary), parquet (steps) or png (final screen)."""
        return f"{self._dir(policy_version, task_id)}/attempt_{attempt}.{ext}"

    def read_final_screenshot(self, policy_version: str, task_id: str, attempt: int) -> bytes | None:
        path = self.attempt_path(policy_version, task_id, attempt, "png")
        if self.fs.get_file_info(path).type != pafs.FileType.File:
            return None
        return read_bytes(self.fs, path)

    def verified_summary(self, path: str, remedy: str) -> dict[str, Any]:
        """The summary at `path` once it and its attempt's files match the digests it records;
        raises DamagedFileError naming the file that differs and `remedy`. Verified once per store
        object (and again after `save` rewrites the attempt): damage done to a staged file while a
        stage runs shows on the next run's read."""
        if path in self._verified:
            return self._verified[path]
        try:
            summary = json.loads(read_bytes(self.fs, path))
            digests = summary.get(DIGESTS) or {}
        except (ValueError, AttributeError) as error:
            raise DamagedFileError(f"{path} is unreadable ({error}); {remedy}") from None
        check_digest(path, _summary_digest(summary), digests.get("summary"), remedy)
        stem = path.removesuffix(".json")
        check_digest(f"{stem}.parquet", file_sha256(self.fs, f"{stem}.parquet"), digests.get("steps"), remedy)
        if digests.get("final_screenshot") is not None:
            check_digest(f"{stem}.png", file_sha256(self.fs, f"{stem}.png"), digests["final_screenshot"], remedy)
        self._verified[path] = summary
        return summary

    def _summary_paths(self, policy_version: str, task_id: str) -> list[str]:
        infos = self.fs.get_file_info(pafs.FileSelector(self._dir(policy_version, task_id), allow_not_found=True))
        numbered = sorted((int(m[1]), info.path) for info in infos
                          if info.type == pafs.FileType.File and (m := SUMMARY_FILE.fullmatch(info.base_name)))
        return [path for _, path in numbered]

    def summaries(self, policy_version: str, task_id: str) -> list[dict[str, Any]]:
        """Stored attempt summaries of one task, in attempt order, as written (unchecked: see
        `intact_summaries`). Attempts run without hints finish in any order, so an interrupted
        run can leave gaps."""
        return [json.loads(read_bytes(self.fs, path)) for path in self._summary_paths(policy_version, task_id)]

    def intact_summaries(self, policy_version: str, task_id: str) -> list[dict[str, Any]]:
        """The summaries of one task's attempts whose files match their digests, in attempt
        order; a damaged attempt is left out (a gap the rerun fills) and recorded in `damaged`."""
        out = []
        for path in self._summary_paths(policy_version, task_id):
            try:
                out.append(self.verified_summary(path, "it is not trusted: the rerun runs this attempt again"))
            except (DamagedFileError, FileNotFoundError) as error:
                if path not in self.damaged:
                    self.damaged[path] = str(error)
                    log.warning(f"staged attempt damaged: {error}")
        return out

    def current_summaries(self, policy_version: str, task: TaskSpec) -> list[dict[str, Any]]:
        """The intact summaries of attempts made for exactly this task (same instruction, params,
        budget, ...); one staged under the same task id for a task defined differently is left out
        and recorded in `stale`, so a rerun runs it again and overwrites it."""
        expected = _as_stored(task)
        current = []
        for summary in self.intact_summaries(policy_version, task.task_id):
            if summary["task"] == expected:
                current.append(summary)
                continue
            path = self.attempt_path(policy_version, task.task_id, summary["attempt"], "json")
            if path not in self.stale:
                self.stale[path] = json.dumps(summary["task"], ensure_ascii=False)
                log.warning(f"staged attempt {path} was made for another definition of task {task.task_id} "
                            f"(stored: {summary['task']['instruction']!r}, {summary['task']['params']}); "
                            "it runs again")
        return current

    def completed(self, task: TaskSpec, policy_version: str) -> dict[int, CriticFeedback]:
        """Feedback of each intact stored attempt of this task, by attempt number: what a rerun resumes.

        Temp files of writes a killed run left in the task's directory are removed: only the run
        that resumes a task writes to it (the experiment's run lock keeps a second run out).
        """
        remove_abandoned_temps(self.fs, self._dir(policy_version, task.task_id))
        return {s["attempt"]: CriticFeedback.from_json(json.dumps(s["feedback"]))
                for s in self.current_summaries(policy_version, task)}

    def read_steps(self, policy_version: str, task_id: str, attempt: int) -> pl.DataFrame:
        """The `steps` table rows of one stored attempt (one staged before the structured-reasoning
        columns existed reads with them empty)."""
        path = f"{self._dir(policy_version, task_id)}/attempt_{attempt}.parquet"
        with self.fs.open_input_file(path) as f:  # ParquetFile: read_table's dataset layer costs ~2x on small files
            return with_optional_columns(pl.from_arrow(pq.ParquetFile(f).read()), "steps")


def attempt_row(summary: dict[str, Any], final_screenshot_png: bytes | None = None) -> dict[str, Any]:
    """A row of the `attempts` table from a stored attempt summary."""
    gt = summary["ground_truth"] or {}
    fb = summary["feedback"]
    return {
        "task_id": summary["task"]["task_id"], "attempt": summary["attempt"],
        "policy_version": summary["policy_version"], "hints_used": [h["attempt"] for h in summary["hints"]],
        "end_reason": summary["end_reason"], "error": summary["error"], "answer": summary["answer"],
        "n_steps": summary["n_steps"], "final_screenshot_png": final_screenshot_png,
        "critic_decision": fb["decision"] if fb else None, "judge": fb["critic"] if fb else None,
        "gt_success": gt.get("success"), "gt_progress": gt.get("progress"),
        "gt_side_effects": gt.get("side_effects"), "gt_false_complete": gt.get("false_complete"),
        "gt_overdue": gt.get("overdue"),
    }


def feedback_row(task_id: str, attempt: int, fb: dict[str, Any]) -> dict[str, Any]:
    """A row of the `critic_feedback` table from feedback JSON (`CriticFeedback.to_json`)."""
    hint = fb["hint"] or {}
    return {
        "task_id": task_id, "attempt": attempt, "critic": fb["critic"], "decision": fb["decision"],
        "reason": fb["reason"], "failure_step": fb["failure_step"], "task_feasible": fb["task_feasible"],
        "step_descriptions": fb.get("step_descriptions") or [],
        "step_analysis": json.dumps(fb["step_analysis"], ensure_ascii=False),
        "key_mistake": hint.get("key_mistake"), "what_to_avoid": hint.get("what_to_avoid", []),
        "suggested_approach": hint.get("suggested_approach", []),
        "important_insights": hint.get("important_insights", []), "hint_summary": hint.get("hint_summary"),
    }


def collect_tables(store: ParquetAttemptStore, policy_version: str,
                   tasks: Sequence[TaskSpec]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The `attempts`, `steps` and `critic_feedback` tables of every intact stored attempt made for these tasks."""
    attempts, feedback, steps = [], [], []
    for task in tasks:
        for s in store.current_summaries(policy_version, task):
            attempts.append(attempt_row(s, store.read_final_screenshot(policy_version, task.task_id, s["attempt"])))
            feedback.append(feedback_row(task.task_id, s["attempt"], s["feedback"]))
            steps.append(store.read_steps(policy_version, task.task_id, s["attempt"]))
    steps_df = pl.concat(steps, how="vertical") if steps else from_rows([], "steps")
    return from_rows(attempts, "attempts"), steps_df, from_rows(feedback, "critic_feedback")


def _as_stored(task: TaskSpec) -> dict[str, Any]:
    """A task as its attempts' summaries store it (through JSON, so it compares with what is read back)."""
    return json.loads(json.dumps(asdict(task), ensure_ascii=False))


def _unjson(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def step_record(row: dict[str, Any]) -> StepRecord:
    """A `steps` table row as the record it was stored from: the inverse of `step_rows`."""
    return StepRecord(
        step=row["step"], screenshot_png=row["screenshot_png"], elements=_unjson(row["elements"]),
        a11y=_unjson(row["a11y"]), app=row["app"], screen=row["screen"], prompt=row["prompt"],
        raw_output=row["raw_output"], action=_unjson(row["action"]), parse_error=row["parse_error"],
        conclusion=row["conclusion"], latency_s=row["latency_s"], env_ok=row["env_ok"],
        env_reason=row["env_reason"], state=row["state"], reasoning=reasoning_of(row),
        verified_outcome=None if row.get("verified_outcome") is None else StepOutcome(row["verified_outcome"]),
    )


def load_attempt(store: ParquetAttemptStore, policy_version: str, task_id: str, attempt: int) -> AttemptRecord:
    """The full record of one stored attempt (steps from its Parquet, the rest from its JSON):
    the inverse of `ParquetAttemptStore.save`. Raises FileNotFoundError for an attempt that was
    never completed, DamagedFileError when a file differs from its digest and ValueError when its
    two files disagree."""
    path = store.attempt_path(policy_version, task_id, attempt, "json")
    if store.fs.get_file_info(path).type != pafs.FileType.File:
        raise FileNotFoundError(f"no completed attempt {attempt} of task {task_id!r} for policy "
                                f"{policy_version!r} (missing {path})")
    summary = store.verified_summary(path, "rerun the stage that staged it: it runs this attempt again")
    rows = store.read_steps(policy_version, task_id, attempt).sort("step").iter_rows(named=True)
    steps = [step_record(r) for r in rows]
    if len(steps) != summary["n_steps"] or [s.step for s in steps] != list(range(len(steps))):
        raise ValueError(f"{path}: summary says {summary['n_steps']} steps, the Parquet holds steps "
                         f"{[s.step for s in steps]}")
    fb, gt = summary["feedback"], summary["ground_truth"]
    return AttemptRecord(
        task=TaskSpec(**summary["task"]), attempt=summary["attempt"],
        policy_version=summary["policy_version"], hints=[Hint(**h) for h in summary["hints"]],
        steps=steps, end_reason=summary["end_reason"], answer=summary["answer"],
        final_state=summary["final_state"], error=summary["error"],
        final_screenshot_png=store.read_final_screenshot(policy_version, task_id, attempt),
        feedback=CriticFeedback.from_json(json.dumps(fb)) if fb else None,
        ground_truth=GroundTruth(**gt) if gt else None,
    )
