"""`mobileforge actions`: parse, render and score GUI actions from the command line."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ops.actions import (
    AUTO,
    FORMAT_NAMES,
    Action,
    ActionError,
    ParseFailure,
    parse_with_context,
    render,
)
from ops.actions.coords import CoordFrame, frame_from_spec
from ops.actions.excerpt import clipped, excerpt
from ops.actions.json_limits import loads as bounded_loads
from ops.judging.action_reward import RewardConfig, RewardInputError, score_action
from ops.judging.reward_columns import element_boxes

_FORMAT_CHOICE = click.Choice([*FORMAT_NAMES, AUTO])


def _frame(ctx: click.Context, param: click.Parameter, value: str) -> CoordFrame:
    try:
        return frame_from_spec(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_frame_option = click.option(
    "--frame",
    default="grid",
    show_default=True,
    callback=_frame,
    help="Model coordinate frame: grid, grid999, pixels:WxH, resized:WxH (Qwen2-VL smart_resize).",
)


@click.group()
def actions() -> None:
    """Parse, render and score GUI actions in each model's native format."""


@actions.command("parse")
@click.option("--format", "fmt", type=_FORMAT_CHOICE, default=AUTO, show_default=True)
@_frame_option
@click.option("--with-context", is_flag=True, help="Also print thinking and conclusion text.")
def parse_command(fmt: str, frame: CoordFrame, with_context: bool) -> None:
    """Model output on stdin → canonical action JSON on stdout (exit 1 if unparseable)."""
    parsed = parse_with_context(sys.stdin.read(), fmt, frame=frame)
    if isinstance(parsed.action, ParseFailure):
        click.echo(f"parse failed ({parsed.action.format}): {parsed.action.reason}", err=True)
        sys.exit(1)
    if with_context:
        out = {
            "action": parsed.action.to_dict(),
            "thinking": parsed.thinking,
            "conclusion": parsed.conclusion,
            "envelope_ok": parsed.envelope_ok,
        }
        click.echo(json.dumps(out, ensure_ascii=False, sort_keys=True))
    else:
        click.echo(parsed.action.to_json())


@actions.command("render")
@click.option("--format", "fmt", type=click.Choice(FORMAT_NAMES), required=True)
@_frame_option
@click.option("--thinking", default=None, help="Reasoning text, for formats that hold it.")
@click.option(
    "--conclusion", default=None, help="Conclusion / summary text, for formats that hold it."
)
def render_command(
    fmt: str, frame: CoordFrame, thinking: str | None, conclusion: str | None
) -> None:
    """Canonical action JSON on stdin → that action in format FORMAT on stdout."""
    try:
        action = Action.from_json(sys.stdin.read())
        click.echo(render(action, fmt, frame=frame, thinking=thinking, conclusion=conclusion))
    except (ActionError, ValueError) as exc:
        click.echo(f"cannot render: {exc}", err=True)
        sys.exit(1)


def _side(value: Any, fmt: str, frame: CoordFrame) -> tuple[Action | ParseFailure, bool]:
    """A prediction/target given as raw model output (a string) or a canonical object, and
    whether it was well-formed (parsed, with every part of its format's template)."""
    if isinstance(value, dict):
        try:
            return Action.from_dict(value), True
        except (ActionError, OverflowError) as exc:  # OverflowError: a number past the float range
            return ParseFailure(clipped(str(exc)), json.dumps(value), "canonical"), False
    if isinstance(value, str):
        parsed = parse_with_context(value, fmt, frame=frame)
        return parsed.action, parsed.ok and parsed.envelope_ok
    kind = type(value).__name__
    return ParseFailure(f"expected a string or an object, got {kind}", "", fmt), False


MAX_LINE_CHARS = 200_000  # a prediction (at most the parsers' 100,000 characters), its target and boxes


def _score_line(raw: bytes, fmt: str, frame: CoordFrame, config: RewardConfig) -> dict[str, Any]:
    try:
        line = raw.decode()
    except UnicodeDecodeError as exc:
        raise RewardInputError(f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    try:
        record = bounded_loads(line, max_chars=MAX_LINE_CHARS)
    except ValueError as exc:  # not JSON, or past the limits on length, nesting and digits
        raise RewardInputError(f"not JSON: {exc}") from None
    if not isinstance(record, dict) or "prediction" not in record or "target" not in record:
        raise RewardInputError("each line needs 'prediction' and 'target'")
    line_fmt = record.get("format") or fmt
    if line_fmt not in (*FORMAT_NAMES, AUTO):
        raise RewardInputError(f"unknown format {excerpt(line_fmt)}")
    target, _ = _side(record["target"], line_fmt, frame)
    if isinstance(target, ParseFailure):
        raise RewardInputError(f"target: {target.reason}")
    prediction, well_formed = _side(record["prediction"], line_fmt, frame)
    breakdown = score_action(
        prediction,
        target,
        target_box=record.get("target_box"),
        elements=element_boxes(record.get("elements")),
        config=config,
        format_ok=well_formed,
    )
    out = breakdown.to_dict()
    if isinstance(prediction, ParseFailure):
        out["parse_error"] = prediction.reason
    return out


@actions.command("score")
@click.option(
    "--format",
    "fmt",
    type=_FORMAT_CHOICE,
    default=AUTO,
    show_default=True,
    help="Format of string predictions/targets (a line's own 'format' wins).",
)
@_frame_option
@click.option("--lambda-type", type=float, default=0.2, show_default=True)
@click.option("--lambda-arg", type=float, default=0.8, show_default=True)
@click.option("--text-f1-gate", type=float, default=None, help="Gated F1 threshold (e.g. 0.5).")
@click.option(
    "--click-threshold",
    type=float,
    default=None,
    help="Binary click rule: fraction of the screen (e.g. 0.14).",
)
def score_command(
    fmt: str,
    frame: CoordFrame,
    lambda_type: float,
    lambda_arg: float,
    text_f1_gate: float | None,
    click_threshold: float | None,
) -> None:
    """JSON lines {"prediction", "target", "format"?, "target_box"?, "elements"?} on stdin →
    one JSON line each with reward, type, arg, format_ok (or error: a line that cannot be scored is
    reported and the lines after it are still scored). Exit 1 if any line was malformed."""
    try:
        config = RewardConfig(
            lambda_type=lambda_type,
            lambda_arg=lambda_arg,
            text_f1_gate=text_f1_gate,
            click_threshold=click_threshold,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    malformed = 0
    for number, raw in enumerate(sys.stdin.buffer, start=1):
        if not raw.strip():
            continue
        try:
            out = _score_line(raw, fmt, frame, config)
        except (RewardInputError, ActionError, TypeError, ValueError) as exc:
            malformed += 1
            out = {"line": number, "error": clipped(str(exc))}
        except Exception as exc:  # noqa: BLE001 — one line's failure is reported; the lines after it are still scored
            malformed += 1
            out = {"line": number, "error": f"unexpected {type(exc).__name__}: {clipped(str(exc))}"}
        click.echo(_json_line(out))
    if malformed:
        click.echo(f"{malformed} malformed line(s)", err=True)
        sys.exit(1)


def _json_line(out: dict[str, Any]) -> str:
    """`out` as one JSON line; with \\u escapes when it holds text UTF-8 cannot encode (a lone
    surrogate quoted from the input), which stdout could not write."""
    text = json.dumps(out, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(out)
    return text
