"""What a larger embedded base costs the default run: one policy step and one training step per size.

    python benchmarks/base_size_cost.py [--sizes 64x2,128x4] [--repeats 5] [--threads 1]

For each size (text hidden × layers; 4 heads, the bundled vision tower and vocabulary) a model is
built untrained (weights do not change the cost) and timed, interleaved with the others so a busy
machine slows all alike, on the same 16 element-list prompts of target screens:

- **policy step**: one batch of 16 greedy answers of exactly 48 new tokens (the benchmark's budget;
  end-of-text ignored, so every size decodes the same length);
- **training step**: one forward, backward and AdamW step on those 16 prompts with answers (what a
  pretraining, SFT or GRPO update does per batch).

Prints the median seconds and the CPU seconds of each, the parameter count, and the ratio to the
first size (the bundled base).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from ops.actions import Action, ActionType  # noqa: E402
from phonesim import instantiate, solve  # noqa: E402
from phonesim.tasks import all_templates  # noqa: E402
from training.base.grounding_data import GroundingSample  # noqa: E402
from training.base.induction_format import add_index_tokens  # noqa: E402
from training.base.pretrain import PolicyTextEncoder  # noqa: E402
from training.base.sim_grounding import sim_screen  # noqa: E402
from training.models.tiny import build_tiny_model, load_tiny  # noqa: E402


def target_samples(n: int) -> list[GroundingSample]:
    """`n` steps of solved target tasks: their screens and instructions (the answer is a click: the cost
    of an answer is the same whatever it says)."""
    rng, out = random.Random(0), []
    ids = sorted(all_templates())
    while len(out) < n:
        task = instantiate(rng.choice(ids), rng.randrange(5))
        phone = task.make_phone()
        for action in solve(phone, task)[:2]:
            screen = sim_screen(phone.observe())
            clickable = [i for i, e in enumerate(screen.elements) if e.clickable]
            out.append(GroundingSample(None, screen.elements, task.instruction,
                                       Action(ActionType.CLICK, element=clickable[0]), "click", screen=screen.name))
            phone.step(action)
    return out[:n]


def timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="64x2,128x4")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    samples = target_samples(16)
    models = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            hidden, layers = (int(x) for x in size.split("x"))
            model, processor = load_tiny(build_tiny_model(Path(tmp) / size, text_hidden=hidden, layers=layers,
                                                          vision_depth=1))
            add_index_tokens(processor.tokenizer, model)
            models[size] = (model, PolicyTextEncoder(processor))
    times: dict[str, dict[str, list[tuple[float, float]]]] = {s: {"policy": [], "train": []} for s in models}
    for _ in range(args.repeats):
        for size, (model, encoder) in models.items():
            prompts = encoder.batch(samples, with_images=False, answers=False)
            prompts.pop("position_ids")
            model.eval()
            with torch.no_grad():
                times[size]["policy"].append(timed(lambda: model.generate(
                    **prompts, max_new_tokens=48, min_new_tokens=48, do_sample=False,
                    pad_token_id=encoder.tokenizer.pad_token_id)))
            model.train()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

            def step() -> None:
                loss = model(**encoder.batch(samples, with_images=False, answers=True)).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            times[size]["train"].append(timed(step))
    base = next(iter(models))
    for size, (model, _) in models.items():
        row = {"size": size, "parameters": sum(p.numel() for p in model.parameters())}
        for kind in ("policy", "train"):
            wall = statistics.median(t[0] for t in times[size][kind])
            cpu = statistics.median(t[1] for t in times[size][kind])
            base_cpu = statistics.median(t[1] for t in times[base][kind])
            row |= {f"{kind}_step_s": round(wall, 3), f"{kind}_step_cpu_s": round(cpu, 3),
                    f"{kind}_cpu_ratio": round(cpu / base_cpu, 2)}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
