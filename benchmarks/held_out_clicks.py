"""Where a base's clicks on never-pretrained screens go: the right row, another row, or no row at all.

    python benchmarks/held_out_clicks.py CKPT [CKPT ...] [--cache-dir DIR]

The samples are the pretraining report's: `eval_samples` steps of the held-out pretraining apps'
episodes (`held_out_sampler`, drawn at `eval_seed`), answered greedily and decoded freely, as the report
scores them. Each click's echoed row (the answer's first line) is sorted into: the target row; another
row of the screen; or a line that is no row of the screen (a row the base wrote from memory). A base
that copies rows from its prompt makes few of the last kind; rollouts decode with the row-echo constraint,
which forces some row, so those clicks land on whichever row the constraint reaches. Prints one JSON line
per checkpoint: per-skill exact-match rates (the report's `per_skill`), click accuracy and the three shares.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.checkpoints_cli import checkpoint_parser, loaded_checkpoints  # noqa: E402
from ops.actions import ActionType  # noqa: E402
from ops.actions.formats.label_echo import split_echo  # noqa: E402
from training.base.pretrain import BasePretrainConfig, evaluate_policy  # noqa: E402
from training.base.sample_text import sample_rows  # noqa: E402
from training.base.world_recipe import held_out_sampler  # noqa: E402


def echo_kinds(samples: list, answers: list[str]) -> Counter:
    """Counts of `right`, `other_row` and `no_row` over the click samples' echoed rows."""
    kinds: Counter = Counter()
    for sample, answer in zip(samples, answers):
        if sample.target.type != ActionType.CLICK:
            continue
        rows = sample_rows(sample)
        echo = (split_echo(answer)[0] or "").strip()
        kinds["right" if echo == rows[sample.target.element] else "other_row" if echo in rows else "no_row"] += 1
    return kinds


def main() -> None:
    args = checkpoint_parser(__doc__).parse_args()
    config = BasePretrainConfig()
    sample = held_out_sampler(cache=args.cache_dir)
    rng = random.Random(config.eval_seed)
    samples = [sample(rng, False) for _ in range(config.eval_samples)]
    for checkpoint, model, encoder in loaded_checkpoints(args.checkpoints):
        scores = evaluate_policy(model, encoder, samples, with_images=False)
        kinds = echo_kinds(samples, scores["answers"])
        n = sum(kinds.values())
        print(json.dumps({"checkpoint": checkpoint, "clicks": n, "click_accuracy": round(scores["click_accuracy"], 3),
                          "chance": round(scores["click_chance"], 3),
                          **{f"echo_{k}": round(kinds[k] / n, 3) for k in ("right", "other_row", "no_row")},
                          "per_skill": {k: {"n": v.n, "exact": round(v.exact, 3)} for k, v in scores["per_skill"].items()}}),
              flush=True)


if __name__ == "__main__":
    main()
