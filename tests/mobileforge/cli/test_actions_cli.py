"""`mobileforge actions parse|render|score`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from mobileforge.cli.actions import actions
from ops.actions import Action, render

REPO = Path(__file__).resolve().parents[3]
QWEN_CLICK = render(Action(type="click", point=(540, 82)), "qwen3vl", thinking="t", conclusion="c")


def invoke(args, stdin):
    return CliRunner().invoke(actions, args, input=stdin)


def test_parse_prints_canonical_json():
    result = invoke(["parse", "--format", "qwen3vl"], QWEN_CLICK)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"type": "click", "args": {"point": [540, 82]}}


def test_parse_auto_and_context():
    result = invoke(["parse", "--with-context"], QWEN_CLICK)
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert (out["thinking"], out["conclusion"], out["envelope_ok"]) == ("t", "c", True)


def test_parse_with_pixel_frame():
    text = '{"action_type": "click", "x": 540, "y": 1200}'
    result = invoke(["parse", "--format", "androidworld", "--frame", "pixels:1080x2400"], text)
    assert json.loads(result.stdout)["args"]["point"] == [500, 500]


def test_parse_failure_goes_to_stderr_with_exit_1():
    result = invoke(["parse", "--format", "mobilerl"], 'do(action="Fly")')
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "unknown MobileRL action 'Fly'" in result.stderr


def test_bad_frame_is_a_usage_error():
    result = invoke(["parse", "--frame", "pixels:huge"], QWEN_CLICK)
    assert result.exit_code == 2
    assert "pixels:WIDTHxHEIGHT" in result.stderr


def test_render_writes_the_format_and_rejects_inexpressible_actions():
    ok = invoke(
        ["render", "--format", "androidworld"], '{"type": "swipe", "args": {"direction": "up"}}'
    )
    assert json.loads(ok.stdout) == {"action_type": "scroll", "direction": "down"}
    bad = invoke(["render", "--format", "androidworld"], '{"type": "key", "args": {"key": "a"}}')
    assert bad.exit_code == 1 and "cannot express" in bad.stderr


def test_score_lines_and_malformed_lines():
    lines = [
        {
            "prediction": "CLICK[880,78]",
            "target": {"type": "click", "args": {"point": [870, 80]}},
            "format": "mobilegym",
        },
        "this is not json",
        {"prediction": "garbled", "target": {"type": "wait", "args": {}}},
        {"prediction": QWEN_CLICK, "target": QWEN_CLICK, "format": "qwen3vl"},
        {
            "prediction": {"type": "click", "args": {"element": 2}},
            "target": {"type": "click", "args": {"element": 1}},
            "elements": [[0, 0, 10, 10], [20, 20, 40, 40], [20, 20, 40, 40]],
        },
        {"target": {"type": "wait", "args": {}}},
    ]
    stdin = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n\n"
    result = invoke(["score"], stdin)
    assert result.exit_code == 1
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(out) == 6
    assert out[0]["type"] == 1.0 and 0 < out[0]["arg"] < 1 and out[0]["format_ok"] is True
    assert out[1] == {"line": 2, "error": out[1]["error"]} and "not JSON" in out[1]["error"]
    assert out[2]["reward"] == 0.0 and out[2]["format_ok"] is False and "parse_error" in out[2]
    assert out[3] == {"reward": 1.0, "type": 1.0, "arg": 1.0, "format_ok": True}
    assert out[4]["arg"] == 1.0  # element 2 has the same box as element 1
    assert "prediction" in out[5]["error"]
    assert "2 malformed line(s)" in result.stderr


def test_score_lambdas_and_bad_lambdas():
    line = json.dumps(
        {
            "prediction": {"type": "type", "args": {"text": "x"}},
            "target": {"type": "type", "args": {"text": "y"}},
        }
    )
    result = invoke(["score", "--lambda-type", "0.5", "--lambda-arg", "0.5"], line)
    assert json.loads(result.stdout)["reward"] == 0.5
    bad = invoke(["score", "--lambda-type", "-1"], line)
    assert bad.exit_code == 2 and "lambda_type" in bad.stderr


def test_cli_entry_point_in_a_subprocess():
    proc = subprocess.run(
        [sys.executable, "-m", "mobileforge.cli.main", "actions", "parse", "--format", "auto"],
        input='{"action_type": "navigate_home"}',
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"type": "system_button", "args": {"button": "home"}}
