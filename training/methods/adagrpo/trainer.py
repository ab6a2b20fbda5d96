"""AdaGRPO: online, trajectory-level multi-turn GRPO (MobileRL §2.1–2.2), in the simulator or on devices.

Each epoch draws curriculum templates (on a device: curriculum tasks), weighted by failure curriculum
filtering (FCF, §2.2.3), instantiates them at fresh seeds (a device re-runs the task), and runs a group
of G episodes per task from one start (`training.methods.adagrpo.group_rollout`), all episodes stepped
together in batches. The run's judge (the simulator's, or the critic's verdict on a device) gives each
trajectory its reward (optionally progress-shaped, simulator only), rescaled by shortest-path reward
adjustment (SPA, eq. 2); group-relative advantages are broadcast to every step of the trajectory.
Hard successes enter the positive replay buffer (AdaPR, §2.2.2), and each update draws up to
γ·M of them, highest advantage first. The draw follows the epoch's admission, so with γ = 1 and
M = tasks × G (the defaults) every update drains the buffer: the epoch's hard successes count
twice in its own update and none waits for a later one. The loss is GRPO's clipped objective
with a KL term over the policy's own tokens only: each step's response, never the prompt
(observation, history) that the environment wrote.

TRL path, and why: TRL's GRPO loss under our own episode loop. GRPOTrainer with `rollout_func`
or `environment_factory` (experimental in TRL 1.16) turns one dataset prompt into one sequence of
completions; a multi-turn episode then becomes one growing conversation with environment tokens
masked out. Our policy does not act that way: every step is a fresh prompt built from the current
screen and a short history (MobileRL's MDP: a_t ~ π(· | s_t, c)), so the probabilities to
optimise are those of each step's response given that step's prompt, which a concatenated
conversation would not reproduce. So the episodes run in `ops.rollout.engine`'s batched engine, and a
GRPOTrainer serves as the loss: its `compute_loss` (token-level clipped ratio, k3 KL against its
reference model, TRL's `grpo` aggregation) is applied to step rows we tokenise, with the
trajectory's advantage on each row and a weight 1/T_i so every trajectory counts once (eq. 1).
"""

from __future__ import annotations

import io
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from PIL import Image
from trl import GRPOConfig, GRPOTrainer
from trl.trainer.utils import use_adapter

from training.methods.adagrpo.rules import (
    FailureCurriculum,
    PositiveReplayBuffer,
    Scored,
    group_advantages,
    replay_update_batch,
    spa_rewards,
    trajectory_step_weights,
    weighted_sample,
)
from ops.evaluation.cpu_clock import CpuClock
from ops.agent.episode import AttemptRecord, Environment, Policy, TaskSpec
from ops.curriculum.variants import TaskVariants
from ops.judging.episode_reasoning_reward import EpisodeReasoningReward
from ops.judging.judges import Judge
from training.methods.adagrpo.group_rollout import episode_reward, run_groups
from ops.agent.messages import count_image_placeholders
from ops.judging.reasoning_reward import Embedder
from ops.judging.action_reward import STRUCTURED_FORMAT
from training.threads import torch_threads
from training.trainers.lora import parameter_counts, peft_config
from training.trainers.logprob_tiles import tiles_fitting
from training.trainers.manifest import Manifest, write_manifest
from training.methods.adagrpo.config import AdaGRPOConfig
from training.trainers.runs import TrainProgress, TrainReport, load_processor, save_full_model

MULTIMODAL_KEYS = ("pixel_values", "image_grid_thw", "num_images", "mm_token_type_ids")
CURVES = ("reward", "success", "episode_length", "buffer_size", "pool_size", "replayed", "zero_variance_groups",
          "loss", "kl")
REASONING_CURVES = ("structure", "reasoning")  # MobileWizard's terms, each logged when its weight is set




@dataclass(frozen=True)
class StepRow:
    """One step of a trajectory as the loss reads it: the prompt the policy saw and its response."""

    prompt: str  # JSON chat messages
    response: str
    screenshot_png: bytes | None  # only when the prompt holds an image placeholder


@dataclass(frozen=True)
class Trajectory:
    task_id: str
    template_id: str
    steps: tuple[StepRow, ...]


@dataclass
class AdaGRPOResult:
    """The trained checkpoint's report (None when no update had a signal), the curves per epoch and
    the failure history to keep."""

    report: TrainReport | None
    curves: dict[str, list[list[float]]]
    failures: FailureCurriculum
    unscored_steps: dict[str, int] = field(default_factory=dict)  # steps the reasoning reward could not compare
    episodes: int = 0
    rollout_seconds: float = 0.0
    update_seconds: float = 0.0
    episode_errors: list[str] = field(default_factory=list)
    stopped: str | None = None  # why training ended before config.epochs


def _trajectory(record: AttemptRecord) -> Trajectory:
    rows = []
    for step in record.steps:
        messages = json.loads(step.prompt)
        rows.append(StepRow(step.prompt, step.raw_output,
                            step.screenshot_png if count_image_placeholders(messages) else None))
    return Trajectory(record.task.task_id, record.task.template_id or "", tuple(rows))


def epoch_tasks(pool: Sequence[str], tasks: dict[str, TaskSpec], failures: FailureCurriculum, config: AdaGRPOConfig,
                variants: TaskVariants, rng: random.Random) -> list[TaskSpec]:
    """This epoch's tasks: pool keys (templates on the simulator, tasks on a device) drawn by FCF weight
    (uniform without FCF), each a fresh instance at the epoch's seed (`variants.instance`)."""
    weights = [failures.weight(t) if config.fcf else 1.0 for t in pool]
    chosen = weighted_sample(pool, weights, config.tasks_per_epoch, rng)
    seed = config.seed_offset + failures.epochs_seen
    return [variants.instance(tasks[key], seed, "adagrpo") for key in chosen]


class TrajectoryGRPOLoss:
    """TRL's GRPO loss over step rows of trajectories (see the module docstring)."""

    def __init__(self, base_dir: Path, out_dir: Path, config: AdaGRPOConfig, updates: int):
        self.config, self.base_dir = config, base_dir
        self.processor = load_processor(base_dir)
        # curves go to the manifest and the asset's chart: no Trainer.train() runs to feed a tracker
        args = GRPOConfig(**{**config.trainer_kwargs(out_dir), "report_to": []}, num_generations=2, temperature=config.temperature,
                          beta=config.beta, epsilon=config.epsilon, loss_type="grpo", scale_rewards="group")
        # GRPOTrainer wants a dataset and a reward; the episodes bring their own, so both are placeholders.
        placeholder = Dataset.from_dict({"prompt": ["-"] * 2})
        self.trainer = GRPOTrainer(model=str(base_dir), reward_funcs=[lambda completions, **_: [0.0] * len(completions)],
                                   args=args, train_dataset=placeholder, processing_class=self.processor,
                                   peft_config=peft_config(config.lora, base_dir))
        self.trainer.create_optimizer_and_scheduler(num_training_steps=max(updates, 1))
        self.trainer.current_gradient_accumulation_steps = 1
        self.model = self.trainer.model
        self.steps = 0

    def _inputs(self, rows: Sequence[StepRow], advantages: Sequence[float]) -> dict[str, Any]:
        tok = self.processor.tokenizer
        messages = [json.loads(r.prompt) for r in rows]
        texts = [self.processor.apply_chat_template(m, add_generation_prompt=True, tokenize=False) for m in messages]
        images = [Image.open(io.BytesIO(r.screenshot_png)).convert("RGB") for r in rows if r.screenshot_png]
        prompt = self.processor(text=texts, images=images or None, return_tensors="pt", padding=True)
        responses = [tok(r.response, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for r in rows]
        width = max(len(c) for c in responses)
        completion_ids = torch.full((len(rows), width), tok.pad_token_id, dtype=torch.long)
        completion_mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, ids in enumerate(responses):
            completion_ids[i, :len(ids)] = torch.tensor(ids)
            completion_mask[i, :len(ids)] = 1
        inputs = {"prompt_ids": prompt["input_ids"], "prompt_mask": prompt["attention_mask"],
                  "completion_ids": completion_ids, "completion_mask": completion_mask,
                  "advantages": torch.tensor(advantages, dtype=torch.float32),
                  "num_items_in_batch": completion_mask.sum()}
        if images:  # what TRL's forward pass needs of a multimodal batch (as its own generation step builds it)
            inputs |= {"pixel_values": prompt["pixel_values"], "image_grid_thw": prompt["image_grid_thw"],
                       "num_images": [1 if r.screenshot_png else 0 for r in rows]}
            if "mm_token_type_ids" in prompt:  # Qwen-VL's M-RoPE: which tokens are image tokens; none in responses
                inputs["mm_token_type_ids"] = torch.cat(
                    [prompt["mm_token_type_ids"], torch.zeros_like(completion_ids)], dim=1)
        return inputs

    def _logps(self, model, inputs: dict[str, Any]) -> torch.Tensor:
        ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
        mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
        with torch.no_grad():
            logps, _, _ = self.trainer._get_per_token_logps_and_entropies(
                model, ids, mask, inputs["completion_ids"].size(1),
                **{k: inputs[k] for k in MULTIMODAL_KEYS if k in inputs})
        return logps

    def _reference_logps(self, inputs: dict[str, Any]) -> torch.Tensor:
        if self.trainer.ref_model is not None:
            return self._logps(self.trainer.ref_model, inputs)
        with use_adapter(self.model, adapter_name=None):  # LoRA: the base is the model with its adapter off
            return self._logps(self.model, inputs)

    def update(self, rows: Sequence[StepRow], advantages: Sequence[float], rng: random.Random) -> dict[str, float]:
        """ppo_epochs passes of optimizer steps over `rows` (micro-batches of per_device_train_batch_size);
        the sampling policy's log-probabilities are taken before the first step, so later micro-batches
        are clipped against it. Returns the mean loss and KL."""
        with tiles_fitting(self.model):
            return self._update(rows, advantages, rng)

    def _update(self, rows: Sequence[StepRow], advantages: Sequence[float], rng: random.Random) -> dict[str, float]:
        trainer, size = self.trainer, self.config.per_device_train_batch_size
        batches = []
        order = list(range(len(rows)))
        rng.shuffle(order)
        for start in range(0, len(order), size):
            chunk = order[start:start + size]
            inputs = self._inputs([rows[i] for i in chunk], [advantages[i] for i in chunk])
            inputs["old_per_token_logps"] = self._logps(self.model, inputs)
            if self.config.beta:
                inputs["ref_per_token_logps"] = self._reference_logps(inputs)
            batches.append(inputs)
        losses: list[float] = []
        trainer._metrics["train"].clear()
        self.model.train()
        for _ in range(self.config.ppo_epochs):
            for inputs in batches:
                loss = trainer.compute_loss(self.model, inputs)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
                trainer.optimizer.step()
                trainer.lr_scheduler.step()
                trainer.optimizer.zero_grad()
                losses.append(loss.item())
                self.steps += 1
        self.model.eval()
        kl = trainer._metrics["train"].get("kl", [])
        return {"loss": sum(losses) / len(losses), "kl": sum(kl) / len(kl) if kl else 0.0}

    def save(self, out_dir: Path) -> Path:
        """The current policy as a full model in `out_dir` (LoRA adapters merged into the base)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        save_full_model(self.model.save_pretrained, self.base_dir, out_dir, self.config)
        self.processor.save_pretrained(str(out_dir))
        return out_dir


def _score_groups(groups: dict[str, list[AttemptRecord]], key_of: Callable[[TaskSpec], str], config: AdaGRPOConfig,
                  reasoning: EpisodeReasoningReward) -> tuple[list[Scored[Trajectory]], dict[str, bool], dict[str, float]]:
    """Rewards (SPA on the outcome, then MobileWizard's terms when on) and advantages per group; whether
    each template's groups had outcome 0 throughout; the epoch's rollout statistics."""
    scored: list[Scored[Trajectory]] = []
    all_zero: dict[str, bool] = {}
    rewards_seen, successes, lengths, flat_groups = [], [], [], 0
    terms: dict[str, list[float]] = {name: [] for name in REASONING_CURVES}
    for records in groups.values():
        rewards = [episode_reward(r, config.reward == "shaped") for r in records]
        success = [bool(r.feedback and r.feedback.decision) for r in records]
        length = [max(len(r.steps), 1) for r in records]
        scores = [reasoning.score(r) for r in records]
        bonus = [reasoning.bonus(s) for s in scores]
        for name in REASONING_CURVES:
            terms[name] += [getattr(s, name) for s in scores if getattr(s, name) is not None]
        template = key_of(records[0].task)
        # FCF reads the outcome: a task never solved is still failing however well its episodes are worded
        all_zero[template] = all_zero.get(template, True) and not any(rewards)
        rewards_seen += [r + b for r, b in zip(rewards, bonus)]
        successes += success
        lengths += length
        if len(records) < 2:
            continue
        adjusted = spa_rewards(rewards, length, success, config.spa_alpha) if config.spa else rewards
        advantages = group_advantages([r + b for r, b in zip(adjusted, bonus)])
        flat_groups += not any(advantages)
        scored += [Scored(a, ok, _trajectory(r)) for a, ok, r in zip(advantages, success, records) if r.steps]
    n = max(len(rewards_seen), 1)
    stats = {"reward": sum(rewards_seen) / n, "success": sum(successes) / n, "episode_length": sum(lengths) / n,
             "zero_variance_groups": flat_groups / max(len(groups), 1),
             **{name: sum(values) / len(values) for name, values in terms.items() if values}}
    return scored, all_zero, stats


def reasoning_reward_of(config: AdaGRPOConfig, world_seed: int, embed: Embedder | None) -> EpisodeReasoningReward:
    """MobileWizard's episode terms as `config` turns them on; the reasoning reward's annotator is the
    programmatic one of `world_seed` (the simulator's: the reasoning reward needs it), its embedder `embed`,
    else `config.embedder` or the packaged all-MiniLM-L6-v2 (loaded only here, when the reasoning reward is on)."""
    if config.reasoning_weight is None:
        return EpisodeReasoningReward(config.structure_weight)
    from ops.judging.critic.reasoning_annotation import ProgrammaticAnnotator

    if embed is None:
        from training.models.sentence_embedder import SentenceEmbedder, packaged_minilm

        embed = packaged_minilm() if config.embedder is None else SentenceEmbedder(config.embedder)
    return EpisodeReasoningReward(config.structure_weight, config.reasoning_weight, ProgrammaticAnnotator(world_seed),
                                  embed)


def run_adagrpo(tasks: Sequence[TaskSpec], *, base_dir: Path, workdir: Path, config: AdaGRPOConfig,
                act: Callable[[Path | None, int], AbstractContextManager[Policy]],
                failures: FailureCurriculum, judge: Judge, variants: TaskVariants,
                group_envs: Callable[[], Callable[[], Environment]], world_seed: int = 0,
                log: Callable[[str], None] = print,
                progress: Callable[[TrainProgress], None] | None = None,
                embed: Embedder | None = None) -> AdaGRPOResult:
    """Train from the checkpoint in `base_dir` on `tasks` (the simulator's train-split template tasks, or a
    device's curriculum tasks) for `config.epochs` epochs, each epoch's groups drawn from the pool keys
    (`variants.key`: a template, or a task) and instantiated afresh (`variants.instance`), run on the
    environments of `group_envs()` (a new factory per epoch) and rewarded by `judge`'s verdicts.
    `act(checkpoint_dir, epoch)` is a context holding the policy of a
    checkpoint directory (None: the one in `base_dir`) sampling at `config.temperature`. `failures` is the FCF
    history (updated in place, also when FCF is off, so an ablation still records what failed).
    `embed` scores the reasoning reward (default: see `reasoning_reward_of`). The final checkpoint and its manifest go to `workdir / "adagrpo"`."""
    if not tasks:
        raise ValueError("run_adagrpo: the task pool is empty (no curriculum task to train on)")
    by_key = {variants.key(t): t for t in tasks}
    pool = sorted(by_key)
    reasoning = reasoning_reward_of(config, world_seed, embed)
    rng = random.Random(config.seed)
    longest = max(t.step_budget for t in tasks)
    torch.manual_seed(config.seed)
    buffer = PositiveReplayBuffer(config.replay_capacity, config.replay_kappa) if config.adapr else None
    curves: dict[str, list[list[float]]] = {
        name: [] for name in CURVES + tuple(n for n in REASONING_CURVES if getattr(config, f"{n}_weight") is not None)}
    result = AdaGRPOResult(None, curves, failures)
    out_dir = workdir / "adagrpo"
    loss: TrajectoryGRPOLoss | None = None
    checkpoint: Path | None = None
    clock = CpuClock()
    with torch_threads(config.torch_threads):
        for epoch in range(1, config.epochs + 1):
            live = failures.pool(pool) if config.fcf else list(pool)
            if not live:
                result.stopped = f"every task left the pool (FCF) before epoch {epoch}"
                log(f"AdaGRPO: {result.stopped}; stopping")
                break
            drawn = epoch_tasks(live, by_key, failures, config, variants, rng)
            t0 = time.perf_counter()
            with act(checkpoint, epoch) as policy:
                if reasoning.on and policy.output_format != STRUCTURED_FORMAT:
                    raise ValueError(f"structure_weight / reasoning_weight score the {STRUCTURED_FORMAT!r} format's "
                                     f"four-part reasoning; the policy writes {policy.output_format!r}")
                groups, summary = run_groups(drawn, config.group_size, policy, judge, group_envs(),
                                             config.max_parallel_episodes)
            result.rollout_seconds += time.perf_counter() - t0
            result.episodes += summary.attempts_run
            result.episode_errors += summary.errors
            scored, all_zero, stats = _score_groups(groups, variants.key, config, reasoning)
            failures.record_epoch(all_zero)
            size = config.trajectories_per_update or config.tasks_per_epoch * config.group_size
            batch, replayed = replay_update_batch(scored, buffer, size, config.replay_gamma, config.replay_from, rng)
            update = {"loss": 0.0, "kl": 0.0}
            if batch:
                t1 = time.perf_counter()
                if loss is None:  # the scheduler's horizon: every update at its largest (M rows x longest budget)
                    updates = config.epochs * config.ppo_epochs * math.ceil(
                        size * longest / config.per_device_train_batch_size)
                    loss = TrajectoryGRPOLoss(base_dir, out_dir, config, updates)
                weights = trajectory_step_weights([len(s.payload.steps) for s in batch])
                rows = [row for s in batch for row in s.payload.steps]
                advantages = [s.advantage * w for s, w in zip(batch, weights) for _ in s.payload.steps]
                update = loss.update(rows, advantages, rng)
                checkpoint = loss.save(workdir / f"epoch{epoch}")
                result.update_seconds += time.perf_counter() - t1
            stats |= {"buffer_size": len(buffer) if buffer is not None else 0,
                      "pool_size": len(failures.pool(pool)) if config.fcf else len(pool),
                      "replayed": replayed, **update}
            for name in curves:
                curves[name].append([epoch, float(stats.get(name, 0.0))])
            log(f"AdaGRPO epoch {epoch}/{config.epochs}: " + ", ".join(f"{k} {stats.get(k, 0.0):.3g}" for k in curves))
            if progress is not None:
                progress(TrainProgress(epoch, config.epochs, update["loss"] if batch else None, stats["reward"],
                                       clock.wall_seconds()))
            spent = clock.cpu_seconds()
            if config.cpu_seconds_budget is not None and spent >= config.cpu_seconds_budget and epoch < config.epochs:
                result.stopped = f"CPU budget: {spent:.0f} of {config.cpu_seconds_budget:g} CPU s used after epoch {epoch}"
                log(f"AdaGRPO: {result.stopped}; stopping")
                break
    result.unscored_steps = dict(reasoning.unscored)
    if loss is None:
        return result
    loss.save(out_dir)
    runtime = clock.wall_seconds()
    manifest = Manifest(method="adagrpo", base_checkpoint=str(base_dir),
                        dataset={"fingerprint": "online", "rows": result.episodes, "path": None, "dropped": {}},
                        config=config.model_dump(mode="json"),
                        metrics={"global_step": loss.steps, "episodes": result.episodes, "epochs": len(curves["reward"]),
                                 "rollout_seconds": result.rollout_seconds, "update_seconds": result.update_seconds,
                                 **parameter_counts(loss.model)},
                        curves=curves)
    result.report = TrainReport(method="adagrpo", checkpoint=out_dir, manifest_path=write_manifest(out_dir, manifest),
                                steps=loss.steps, runtime_s=runtime, metrics=manifest.metrics, curves=curves,
                                samples=result.episodes)
    return result
