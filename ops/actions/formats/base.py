"""What every action format provides, the error contract every parser shares, and the text-scanning
helpers the formats share."""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ops.actions.coords import GRID_1000, CoordFrame
from ops.actions.excerpt import clipped, excerpt
from ops.actions.json_limits import JSONLimitError, NoJSONFound, check_json_limits, decode_at, find_json
from phonesim.actions import Action, ActionError, ParseFailure

INTERNAL_ERROR = "internal parser error"  # prefix of failures caused by parser bugs


class FormatError(ValueError):
    """Raised inside a format parser; the registry turns it into a `ParseFailure`."""


class UnsupportedAction(ActionError):
    """The action cannot be written in this format without losing information."""


REASONING_PARTS = ("self_verification", "screen_analysis", "planning", "action_guidance")
"""The four parts of MobileWizard's structured reasoning (§3.3, eq. 1: v, o, p, g), in order."""


@dataclass(frozen=True, slots=True)
class ReasoningParts:
    """One step's structured reasoning (MobileWizard §3.3): did the previous action work, what
    the screen shows, the sub-task now, and the exact action to take."""

    self_verification: str
    screen_analysis: str
    planning: str
    action_guidance: str

    def texts(self) -> tuple[str, str, str, str]:
        """The four parts in `REASONING_PARTS` order."""
        return self.self_verification, self.screen_analysis, self.planning, self.action_guidance


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    """A parsed model response: the action plus the free text around it.

    `thinking` is the reasoning block, `conclusion` the one-line summary a rollout keeps as
    history (Qwen3-VL `<conclusion>`, GUI-Owl `Action:` line). `envelope_ok` says whether
    the response had every part its format's template asks for. `reasoning` holds the four
    parts when the thinking is MobileWizard's structured reasoning (only the mobilewizard
    format reads it; see `formats.reasoning`).
    """

    action: Action | ParseFailure
    thinking: str | None = None
    conclusion: str | None = None
    envelope_ok: bool = False
    reasoning: ReasoningParts | None = None

    @property
    def ok(self) -> bool:
        return isinstance(self.action, Action)


ParseFn = Callable[[str, CoordFrame], ParsedOutput]
RenderFn = Callable[[Action, CoordFrame, "str | None", "str | None"], str]


@dataclass(frozen=True, slots=True)
class ActionFormat:
    """One model's native action syntax."""

    name: str
    parse_fn: ParseFn
    render_fn: RenderFn
    supports: Callable[[Action], bool]
    """True when `render` can write the action and `parse` gets the same action back."""
    holds_thinking: bool = False
    holds_conclusion: bool = False

    def parse(self, text: str, frame: CoordFrame = GRID_1000) -> ParsedOutput:
        """Parse `text`; never raises (see `parse_guarded`)."""
        return parse_guarded(self.name, text, lambda checked: self.parse_fn(checked, frame))

    def render(
        self,
        action: Action,
        frame: CoordFrame = GRID_1000,
        thinking: str | None = None,
        conclusion: str | None = None,
    ) -> str:
        """Write `action` in this format; raises `UnsupportedAction` if it cannot."""
        if thinking is not None and not self.holds_thinking:
            raise ValueError(f"format {self.name!r} has no place for thinking text")
        if conclusion is not None and not self.holds_conclusion:
            raise ValueError(f"format {self.name!r} has no place for a conclusion")
        if not self.supports(action):
            raise UnsupportedAction(f"format {self.name!r} cannot express {action.to_json()}")
        return self.render_fn(action, frame, thinking, conclusion)


# ---------------------------------------------------------------- the parsers' error contract


MAX_OUTPUT_CHARS = 100_000  # a model answer is a few hundred tokens; anything longer is degenerate
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ACTION_TEXT_FIELDS = ("direction", "text", "button", "app", "status", "key")


def parse_guarded(fmt: str, text: Any, parse: Callable[[str], ParsedOutput]) -> ParsedOutput:
    """`parse(text)` under the contract every action parser shares: any input gives a
    `ParsedOutput`, and whatever is not a valid action is a `ParseFailure` naming why.

    Bounded work: the length (`MAX_OUTPUT_CHARS`), bracket depth and digit runs are checked
    (`ops.actions.json_limits`) before the format's parser runs, and the failure's reason quotes
    at most an excerpt of the output (`ops.actions.excerpt`). Lone surrogates (raw, or decoded
    from a `\\ud800` escape) make the output a failure rather than being replaced: no valid
    text holds one, UTF-8 cannot encode it (Parquet, the critic's HTTP request and the CLI
    would all fail on it later), and replacing it would score and replay text the model
    never wrote.
    """
    if not isinstance(text, str):
        return ParsedOutput(ParseFailure(f"expected text, got {type(text).__name__}", "", fmt))
    try:
        check_json_limits(text, max_chars=MAX_OUTPUT_CHARS)
        if surrogate := LONE_SURROGATE.search(text):
            raise FormatError(f"the output holds a lone surrogate U+{ord(surrogate.group()):04X} "
                              "(not encodable as UTF-8)")
        parsed = parse(text)
        if isinstance(parsed.action, Action):
            _reject_lone_surrogates(parsed.action)
        return parsed
    except (FormatError, ActionError, JSONLimitError) as exc:
        return ParsedOutput(ParseFailure(clipped(str(exc)), text, fmt))
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        # Pathological input that got past the limits into json/ast/float internals.
        reason = f"unreadable output ({type(exc).__name__}: {clipped(str(exc), 120)})"
        return ParsedOutput(ParseFailure(reason, text, fmt))
    except Exception as exc:  # noqa: BLE001 — a parser bug must not crash a rollout
        reason = f"{INTERNAL_ERROR}: {type(exc).__name__}: {clipped(str(exc), 120)}"
        return ParsedOutput(ParseFailure(reason, text, fmt))


def _reject_lone_surrogates(action: Action) -> None:
    for name in _ACTION_TEXT_FIELDS:
        value = getattr(action, name)
        if value is not None and (surrogate := LONE_SURROGATE.search(value)):
            raise FormatError(f"{action.type.value}: {name} holds a lone surrogate U+{ord(surrogate.group()):04X} "
                              "(an unpaired \\u escape; not encodable as UTF-8)")


# ---------------------------------------------------------------- text scanning helpers


def tagged(text: str, tag: str) -> str | None:
    """Content of the first `<tag>…</tag>` (stripped), or None if the pair is absent.

    The first opening tag and the first closing tag after it: when that opening tag has no closing
    one, no later one has either, so one pass suffices (a lazy regex retried at each of a flood of
    unclosed tags rescans the rest of the text each time)."""
    start = text.find(f"<{tag}>")
    if start < 0:
        return None
    start += len(tag) + 2
    end = text.find(f"</{tag}>", start)
    return None if end < 0 else text[start:end].strip()


def json_object_at(text: str, start: int) -> tuple[dict[str, Any], int] | None:
    """The JSON object starting at the first `{` at or after `start`, with its end index."""
    pos = text.find("{", start)
    if pos < 0:
        return None
    try:
        value, end = decode_at(text, pos)
    except json.JSONDecodeError as exc:
        raise FormatError(f"malformed JSON after position {pos}: {exc.msg}") from None
    if not isinstance(value, dict):
        raise FormatError("expected a JSON object")
    return value, end


MAX_JSON_STARTS = 50  # candidate `{` positions tried before giving up on a response


def first_json_object(text: str) -> dict[str, Any]:
    """The first JSON object anywhere in `text` (at one of the first 50 brackets tried, or
    nested in the array decoded there)."""
    try:
        return find_json(text, dict, max_starts=MAX_JSON_STARTS)
    except NoJSONFound as exc:
        raise FormatError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class Call:
    """A function-call expression such as `do(action="Tap", element=[1, 2])`."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


MAX_CALL_TOKENS = 256
"""Brackets, commas and literals an action call may hold (a real one holds under 30): past it the
call is refused before Python's parser builds a tree of every item."""
# One token of a call: a string literal (closed or not), a bracket, a comma, or a stretch of other
# text. The possessive quantifiers and the optional closing quote mean no token backtracks.
_CALL_TOKEN = re.compile(r""""[^"\\]*+(?:\\.[^"\\]*+)*+"?|'[^'\\]*+(?:\\.[^'\\]*+)*+'?|[()\[\]{},]|[^"'()\[\]{},]++""",
                         re.DOTALL)
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")


def _call_end(text: str, open_paren: int) -> int:
    """Index just past the parenthesis matching `text[open_paren]`, skipping string literals."""
    depth = 0
    for count, token in enumerate(_CALL_TOKEN.finditer(text, open_paren)):
        if count == MAX_CALL_TOKENS:
            raise FormatError(f"the action call holds more than {MAX_CALL_TOKENS} items and brackets")
        mark = token.group()
        if mark in _OPENING:
            depth += 1
        elif mark in _CLOSING:
            depth -= 1
            if depth == 0:
                return token.end()
    raise FormatError("unbalanced parentheses in the action call")


def _literal(node: ast.expr) -> Any:
    # A bare identifier is an enum-like argument, e.g. System_Button(Back).
    if isinstance(node, ast.Name):
        return node.id
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise FormatError(f"argument is not a literal: {excerpt(ast.unparse(node))}") from None


_SOURCE_NAME = "<model output>"
# Python warns about odd literals in what it parses (`1if`, `1e`); in model output that is noise.
warnings.filterwarnings("ignore", category=SyntaxWarning, module=re.escape(_SOURCE_NAME))


def find_call(text: str, names: Callable[[str], bool]) -> Call:
    """The first call `NAME(...)` in `text` whose NAME passes `names`."""
    for match in re.finditer(r"(?<![\w.])([A-Za-z_]\w*+)\s*+\(", text):
        if not names(match.group(1)):
            continue
        end = _call_end(text, match.end() - 1)
        source = match.group(1) + text[match.end() - 1 : end]
        try:
            tree = ast.parse(source, filename=_SOURCE_NAME, mode="eval")
        except SyntaxError as exc:
            raise FormatError(f"malformed call {match.group(1)}(...): {exc.msg}") from None
        call = tree.body
        if not isinstance(call, ast.Call) or any(k.arg is None for k in call.keywords):
            raise FormatError(f"malformed call {match.group(1)}(...)")
        return Call(
            name=match.group(1),
            args=tuple(_literal(a) for a in call.args),
            kwargs={k.arg: _literal(k.value) for k in call.keywords if k.arg is not None},
        )
    raise FormatError("no action call found")


# ---------------------------------------------------------------- argument coercion


def number(value: Any, what: str) -> float:
    """A finite number from a JSON/literal value (numeric strings allowed)."""
    if isinstance(value, bool):
        raise FormatError(f"{what}: expected a number, got {excerpt(value)}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise FormatError(f"{what}: expected a number, got {excerpt(value)}") from None
    if (
        not isinstance(value, int | float)
        or value != value
        or value in (float("inf"), -float("inf"))
    ):
        raise FormatError(f"{what}: expected a finite number, got {excerpt(value)}")
    return float(value)


def point(value: Any, frame: CoordFrame, what: str) -> tuple[float, float]:
    """A model point `[x, y]` (or a box `[x0, y0, x1, y1]`, taken at its centre) on the grid."""
    if isinstance(value, str):
        nums = re.findall(r"-?\d+(?:\.\d+)?", value)
        value = nums
    if not isinstance(value, list | tuple) or len(value) not in (2, 4):
        raise FormatError(f"{what}: expected [x, y] or [x0, y0, x1, y1], got {excerpt(value)}")
    coords = [number(v, what) for v in value]
    if len(coords) == 4:
        coords = [(coords[0] + coords[2]) / 2, (coords[1] + coords[3]) / 2]
    return frame.to_grid(coords[0], coords[1])


def text_arg(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise FormatError(f"{what}: expected a string, got {excerpt(value)}")
    return value


def py_literal(value: Any) -> str:
    """`value` as source text; JSON strings, numbers and lists are also Python literals that
    `find_call` reads back exactly."""
    return json.dumps(value, ensure_ascii=False)


def duration_text(seconds: float) -> str:
    """Seconds as the shortest exact decimal (2.0 → '2')."""
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))


def args_within(action: Action, allowed: set[str]) -> bool:
    """True when every argument the action sets is in `allowed`."""
    return set(action.args) <= allowed
