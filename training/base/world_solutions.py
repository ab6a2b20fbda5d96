"""The solver's solutions of the pretraining world's task instances, kept in the repository.

The world recipe trains on solver-played episodes (`training.base.world_episodes`). Finding them is the A*
search of every instance it trains on and measures (6,102 at its defaults): about 45 CPU minutes, with the same
answer for everyone on the same world. So `world_solutions.json.gz` keeps them (written by
`mobileforge base solve-world`), and `solutions` replays a stored path instead of searching. A stored path is
used only if its replay on today's world ends in a clean success within the step budget, as a found one must;
otherwise, and for instances the store lacks, the solver searches. A stored "none found" (the search gave up at
its node limit) is trusted only while the simulator's source digest is the one it was found on.

A world edited after the store was written can leave a stored path valid but no longer the shortest; the tests
re-solve a sample (`tests/training/base/test_world_solutions.py`), and `solve-world` rewrites the store.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path

from phonesim.actions import Action
from phonesim.metrics import run_actions
from phonesim.solver import shortest_path
from phonesim.source import source_digest
from phonesim.tasks import instantiate

STORE = Path(__file__).resolve().with_name("world_solutions.json.gz")
FORMAT = 1

Job = tuple[str, int]  # (template id, instance seed)
Solution = list[Action] | None  # the actions, or None: the solver found none


@dataclass(frozen=True)
class SolutionStore:
    """Solutions by (template id, seed), found on the simulator whose source digest is `digest`."""

    digest: str
    paths: dict[Job, tuple[Action, ...] | None]


@lru_cache(maxsize=4)
def load_store(path: Path = STORE) -> SolutionStore:
    """The store at `path` (an empty one when there is no file); a malformed file is an error naming it."""
    if not path.is_file():
        return SolutionStore("", {})
    try:
        data = json.loads(gzip.decompress(path.read_bytes()))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
        paths = {(tid, int(seed)): None if actions is None else tuple(Action.from_dict(a) for a in actions)
                 for tid, seed, actions in data["solutions"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a solutions store ({exc}); `mobileforge base solve-world` rewrites it") from exc
    return SolutionStore(data["digest"], paths)


def searched(template_id: str, seed: int) -> Solution:
    """The solver's fewest actions to a clean success of one pretraining instance (None if it finds none)."""
    task = instantiate(template_id, seed)
    return shortest_path(task.make_phone(), task)


def solution(template_id: str, seed: int) -> Solution:
    """One instance's solution: the store's where usable (`stored`), else searched."""
    usable, path = stored((template_id, seed), load_store())
    return path if usable else searched(template_id, seed)


def replays_cleanly(template_id: str, seed: int, path: Sequence[Action]) -> bool:
    """Whether `path` is a solution of the instance today: within its step budget, every step valid, a clean
    success at the end."""
    task = instantiate(template_id, seed)
    if not 0 < len(path) <= task.step_budget:
        return False
    done = run_actions(task, list(path))
    return done.success and not done.side_effects and done.invalid_steps == 0


def stored(job: Job, store: SolutionStore, today: str | None = None) -> tuple[bool, Solution]:
    """(usable, solution) of `job` in `store`: usable when a stored path replays cleanly, or a stored "none
    found" was found on today's simulator (`today`: its source digest, if the caller has it)."""
    if job not in store.paths:
        return False, None
    path = store.paths[job]
    if path is None:
        return store.digest == (today or source_digest()), None
    return (True, list(path)) if replays_cleanly(*job, path) else (False, None)


@dataclass(frozen=True)
class Solved:
    """Solutions of jobs in order, and how many came from the store rather than a search."""

    paths: list[Solution]
    from_store: int


def solutions(jobs: Sequence[Job], workers: int = 1, store: SolutionStore | None = None) -> Solved:
    """Every job's solution: the store's where usable (`stored`), the rest searched in `workers` processes."""
    store = load_store() if store is None else store
    today = source_digest()  # a hash of the simulator's every file: once, not per stored "none found"
    known = [stored(job, store, today) for job in jobs]
    missing = [job for job, (usable, _) in zip(jobs, known) if not usable]
    found = iter(search_all(missing, workers))
    return Solved([path if usable else next(found) for usable, path in known], len(jobs) - len(missing))


def search_all(jobs: Sequence[Job], workers: int = 1) -> list[Solution]:
    """`searched` for every job, in order; a template's jobs go to one process (its searches share the
    solver's memory) in spawned workers (the caller may have started torch's threads, which a fork copies
    mid-state)."""
    if workers == 1 or len({tid for tid, _ in jobs}) <= 1:
        return [searched(*job) for job in jobs]
    chunks: dict[str, list[Job]] = {}
    for job in jobs:
        chunks.setdefault(job[0], []).append(job)
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        solved = dict(zip(chunks, pool.map(_search_template, chunks.values())))
    position = {tid: iter(paths) for tid, paths in solved.items()}
    return [next(position[tid]) for tid, _ in jobs]


def _search_template(jobs: list[Job]) -> list[Solution]:
    return [searched(*job) for job in jobs]


def write_store(jobs: Sequence[Job], workers: int = 1, path: Path = STORE) -> SolutionStore:
    """Search every job afresh and write the store (sorted, gzip without a timestamp: the same bytes for the
    same world)."""
    ordered = sorted(set(jobs))
    found = search_all(ordered, workers)
    digest = source_digest()
    rows = [[tid, seed, None if p is None else [a.to_dict() for a in p]] for (tid, seed), p in zip(ordered, found)]
    text = json.dumps({"format": FORMAT, "digest": digest, "solutions": rows}, ensure_ascii=False,
                      sort_keys=True, separators=(",", ":"))
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(gzip.compress(text.encode(), mtime=0))
    tmp.replace(path)
    load_store.cache_clear()
    return SolutionStore(digest, {job: None if p is None else tuple(p) for job, p in zip(ordered, found)})
