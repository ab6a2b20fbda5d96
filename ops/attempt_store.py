"""Durable per-attempt storage that makes rollouts resumable.

Each finished attempt becomes `<root>/<policy>/<task>/attempt_<k>.parquet` (its steps) and then
`attempt_<k>.json` (attempt-level record). The JSON is written last, so its presence means the
attempt is complete; a crash between the two leaves an orphan Parquet that is overwritten on
rerun. Works on any pyarrow filesystem (local or S3).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ops.episode import AttemptRecord, CriticFeedback, StepRecord

_SAFE = re.compile(r"[^A-Za-z0-9._=-]+")

STEP_COLUMNS = [
    ("step", pa.int32()), ("screenshot_png", pa.binary()), ("elements", pa.string()),
    ("a11y", pa.string()), ("app", pa.string()), ("screen", pa.string()),
    ("prompt", pa.string()), ("raw_output", pa.string()), ("action", pa.string()),
    ("parse_error", pa.string()), ("conclusion", pa.string()), ("latency_s", pa.float64()),
    ("env_ok", pa.bool_()), ("env_reason", pa.string()), ("state", pa.string()),
]
STEP_SCHEMA = pa.schema(STEP_COLUMNS)


def _safe(name: str) -> str:
    return _SAFE.sub("_", name)


def steps_table(steps: list[StepRecord]) -> pa.Table:
    """Steps of one attempt as an Arrow table (JSON columns for nested data)."""
    rows: dict[str, list[Any]] = {name: [] for name, _ in STEP_COLUMNS}
    for s in steps:
        for name, _ in STEP_COLUMNS:
            value = getattr(s, name)
            if name in ("elements", "a11y", "action") and value is not None:
                value = json.dumps(value, ensure_ascii=False)
            rows[name].append(value)
    return pa.table(rows, schema=STEP_SCHEMA)


def attempt_summary(record: AttemptRecord) -> dict[str, Any]:
    """Attempt-level fields of a record as plain JSON data."""
    return {
        "task": asdict(record.task),
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


class ParquetAttemptStore:
    """`AttemptStore` over a directory of per-attempt Parquet + JSON files."""

    def __init__(self, root_uri: str):
        self.fs, self.root = pafs.FileSystem.from_uri(root_uri)
        self.fs.create_dir(self.root, recursive=True)

    def _dir(self, policy_version: str, task_id: str) -> str:
        return f"{self.root}/{_safe(policy_version)}/{_safe(task_id)}"

    def _write(self, path: str, data: bytes) -> None:
        tmp = path + ".tmp"
        with self.fs.open_output_stream(tmp) as f:
            f.write(data)
        self.fs.move(tmp, path)

    def save(self, record: AttemptRecord) -> None:
        base = self._dir(record.policy_version, record.task.task_id)
        self.fs.create_dir(base, recursive=True)
        sink = pa.BufferOutputStream()
        pq.write_table(steps_table(record.steps), sink, compression="zstd")
        self._write(f"{base}/attempt_{record.attempt}.parquet", sink.getvalue().to_pybytes())
        summary = json.dumps(attempt_summary(record), ensure_ascii=False).encode()
        self._write(f"{base}/attempt_{record.attempt}.json", summary)

    def summaries(self, policy_version: str, task_id: str) -> list[dict[str, Any]]:
        """Stored attempt summaries of one task, in attempt order, stopping at the first gap."""
        base = self._dir(policy_version, task_id)
        out = []
        k = 1
        while self.fs.get_file_info(f"{base}/attempt_{k}.json").type == pafs.FileType.File:
            with self.fs.open_input_stream(f"{base}/attempt_{k}.json") as f:
                out.append(json.loads(f.read()))
            k += 1
        return out

    def completed(self, task_id: str, policy_version: str) -> list[CriticFeedback]:
        return [
            CriticFeedback.from_json(json.dumps(s["feedback"]))
            for s in self.summaries(policy_version, task_id)
        ]

    def read_steps(self, policy_version: str, task_id: str, attempt: int) -> pa.Table:
        path = f"{self._dir(policy_version, task_id)}/attempt_{attempt}.parquet"
        with self.fs.open_input_file(path) as f:
            return pq.read_table(f)
