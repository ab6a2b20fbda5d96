"""The embedded base policy shipped with the code, and how to rebuild it.

Pretraining the tiny policy well takes thousands of optimizer steps (about half an hour on one
core), more than a 15-minute embedded run can spend, and a time-budgeted run learns less on
a busy machine than on an idle one. So the result of one step-budgeted run is kept in the
repository (`training/base/checkpoint/`, ~1 MB) with its provenance: the exact command, the
pretraining config, the data generator, the held-out report and a fingerprint of the prompt
and answer format it was trained on. `base_policy` (source "bundled") copies it; source
"pretrain" reruns the same recipe. When prompts, the answer format, critic hint wording or
history lines change, the fingerprint no longer matches and the bundled base is refused with
the command that rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ops.actions import Action, ActionType
from ops.actions.formats import label_echo
from ops.agent.hint_marks import describe_step_action
from ops.agent.episode import Hint
from ops.agent.hint_marks import corrective_summary, plan_summary
from ops.agent.policy_prompt import build_policy_prompt
from ops.rollout.engine import describe_action

BUNDLED_DIR = Path(__file__).resolve().parent / "checkpoint"
PROVENANCE_FILE = "provenance.json"
REPORT_FILE = "pretrain_report.json"
if TYPE_CHECKING:  # torch stays unimported until a pretraining actually runs
    from training.base.pretrain import BasePretrainConfig, BasePretrainReport

REBUILD_COMMAND = "mobileforge base pretrain --out training/base/checkpoint"


class BundledBaseError(RuntimeError):
    """The bundled base is missing, incomplete or was trained for another prompt format."""


def format_fingerprint() -> str:
    """Hash of every text the base learns to read or write: the element-list prompt with hints,
    hint-marked rows and history, the label-echo answers, the critic's hint wording and the history lines."""
    elements = [{"text": "Wi-Fi", "checkable": True, "checked": False, "grid": [0, 0, 1000, 100]},
                {"text": "Display\nBrightness", "grid": [0, 100, 1000, 200]}]
    hint = Hint(attempt=1, key_mistake="k", what_to_avoid=["a"], suggested_approach=["s"],
                important_insights=["i"],
                hint_summary=corrective_summary("settings", describe_step_action(Action(ActionType.CLICK, element=1),
                                                                                 elements),
                                                describe_step_action(Action(ActionType.CLICK, element=0), elements)))
    plan = replace(hint, hint_summary=plan_summary("settings", [
        ("launcher", describe_step_action(Action(ActionType.OPEN_APP, app="Settings"), [])),
        ("settings", describe_step_action(Action(ActionType.SWIPE, direction="up"), [])),
        ("settings", describe_step_action(Action(ActionType.TYPE, text="Ana"), elements))], ""))
    probe = {
        "prompt": build_policy_prompt("elements", "Turn on Wi-Fi", ["- Settings #3", describe_action(
            Action(ActionType.TYPE, text="hi"))], [hint, plan], elements, screen="settings"),
        "answers": [label_echo.render_target(Action(ActionType.CLICK, element=1), ["Wi-Fi [off]", "Display"]),
                    label_echo.render_target(Action(ActionType.TERMINATE, status="success"), []),
                    label_echo.render_target(Action(ActionType.OPEN_APP, app="Settings"), [])],
        "index_tokens": label_echo.index_tokens(),
    }
    return hashlib.sha256(json.dumps(probe, sort_keys=True).encode()).hexdigest()[:16]


def bundled_digest(directory: str | Path = BUNDLED_DIR) -> str:
    """Short hash of a base checkpoint's weights and provenance ("missing" when absent), so that
    a stored copy of an older bundled base is told apart from the current one."""
    digest = hashlib.sha256()
    for name in (PROVENANCE_FILE, "model.safetensors"):
        path = Path(directory) / name
        digest.update(path.read_bytes() if path.is_file() else b"missing")
    return digest.hexdigest()[:12]


def write_provenance(checkpoint: str | Path, command: str, config: dict[str, Any], sample_fn: str,
                     git_commit: str | None) -> dict[str, Any]:
    """Record how `checkpoint` was made next to it (provenance.json)."""
    record = {"command": command, "config": config, "sample_fn": sample_fn, "git_commit": git_commit,
              "format_fingerprint": format_fingerprint()}
    (Path(checkpoint) / PROVENANCE_FILE).write_text(json.dumps(record, indent=2) + "\n")
    return record


def load_bundled(directory: str | Path = BUNDLED_DIR) -> tuple[dict[str, Any], dict[str, Any]]:
    """(provenance, pretrain report) of a base checkpoint directory (the bundled one by default)
    after checking it is complete and trained on the current prompt format."""
    directory = Path(directory)
    missing = [f for f in (PROVENANCE_FILE, REPORT_FILE, "model.safetensors", "config.json", "tokenizer.json")
               if not (directory / f).is_file()]
    if missing:
        raise BundledBaseError(f"bundled base {directory} lacks {missing}; rebuild it with `{REBUILD_COMMAND}` "
                               "or set base_policy.source=pretrain")
    provenance = json.loads((directory / PROVENANCE_FILE).read_text())
    current = format_fingerprint()
    if provenance.get("format_fingerprint") != current:
        raise BundledBaseError(
            f"bundled base {directory} was trained on prompt/answer format {provenance.get('format_fingerprint')}, "
            f"the code now writes {current}; rebuild it with `{REBUILD_COMMAND}` or set base_policy.source=pretrain")
    return provenance, json.loads((directory / REPORT_FILE).read_text())


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=BUNDLED_DIR.parent, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


RECIPES = ("sim", "world")  # the generator of the pretraining samples (`pretrain_embedded_base`)
WORLD_COPY_SHARE = 0.3  # the world recipe's default `copy_share` (docs/base-ceiling.md, R3)
STRUCTURED_SEEDS = 2  # solver episodes per trained pretraining template in the structured style


def pretrain_embedded_base(out_dir: str | Path, config: BasePretrainConfig, context_share: float, page_share: float,
                           command: str, progress: Callable[[int, float, float], None] | None = None,
                           recipe: str = "sim", cache: Path | None = None, solve_workers: int = 1
                           ) -> BasePretrainReport:
    """Pretrain the embedded base into `out_dir` and record its provenance; returns the `BasePretrainReport`.

    Recipe "sim": grounding on the target apps' screens reached by random walks, with episode-context
    (`context_share`) and page-action (`page_share`) skills. Recipe "world": the pretraining world only
    (`training.base.world_recipe`: solver episodes and grounding on its trained apps, nothing of the
    target apps), its report scored on the held-out pretraining apps; `cache` keeps its episodes, built along
    the repository's stored solutions (`training.base.world_solutions`); `solve_workers` processes search those
    it lacks (the same episodes for any number).
    With `config.structured_every`, the world recipe also trains on its episodes in MobileWizard's
    structured style (`training.base.structured_pool`); with `config.copy_share`, on verbatim copies
    (`training.base.copy_samples`).
    A run stopped midway resumes when started again with the same settings (`pretrain_base_policy`)."""
    from training.base.pretrain import pretrain_base_policy

    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {RECIPES}, got {recipe!r}")
    commit = git_commit()  # the code that generates the data is the code at the start
    eval_fn, structured, structured_eval = None, [], []
    if recipe == "world":
        from phonesim.pretrain import pretrain_template_ids
        from training.base.structured_pool import structured_samples
        from training.base.world_recipe import held_out_sampler, world_sampler

        sample_fn = world_sampler(seed=config.seed, context_share=context_share, copy_share=config.copy_share,
                                  cache=cache, solve_workers=solve_workers)
        eval_fn = held_out_sampler(cache=cache, solve_workers=solve_workers)
        if config.structured_every:
            structured = structured_samples(pretrain_template_ids(held_out=False), STRUCTURED_SEEDS, cache)
            structured_eval = structured_samples(pretrain_template_ids(held_out=True), 1, cache)[::3]
    elif config.structured_every or config.copy_share:
        raise ValueError("structured-reasoning and copy samples come from the pretraining world: use the world recipe")
    else:
        from training.base.episode_skills import with_episode_context
        from training.base.page_actions import with_page_actions
        from training.base.sim_grounding import sim_sampler

        sample_fn = with_page_actions(with_episode_context(sim_sampler(seed=config.seed), context_share), page_share,
                                      seed=config.seed)
    report = pretrain_base_policy(out_dir, config, sample_fn, on_progress=progress, eval_sample_fn=eval_fn,
                                  structured=structured, structured_eval=structured_eval)
    write_provenance(out_dir, command, config.model_dump(), report.sample_fn, commit)
    return report
