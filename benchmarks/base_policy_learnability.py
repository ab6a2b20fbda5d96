"""Does the embedded base policy pick the right UI element? Prints held-out accuracy vs chance.

Runs `training.base.pretrain.pretrain_base_policy` on the synthetic grounding generator with
the default (stored-asset) recipe, then prints: click accuracy vs the random-element baseline,
format validity, per-skill exact match, wall time, greedy inference speed, and (optional)
the steps/s of TRL's SFTTrainer on the same data for comparison with the plain loop.

    python benchmarks/base_policy_learnability.py [--seconds 330] [--out DIR] [--compare-trl]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import torch

from training.base.pretrain import BasePretrainConfig, PolicyTextEncoder, pretrain_base_policy
from training.base.grounding_data import synthetic_sample
from ops.actions.formats import label_echo
from ops.agent.policy_prompt import build_policy_prompt
from training.models.tiny import load_tiny


def trl_sft_steps_per_second(checkpoint: Path, batch_size: int, steps: int) -> float:
    """Steps/s of TRL's SFTTrainer (conversational prompt/completion + screenshot) on this model."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    model, processor = load_tiny(checkpoint)
    rng = random.Random(7)
    samples = [synthetic_sample(rng, True) for _ in range(batch_size * steps)]
    data = Dataset.from_dict({
        "prompt": [build_policy_prompt("elements", s.instruction, [], [], [e.label for e in s.elements])
                   for s in samples],
        "completion": [[{"role": "assistant", "content": [{"type": "text", "text": label_echo.render_target(s.target, [e.label for e in s.elements])}]}]
                       for s in samples],
        "images": [[s.image] for s in samples],
    })
    with tempfile.TemporaryDirectory() as tmp:
        args = SFTConfig(output_dir=tmp, per_device_train_batch_size=batch_size, max_steps=steps, report_to=[],
                         save_strategy="no", use_cpu=True, max_length=None, logging_steps=steps)
        trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=processor)
        start = time.time()
        trainer.train()
        return steps / (time.time() - start)


def greedy_latency(checkpoint: Path, batch_size: int = 16) -> float:
    """Seconds for one batch of greedy answers (screenshot prompts), as in rollouts."""
    model, processor = load_tiny(checkpoint)
    encoder = PolicyTextEncoder(processor)
    rng = random.Random(11)
    samples = [synthetic_sample(rng, True) for _ in range(batch_size)]
    inputs = encoder.batch(samples, with_images=True, answers=False)
    start = time.time()
    with torch.no_grad():
        model.generate(**inputs, max_new_tokens=32, do_sample=False)
    return time.time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=BasePretrainConfig().max_seconds)
    parser.add_argument("--out", type=Path, default=None, help="checkpoint dir (default: a temp dir)")
    parser.add_argument("--threads", type=int, default=BasePretrainConfig().threads)
    parser.add_argument("--compare-trl", action="store_true", help="also time TRL SFTTrainer steps")
    args = parser.parse_args()

    out = args.out or Path(tempfile.mkdtemp(prefix="base_policy_"))
    config = BasePretrainConfig(max_seconds=args.seconds, threads=args.threads)
    report = pretrain_base_policy(out, config, synthetic_sample)
    print(f"checkpoint            {report.checkpoint}")
    print(f"train / wall seconds  {report.train_seconds:.0f} / {report.wall_seconds:.0f}")
    print(f"steps (image steps)   {report.steps} ({report.image_steps}), samples {report.samples_seen}, "
          f"{report.steps / report.train_seconds:.1f} steps/s")
    print(f"loss first -> final   {report.first_loss:.3f} -> {report.final_loss:.3f}")
    print(f"click accuracy        {report.click_accuracy:.3f} vs chance {report.click_chance:.3f} "
          f"(ratio {report.click_accuracy / report.click_chance:.2f}, n={report.eval_clicks})")
    print(f"format valid          {report.format_valid_rate:.3f}")
    for kind, score in report.per_skill.items():
        print(f"  {kind:<10} n={score.n:<4} valid={score.format_valid:.2f} type={score.type_match:.2f} "
              f"exact={score.exact:.2f}")
    print(f"data seen             {report.data_seen}")
    print(f"greedy batch of 16    {greedy_latency(out):.2f} s")
    if args.compare_trl:
        loop_rate = report.steps / report.train_seconds
        trl_rate = trl_sft_steps_per_second(out, config.batch_size, steps=10)
        print(f"TRL SFTTrainer        {trl_rate:.2f} steps/s (plain loop {loop_rate:.1f}, "
              f"ratio {loop_rate / trl_rate:.1f}x)")


if __name__ == "__main__":
    main()
