"""The policy as it travels between assets: one typed record of where the weights are, which
prompt style and output format they speak, and where they came from.

Every policy-valued asset (`base_policy`, and `<method>_checkpoint` for each method of
`training.methods.registry`) returns a `Checkpoint`; the policy resource turns one into an acting
policy (`resources.policy.PolicyResource.acting_policy`), the only place that does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from pydantic import BaseModel, ConfigDict, Field

from ops.agent.policy_prompt import PromptStyle
from training.models.weight_files import weight_files

BASE = "base"  # the method name of the policy being adapted; trained ones carry a registered method's name


class Checkpoint(BaseModel):
    """A policy checkpoint: weights, prompt style and lineage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(description="Unique name, recorded with every attempt the policy makes.")
    uri: str | None = Field(description=(
        "Weights directory (transformers layout): an artifact-store URI, or `file://` for weights read in place "
        "(a configured model); None for a served model whose weights are not configured."))
    prompt_style: PromptStyle = Field(description="The step prompt the weights were trained to read.")
    method: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description=(
        "What produced it: 'base', or the name of a method of training.methods.registry."))
    base: str | None = Field(default=None, description="Version of the checkpoint it was trained from.")
    trained: bool = Field(default=True, description=(
        "False when the method had no training signal and passes its input policy on unchanged."))
    reason: str | None = Field(default=None, description="Why it was not trained (trained=False only).")
    disabled: bool = Field(default=False, description=(
        "The method was switched off for this run (its asset config's `enabled`): nothing was trained, and the "
        "benchmark and the printed tables leave it out."))
    steps: int = Field(default=0, ge=0, description="Optimizer steps of its training run.")
    metrics: dict[str, float] = Field(default_factory=dict, description="Final training or evaluation figures.")

    def trained_from(self, method: str, version: str, uri: str | None, steps: int,
                     metrics: dict[str, float] | None = None) -> Checkpoint:
        """The checkpoint `method` trained from this one."""
        return Checkpoint(version=version, uri=uri, prompt_style=self.prompt_style, method=method,
                          base=self.version, steps=steps, metrics=metrics or {})

    def unchanged(self, method: str, reason: str, *, disabled: bool = False) -> Checkpoint:
        """What `method` returns when it had nothing to learn from, or was switched off (`disabled`):
        this policy, said so."""
        return Checkpoint(version=self.version, uri=self.uri, prompt_style=self.prompt_style, method=method,
                          base=self.version, trained=False, reason=reason, disabled=disabled)


def weights_digest(directory: str | Path) -> str:
    """Short sha256 over a model directory's config and weight files (names and bytes), so a
    checkpoint is known by what it holds, not where it lies."""
    root = Path(directory)
    digest = hashlib.sha256()
    for path in weight_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()[:12]
