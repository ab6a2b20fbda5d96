"""Hostile text for `benchmarks/fuzz.py` (issues #26 and #41): random unicode, ~1 MB strings,
brackets nested 100,000 deep, long numbers, NaN/inf, wrong types, lone surrogates; and, for work
that grows faster than the input, long repeated tokens (tags left open, call and bracket openers,
quotes that hide brackets), long digit runs (bare and quoted, with suffixes a duration or a float
parser has to reject late), and valid outputs with one of those spliced in, appended or prepended.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ops.actions import (
    DIRECTIONS,
    FORMAT_NAMES,
    REASONING_PARTS,
    SYSTEM_BUTTONS,
    TERMINATE_STATUSES,
    Action,
    ActionType,
    ReasoningParts,
    render,
    render_structured,
    supports,
)

MB = 1_000_000
DEEP = 100_000

# Built once: the large pathological strings every surface draws from.
PATHOLOGICAL = [
    "[" * DEEP, "{" * DEEP, "(" * DEEP, '{"a":' * DEEP, "[" * DEEP + "]" * DEEP,
    '{"a":' * DEEP + "1" + "}" * DEEP, '"{' * DEEP, "{" * 300_000, "\\" * MB, '"' * MB,
    "x" * MB, " " * MB, "<tool_call>" * 50_000, "do(" * DEEP, "- a #" + "9" * MB,
    '{"a": "' + "x" * MB, "```json\n" * 50_000, "9" * 5000, "-" + "1" * 5000, "1." + "0" * 5000,
    "1e99999", "-1e99999", "NaN", "Infinity", "-Infinity", "nan", "inf", "\ud800", "\udfff",
    '"\\ud800"', '"\\udc00\\ud800"', "\x00", "\u202e", "🙂" * 10, "null", "true", "[]", "{}", "",
]
WRONG_TYPES: list[Any] = [None, 0, -1, 10**5000, 1.5, math.nan, math.inf, True, b"bytes", [], {}, [1, 2],
                          {"type": "click"}, ("a",), object(), {1, 2}]

# Repeated to fill a text: the openers of every format's markup, call and bracket openers, quotes and
# escapes, digits, and plain filler. Each was, or could be, rescanned once per repetition.
FLOOD_TOKENS = (
    "<answer>", "<think>", "<thinking>", "<conclusion>", "<tool_call>", "</tool_call>", "<planning>",
    "</planning>", "<self_verification>", "Action:", "Action: tap\n", "```", "```json\n", "CLICK[", "FOO[",
    "CLICK(", "do(", "a(", "do(a=", 'do(action="Wait", duration="', "finish(", "(", "[", "{", '{"a":', "1,",
    '"', "'", "\\", '"\\', "9", "9.", "- a #", "#", " ", "\n", "a ", "A_", "e", "é", "🙂",
)
# Left open before a flood: a scan that backtracks over what follows an opener rescans the flood once
# per character (a fence before 200,000 spaces took 12 s), and inside a string literal brackets do
# not count towards the nesting limit.
OPENERS = ("```json\n", "```", "<think>", "<thinking>", "<answer>", "<tool_call>", "<conclusion>", '{"a": "', "do(",
           'do(action="', 'do(action="Wait", duration="', "CLICK[", "CLICK(", "Action:", "- a #", '"', "'", "`")
# Around the limits: the parsers read 100,000 characters, critic answers and CLI lines 200,000.
FLOOD_CHARS = (1_000, 20_000, 60_000, 99_000, 100_001, 199_000, 200_001)
DIGIT_RUNS = (301, 400, 999, 1001, 4300, 4301, 5000, 20_000, 99_000)
_DIGIT_CHUNK = "".join(random.Random(7).choice("0123456789") for _ in range(97))


def flood(rng: random.Random) -> str:
    """One token repeated to one of `FLOOD_CHARS`, now and then after one of `OPENERS`."""
    token = rng.choice(FLOOD_TOKENS)
    text = token * max(1, rng.choice(FLOOD_CHARS) // len(token))
    return rng.choice(OPENERS) + text if rng.random() < 0.4 else text


SWEEP_SUFFIXES = ("", 'x")')


def sweep_texts(prefixes: Sequence[str], chars: int) -> Iterator[str]:
    """Every opener (and none) before every flood token repeated to `chars`, after each prefix and
    before each of `SWEEP_SUFFIXES`: the combinations a random draw rarely makes (issue #41: a quote
    before a run of `FOO[`, a call left open before a run of `<answer>`, a quoted digit run ending in
    `x`). A generator: the texts are ~100 KB each."""
    for prefix in prefixes:
        for opener in ("", *OPENERS):
            for token in FLOOD_TOKENS:
                for suffix in SWEEP_SUFFIXES:
                    yield prefix + opener + token * (chars // len(token)) + suffix


def open_output(fmt: str) -> str:
    """A click (or, where the format has none, a wait) in format `fmt` without its last closing tag:
    the start of a response that a flood continues."""
    click = Action(type=ActionType.CLICK, point=(500, 120))
    text = render(click if supports(click, fmt) else Action(type=ActionType.WAIT), fmt)
    return re.sub(r"</\w+>\s*$", "", text)


def digit_run(rng: random.Random) -> str:
    """A number of one of `DIGIT_RUNS` digits, with a sign, a decimal point or a suffix that makes a
    parser reject it only at the end."""
    length = rng.choice(DIGIT_RUNS)
    run = (rng.choice("123456789") + _DIGIT_CHUNK * (1 + length // len(_DIGIT_CHUNK)))[:length]
    return rng.choice(["", "", "-", "0.", "1.", "."]) + run + rng.choice(["", "", ".", "x", " seconds", "e5", "e99999", "s"])


def random_unicode(rng: random.Random, max_len: int = 200) -> str:
    return "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randrange(max_len)))


def hostile_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return random_unicode(rng)
    if roll < 0.4:
        return "".join(rng.choice("{}[]()\"',:#-0123456789.eE\\ \nnatrufl") for _ in range(rng.randrange(300)))
    if roll < 0.6:
        return flood(rng)
    if roll < 0.7:
        return digit_run(rng)
    return rng.choice(PATHOLOGICAL)


def hostile_number(rng: random.Random) -> str:
    if rng.random() < 0.4:
        return digit_run(rng)
    return rng.choice(["9" * 5000, "-" + "1" * 5000, "1." + "0" * 5000, "1e99999", "NaN", "Infinity",
                       "-Infinity", "1e-99999", "0x10", "1_000", "".join(rng.choice("0123456789") for _ in range(4400))])


def hostile_string_content(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.2:
        return digit_run(rng)
    if roll < 0.4:
        return flood(rng).replace('"', "'")
    if roll < 0.8:
        return rng.choice(["\\ud800", "\\udfff", "\\ud83d", "\\udc00\\ud800", "\ud800", "x" * MB, "x" * 99_000,
                           "\\" * 5, "\\u0000", "\\x00", '\\"', "\x00"])
    return random_unicode(rng, 40)


def _spans(text: str, pred: Callable[[str], bool]) -> list[tuple[int, int]]:
    out, start = [], None
    for i, ch in enumerate(text + " "):
        if pred(ch) and start is None:
            start = i
        elif not pred(ch) and start is not None:
            out.append((start, i))
            start = None
    return out


def mutate(rng: random.Random, text: str) -> str:
    """`text` with one hostile change: a number or a string body replaced, an insertion, a flood
    before or after it, or a cut."""
    roll = rng.random()
    if roll < 0.25:
        spans = _spans(text, str.isdigit)
        if spans:
            i, j = rng.choice(spans)
            number = hostile_number(rng)
            return text[:i] + (f'"{number}"' if rng.random() < 0.3 else number) + text[j:]
    if roll < 0.5 and '"' in text:
        quotes = [i for i, ch in enumerate(text) if ch == '"']
        if len(quotes) >= 2:
            k = rng.randrange(len(quotes) - 1)
            return text[: quotes[k] + 1] + hostile_string_content(rng) + text[quotes[k + 1]:]
    if roll < 0.65:
        return text + flood(rng)  # e.g. a flood of <conclusion> after a valid call
    if roll < 0.7:
        return flood(rng) + text
    if roll < 0.9:
        at = rng.randrange(len(text) + 1)
        return text[:at] + hostile_text(rng) + text[at:]
    return text[: rng.randrange(len(text) + 1)]


# ---------------------------------------------------------------- in the action formats and reward columns


def random_action(rng: random.Random) -> Action:
    point = (rng.randint(0, 1000), rng.randint(0, 1000))
    text = rng.choice(["hello world", "Wi-Fi", "12:30", "café ☕", "", "a b c"])
    atype = rng.choice(list(ActionType))
    target = rng.choice([{"point": point}, {"element": rng.randrange(8)}, {"point": point, "element": rng.randrange(8)}])
    kwargs: dict[str, Any] = {
        ActionType.CLICK: target, ActionType.LONG_PRESS: target, ActionType.DOUBLE_TAP: target,
        ActionType.SWIPE: rng.choice([{"direction": rng.choice(DIRECTIONS)}, {"point": point, "end_point": point[::-1]}]),
        ActionType.DRAG: {"point": point, "end_point": point[::-1]},
        ActionType.TYPE: {"text": text}, ActionType.ANSWER: {"text": text},
        ActionType.SYSTEM_BUTTON: {"button": rng.choice(SYSTEM_BUTTONS)}, ActionType.OPEN_APP: {"app": "Settings"},
        ActionType.WAIT: rng.choice([{}, {"duration": 2.0}]),
        ActionType.TERMINATE: {"status": rng.choice(TERMINATE_STATUSES)}, ActionType.KEY: {"key": "enter"},
    }[atype]
    return Action(type=atype, **kwargs)


def valid_output(rng: random.Random, fmt: str) -> str:
    """A well-formed output of format `fmt` (an action it can write)."""
    for _ in range(50):
        action = random_action(rng)
        if supports(action, fmt):
            return render(action, fmt)
    return render(Action(type=ActionType.WAIT), fmt)


def model_output(rng: random.Random, fmt: str) -> Any:
    roll = rng.random()
    if roll < 0.5:
        return mutate(rng, valid_output(rng, fmt))
    if roll < 0.9:
        return hostile_text(rng)
    if roll < 0.95:
        return valid_output(rng, fmt)
    return rng.choice(WRONG_TYPES)


def hostile_box(rng: random.Random) -> Any:
    return rng.choice([
        None, [100, 100, 200, 200], [0, 0, 1000, 1000], [5, 5, 5, 5], [200, 200, 100, 100], [1, 2, 3],
        [math.nan, 0, 1, 1], [0, 0, math.inf, 1], [10**5000, 0, 1, 1], [-(10**400), 0, 10**400, 1],
        ["a", "b", "c", "d"], ["1", "2", "3", "4"], [None] * 4, [[1], [2], [3], [4]], "0,0,1,1", 5,
        {"x": 1}, [True, False, True, True], [1e308, 1e308, 1e308, 1e308], [-1e308, -1e308, 1e308, 1e308],
        {1, 2, 3, 4}, b"\x00\x00\x00\x00", [object()] * 4,
    ])


def hostile_elements(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.15:
        return None
    if roll < 0.25:
        return rng.choice([5, "boxes", {"box": [0, 0, 1, 1]}, [[]], [None], [[0, 0, 1, 1]] * 3 + ["x"],
                           [{"label": "a"}], [{"box": "0 0 1 1"}], [{"box": [0, 0, 1, 1], "label": None}]])
    return [rng.choice([hostile_box(rng), [100 * i, 0, 100 * i + 50, 50], {"box": hostile_box(rng), "label": "x"}])
            for i in range(rng.randrange(6))]


def dumps_hostile(value: Any) -> str:
    try:
        return json.dumps(value, default=repr)
    except ValueError:  # an integer over Python's 4,300-digit str() limit
        return "9" * 5000


def hostile_json_text(rng: random.Random, valid: Any) -> Any:
    roll = rng.random()
    if roll < 0.4:
        return dumps_hostile(valid)
    if roll < 0.7:
        return mutate(rng, dumps_hostile(valid))
    if roll < 0.9:
        return hostile_text(rng)
    return rng.choice(WRONG_TYPES) if rng.random() < 0.5 else valid


def reasoning_parts(rng: random.Random) -> ReasoningParts:
    return ReasoningParts(*(rng.choice(["The tap worked.", "Wi-Fi is off", "Open Settings", "café ☕", "x" * 300,
                                        random_unicode(rng, 30).replace("<", "") or "a"]) for _ in REASONING_PARTS))


def structured_output(rng: random.Random) -> Any:
    """A four-part structured response, with parts dropped, repeated or shuffled, or mutated."""
    action = Action(type=ActionType.WAIT)
    for _ in range(50):
        action = random_action(rng)
        if supports(action, "mobilewizard"):
            break
    parts = reasoning_parts(rng)
    try:
        text = render_structured(action, parts)
    except ValueError:  # a random part the format cannot hold
        return hostile_text(rng)
    roll = rng.random()
    if roll < 0.3:
        blocks = [f"<{n}>{t}</{n}>" for n, t in zip(REASONING_PARTS, parts.texts(), strict=True)]
        text = render(action, "mobilewizard", thinking="\n".join(rng.choice(blocks) for _ in range(rng.randrange(7))))
    if rng.random() < 0.6:
        text = mutate(rng, text)
    return text if rng.random() < 0.95 else rng.choice(WRONG_TYPES)


def labels(rng: random.Random) -> list[str]:
    return [rng.choice(["Wi-Fi", "Bluetooth", "Settings", "OK", "", "a #1", random_unicode(rng, 12)])
            for _ in range(rng.randrange(12))]


def completion(rng: random.Random, fmt: str) -> Any:
    text = model_output(rng, fmt)
    return rng.choice([
        text, [{"role": "assistant", "content": text}], {"role": "assistant", "content": text},
        [{"role": "assistant", "content": [{"type": "text", "text": text}, {"type": "image", "text": None}]}],
        [{"role": "assistant", "content": [{"type": "text", "text": None}]}], [{"role": "assistant"}],
        [{"role": "assistant", "content": None}], [], None, 5, [[[[]]]], DEEP_LIST, [None],
    ])


def _nested_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


DEEP_LIST = _nested_list(DEEP)


def column(rng: random.Random, n: int, make: Callable[[], Any]) -> Any:
    roll = rng.random()
    if roll < 0.8:
        return [make() for _ in range(n)]
    if roll < 0.9:  # ragged
        return [make() for _ in range(max(0, n + rng.choice([-3, -1, 1, 3])))]
    return rng.choice([None, [], "column", 5])


def trainer_state(max_steps: Any, global_step: Any) -> Any:
    return type("TrainerState", (), {"max_steps": max_steps, "global_step": global_step})()


HOSTILE_STEP_COUNTS = [(10, 10**400), (10**400, 10**401), (2.0, 10**400), (math.nan, 5), (10, math.inf),
                       (-(10**400), 5), (0, 10**400), (True, False)]


def decision(n: int) -> dict[str, Any]:
    return {"decision": 0, "reason": "Never tapped Save.", "failure_step": n, "task_feasible": True,
            "step_analysis": {str(i): {"reasonableness": "reasonable", "explanation": "ok"} for i in range(1, n + 1)}}


def decision_with_many_steps(rng: random.Random) -> dict[str, Any]:
    """A decision analysing thousands of steps, or steps numbered with hundreds of digits."""
    answer = decision(1)
    judgement = answer["step_analysis"]["1"]
    many = rng.random() < 0.5
    keys = [str(i) for i in range(rng.choice([2_000, 20_000]))] if many else \
        [str(10**rng.choice([300, 1000, 4000]) + i) for i in range(20)]
    answer["step_analysis"] = dict.fromkeys(keys, judgement)
    return answer


def curriculum(n: int) -> dict[str, Any]:
    evaluation = {"task_reasonable": True, "task_completed": True, "confidence_score": 0.9,
                  "step_quality_analysis": {"total_steps": 3, "reasonable_steps": 2, "trajectory_quality_score": 0.7}}
    tasks = [{"task_id": f"t{i}", "instruction": "Turn on Wi-Fi.", "step_budget": 4, "core_functionality": "Wi-Fi",
              "variation_type": "parameter_change"} for i in range(n)]
    return {"evaluation": evaluation, "generated_tasks": tasks}


def hostile_score_line(rng: random.Random) -> bytes:
    """One line for `mobileforge actions score`: a prediction and target in any format (or canonical
    objects, or boxes and elements) with hostile parts, or hostile text instead of a line."""
    fmt = rng.choice(FORMAT_NAMES)
    record: dict[str, Any] = {"prediction": model_output(rng, fmt), "target": random_action(rng).to_dict(),
                              "format": fmt}
    roll = rng.random()
    if roll < 0.2:
        record["target_box"] = hostile_box(rng)
    elif roll < 0.4:
        record["elements"] = hostile_elements(rng)
    elif roll < 0.5:
        record["prediction"] = random_action(rng).to_dict()
    text = hostile_json_text(rng, record)
    line = text if isinstance(text, str) else dumps_hostile(text)
    # as a file would hold it: one line, and a lone surrogate as the invalid UTF-8 bytes it encodes to
    return " ".join(line.splitlines()).encode("utf-8", "surrogatepass")
