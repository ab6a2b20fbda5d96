"""Fork-point detection throughput (pairs/s) and accuracy on synthetic 1080×2400 trajectories.

A "pair" is one successful attempt compared with one failed attempt of the same task (the
GRSD teacher vs a student, UI-Voyager §3.3.1). Each task has one success and several failures
that share a prefix with it and then diverge: a wrong turn, a detour that comes back to the
same screen, or a look-alike screen (same pixels but another item / field text / switch).
Screens carry a status-bar clock that differs between attempts, so no two stored PNGs of
different attempts are byte-identical.

Printed, all measured in this run:
  - ours from stored PNG bytes (decode once per attempt, thumbnails cached per trajectory),
    ours from preloaded full-resolution arrays, ours on already-prepared trajectories;
  - "reference-like": the public release's pipeline (full decode, status-bar crop, 480×270
    area thumbnail, 16×16 mean-hash pre-filter, scikit-image SSIM, per-image caches) from PNG
    bytes, from preloaded arrays, and with its feature caches already filled;
  - "naive": full-resolution decode and scikit-image SSIM at full resolution on every pair the
    algorithm asks about, no pre-filter (on a few pairs only; it is slow);
  - agreement of each method's fork points with the ground truth from the state labels.

Run: python benchmarks/fork_bench.py [--tasks 6 --failures 4 --naive-pairs 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import random
import time
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity

from training.methods.grsd.forks import (
    ForkConfig,
    Step,
    Trajectory,
    detect_fork_points,
    match_fork_points,
    prepare_trajectory,
)
from training.methods.grsd.forks.synthetic import Screen, png_bytes, render_screen, screen_tree

WIDTH, HEIGHT = 1080, 2400
WORDS = ("Inbox", "Alarm", "Photos", "Wi-Fi", "Battery", "Contacts", "Notes", "Maps", "Music", "Files", "Weather",
         "Calendar", "Budget", "Recipes", "Tasks", "Timer", "Backup", "Privacy", "Display", "Sound", "Storage")


# ---------------------------------------------------------------- synthetic tasks

THEMES = ((246, 246, 246), (255, 255, 255), (232, 236, 240), (28, 28, 30), (18, 22, 36))


def random_screen(rng: random.Random, index: int, theme: tuple[int, int, int]) -> Screen:
    rows = tuple(f"{rng.choice(WORDS)} {rng.randint(1, 99)}" for _ in range(rng.randint(8, 13)))
    return Screen(
        background=theme,
        pictures=rng.random() < 0.5,
        title=f"{rng.choice(WORDS)} {index}",
        rows=rows,
        switches=tuple(rng.choice([None, None, True, False]) for _ in rows),
        field=("app:id/query", rng.choice(["", "search"])) if rng.random() < 0.3 else None,
        button=rng.choice([None, "Save", "Next", "Done"]),
        accent=(rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)),
        row_height=rng.randint(110, 180),
    )


def look_alike(screen: Screen) -> Screen:
    """Same layout and nearly the same pixels, another state: the neighbouring item's page."""
    return dataclasses.replace(screen, title=screen.title + "1")


def click(screen: Screen, row: int) -> dict:
    """A click on the centre of row `row` of `screen` (0–1000 grid)."""
    rows = [e for e in screen_tree(screen, WIDTH, HEIGHT) if e["resource_id"] == "app:id/row"]
    left, top, right, bottom = rows[min(row, len(rows) - 1)]["bounds"]
    return {"type": "click", "args": {"point": [round((left + right) / 2 / WIDTH * 1000),
                                                round((top + bottom) / 2 / HEIGHT * 1000)]}}


DONE = {"type": "terminate", "args": {"status": "success"}}
GIVE_UP = {"type": "terminate", "args": {"status": "failure"}}
BACK = {"type": "system_button", "args": {"button": "back"}}

Plan = list[tuple[Screen, dict]]  # (state shown, action taken)


def make_task(rng: random.Random, task: int, n_failures: int) -> list[tuple[str, bool, Plan]]:
    apps = [rng.choice(THEMES) for _ in range(3)]  # a task visits screens of a few apps
    pool = [random_screen(rng, 100 * task + k, rng.choice(apps)) for k in range(30)]
    length = rng.randint(10, 16)
    path, off_path = pool[:length], pool[length:]
    rows = [rng.randint(0, 7) for _ in path]
    success: Plan = [(s, click(s, r)) for s, r in zip(path[:-1], rows)] + [(path[-1], DONE)]
    attempts = [("s", True, success)]
    for f in range(n_failures):
        kind = ("wrong_turn", "detour", "look_alike")[f % 3]
        p = rng.randint(0, length - 3)
        plan: Plan = success[:p]
        wrong = (rows[p] + 1) % 8
        if kind == "wrong_turn":
            plan.append((path[p], click(path[p], wrong)))
            plan += [(s, click(s, rng.randint(0, 7))) for s in rng.sample(off_path, rng.randint(3, 8))]
        elif kind == "detour":
            q = rng.randint(p + 1, length - 2)
            plan.append((path[p], click(path[p], wrong)))
            plan += [(off_path[0], click(off_path[0], 3)), (off_path[1], BACK)]
            plan += success[p:q]
            plan.append((path[q], click(path[q], (rows[q] + 2) % 8)))
            plan += [(s, click(s, rng.randint(0, 7))) for s in rng.sample(off_path[2:], rng.randint(2, 5))]
        else:
            plan.append((path[p], click(path[p], wrong)))  # opens the neighbour: looks like path[p + 1]
            plan += [(look_alike(s), click(s, r)) for s, r in zip(path[p + 1 : -1], rows[p + 1 :])]
        plan.append((plan[-1][0], GIVE_UP) if kind == "look_alike" else (rng.choice(off_path), GIVE_UP))
        attempts.append((f"f{f}", False, plan))
    return attempts


@lru_cache(maxsize=None)
def rendered(screen: Screen) -> np.ndarray:
    return render_screen(screen, WIDTH, HEIGHT)


def with_clock(screen: Screen, minute: int) -> Screen:
    return dataclasses.replace(screen, clock=f"{10 + minute // 60}:{minute % 60:02d}")


def build_dataset(n_tasks: int, n_failures: int, seed: int):
    """Per task: attempts as PNG-byte trajectories, as array trajectories, and state labels."""
    rng = random.Random(seed)
    tasks = []
    for task in range(n_tasks):
        png_attempts, array_attempts, labels = [], [], {}
        for a, (attempt_id, success, plan) in enumerate(make_task(rng, task, n_failures)):
            png_steps, array_steps = [], []
            for t, (screen, action) in enumerate(plan):
                shown = with_clock(screen, 7 * a + t)
                array = rendered(shown)
                tree = screen_tree(shown, WIDTH, HEIGHT)
                png_steps.append(Step(png_bytes(array), action, tree))
                array_steps.append(Step(array, action, tree))
            png_attempts.append(Trajectory(attempt_id, success, png_steps))
            array_attempts.append(Trajectory(attempt_id, success, array_steps))
            labels[attempt_id] = [(screen, action) for screen, action in plan]
        tasks.append((png_attempts, array_attempts, labels))
    return tasks


# ---------------------------------------------------------------- oracles for Algorithm 1

class LabelOracle:
    """Ground truth: two observations are the same state iff they show the same Screen."""

    def __init__(self, success: Plan, failed: Plan):
        self.s, self.f = success, failed
        self.n_success, self.n_failed = len(success), len(failed)

    def same(self, i, j):
        return self.s[i][0] == self.f[j][0]

    def similarity(self, i, j):
        return float(self.same(i, j))

    def actions_equivalent(self, i, j):
        return self.s[i][1] == self.f[j][1]

    def can_teach(self, i):
        return True


class SkimageOracle:
    """SAME by scikit-image SSIM on lazily computed, memoized features (baselines)."""

    def __init__(self, success: Trajectory, failed: Trajectory, feature: Callable, theta: float, use_hash: bool):
        self.s, self.f = success.steps, failed.steps
        self.n_success, self.n_failed = len(self.s), len(self.f)
        self.feature, self.theta, self.use_hash = feature, theta, use_hash
        self.memo: dict[tuple[int, int], float] = {}

    def similarity(self, i, j):
        if (i, j) not in self.memo:
            a, b = self.feature(self.s[i].screenshot), self.feature(self.f[j].screenshot)
            if self.use_hash and np.mean(a[1] == b[1]) < 0.80:
                self.memo[(i, j)] = -1.0
            elif np.array_equal(a[0], b[0]):
                self.memo[(i, j)] = 1.0
            else:
                self.memo[(i, j)] = structural_similarity(a[0], b[0], data_range=255.0)
        return self.memo[(i, j)]

    def same(self, i, j):
        return self.similarity(i, j) >= self.theta

    def actions_equivalent(self, i, j):
        return self.s[i].action == self.f[j].action  # the release compares tool calls verbatim

    def can_teach(self, i):
        return self.s[i].action is not None


def _decode_crop_gray(screenshot: bytes | np.ndarray) -> Image.Image:
    if isinstance(screenshot, np.ndarray):
        image = Image.fromarray(screenshot).convert("L")
    else:
        image = Image.open(io.BytesIO(screenshot)).convert("L")
    top = int(image.height * 25 / 878)
    return image.crop((0, top, image.width, image.height))


def reference_feature_factory() -> Callable:
    """The release's features: 480×270 area thumbnail and a 16×16 mean hash, cached per image."""
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def feature(screenshot: bytes | np.ndarray):
        key = id(screenshot)
        if key not in cache:
            image = _decode_crop_gray(screenshot)
            thumb = np.asarray(image.resize((480, 270), Image.Resampling.BOX), dtype=np.float64)
            small = np.asarray(image.resize((16, 16), Image.Resampling.BOX), dtype=np.float64)
            cache[key] = (thumb, (small >= small.mean()).ravel())
        return cache[key]

    return feature


def naive_feature_factory() -> Callable:
    """Full-resolution grayscale (status bar cropped), decoded once per image within a pair."""
    cache: dict[int, tuple[np.ndarray, None]] = {}

    def feature(png: bytes):
        key = id(png)
        if key not in cache:
            cache[key] = (np.asarray(_decode_crop_gray(png), dtype=np.float64), None)
        return cache[key]

    return feature


# ---------------------------------------------------------------- measurement

def fork_set(matches) -> set[tuple[int, int]]:
    return {(m.failed_step, m.success_step) for m in matches}


def score(found: dict, truth: dict) -> str:
    tp = sum(len(found[k] & truth[k]) for k in found)
    n_found = sum(len(found[k]) for k in found)
    n_truth = sum(len(truth[k]) for k in found)
    exact = sum(found[k] == truth[k] for k in found)
    return f"precision {tp / max(n_found, 1):.2f}  recall {tp / max(n_truth, 1):.2f}  exact pairs {exact}/{len(found)}"


def timed(fn: Callable[[], dict]) -> tuple[float, float, dict]:
    """(CPU seconds of this process, wall seconds, result). Rates use CPU time: the machine is
    shared, and wall time would mostly measure the other jobs."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, out


DECODED: dict[str, int] = {}  # method -> screenshots decoded by its last run


def run_ours(tasks, which: int, config: ForkConfig, name: str) -> dict:
    """Prepare each attempt once (teacher shared by the group), then compare: UI-Voyager shortest-base mode."""
    found, decoded = {}, 0
    for t, task in enumerate(tasks):
        attempts = task[which]
        teacher = prepare_trajectory(attempts[0], config)
        for failed in attempts[1:]:
            student = prepare_trajectory(failed, config)
            result = detect_fork_points(teacher, student, config)
            found[(t, failed.attempt_id)] = {(f.failed_step, f.success_step) for f in result.forks}
            decoded += student.decoded
        decoded += teacher.decoded
    DECODED[name] = decoded
    return found


def run_prepared(prepared, config: ForkConfig) -> dict:
    found = {}
    for t, (teacher, failures) in enumerate(prepared):
        for failed in failures:
            result = detect_fork_points(teacher, failed, config)
            found[(t, failed.attempt_id)] = {(f.failed_step, f.success_step) for f in result.forks}
    return found


def run_baseline(tasks, which: int, features: list[Callable], use_hash: bool, limit: int | None = None) -> dict:
    """Baseline over each task group, with one per-image feature cache per task (as the release)."""
    found = {}
    for t, task in enumerate(tasks):
        attempts = task[which]
        for failed in attempts[1:]:
            if limit is not None and len(found) >= limit:
                return found
            oracle = SkimageOracle(attempts[0], failed, features[t], 0.95, use_hash)
            found[(t, failed.attempt_id)] = fork_set(match_fork_points(oracle))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--failures", type=int, default=4, help="failed attempts per task")
    parser.add_argument("--naive-pairs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    t0 = time.perf_counter()
    tasks = build_dataset(args.tasks, args.failures, args.seed)
    n_pairs = args.tasks * args.failures
    steps = [len(a.steps) for task in tasks for a in task[0]]
    print(f"dataset: {args.tasks} tasks x (1 success + {args.failures} failures), {n_pairs} pairs, "
          f"{sum(steps)} screenshots {WIDTH}x{HEIGHT} (steps/attempt {min(steps)}-{max(steps)}, "
          f"mean {np.mean(steps):.1f}), built in {time.perf_counter() - t0:.0f}s")

    truth = {}
    for t, (_, _, labels) in enumerate(tasks):
        for attempt_id, plan in labels.items():
            if attempt_id != "s":
                truth[(t, attempt_id)] = fork_set(match_fork_points(LabelOracle(labels["s"], plan)))

    visual, trees = ForkConfig(use_trees=False), ForkConfig()
    rows = []
    for name, which, config in [("ours, PNG bytes, visual only", 0, visual), ("ours, PNG bytes, tree-aware", 0, trees),
                                ("ours, preloaded arrays, visual only", 1, visual),
                                ("ours, preloaded arrays, tree-aware", 1, trees)]:
        cpu, wall, found = timed(lambda: run_ours(tasks, which, config, name))
        rows.append((name, "png" if which == 0 else "arrays", len(found), cpu, wall, found))
    for config, label in [(visual, "visual only"), (trees, "tree-aware")]:
        prepared = [(prepare_trajectory(task[1][0], config).load_all(),
                     [prepare_trajectory(a, config).load_all() for a in task[1][1:]]) for task in tasks]
        cpu, wall, found = timed(lambda: run_prepared(prepared, config))
        rows.append((f"ours, prepared (decoded) trajectories, {label}", "warm", len(found), cpu, wall, found))
    reference_rate = {}
    for which, mode, label in [(0, "png", "PNG bytes"), (1, "arrays", "preloaded arrays")]:
        features = [reference_feature_factory() for _ in tasks]
        cpu, wall, found = timed(lambda: run_baseline(tasks, which, features, use_hash=True))
        rows.append((f"reference-like (480x270, hash, skimage), {label}", mode, len(found), cpu, wall, found))
        reference_rate[mode] = len(found) / cpu
    # Same feature caches again: thumbnails and hashes are ready, only the matching is timed.
    cpu, wall, found = timed(lambda: run_baseline(tasks, 1, features, use_hash=True))
    rows.append(("reference-like, features cached", "warm", len(found), cpu, wall, found))
    reference_rate["warm"] = len(found) / cpu
    naive = [naive_feature_factory() for _ in tasks]
    cpu, wall, found = timed(lambda: run_baseline(tasks, 0, naive, use_hash=False, limit=args.naive_pairs))
    rows.append(("naive (full-res skimage SSIM, no pre-filter), PNG bytes", "png", len(found), cpu, wall, found))
    naive_rate = len(found) / cpu

    print(f"\n{'method':58s} {'pairs':>5s} {'CPU s':>7s} {'wall s':>7s} {'pairs/s':>8s} {'vs ref':>7s} "
          f"{'vs naive':>8s}  accuracy vs state labels")
    for name, mode, pairs, cpu, wall, found in rows:
        rate = pairs / cpu
        print(f"{name:58s} {pairs:5d} {cpu:7.2f} {wall:7.2f} {rate:8.1f} {rate / reference_rate[mode]:6.1f}x "
              f"{rate / naive_rate:7.0f}x  {score(found, truth)}")
    n_shots = sum(steps)
    print("\nscreenshots decoded by ours: " + ", ".join(
        f"{name.removeprefix('ours, ')} {count}/{n_shots}" for name, count in DECODED.items()))

    print("(vs ref: against the reference-like run of the same input mode: PNG bytes, preloaded arrays, "
          "or features already computed)")
    by_name = {name: cpu for name, _, _, cpu, _, _ in rows}
    compare = by_name["ours, prepared (decoded) trajectories, visual only"]
    print(f"ours, visual only (decodes every screenshot): compare {compare / n_pairs * 1000:.1f} ms/pair once "
          f"decoded; decode+features {(by_name['ours, PNG bytes, visual only'] - compare) / n_shots * 1000:.1f} "
          f"ms/screenshot from PNG, {(by_name['ours, preloaded arrays, visual only'] - compare) / n_shots * 1000:.1f}"
          " ms/screenshot from arrays")
    png = tasks[0][0][0].steps[0].screenshot
    decode = min(timed(lambda: {0: Image.open(io.BytesIO(png)).load()})[0] for _ in range(20))
    print(f"PNG decode floor: {decode * 1000:.1f} ms per {WIDTH}x{HEIGHT} screenshot "
          f"({len(png) // 1024} KiB) -> at most {1 / (decode * np.mean(steps)):.1f} pairs/s when every failed "
          f"attempt's screenshots must be decoded")


if __name__ == "__main__":
    main()
