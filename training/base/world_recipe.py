"""The "world" pretraining recipe: the embedded base learns on the pretraining world only.

Samples come from the pretraining world's trained apps (`phonesim.pretrain.trained_apps`; the
held-out apps and every target app stay out):

- **episodes** (`training.base.world_episodes`): every step of solver-played, judge-verified task
  instances with the "Done:" lines before it, the stop where the goal holds, detours and their
  recovery, some with the critic's hints;
- **grounding** on the world's screens reached by random walks (`training.base.sim_grounding`:
  tap / type / back / scroll / open app), part of it turned into the generic episode-context skills
  (`training.base.episode_skills`: history, sequences, hints to follow or to ignore);
- optionally (`copy_share`) **verbatim copies** (`training.base.copy_samples`): clicks on launchers of
  invented app labels drawn afresh per sample, and episode clicks on rows the instruction or a hint
  line names, so that copying the named row is the only way to fit them.

The generic skills draw names and values from open-ended pools, so a sample could name a target
entity by chance (a person "Omar Garcia", a date of a target task): any sample whose text names one
(`phonesim.disjoint.target_entities`) is drawn again, and counted.

The episodes' solutions come from the repository's store (`training.base.world_solutions`) where it holds them;
building the episodes from them still takes minutes, so `world_sampler(cache=...)` keeps them in a file keyed by the
recipe's parameters, the simulator's source digest and the store, and a resumed run does not build them again.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from phonesim.pretrain import PHONES, load_pretrain_apps, phone_catalog, pretrain_template_ids, trained_apps
from phonesim.disjoint import TargetMatcher, target_entities
from phonesim.source import source_digest
from training.base.copy_samples import copy_sampler, forbidden_labels
from training.base.episode_skills import with_episode_context
from training.base.grounding_data import GroundingSample, SampleFn
from training.base import world_episodes, world_solutions
from training.base.sample_text import answer_text, prompt_text
from training.base.sim_grounding import sim_sampler
from training.base.world_episodes import WorldEpisode, episode_along, world_step_sample

LOG = logging.getLogger(__name__)
MAX_REDRAWS = 50  # draws of one sample before a recipe that keeps naming target entities is refused
# instances per template the recipe trains on (hand-written apps' templates, generated apps') and measures on
HANDMADE_SEEDS, GENERATED_SEEDS, HELD_OUT_SEEDS = 8, 2, 1


def collect_episodes(template_ids: Sequence[str], seeds: int, seed: int, detour_rate: float,
                     cache: Path | None = None, workers: int = 1, first_seed: int = 0) -> list[WorldEpisode]:
    """Solver episodes of `seeds` instances (seeds first_seed.. first_seed + n - 1) of each template, from `cache`
    when it holds them; solutions the store lacks are searched in `workers` processes (the same episodes for any
    number)."""
    code = hashlib.sha256(Path(world_episodes.__file__).read_bytes()).hexdigest()  # how episodes are made
    stored = hashlib.sha256(world_solutions.STORE.read_bytes()).hexdigest() if world_solutions.STORE.is_file() else ""
    first = (first_seed,) if first_seed else ()  # the keys of caches written before seeds could start elsewhere
    key = hashlib.sha256(repr((sorted(template_ids), seeds, seed, detour_rate, source_digest(), code, stored)
                              + first).encode()).hexdigest()
    path = cache / f"world_episodes_{key[:16]}.pkl" if cache is not None else None
    if path is not None and path.is_file():
        return pickle.loads(path.read_bytes())
    jobs = [(tid, s) for tid in sorted(template_ids) for s in range(first_seed, first_seed + seeds)]
    solved = world_solutions.solutions(jobs, workers)
    pretraining = set(pretrain_template_ids())
    kept = sum(tid in pretraining for tid, _ in jobs)  # the store holds pretraining instances only
    if solved.from_store < kept:
        LOG.warning("searched %d of %d pretraining instances the solutions store lacks or no longer solves "
                    "(`mobileforge base solve-world` rewrites it)", kept - solved.from_store, kept)
    rng = random.Random(seed)  # drawn in job order, after the solving: the same stream wherever solutions came from
    episodes = [e for (tid, s), found in zip(jobs, solved.paths)
                if (e := episode_along(tid, s, found, rng, detour_rate)) is not None]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(episodes))
        tmp.replace(path)
    return episodes


def episode_sampler(episodes: Sequence[WorldEpisode], hint_rate: float) -> SampleFn:
    """Uniform over episodes, then over their steps (`world_step_sample`)."""
    if not episodes:
        raise ValueError("no pretraining episodes to sample from")

    def sample(rng: random.Random, render: bool) -> GroundingSample:
        return world_step_sample(rng, rng.choice(episodes), hint_rate)

    return sample


class TargetGuard:
    """Redraws samples whose prompt or answer names a target entity; counts the redraws."""

    def __init__(self, sample_fn: SampleFn, matcher: TargetMatcher):
        self.sample_fn, self.matcher = sample_fn, matcher
        self.redrawn: Counter[str] = Counter()  # target entity -> samples drawn again because of it

    def __call__(self, rng: random.Random, render: bool) -> GroundingSample:
        for _ in range(MAX_REDRAWS):
            sample = self.sample_fn(rng, render)
            hit = self.matcher.find(prompt_text(sample) + "\n" + answer_text(sample))
            if hit is None:
                return sample
            self.redrawn[hit] += 1
        raise RuntimeError(f"{MAX_REDRAWS} samples in a row named target entities, last {hit!r}: the recipe's "
                           "pools overlap the target world")


def _trained_templates() -> tuple[list[str], list[str]]:
    """The trained pretraining templates: (those of hand-written apps, those of generated apps)."""
    trained = pretrain_template_ids(held_out=False)
    return ([t for t in trained if t.split(".")[0] in PHONES["handmade"]],
            [t for t in trained if t.split(".")[0] not in PHONES["handmade"]])


def recipe_jobs() -> list[world_solutions.Job]:
    """Every (template, seed) instance the recipe solves at its defaults: the trained templates' and the held-out
    apps' (the report's samples); what `mobileforge base solve-world` keeps in the store."""
    handmade, generated = _trained_templates()
    return [(tid, s) for templates, seeds in ((handmade, HANDMADE_SEEDS), (generated, GENERATED_SEEDS),
                                              (pretrain_template_ids(held_out=True), HELD_OUT_SEEDS))
            for tid in templates for s in range(seeds)]


def world_sampler(seed: int = 0, handmade_seeds: int = HANDMADE_SEEDS, generated_seeds: int = GENERATED_SEEDS,
                  episode_share: float = 0.6,
                  detour_rate: float = 0.5, hint_rate: float = 0.3, context_share: float = 0.5,
                  n_screens: int = 1500, copy_share: float = 0.0, cache: Path | None = None,
                  solve_workers: int = 1) -> SampleFn:
    """The world recipe's sample function (module docstring): `copy_share` of the samples are verbatim
    copies; of the others, `episode_share` are episode steps (`handmade_seeds` instances of each trained
    hand-written app's templates, `generated_seeds` of each generated app's), the rest grounding on the
    trained apps' screens with `context_share` of its clicks turned into episode-context skills.
    `copy_share=0` draws exactly the stream of the recipe before copies existed. `solve_workers`: processes
    searching the solutions the store lacks (`collect_episodes`)."""
    for name, share in (("episode_share", episode_share), ("copy_share", copy_share)):
        if not 0 <= share <= 1:
            raise ValueError(f"{name} must be within [0, 1], got {share}")
    handmade, generated = _trained_templates()
    episodes = (collect_episodes(handmade, handmade_seeds, seed, detour_rate, cache, solve_workers)
                + collect_episodes(generated, generated_seeds, seed, detour_rate, cache, solve_workers))
    asked = len(handmade) * handmade_seeds + len(generated) * generated_seeds  # the solver misses a few
    steps = episode_sampler(episodes, hint_rate)
    grounding = with_episode_context(sim_sampler(n_screens, seed, synthetic_share=0.0, catalog=phone_catalog,
                                                 apps=trained_apps()), context_share)

    labels = {name: app.label for name, app in load_pretrain_apps().items()}
    copies = copy_sampler(episodes, labels, forbidden_labels()) if copy_share > 0 else None

    def mixed(rng: random.Random, render: bool) -> GroundingSample:
        if copies is not None and rng.random() < copy_share:  # no draw at 0: the stream stays as it was
            return copies(rng, render)
        return steps(rng, render) if rng.random() < episode_share else grounding(rng, False)

    guard = TargetGuard(mixed, TargetMatcher(target_entities()))
    guard.__qualname__ = (f"world_sampler(seed={seed}, handmade_seeds={handmade_seeds}, "
                          f"generated_seeds={generated_seeds}, episode_share={episode_share}, "
                          f"detour_rate={detour_rate}, hint_rate={hint_rate}, context_share={context_share}, "
                          f"n_screens={n_screens}, copy_share={copy_share}, episodes={len(episodes)} of {asked})")
    return guard


def held_out_sampler(seeds_per_template: int = HELD_OUT_SEEDS, seed: int = 1, hint_rate: float = 0.3,
                     cache: Path | None = None, solve_workers: int = 1) -> SampleFn:
    """Episode steps of the held-out pretraining apps only (never trained on): the report's samples."""
    episodes = collect_episodes(pretrain_template_ids(held_out=True), seeds_per_template, seed, 0.5, cache,
                                solve_workers)
    sample = episode_sampler(episodes, hint_rate)
    sample.__qualname__ = f"held_out_sampler(seeds_per_template={seeds_per_template}, seed={seed})"
    return sample
