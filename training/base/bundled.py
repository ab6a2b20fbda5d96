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


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=BUNDLED_DIR.parent, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def pretrain_embedded_base(out_dir: str | Path, config: BasePretrainConfig, context_share: float, page_share: float,
                           command: str, progress: Callable[[int, float, float], None] | None = None
                           ) -> BasePretrainReport:
    """Pretrain the embedded base (simulator-screen grounding, episode-context and page-action
    skills) into `out_dir` and record its provenance; returns the `BasePretrainReport`."""
    from training.base.pretrain import pretrain_base_policy
    from training.base.episode_skills import with_episode_context
    from training.base.page_actions import with_page_actions
    from training.base.sim_grounding import sim_sampler

    commit = _git_commit()  # the code that generates the data is the code at the start
    sample_fn = with_page_actions(with_episode_context(sim_sampler(seed=config.seed), context_share), page_share,
                                  seed=config.seed)
    report = pretrain_base_policy(out_dir, config, sample_fn, on_progress=progress)
    write_provenance(out_dir, command, config.model_dump(), report.sample_fn, commit)
    return report
