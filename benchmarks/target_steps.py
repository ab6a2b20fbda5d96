"""Which steps a base gets wrong on the target's screens: teacher-forced per-step accuracy on the target
world's solver episodes.

    python benchmarks/target_steps.py CKPT [CKPT ...] [--split train|test|ood|held-out-pretrain] [--seeds N]
        [--constrained] [--cache-dir DIR] [--samples-out FILE]

Every instance (seeds 0..N-1) of the split's target templates is played by the simulator's solver and turned
into samples the way the pretraining recipe turns its episodes into samples (`training.base.world_episodes`):
each step on the solver's path is what an unaided rollout of the element-list policy shows there (rows, the
"Done:" lines of the steps before, the instruction; no hints, no detours), then the stop on the screen where the
goal holds. `--constrained` decodes as an unaided rollout does (the default run's row-echo and typing
constraints), so an echo always names a row and the click figures are those rollouts meet.
`--split held-out-pretrain` measures the same on the held-out pretraining apps' templates instead:
the baseline of screens the base was built to read but never saw. The base answers each greedily, decoded freely
unless `--constrained`, as the pretraining report scores its held-out samples (`evaluate_policy`). Nothing is
trained.

Prints one JSON line per checkpoint: exact match overall, per skill (the report's `per_skill`), per step
position (`first`: step 0, on the launcher, nearly always opening the app; `middle`; `stop`) and per app; click
accuracy, chance and where the echoed rows go (`held_out_clicks.echo_kinds`); what the base outputs instead, per
skill (`outputs`: e.g. on the stop step a click, a type, a terminate of another status; on a type step the right
field with the wrong text);
and two approximations of unaided episode success: the share of episodes whose every step it gets right, and the
mean over episodes of the product of their steps' per-class accuracies (steps taken as independent). Both are
approximations: a rollout can leave the solver's path and recover, or fail off it in ways no step here shows.
`--samples-out` writes a few dozen failing samples (prompt tail, target, answer) as JSONL for reading.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.checkpoints_cli import checkpoint_parser, loaded_checkpoints  # noqa: E402
from benchmarks.held_out_clicks import echo_kinds  # noqa: E402
from ops.actions import Action, ActionType  # noqa: E402
from ops.actions.formats.label_echo import parse_output  # noqa: E402
from phonesim.pretrain import pretrain_template_ids  # noqa: E402
from phonesim.task_template import TARGET_SPLITS  # noqa: E402
from phonesim.tasks import templates  # noqa: E402
from training.base.grounding_data import GroundingSample  # noqa: E402
from training.base.pretrain import evaluate_policy  # noqa: E402
from training.base.sample_text import answer_text, prompt_text, sample_rows  # noqa: E402
from training.base.world_episodes import episode_move, move_sample  # noqa: E402
from training.base.world_recipe import collect_episodes  # noqa: E402
from training.inference.decoding_constraints import DecodingConstraints  # noqa: E402
from training.inference.typing_constraint import typable_texts  # noqa: E402

POSITIONS = ("first", "middle", "stop")
HELD_OUT_PRETRAIN = "held-out-pretrain"
FAILING_SAMPLES = 40  # written by --samples-out, spread over the skills and positions
PROMPT_TAIL = 600  # characters of the prompt's end kept in a failing sample: the last rows and the instruction


@dataclass(frozen=True, slots=True)
class StepCase:
    """One step of one target episode, as the base is asked it."""

    template_id: str
    seed: int
    step: int
    position: str  # one of POSITIONS
    sample: GroundingSample

    @property
    def app(self) -> str:
        return self.template_id.split(".", 1)[0]


def split_template_ids(split: str) -> list[str]:
    """The target split's templates, or the held-out pretraining apps' (`HELD_OUT_PRETRAIN`)."""
    if split == HELD_OUT_PRETRAIN:
        return pretrain_template_ids(held_out=True)
    return [t.id for t in templates(split)]


def step_position(step: int, n_steps: int) -> str:
    return "stop" if step == n_steps else "first" if step == 0 else "middle"


def target_cases(template_ids: list[str], seeds: int, cache: Path | None) -> tuple[list[StepCase], list[str]]:
    """Every step (then the stop) of the solver's episode of each instance, and the instances the solver
    found no clean solution for (`template_id:seed`)."""
    episodes = collect_episodes(template_ids, seeds, seed=0, detour_rate=0.0, cache=cache)
    solved = {(e.template_id, e.seed) for e in episodes}
    unsolved = [f"{tid}:{s}" for tid in sorted(template_ids) for s in range(seeds) if (tid, s) not in solved]
    cases = [StepCase(e.template_id, e.seed, t, step_position(t, len(e.steps)), move_sample(e, episode_move(e, t)))
             for e in episodes for t in range(len(e.steps) + 1)]
    return cases, unsolved


def output_label(target: Action, answer: str, labels: list[str]) -> str:
    """What the base did with a step: `right`, `unparsed`, another action type (`click`, `terminate:success`,
    ...), or the right type with the wrong arguments (`click:wrong_row`, `type:right_field_wrong_text`, ...)."""
    parsed = parse_output(answer, labels)
    if not isinstance(parsed, Action):
        return "unparsed"
    if parsed == target:
        return "right"
    if parsed.type != target.type:
        return f"terminate:{parsed.status}" if parsed.type == ActionType.TERMINATE else parsed.type.value
    if target.type == ActionType.TYPE:
        field = "right_field" if parsed.element == target.element else "wrong_field"
        text = "right_text" if parsed.text == target.text else "wrong_text"
        return f"type:{field}_{text}"
    if target.type == ActionType.CLICK:
        return "click:wrong_row" if target.element is not None else "click:wrong_point"
    if target.type == ActionType.TERMINATE:
        return f"terminate:{parsed.status}"
    if target.type == ActionType.ANSWER:
        return "answer:wrong_text"
    return f"{target.type.value}:wrong_arguments"


def _rate(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 3) if flags else 0.0


def step_outcomes(cases: list[StepCase], answers: list[str]) -> list[str]:
    """`output_label` of each answer (one per case, in order)."""
    if len(answers) != len(cases):
        raise ValueError(f"{len(answers)} answers for {len(cases)} steps")
    return [output_label(c.sample.target, a, [e.label for e in c.sample.elements]) for c, a in zip(cases, answers)]


def step_report(cases: list[StepCase], answers: list[str]) -> dict:
    """The breakdowns of `answers` (one per case, in order) that need no model: per position, per app, what
    was output instead per skill, where click echoes go, and the two episode-success approximations."""
    labels = step_outcomes(cases, answers)
    right = [label == "right" for label in labels]
    outputs: dict[str, Counter] = defaultdict(Counter)
    by_episode: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, (case, label) in enumerate(zip(cases, labels)):
        outputs[case.sample.kind][label] += 1
        by_episode[(case.template_id, case.seed)].append(i)

    def class_of(i: int) -> tuple[str, str]:
        return cases[i].sample.kind, cases[i].position

    per_class: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for i, ok in enumerate(right):
        per_class[class_of(i)].append(ok)
    class_rate = {k: sum(v) / len(v) for k, v in per_class.items()}
    all_right = {ep: all(right[i] for i in steps) for ep, steps in by_episode.items()}
    independent = [math.prod(class_rate[class_of(i)] for i in steps) for steps in by_episode.values()]

    def summary(idx: list[int]) -> dict:
        row: dict = {"n": len(idx), "exact": _rate([right[i] for i in idx])}
        for position in POSITIONS:
            row[position] = _rate([right[i] for i in idx if cases[i].position == position])
        episodes = {(cases[i].template_id, cases[i].seed) for i in idx}
        row["episodes"], row["all_steps_right"] = len(episodes), _rate([all_right[ep] for ep in episodes])
        return row

    apps = sorted({c.app for c in cases})
    on_rows = [i for i, c in enumerate(cases)  # a slider's click is at a point, on no row
               if c.sample.target.type == ActionType.CLICK and c.sample.target.element is not None]
    kinds = echo_kinds([cases[i].sample for i in on_rows], [answers[i] for i in on_rows])
    clicks = sum(kinds.values())
    return {
        "steps": len(cases), "episodes": len(by_episode), "exact": _rate(right),
        "by_position": {p: {"n": sum(c.position == p for c in cases),
                            "exact": _rate([ok for c, ok in zip(cases, right) if c.position == p])} for p in POSITIONS},
        "by_app": {app: summary([i for i, c in enumerate(cases) if c.app == app]) for app in apps},
        "outputs": {kind: dict(counts.most_common()) for kind, counts in sorted(outputs.items())},
        "point_clicks": sum(c.sample.target.type == ActionType.CLICK for c in cases) - clicks,
        **{f"echo_{k}": round(kinds[k] / clicks, 3) if clicks else 0.0 for k in ("right", "other_row", "no_row")},
        "episodes_all_steps_right": _rate(list(all_right.values())),
        "independent_steps_estimate": round(sum(independent) / len(independent), 4) if independent else 0.0,
    }


def failing_samples(cases: list[StepCase], answers: list[str], limit: int = FAILING_SAMPLES) -> list[dict]:
    """Up to `limit` failing steps for reading, taken in turn from each (skill, position) group."""
    labels = step_outcomes(cases, answers)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (case, label) in enumerate(zip(cases, labels)):
        if label != "right":
            groups[(case.sample.kind, case.position)].append(i)
    queues = [members for _, members in sorted(groups.items())]
    order: list[int] = []
    for column in range(max(map(len, queues), default=0)):
        order += [members[column] for members in queues if column < len(members)]
    return [{"template": cases[i].template_id, "seed": cases[i].seed, "step": cases[i].step,
             "position": cases[i].position, "kind": cases[i].sample.kind, "screen": cases[i].sample.screen,
             "outcome": labels[i], "prompt_tail": prompt_text(cases[i].sample)[-PROMPT_TAIL:],
             "target": answer_text(cases[i].sample), "answer": answers[i]} for i in order[:limit]]


def rollout_constraints(tokenizer) -> Callable[[list[GroundingSample], int], list]:
    """A generation batch's logits processors as an unaided rollout decodes (the default run's row-echo
    and typing constraints): echoes along the sample's rows, typed text from its instruction."""
    constraints = DecodingConstraints(tokenizer, echo=True, typing=True)

    def processors(chunk: list[GroundingSample], prompt_length: int) -> list:
        rows = [sample_rows(s) for s in chunk]
        return constraints.processors(prompt_length, rows, [typable_texts(s.instruction, ()) for s in chunk])
    return processors


def measure(model, encoder, cases: list[StepCase], constrained: bool = False) -> tuple[dict, list[str]]:
    """The base's greedy answers on `cases` (with `constrained`, decoded as rollouts decode), scored: the
    pretraining report's figures and `step_report`'s."""
    scores = evaluate_policy(model, encoder, [c.sample for c in cases], with_images=False,
                             constraints=rollout_constraints(encoder.tokenizer) if constrained else None)
    report = step_report(cases, scores["answers"])
    per_skill = {k: {"n": v.n, "valid": round(v.format_valid, 3), "type_right": round(v.type_match, 3),
                     "exact": round(v.exact, 3)}
                 for k, v in scores["per_skill"].items()}
    return {**report, "format_valid": round(scores["format_valid_rate"], 3), "clicks": scores["clicks"],
            "click_accuracy": round(scores["click_accuracy"], 3), "chance": round(scores["click_chance"], 3),
            "per_skill": per_skill}, scores["answers"]


def main() -> None:
    parser = checkpoint_parser(__doc__)
    parser.add_argument("--split", choices=(*TARGET_SPLITS, HELD_OUT_PRETRAIN), default="train")
    parser.add_argument("--seeds", type=int, default=1, help="instances (seeds 0..N-1) of each template")
    parser.add_argument("--samples-out", type=Path, help="write failing samples of every checkpoint here (JSONL)")
    parser.add_argument("--constrained", action="store_true",
                        help="decode as rollouts do (row-echo and typing constraints), not freely")
    args = parser.parse_args()
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    cases, unsolved = target_cases(split_template_ids(args.split), args.seeds, args.cache_dir)
    dump = []
    for checkpoint, model, encoder in loaded_checkpoints(args.checkpoints):
        report, answers = measure(model, encoder, cases, args.constrained)
        print(json.dumps({"checkpoint": checkpoint, "split": args.split, "seeds": args.seeds, "unsolved": unsolved,
                          "constrained": args.constrained, **report}), flush=True)
        dump += [{"checkpoint": checkpoint, **row} for row in failing_samples(cases, answers)]
    if args.samples_out is not None:
        args.samples_out.parent.mkdir(parents=True, exist_ok=True)
        args.samples_out.write_text("".join(json.dumps(row) + "\n" for row in dump))


if __name__ == "__main__":
    main()
