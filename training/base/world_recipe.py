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

The episodes take minutes to solve; `world_sampler(cache=...)` keeps them in a file keyed by the
recipe's parameters and the simulator's source digest, so a resumed run does not solve them again.
"""

from __future__ import annotations

import hashlib
import pickle
import random
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from phonesim.pretrain import PHONES, load_pretrain_apps, phone_catalog, pretrain_template_ids, trained_apps
from phonesim.disjoint import TargetMatcher, target_entities
from phonesim.source import source_digest
from training.base.copy_samples import copy_sampler, forbidden_labels
from training.base.episode_skills import with_episode_context
from training.base.grounding_data import GroundingSample, SampleFn
from training.base import world_episodes
from training.base.sample_text import answer_text, prompt_text
from training.base.sim_grounding import sim_sampler
from training.base.world_episodes import WorldEpisode, episode_along, solution, world_step_sample

MAX_REDRAWS = 50  # draws of one sample before a recipe that keeps naming target entities is refused


def collect_episodes(template_ids: Sequence[str], seeds: int, seed: int, detour_rate: float,
                     cache: Path | None = None, workers: int = 1) -> list[WorldEpisode]:
    """Solver episodes of `seeds` instances (seeds 0..n-1) of each template, from `cache` when it holds them;
    the solver runs in `workers` processes (the same episodes for any number)."""
    code = hashlib.sha256(Path(world_episodes.__file__).read_bytes()).hexdigest()  # how episodes are made
    key = hashlib.sha256(repr((sorted(template_ids), seeds, seed, detour_rate, source_digest(), code)).encode()
                         ).hexdigest()
    path = cache / f"world_episodes_{key[:16]}.pkl" if cache is not None else None
    if path is not None and path.is_file():
        return pickle.loads(path.read_bytes())
    jobs = [(tid, s) for tid in sorted(template_ids) for s in range(seeds)]
    rng = random.Random(seed)  # drawn in job order, after the solving: the same stream for any `workers`
    episodes = [e for (tid, s), path in zip(jobs, _solutions(jobs, seeds, workers))
                if (e := episode_along(tid, s, path, rng, detour_rate)) is not None]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(episodes))
        tmp.replace(path)
    return episodes


def _solutions(jobs: list[tuple[str, int]], per_template: int, workers: int) -> list:
    """`solution` of every (template, seed) job, in order; a template's jobs in one process (its searches share
    the solver's memory, as in one process)."""
    if workers == 1 or len(jobs) <= per_template:
        return [solution(tid, s) for tid, s in jobs]
    # spawned: the caller may have started torch's threads, which a fork would copy mid-state
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(solution, *zip(*jobs), chunksize=per_template))


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


def world_sampler(seed: int = 0, handmade_seeds: int = 8, generated_seeds: int = 2, episode_share: float = 0.6,
                  detour_rate: float = 0.5, hint_rate: float = 0.3, context_share: float = 0.5,
                  n_screens: int = 1500, copy_share: float = 0.0, cache: Path | None = None,
                  solve_workers: int = 1) -> SampleFn:
    """The world recipe's sample function (module docstring): `copy_share` of the samples are verbatim
    copies; of the others, `episode_share` are episode steps (`handmade_seeds` instances of each trained
    hand-written app's templates, `generated_seeds` of each generated app's), the rest grounding on the
    trained apps' screens with `context_share` of its clicks turned into episode-context skills.
    `copy_share=0` draws exactly the stream of the recipe before copies existed. `solve_workers`: processes
    solving the episodes (`collect_episodes`)."""
    for name, share in (("episode_share", episode_share), ("copy_share", copy_share)):
        if not 0 <= share <= 1:
            raise ValueError(f"{name} must be within [0, 1], got {share}")
    trained = pretrain_template_ids(held_out=False)
    handmade = [t for t in trained if t.split(".")[0] in PHONES["handmade"]]
    generated = [t for t in trained if t.split(".")[0] not in PHONES["handmade"]]
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


def held_out_sampler(seeds_per_template: int = 1, seed: int = 1, hint_rate: float = 0.3,
                     cache: Path | None = None, solve_workers: int = 1) -> SampleFn:
    """Episode steps of the held-out pretraining apps only (never trained on): the report's samples."""
    episodes = collect_episodes(pretrain_template_ids(held_out=True), seeds_per_template, seed, 0.5, cache,
                                solve_workers)
    sample = episode_sampler(episodes, hint_rate)
    sample.__qualname__ = f"held_out_sampler(seeds_per_template={seeds_per_template}, seed={seed})"
    return sample
