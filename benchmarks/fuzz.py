"""Hostile-input fuzzing of every surface that reads model or critic output (issue #26).

Each surface gets `--n` generated inputs (default 10,000): random unicode, ~1 MB strings, JSON
and brackets nested 100,000 deep, 5,000-digit numbers, NaN/inf, wrong types, lone surrogates
(raw and as JSON / Python escapes), and valid outputs of each action format with one of those
spliced in. Printed per surface: inputs, crashes (an exception outside the surface's error
contract, or a result that breaks it, e.g. an action holding a lone surrogate), inputs that
took over 1 s of CPU time, and the slowest input in CPU ms (CPU time, so that a loaded machine's
scheduling is not counted; a wall-clock alarm still catches hangs). The target is 0 crashes and 0 slow inputs.

Surfaces and their contracts:
  parse:<format>, parse:auto   ops.actions.parse_with_context → ParsedOutput, never raises
  parse:label_echo+labels      the same with element labels (the rollout and reward call)
  parse:mobilewizard+structured  ops.actions.parse_structured (four-part reasoning) → ParsedOutput
                               whose success carries the four parts, never raises
  score_action                 ops.judging.action_reward.score_action → a reward in [0, 1] or RewardInputError
  trl_reward                   ops.judging.reward_columns.make_trl_reward batches → one finite float per completion
  structured_reward            ops.judging.reasoning_reward structure / reasoning rewards → 0, 0.5, 1 / [0, 1]
  parse_json_output            ops.agent.llm.parse_json_output → a model or OutputError

Run: nice python benchmarks/fuzz.py [--n 10000] [--seed 0] [--surface score_action ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # repo root, when run as a script

from ops.actions import (  # noqa: E402
    DIRECTIONS,
    FORMAT_NAMES,
    FORMATS,
    REASONING_PARTS,
    SYSTEM_BUTTONS,
    TERMINATE_STATUSES,
    Action,
    ActionType,
    ParseFailure,
    ReasoningParts,
    parse_structured,
    parse_with_context,
    render,
    render_structured,
    supports,
)
from ops.actions.formats import label_echo  # noqa: E402
from ops.agent.llm import OutputError, parse_json_output  # noqa: E402
from ops.judging.critic.prompts import CorrectiveHintOutput, FinalDecision, StepDescription
from ops.curriculum.prompts import CurriculumOutput, curriculum_context  # noqa: E402
from ops.judging.reasoning_reward import reasoning_reward, structure_reward  # noqa: E402
from ops.judging.action_reward import RewardConfig, RewardInputError, score_action  # noqa: E402
from ops.judging.reward_columns import make_trl_reward  # noqa: E402

SLOW_S = 1.0
HANG_S = 30  # an input still running after this is abandoned (and counted as a crash)
MB = 1_000_000

# Built once: the large pathological strings every surface draws from.
DEEP = 100_000
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


def random_unicode(rng: random.Random, max_len: int = 200) -> str:
    return "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randrange(max_len)))


def hostile_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.4:
        return random_unicode(rng)
    if roll < 0.5:
        return "".join(rng.choice("{}[]()\"',:#-0123456789.eE\\ \nnatrufl") for _ in range(rng.randrange(300)))
    return rng.choice(PATHOLOGICAL)


def hostile_number(rng: random.Random) -> str:
    return rng.choice(["9" * 5000, "-" + "1" * 5000, "1." + "0" * 5000, "1e99999", "NaN", "Infinity",
                       "-Infinity", "1e-99999", "0x10", "1_000", "".join(rng.choice("0123456789") for _ in range(4400))])


def hostile_string_content(rng: random.Random) -> str:
    return rng.choice(["\\ud800", "\\udfff", "\\ud83d", "\\udc00\\ud800", "\ud800", "x" * MB, "\\" * 5,
                       "\\u0000", "\\x00", '\\"', "\x00"]) if rng.random() < 0.7 else random_unicode(rng, 40)


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


def mutate(rng: random.Random, text: str) -> str:
    """`text` with one hostile change: a number, a string body, an insertion, or a cut."""
    roll = rng.random()
    if roll < 0.3:
        spans = [(i, j) for i, j in _spans(text, str.isdigit)]
        if spans:
            i, j = rng.choice(spans)
            return text[:i] + hostile_number(rng) + text[j:]
    if roll < 0.6 and '"' in text:
        quotes = [i for i, ch in enumerate(text) if ch == '"']
        if len(quotes) >= 2:
            k = rng.randrange(len(quotes) - 1)
            return text[: quotes[k] + 1] + hostile_string_content(rng) + text[quotes[k + 1]:]
    if roll < 0.85:
        at = rng.randrange(len(text) + 1)
        return text[:at] + hostile_text(rng) + text[at:]
    return text[: rng.randrange(len(text) + 1)]


def _spans(text: str, pred: Callable[[str], bool]) -> list[tuple[int, int]]:
    out, start = [], None
    for i, ch in enumerate(text + " "):
        if pred(ch) and start is None:
            start = i
        elif not pred(ch) and start is not None:
            out.append((start, i))
            start = None
    return out


def model_output(rng: random.Random, fmt: str) -> Any:
    roll = rng.random()
    if roll < 0.5:
        return mutate(rng, valid_output(rng, fmt))
    if roll < 0.9:
        return hostile_text(rng)
    if roll < 0.95:
        return valid_output(rng, fmt)
    return rng.choice(WRONG_TYPES)


# ---------------------------------------------------------------- contract checks


class ContractBroken(Exception):
    """A surface returned something its contract rules out."""


def _utf8_clean(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except (UnicodeEncodeError, TypeError, ValueError):
        return False
    return True


def check_parsed(parsed: Any) -> None:
    action = getattr(parsed, "action", None)
    if not isinstance(action, Action | ParseFailure):
        raise ContractBroken(f"returned {type(parsed).__name__}")
    if isinstance(action, Action) and not _utf8_clean([action.to_dict(), parsed.thinking, parsed.conclusion]):
        raise ContractBroken("an action or its text is not UTF-8 encodable")


def parse_surface(fmt: str) -> Callable[[random.Random], Callable[[], None]]:
    def case(rng: random.Random) -> Callable[[], None]:
        text = model_output(rng, "canonical" if fmt == "auto" and rng.random() < 0.3 else
                            (rng.choice(FORMAT_NAMES) if fmt == "auto" else fmt))
        return lambda: check_parsed(parse_with_context(text, fmt))
    return case


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


def structured_parse_case(rng: random.Random) -> Callable[[], None]:
    text = structured_output(rng) if rng.random() < 0.8 else model_output(rng, "mobilewizard")

    def call() -> None:
        parsed = parse_structured(text)
        check_parsed(parsed)
        if (parsed.reasoning is not None) != isinstance(parsed.action, Action):
            raise ContractBroken("a success without its four parts, or parts with a failure")
        if parsed.reasoning is not None and not _utf8_clean(parsed.reasoning.texts()):
            raise ContractBroken("a reasoning part is not UTF-8 encodable")
    return call


def structured_reward_case(rng: random.Random) -> Callable[[], None]:
    text, annotation = structured_output(rng), reasoning_parts(rng)

    def embed(texts: list[str]) -> list[list[float]]:  # stands in for the sentence model
        return [[float(len(t) % 7), float(t.count("e")), 1.0] for t in texts]

    def call() -> None:
        structure, reasoning = structure_reward(text), reasoning_reward(text, annotation, embed)
        if structure not in (0.0, 0.5, 1.0) or not 0.0 <= reasoning <= 1.0:
            raise ContractBroken(f"structure {structure!r}, reasoning {reasoning!r}")
    return call


def labels(rng: random.Random) -> list[str]:
    return [rng.choice(["Wi-Fi", "Bluetooth", "Settings", "OK", "", "a #1", random_unicode(rng, 12)])
            for _ in range(rng.randrange(12))]


def label_echo_case(rng: random.Random) -> Callable[[], None]:
    names = labels(rng)
    action = random_action(rng)
    if action.element is not None and names:
        action = Action(type=action.type, element=rng.randrange(len(names)))
        text = label_echo.render_target(action, names)
    else:
        text = label_echo.render_action(action)
    roll = rng.random()
    if roll < 0.6:
        text = mutate(rng, text)
    elif roll < 0.8:
        text = f"- {rng.choice(names or ['x'])} #{hostile_number(rng)}\n" + text.split("\n")[-1]
    elif roll < 0.95:
        text = hostile_text(rng)
    else:
        text = rng.choice(WRONG_TYPES)
    return lambda: check_parsed(parse_with_context(text, "label_echo", labels=names))


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


def score_case(rng: random.Random) -> Callable[[], None]:
    prediction = rng.choice([random_action(rng), random_action(rng), ParseFailure("bad", "x", "canonical"),
                             None, "click", {"type": "click"}])
    target = random_action(rng) if rng.random() < 0.9 else rng.choice(WRONG_TYPES)
    box, elements = hostile_box(rng), hostile_elements(rng)
    config = rng.choice([RewardConfig(), RewardConfig(click_threshold=0.14), RewardConfig(text_f1_gate=0.5)])
    format_ok = rng.choice([None, True, False])

    def call() -> None:
        try:
            result = score_action(prediction, target, target_box=box, elements=elements, config=config,
                                  format_ok=format_ok)
        except RewardInputError:
            return
        if not (math.isfinite(result.reward) and 0 <= result.reward <= 1 + 1e-9):
            raise ContractBroken(f"reward {result.reward!r}")
    return call


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, default=repr)
    except ValueError:  # an integer over Python's 4,300-digit str() limit
        return "9" * 5000


def hostile_json_text(rng: random.Random, valid: Any) -> Any:
    roll = rng.random()
    if roll < 0.4:
        return _dumps(valid)
    if roll < 0.7:
        return mutate(rng, _dumps(valid))
    if roll < 0.9:
        return hostile_text(rng)
    return rng.choice(WRONG_TYPES) if rng.random() < 0.5 else valid


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


def trl_case(rng: random.Random) -> Callable[[], None]:
    fmt = rng.choice(FORMAT_NAMES)
    n = rng.randrange(9)
    completions = [completion(rng, fmt) for _ in range(n)]
    columns: dict[str, Any] = {}
    if rng.random() < 0.97:
        columns["target_action"] = column(rng, n, lambda: hostile_json_text(rng, random_action(rng).to_dict()))
    if rng.random() < 0.5:
        columns["target_box"] = column(rng, n, lambda: hostile_json_text(rng, hostile_box(rng)))
    if rng.random() < 0.6:
        columns["elements"] = column(rng, n, lambda: hostile_json_text(rng, hostile_elements(rng)))
    if rng.random() < 0.2:
        columns["trainer_state"] = rng.choice([None, 5, type("S", (), {"max_steps": "x", "global_step": None})()])
    reward = make_trl_reward(fmt, RewardConfig(shrink_stages=(0.14, 0.07)), rng.choice(["overall", "format"]))

    def call() -> None:
        try:
            out = reward(completions, **columns)
        except RewardInputError:
            if "target_action" in columns:
                raise
            return
        if len(out) != n or not all(isinstance(v, float) and math.isfinite(v) for v in out):
            raise ContractBroken(f"rewards {out!r:.200}")
    return call


def _decision(n: int) -> dict[str, Any]:
    return {"decision": 0, "reason": "Never tapped Save.", "failure_step": n, "task_feasible": True,
            "step_analysis": {str(i): {"reasonableness": "reasonable", "explanation": "ok"} for i in range(1, n + 1)}}


def _curriculum(n: int) -> dict[str, Any]:
    evaluation = {"task_reasonable": True, "task_completed": True, "confidence_score": 0.9,
                  "step_quality_analysis": {"total_steps": 3, "reasonable_steps": 2, "trajectory_quality_score": 0.7}}
    tasks = [{"task_id": f"t{i}", "instruction": "Turn on Wi-Fi.", "step_budget": 4, "core_functionality": "Wi-Fi",
              "variation_type": "parameter_change"} for i in range(n)]
    return {"evaluation": evaluation, "generated_tasks": tasks}


JSON_SCHEMAS: list[tuple[type, Callable[[random.Random], tuple[Any, dict | None]]]] = [
    (StepDescription, lambda rng: ({"action_description": "Tapped Wi-Fi", "ui_description": "Settings"}, None)),
    (FinalDecision, lambda rng: (_decision(n := rng.randint(1, 4)), {"n_steps": n})),
    (CorrectiveHintOutput, lambda rng: ({"key_mistake": "x", "what_to_avoid": ["y"], "suggested_approach": ["z"],
                                          "important_insights": [], "hint_summary": "Tap Save."}, None)),
    (CurriculumOutput, lambda rng: (_curriculum(rng.randint(1, 3)), curriculum_context(1, 3, 10))),
]


def json_case(rng: random.Random) -> Callable[[], None]:
    schema, make = rng.choice(JSON_SCHEMAS)
    valid, context = make(rng)
    text = hostile_json_text(rng, valid)
    if isinstance(text, str) and rng.random() < 0.2:
        text = rng.choice(["Here you go:\n```json\n{}\n```", "Answer: {} Thanks.", "{}"]).replace("{}", text)

    def call() -> None:
        try:
            parse_json_output(text, schema, context)
        except OutputError:
            pass
    return call


# ---------------------------------------------------------------- runner


@dataclass
class Tally:
    inputs: int = 0
    crashes: int = 0
    slow: int = 0
    slowest_ms: float = 0.0
    kinds: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)


class Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"still running after {HANG_S} s")


def run_surface(make_case: Callable[[random.Random], Callable[[], None]], n: int, seed: int) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    for _ in range(n):
        call = make_case(rng)
        signal.alarm(HANG_S)
        start = time.process_time()  # CPU seconds: the work an input costs, not the machine's load
        try:
            call()
        except Exception as exc:  # noqa: BLE001 — counting what escapes is the point
            tally.crashes += 1
            kind = type(exc).__name__
            tally.kinds[kind] += 1
            tally.examples.setdefault(kind, str(exc)[:160])
        finally:
            elapsed = time.process_time() - start
            signal.alarm(0)
        tally.inputs += 1
        tally.slow += elapsed > SLOW_S
        tally.slowest_ms = max(tally.slowest_ms, elapsed * 1000)
    return tally


SURFACES: dict[str, Callable[[random.Random], Callable[[], None]]] = {
    **{f"parse:{fmt}": parse_surface(fmt) for fmt in [*FORMATS, "auto"]},
    "parse:label_echo+labels": label_echo_case,
    "parse:mobilewizard+structured": structured_parse_case,
    "score_action": score_case,
    "trl_reward": trl_case,
    "structured_reward": structured_reward_case,
    "parse_json_output": json_case,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="inputs per surface")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--surface", nargs="*", choices=sorted(SURFACES), help="default: all")
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    logging.getLogger("ops.judging.reward_columns").setLevel(logging.ERROR)  # its per-row warnings are the expected outcome
    print(f"{'surface':<30} {'inputs':>7} {'crashes':>8} {'>1 s':>5} {'slowest ms':>11}  crash kinds")
    total = Tally()
    for name in args.surface or SURFACES:
        tally = run_surface(SURFACES[name], args.n, args.seed)
        kinds = ", ".join(f"{k}×{v}" for k, v in tally.kinds.most_common())
        print(f"{name:<30} {tally.inputs:>7} {tally.crashes:>8} {tally.slow:>5} {tally.slowest_ms:>11.1f}  {kinds}",
              flush=True)
        for kind, example in tally.examples.items():
            print(f"{'':<30}   {kind}: {example!r}")
        total.crashes += tally.crashes
        total.slow += tally.slow
    sys.exit(1 if total.crashes or total.slow else 0)


if __name__ == "__main__":
    main()
