"""`mobileforge sim` commands through click's runner."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mobileforge.cli.sim import sim


def test_tasks_json_lists_every_template():
    out = CliRunner().invoke(sim, ["tasks", "--json"])
    assert out.exit_code == 0
    rows = [json.loads(line) for line in out.output.splitlines()]
    assert len(rows) >= 24 and {"id", "split", "difficulty", "step_budget"} <= set(rows[0])


def test_render_writes_a_png(tmp_path):
    target = tmp_path / "s.png"
    out = CliRunner().invoke(sim, ["render", "--task", "settings.toggle_wifi", "--seed", "1", "--steps", "2",
                                   "--size", "360x800", "--out", str(target)])
    assert out.exit_code == 0, out.output
    assert target.read_bytes()[:4] == b"\x89PNG"


def test_render_unknown_task_is_a_usage_error(tmp_path):
    out = CliRunner().invoke(sim, ["render", "--task", "nope.nope", "--out", str(tmp_path / "x.png")])
    assert out.exit_code == 2 and "unknown task template" in out.output


def test_play_reads_actions_and_reports_metrics():
    script = "open Settings\nbogus\ntap 99\ntap 1\ndone\n"
    out = CliRunner().invoke(sim, ["play", "--task", "settings.toggle_wifi", "--seed", "1"], input=script)
    assert out.exit_code == 0, out.output
    assert "! unknown command 'bogus'" in out.output
    assert "no-op: element 99 out of range" in out.output
    metrics = json.loads(out.output.strip().splitlines()[-1])
    assert metrics["status"] == "success" and metrics["steps"] == 4
