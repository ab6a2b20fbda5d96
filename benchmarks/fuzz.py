"""Hostile-input fuzzing of every surface that reads model, critic or device output (issues #26, #41).

Each surface gets `--n` inputs (default 10,000; generators in `benchmarks/hostile_inputs.py`). A
surface that reads text first takes the sweep `sweep_texts` (every opener before every flood token,
after nothing and after a valid response left open: 3,116 inputs), then random ones: unicode, ~1 MB
strings, brackets nested 100,000 deep, digit runs of 300 to 99,000 digits (bare and quoted), long
repeated tokens, NaN/inf, wrong types, lone surrogates, and valid outputs of each format with one of
those spliced in, appended or prepended. Printed per surface: inputs, crashes (an exception outside
the surface's error contract, or a result that breaks it: an action holding a lone surrogate, a
message quoting over 1,000 characters of the input), inputs over 100 ms of CPU time, and the
slowest in CPU ms (CPU time: a loaded machine's scheduling is not counted; a wall-clock alarm still
catches hangs). Last, every hostile line of `cli:actions_score`, each after a good one, is streamed
through `mobileforge actions score` in a subprocess: every good line must come back scored. The
target is 0 crashes and 0 slow inputs.

Surfaces and their contracts:
  parse:<format>, parse:auto   ops.actions.parse_with_context → ParsedOutput, never raises
  parse:label_echo+labels      the same with element labels (the rollout and reward call)
  parse:mobilewizard+structured  ops.actions.parse_structured (four-part reasoning) → ParsedOutput
                               whose success carries the four parts, never raises
  score_action                 ops.judging.action_reward.score_action → a reward in [0, 1] or RewardInputError
  trl_reward                   ops.judging.reward_columns.make_trl_reward batches (hostile trainer
                               states included) → one finite float per completion
  structured_reward            ops.judging.reasoning_reward structure / reasoning rewards → 0, 0.5, 1 / [0, 1]
  parse_json_output            ops.agent.llm_answers.parse_json_output → a model or OutputError
  cli:actions_score            `mobileforge actions score` on a good line, a hostile one, a good one →
                               three JSON lines, both good lines scored 1.0
  adb_observation              ops.environments.adb_observation on a device's answer to DUMP_COMMAND (pieces
                               of a good one among hostile text, a PNG or not) → text, a PNG or nothing, XML
                               ending its hierarchy or None, a focused window or none; never raises

Run: nice python benchmarks/fuzz.py [--n 10000] [--seed 0] [--surface score_action ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # repo root, when run as a script

from benchmarks.fuzz_runner import Case, Surface, Tally, arm_hang_alarm, run_surface  # noqa: E402
from benchmarks.hostile_inputs import (  # noqa: E402
    HOSTILE_STEP_COUNTS,
    WRONG_TYPES,
    column,
    completion,
    curriculum,
    decision,
    decision_with_many_steps,
    hostile_box,
    hostile_elements,
    hostile_json_text,
    hostile_number,
    hostile_score_line,
    hostile_text,
    labels,
    model_output,
    mutate,
    open_output,
    random_action,
    reasoning_parts,
    structured_output,
    trainer_state,
)
from mobileforge.cli.actions import actions as actions_cli  # noqa: E402
from ops.actions import (  # noqa: E402
    FORMAT_NAMES,
    FORMATS,
    Action,
    ActionType,
    ParseFailure,
    ReasoningParts,
    parse_structured,
    parse_with_context,
    render,
)
from ops.actions.formats import label_echo  # noqa: E402
from ops.agent.llm_answers import OutputError, parse_json_output  # noqa: E402
from ops.curriculum.prompts import CurriculumOutput, curriculum_context  # noqa: E402
from ops.environments.adb_observation import PNG_SIGNATURE, focused_window, split_dump, split_screenshot  # noqa: E402
from ops.judging.action_reward import RewardConfig, RewardInputError, score_action  # noqa: E402
from ops.judging.critic.prompts import CorrectiveHintOutput, FinalDecision, StepDescription  # noqa: E402
from ops.judging.reasoning_reward import reasoning_reward, structure_reward  # noqa: E402
from ops.judging.reward_columns import make_trl_reward  # noqa: E402

MAX_MESSAGE_CHARS = 1000  # a failure's reason quotes an excerpt of the input, never the input


# ---------------------------------------------------------------- contract checks


class ContractBroken(Exception):
    """A surface returned something its contract rules out."""


GOOD_TARGET = {"type": "click", "args": {"point": [500, 120]}}
REFERENCE_PARTS = ReasoningParts("The tap worked.", "Wi-Fi is off", "Open Settings", "Tap Wi-Fi")


def _utf8_clean(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except (UnicodeEncodeError, TypeError, ValueError):
        return False
    return True


def check_message(message: str) -> None:
    if len(message) > MAX_MESSAGE_CHARS:
        raise ContractBroken(f"a {len(message)}-character message: {message[:100]!r}…")


def check_parsed(parsed: Any) -> None:
    action = getattr(parsed, "action", None)
    if not isinstance(action, Action | ParseFailure):
        raise ContractBroken(f"returned {type(parsed).__name__}")
    if isinstance(action, Action) and not _utf8_clean([action.to_dict(), parsed.thinking, parsed.conclusion]):
        raise ContractBroken("an action or its text is not UTF-8 encodable")
    if isinstance(action, ParseFailure):
        check_message(action.reason)




def parse_case(fmt: str) -> Callable[[Any], Case]:
    return lambda text: lambda: check_parsed(parse_with_context(text, fmt))


def parse_surface(fmt: str) -> Callable[[random.Random], Case]:
    def case(rng: random.Random) -> Case:
        return parse_case(fmt)(model_output(rng, "canonical" if fmt == "auto" and rng.random() < 0.3 else
                                            (rng.choice(FORMAT_NAMES) if fmt == "auto" else fmt)))
    return case


def structured_parse_case(rng: random.Random) -> Case:
    return structured_parse_check(structured_output(rng) if rng.random() < 0.8 else model_output(rng, "mobilewizard"))


def structured_parse_check(text: Any) -> Case:
    def call() -> None:
        parsed = parse_structured(text)
        check_parsed(parsed)
        if (parsed.reasoning is not None) != isinstance(parsed.action, Action):
            raise ContractBroken("a success without its four parts, or parts with a failure")
        if parsed.reasoning is not None and not _utf8_clean(parsed.reasoning.texts()):
            raise ContractBroken("a reasoning part is not UTF-8 encodable")
    return call


def structured_reward_case(rng: random.Random) -> Case:
    return structured_reward_check(structured_output(rng), reasoning_parts(rng))


def structured_reward_check(text: Any, annotation: ReasoningParts = REFERENCE_PARTS) -> Case:
    def embed(texts: list[str]) -> list[list[float]]:  # stands in for the sentence model
        return [[float(len(t) % 7), float(t.count("e")), 1.0] for t in texts]

    def call() -> None:
        structure, reasoning = structure_reward(text), reasoning_reward(text, annotation, embed)
        if structure not in (0.0, 0.5, 1.0) or not 0.0 <= reasoning <= 1.0:
            raise ContractBroken(f"structure {structure!r}, reasoning {reasoning!r}")
    return call


def label_echo_case(rng: random.Random) -> Case:
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


def score_case(rng: random.Random) -> Case:
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
        except RewardInputError as exc:
            check_message(str(exc))
            return
        if not (math.isfinite(result.reward) and 0 <= result.reward <= 1 + 1e-9):
            raise ContractBroken(f"reward {result.reward!r}")
    return call


def trl_text_case(text: str) -> Case:
    def call() -> None:
        out = make_trl_reward("canonical")([text], target_action=[json.dumps(GOOD_TARGET)])
        if len(out) != 1 or not math.isfinite(out[0]):
            raise ContractBroken(f"rewards {out!r:.200}")
    return call


def trl_case(rng: random.Random) -> Case:
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
        columns["trainer_state"] = rng.choice([None, 5, trainer_state("x", None), *(
            trainer_state(*counts) for counts in HOSTILE_STEP_COUNTS)])
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


JSON_SCHEMAS: list[tuple[type, Callable[[random.Random], tuple[Any, dict | None]]]] = [
    (StepDescription, lambda rng: ({"action_description": "Tapped Wi-Fi", "ui_description": "Settings"}, None)),
    (FinalDecision, lambda rng: (decision(n := rng.randint(1, 4)), {"n_steps": n})),
    # a context counting more steps than any answer covers: the coverage check must not count to it
    (FinalDecision, lambda rng: (decision(rng.randint(1, 4)), {"n_steps": rng.choice([10**6, 10**12, 10**100])})),
    (FinalDecision, lambda rng: (decision_with_many_steps(rng), {"n_steps": rng.randint(1, 4)})),
    (CorrectiveHintOutput, lambda rng: ({"key_mistake": "x", "what_to_avoid": ["y"], "suggested_approach": ["z"],
                                          "important_insights": [], "hint_summary": "Tap Save."}, None)),
    (CurriculumOutput, lambda rng: (curriculum(rng.randint(1, 3)), curriculum_context(1, 3, 10))),
]


def json_case(rng: random.Random) -> Case:
    schema, make = rng.choice(JSON_SCHEMAS)
    valid, context = make(rng)
    text = hostile_json_text(rng, valid)
    if isinstance(text, str) and rng.random() < 0.2:
        text = rng.choice(["Here you go:\n```json\n{}\n```", "Answer: {} Thanks.", "{}"]).replace("{}", text)
    return json_check(text, schema, context)


def json_check(text: Any, schema: type = StepDescription, context: dict | None = None) -> Case:
    def call() -> None:
        try:
            parse_json_output(text, schema, context)
        except OutputError as exc:
            check_message(str(exc))
    return call


# ---------------------------------------------------------------- the CLI


GOOD_LINE = json.dumps({"prediction": render(Action(type=ActionType.CLICK, point=(500, 120)), "qwen3vl"),
                        "target": GOOD_TARGET, "format": "qwen3vl"}).encode()


def cli_case(rng: random.Random) -> Case:
    return cli_check(hostile_score_line(rng))


def cli_text_case(text: str) -> Case:
    return cli_check(json.dumps({"prediction": text, "target": GOOD_TARGET, "format": "auto"}).encode())


def cli_check(line: bytes) -> Case:
    def call() -> None:
        result = CliRunner().invoke(actions_cli, ["score"], input=b"\n".join([GOOD_LINE, line, GOOD_LINE, b""]))
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        out = [json.loads(row) for row in result.stdout.split("\n") if row]
        if len(out) != (3 if line.strip() else 2) or out[0].get("reward") != 1.0 or out[-1].get("reward") != 1.0:
            raise ContractBroken(f"good lines not scored around a hostile one: {result.stdout[:200]!r}")
        for value in out[1].values():
            check_message(str(value))
    return call


DUMP_PIECES = ("UI hierchary dumped to: /sdcard/window_dump.xml\n", "ERROR: could not get idle state.\n",
               "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>", '<hierarchy rotation="0">',
               '<node text="a" bounds="[0,0][1,1]" />', "</hierarchy>", "  mCurrentFocus=Window{1d2 u0 a.b/.Main}\n",
               "mCurrentFocus")


def dump_case(rng: random.Random) -> Case:
    parts = [rng.choice(DUMP_PIECES) if rng.random() < 0.6 else hostile_text(rng) for _ in range(rng.randrange(1, 8))]
    stdout = "".join(parts).encode("utf-8", "surrogatepass")
    if rng.random() < 0.5:
        stdout += PNG_SIGNATURE + rng.randbytes(rng.randrange(5000))
    stderr = hostile_text(rng).encode("utf-8", "surrogatepass") if rng.random() < 0.2 else b""
    return dump_check(stdout, stderr)


def dump_text_case(text: str) -> Case:
    return dump_check(text.encode("utf-8", "surrogatepass"), b"")


def dump_check(stdout: bytes, stderr: bytes) -> Case:
    def call() -> None:
        text, png = split_screenshot(stdout, stderr)
        xml, after, _ = split_dump(text)
        if png and not png.startswith(PNG_SIGNATURE) or xml is not None and not xml.endswith("</hierarchy>"):
            raise ContractBroken(f"split into {xml and xml[:80]!r} and a {len(png)}-byte screenshot")
        if not all(isinstance(v, str) for v in focused_window(after or text)):
            raise ContractBroken("focused window not two strings")
    return call


def score_stream_check(n: int, seed: int) -> bool:
    """`n` hostile lines, each after a good one, streamed as one file into `mobileforge actions score` in
    a subprocess; prints what came back and returns whether every line was answered and every good
    line scored 1.0. Streamed (not written out first): at ~100 KB a hostile line, 10,000 make a GB."""
    rng = random.Random(seed)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen([sys.executable, "-m", "mobileforge.cli.main", "actions", "score"], cwd=REPO, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    good_at: list[bool] = []  # per non-blank line sent: whether it is a good one

    def feed() -> None:
        assert proc.stdin is not None
        for line in (GOOD_LINE, *(piece for _ in range(n) for piece in (hostile_score_line(rng), GOOD_LINE))):
            proc.stdin.write(line + b"\n")
            if line.strip():
                good_at.append(line is GOOD_LINE)
        proc.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    assert proc.stdout is not None
    out = [json.loads(row) for row in proc.stdout]
    writer.join()
    proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    answered = len(out) == len(good_at)
    good_scored = sum(good and row.get("reward") == 1.0 for good, row in zip(good_at, out))
    hostile = [row for good, row in zip(good_at, out) if not good]
    print(f"actions score on one stream of {len(good_at):,} lines ({n:,} hostile): {len(out):,} answered, "
          f"{good_scored:,} of {good_at.count(True):,} good lines scored 1.0, hostile lines "
          f"{sum('reward' in row for row in hostile):,} scored and {sum('error' in row for row in hostile):,} "
          f"reported, exit {proc.returncode}, {cpu:.1f} s CPU ({1000 * cpu / max(len(good_at), 1):.2f} ms a line)")
    return answered and good_scored == good_at.count(True)


WIZARD_OPEN = open_output("mobilewizard")
SURFACES: dict[str, Surface] = {
    **{f"parse:{fmt}": Surface(parse_surface(fmt), parse_case(fmt), ("", open_output(fmt))) for fmt in FORMATS},
    "parse:auto": Surface(parse_surface("auto"), parse_case("auto"), ("", WIZARD_OPEN, open_output("qwen3vl"))),
    "parse:label_echo+labels": Surface(label_echo_case, lambda text: lambda: check_parsed(
        parse_with_context(text, "label_echo", labels=["Wi-Fi", "a #1"])), ("", "- a #1\n")),
    "parse:mobilewizard+structured": Surface(structured_parse_case, structured_parse_check, ("", "<think>")),
    "score_action": Surface(score_case),
    "trl_reward": Surface(trl_case, trl_text_case, ("", open_output("canonical"))),
    "structured_reward": Surface(structured_reward_case, structured_reward_check, ("", "<think>")),
    "parse_json_output": Surface(json_case, json_check, ("", '{"action_description": "'), 199_000),
    "cli:actions_score": Surface(cli_case, cli_text_case, ("", WIZARD_OPEN)),
    "adb_observation": Surface(dump_case, dump_text_case, ("", DUMP_PIECES[2] + DUMP_PIECES[3])),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="inputs per surface")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--surface", nargs="*", choices=sorted(SURFACES), help="default: all")
    args = parser.parse_args()
    arm_hang_alarm()
    # the reward columns' per-row warnings are the expected outcome here
    logging.getLogger("ops.judging.reward_columns").setLevel(logging.ERROR)
    print(f"{'surface':<30} {'inputs':>7} {'crashes':>8} {'>100 ms':>8} {'slowest ms':>11}  crash kinds")
    total = Tally()
    for name in args.surface or SURFACES:
        tally = run_surface(SURFACES[name], args.n, args.seed)
        kinds = ", ".join(f"{k}×{v}" for k, v in tally.kinds.most_common())
        print(f"{name:<30} {tally.inputs:>7} {tally.crashes:>8} {tally.slow:>8} {tally.slowest_ms:>11.1f}  {kinds}",
              flush=True)
        for kind, example in tally.examples.items():
            print(f"{'':<30}   {kind}: {example!r}")
        total.crashes += tally.crashes
        total.slow += tally.slow
    streamed_ok = score_stream_check(args.n, args.seed) if "cli:actions_score" in (args.surface or SURFACES) else True
    sys.exit(1 if total.crashes or total.slow or not streamed_ok else 0)


if __name__ == "__main__":
    main()
