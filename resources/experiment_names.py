"""Experiment names and named ablations: plain data and checks, no Dagster, so the CLI can refuse
a bad name or apply an ablation before it imports the asset graph (`resources.experiment` holds
what the experiment concept means to Dagster: partitions, storage layout, lineage)."""

from __future__ import annotations

import copy
import re
from typing import Any

MAX_NAME_LENGTH = 64

_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.=|-]*$")
_EXPERIMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def check_segment(value: str, what: str) -> str:
    """Reject names that would escape or split a storage path."""
    if not _SEGMENT.match(value) or ".." in value:
        raise ValueError(f"{what} {value!r} is not usable as a storage path segment "
                         "(letters, digits, _ . = | -; not starting with . or -)")
    return value


def check_experiment_name(name: str) -> str:
    """An experiment name: letters, digits, `_ . -`, starting with a letter or digit, at most
    64 characters (it names a directory and a Dagster partition)."""
    if len(name) > MAX_NAME_LENGTH or not _EXPERIMENT_NAME.match(name) or ".." in name:
        raise ValueError(f"experiment {name[:80]!r}: use letters, digits, '_', '.', '-', starting with a "
                         f"letter or digit, at most {MAX_NAME_LENGTH} characters")
    return name


def check_fork(parent: str, experiment: str, from_stage: str | None) -> str:
    """`--fork PARENT` of `--experiment experiment`: PARENT when it is a valid name other than the
    experiment's and a stage to start from is given (what PARENT stored for the stages before it
    is copied; there is no default, the stage that starts to differ is the user's choice);
    ValueError otherwise."""
    check_experiment_name(parent)
    if parent == experiment:
        raise ValueError(f"--fork {parent}: an experiment cannot be forked into itself; name the new one with "
                         f"--experiment (e.g. --experiment {parent}-ablation)")
    if from_stage is None:
        raise ValueError(f"--fork {parent} needs --from STAGE, the first stage {experiment!r} runs itself; what "
                         f"{parent!r} stored for the stages before it is copied")
    return parent


# Experiment name -> config overrides ({asset: {field: value}}) that `mobileforge run --experiment
# NAME` applies under any explicit --config/--set value. Help a real deployment would not have
# runs only under such a name, reported beside the faithful default; so do methods that are not the
# default (MobileWizard's structured reasoning).
NAMED_ABLATIONS: dict[str, dict[str, dict[str, Any]]] = {
    # the programmatic critic's hint is the solver's whole shortest plan from the attempt's start, an
    # oracle demonstration, instead of MobileForge §2.3.2's corrective hint at the first wrong step
    "oracle-plans": {"rollouts": {"hint_steps": 12, "direct_plans": True, "hint_from_start": True}},
    # MobileWizard: structured reasoning with memory (the policy's prompt style, ABLATION_RESOURCES below),
    # the kept steps annotated with the four parts (step_datasets does it for that style), and HiFPO's
    # reward R + w1·R_format + w2·R_reasoning (eq. 3; the paper gives no weights: 0.2 each keeps the action
    # reward the larger part), with room for the four parts in each sampled response; HiFPO trains in rounds
    # with history self-alignment (§3.4.3, defaults of HistoryAlignmentConfig: App. B's 5 rounds, half the
    # trajectories, threshold 0.75).
    # Corrective teaching's remedial trajectories (§3.4.4, written in the structured style) join App. B's last
    # epoch: HiFPO trains one more epoch on the step data plus them after its last alignment round, RFT mixes
    # them into its final run.
    "wizard": {"hifpo_checkpoint": {"overrides": {
        "reward_options": {"structure_weight": 0.2, "reasoning_weight": 0.2}, "max_completion_length": 256,
        "history_alignment": {}}, "remedial": True},
               "rft_checkpoint": {"remedial": True}, "remedial_trajectories": {"enabled": True},
               # AdaGRPO's reward with the same two terms per step
               "adagrpo_checkpoint": {"overrides": {"structure_weight": 0.2, "reasoning_weight": 0.2}}},
}

# Experiment name -> resource settings ({resource: {field: value}}) of a named ablation: settings that
# live on a resource, not on an asset, such as the policy's prompt style. `mobileforge run` passes them
# as the stages' run config (`pipelines.run.experiment.run_experiment(resources=...)`), on top of the
# resource's configured values; in `dagster dev`, set them in the launchpad's `resources` section.
ABLATION_RESOURCES: dict[str, dict[str, dict[str, Any]]] = {
    # a structured response needs more than the embedded profile's 48 new tokens
    "wizard": {"policy": {"prompt_style": "mobilewizard", "max_new_tokens": 256}},
}


def ablation_overrides(experiment: str) -> dict[str, dict[str, Any]]:
    """The config overrides of named ablation `experiment`; {} for any other name."""
    return copy.deepcopy(NAMED_ABLATIONS.get(experiment, {}))


def ablation_resources(experiment: str) -> dict[str, dict[str, Any]]:
    """The resource settings of named ablation `experiment`; {} for any other name."""
    return copy.deepcopy(ABLATION_RESOURCES.get(experiment, {}))
