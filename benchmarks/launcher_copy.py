"""Does a base copy the app a prompt names on a launcher it has never seen?

    python benchmarks/launcher_copy.py CKPT [CKPT ...] [--cache-dir DIR]

The first step of every held-out pretraining episode (`phonesim.pretrain.HELD_OUT_APPS`, seeds 0 of
their templates, never pretrained on) is a click on a launcher of apps the base has not seen. Each is
asked three ways, greedy and decoded freely: as the rollout's first prompt (split by whether the
instruction names the app), and with the critic's hint for the click (row marked, `Hint:` line).
Prints one JSON line per checkpoint: exact-click accuracy per way, and chance (1 / clickable rows).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.checkpoints_cli import checkpoint_parser, loaded_checkpoints  # noqa: E402
from phonesim.pretrain import load_pretrain_apps, pretrain_template_ids  # noqa: E402
from training.base.pretrain import evaluate_policy  # noqa: E402
from training.base.grounding_data import GroundingSample  # noqa: E402
from training.base.world_episodes import _hint  # noqa: E402
from training.base.world_recipe import collect_episodes  # noqa: E402


def launcher_samples(cache: Path | None) -> list:
    episodes = collect_episodes(pretrain_template_ids(held_out=True), 1, 1, 0.5, cache)
    apps = load_pretrain_apps()
    out = []
    for episode in episodes:
        first = episode.steps[0]
        label = apps[episode.template_id.split(".")[0]].label
        named = re.search(rf"(?<!\w){re.escape(label)}(?!\w)", episode.instruction) is not None
        # the rollout's first prompt: no Done lines yet
        plain = GroundingSample(None, first.screen.elements, episode.instruction, first.action,
                                "named" if named else "unnamed", screen=first.screen.name)
        out += [plain, replace(plain, kind="hinted", hints=(_hint(first.screen, first.action),))]
    return out


def main() -> None:
    args = checkpoint_parser(__doc__).parse_args()
    samples = launcher_samples(args.cache_dir)
    for checkpoint, model, encoder in loaded_checkpoints(args.checkpoints):
        scores = evaluate_policy(model, encoder, samples, with_images=False)
        print(json.dumps({"checkpoint": checkpoint, "launchers": len(samples) // 2,
                          "chance": round(scores["click_chance"], 3),
                          **{k: {"n": v.n, "exact": round(v.exact, 3)} for k, v in scores["per_skill"].items()}}),
              flush=True)


if __name__ == "__main__":
    main()
