"""Simulator benchmark (`mobileforge sim bench --json`).

Reports, in one run:
  * memory per live instance and reset / fork latency (a pool of `instances` phones);
  * the cost of single steps on the same screen against bare work: one step + its screenshot
    (and + its PNG) with empty render caches, against `rasterize` (and + `encode_png`, Pillow's
    whole-image encoder) of that very screen: `*_cold_over_bare`;
  * machine-wide throughput on `procs` processes, each replaying a rollout-like workload
    with an observation (rendered screenshot, or PNG) after every step, at 1080×2400 and at
    `SMALL`: tasks from every app, K=3 attempts per task from the task's initial state (a reset
    each), each attempt following the solver's plan but taking a random valid action (mostly a
    tap on a random clickable element; also back, scroll, typing) 30% of the time. Each process
    gets its own tasks and starts with empty caches; cache hit rates are reported with it, and
    the same workload is also timed with the render caches off (every screenshot rasterized and
    encoded from scratch);
  * on that workload in one process, the mean step + PNG time against bare rasterization +
    encode of the same screens (`rollout_step_png_over_bare`).

Times are wall clock; the `*_cpu_*` throughput figures divide by the workers' CPU time, i.e.
what the same processes would do on dedicated cores (the machine is often shared).
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import random
import time
from typing import Any

from phonesim import render
from phonesim.actions import Action
from phonesim.layout import element_nodes
from phonesim.phone import Phone
from phonesim.pool import PhonePool
from phonesim.solver import solve
from phonesim.tasks import TaskInstance, instantiate

POOL_TASK = "contacts.edit_phone"
SMALL = (540, 1200)
# two templates per app whose plans the solver finds in ≲ 0.25 s (operate, query, hybrid, multi-app)
WORKLOAD_TASKS = (
    "calendar.create", "calendar.query_location", "clock.create_alarm", "clock.edit_alarm_time",
    "contacts.favorite", "contacts.hybrid_company_favorite", "expenses.delete", "expenses.query_category_total",
    "files.move", "files.hybrid_largest_delete", "notes.edit_body", "notes.move", "recipes.favorite",
    "recipes.query_servings", "recorder.record_named", "recorder.delete_forever", "settings.connect_wifi",
    "settings.dnd_and_volume", "sms.new_conversation", "sms.multi_share_number",
    "todo.hybrid_priority_complete", "todo.delete",
)
ATTEMPTS, EPSILON = 3, 0.3


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _load() -> float:
    return os.getloadavg()[0]


def random_action(phone: Phone, rng: random.Random) -> Action:
    """A plausible wrong move: mostly a tap on a clickable element, some back/scroll/typing."""
    elements = [e for e in element_nodes(phone.frame())[0] if e["clickable"]]
    r = rng.random()
    if r < 0.1 or not elements:
        return Action("system_button", button="back")
    if r < 0.2:
        return Action("swipe", direction=rng.choice(["up", "down"]))
    if r < 0.26:
        return Action("type", text=rng.choice(["Ann", "555", "Work"]))
    e = rng.choice(elements)
    x1, y1, x2, y2 = e["grid"]
    return Action("click", point=((x1 + x2) // 2, (y1 + y2) // 2))


def rollout_workload(task_ids=WORKLOAD_TASKS, seeds=(0, 1), attempts: int = ATTEMPTS, epsilon: float = EPSILON,
                     rng_seed: int = 0) -> list[tuple[TaskInstance, list[Action]]]:
    """(task, actions) per attempt: the solver's plan with a random action instead of the planned
    one at rate `epsilon` (the plan resumes afterwards, often from a wrong screen, as a weak policy
    would), at most 2·plan + 2 steps. Attempts of one task are consecutive, as in rollouts."""
    rng = random.Random(rng_seed)
    out = []
    for seed in seeds:
        for tid in task_ids:
            task = instantiate(tid, seed)
            plan = solve(task.make_phone(), task)
            for _ in range(attempts):
                probe, actions, i = task.make_phone(), [], 0
                while i < len(plan) and len(actions) < 2 * len(plan) + 2:
                    if rng.random() < epsilon:
                        a = random_action(probe, rng)
                    else:
                        a, i = plan[i], i + 1
                    probe.step(a)
                    actions.append(a)
                out.append((task, actions))
    return out


_WORKLOAD: list[tuple[TaskInstance, list[Action]]] = []  # set before forking the workers


def _observe(phone: Phone, mode: str) -> None:
    obs = phone.observe()
    if mode == "image":
        obs.screenshot
    elif mode == "png":
        obs.png


def _replay(attempts, size: tuple[int, int], mode: str, max_steps: int) -> tuple[int, float, float]:
    """(steps, wall s, CPU s): per attempt a reset to the task's start, its first observation,
    then step + observe for each action."""
    phone = Phone(0, size)
    steps = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for task, actions in attempts:
        if steps >= max_steps:
            break
        phone.world_seed = task.world_seed
        phone.restore(task.initial)
        _observe(phone, mode)
        for a in actions[:max_steps - steps]:
            phone.step(a)
            _observe(phone, mode)
            steps += 1
    return steps, time.perf_counter() - t0, time.process_time() - c0


def _throughput_worker(args: tuple[int, int, str, tuple[int, int], int, bool]) -> dict[str, Any]:
    index, procs, mode, size, max_steps, cached = args
    render.set_cache_budget(render.DEFAULT_CACHE_MB if cached else 0)  # also empties caches inherited by fork
    render.cache_stats(reset=True)
    steps, wall, cpu = _replay(_WORKLOAD_SHARES[index], size, mode, max_steps)
    return {"steps": steps, "wall": wall, "cpu": cpu, "stats": render.cache_stats()}


_WORKLOAD_SHARES: list[list] = []


def throughput(mode: str, size: tuple[int, int], procs: int, max_steps: int, cached: bool = True) -> dict[str, Any]:
    """Machine-wide steps/s of `procs` processes replaying their shares of the workload at once."""
    load = _load()
    # Workers start with empty caches: emptied here, not in each worker, so that they do not
    # inherit (copy-on-write) and then free the caches this process filled measuring other
    # figures (that made a worker's step ~25% slower on the same machine).
    render.clear_caches()
    gc.collect()
    with mp.get_context("fork").Pool(procs) as workers:
        rs = workers.map(_throughput_worker, [(i, procs, mode, size, max_steps, cached) for i in range(procs)])
    out = {"steps_per_s": sum(r["steps"] / r["wall"] for r in rs),
           "steps_per_cpu_s": sum(r["steps"] / r["cpu"] for r in rs),
           "steps": sum(r["steps"] for r in rs), "load": round(max(load, _load()), 2)}
    if cached:
        tot: dict[str, float] = {}
        for r in rs:
            for k, v in r["stats"].items():
                if not k.endswith("_rate"):
                    tot[k] = tot.get(k, 0) + v
        for name in ("frame_png", "frame_image", "band_png", "band_pixels"):
            hit, miss = tot.get(f"{name}_hit", 0), tot.get(f"{name}_miss", 0)
            if hit + miss:
                out[f"{name}_hit_rate"] = round(hit / (hit + miss), 3)
        out["cache_mb_per_proc"] = round(tot.get("cache_mb", 0) / procs, 1)
    return out


def _screen_costs(size: tuple[int, int], reps: int = 10) -> dict[str, float]:
    """One step's screenshot/PNG from empty caches vs bare rasterization/encoding of that screen."""
    task = instantiate(POOL_TASK, 0)
    phone = task.make_phone(size)
    phone.step(Action("open_app", app="Contacts"))
    after = phone.fork()
    after.step(Action("swipe", direction="up"))
    ops = render.frame_ops(after.frame(), render.LIGHT)  # the screen the timed step produces

    def timed(fn) -> tuple[float, Any]:
        t0 = time.perf_counter()
        for _ in range(reps):
            value = fn()
        return (time.perf_counter() - t0) / reps, value
    bare, img = timed(lambda: render.rasterize(ops, size))
    encode, png = timed(lambda: render.encode_png(img, ops))
    encode_rgb, png_rgb = timed(lambda: render.encode_png(img))

    def cold_step(mode: str) -> float:
        forks = [phone.fork() for _ in range(reps)]
        total = 0.0
        for p in forks:
            render.clear_caches(text=False)  # text masks stay warm, as they are for the bare timing
            t0 = time.perf_counter()
            p.step(Action("swipe", direction="up"))
            _observe(p, mode)
            total += time.perf_counter() - t0
        return total / reps
    cold_image, cold_png = cold_step("image"), cold_step("png")

    # a step that changes one row: brightness set to a new value each time on the Display page
    # (new screen, but every band except the slider row's is cached from the screen before)
    settings = Phone(0, size)
    settings.step(Action("open_app", app="Settings"))
    display = next(e for e in settings.observe().elements if e["text"].startswith("Display"))
    settings.step(Action("click", element=display["index"]))
    bar = next(e for e in settings.observe().elements if e["resource_id"] == "brightness_bar")
    x1, y1, x2, y2 = bar["grid"]

    def one_row_step(mode: str) -> float:
        render.clear_caches(text=False)
        total = 0.0
        for i in range(reps + 1):
            t0 = time.perf_counter()
            settings.step(Action("click", point=(x1 + (x2 - x1) * (i * 37 % 100) // 100, (y1 + y2) // 2)))
            _observe(settings, mode)
            total += (time.perf_counter() - t0) if i else 0.0  # the first one warms the bands
        return total / reps
    row_image, row_png = one_row_step("image"), one_row_step("png")
    return {"bare_raster_ms": bare * 1e3, "png_encode_ms": encode * 1e3, "png_kb": len(png) / 1024,
            "png_encode_rgb_baseline_ms": encode_rgb * 1e3, "png_rgb_baseline_kb": len(png_rgb) / 1024,
            "step_render_cold_ms": cold_image * 1e3, "step_render_cold_over_bare": cold_image / bare,
            "step_png_cold_ms": cold_png * 1e3, "step_png_cold_over_bare": cold_png / (bare + encode),
            "step_render_one_row_changed_ms": row_image * 1e3, "step_png_one_row_changed_ms": row_png * 1e3}


def _rollout_vs_bare(size: tuple[int, int], max_steps: int, sample: int = 4) -> dict[str, float]:
    """Mean step + PNG on the rollout workload (one process, caches as they warm up) against
    bare rasterization + encoding of the same screens (every `sample`-th screen)."""
    render.clear_caches()
    render.cache_stats(reset=True)
    steps, wall, _ = _replay(_WORKLOAD, size, "png", max_steps)
    phone, bare, n = Phone(0, size), 0.0, 0
    for task, actions in _WORKLOAD:
        if n * sample >= steps:
            break
        phone.restore(task.initial)
        for j, a in enumerate(actions):
            phone.step(a)
            if j % sample == 0:
                dark = bool(phone.state["data"]["system"]["dark_theme"])
                ops = render.frame_ops(phone.frame(), render.DARK if dark else render.LIGHT)
                t0 = time.perf_counter()
                render.encode_png(render.rasterize(ops, size), ops)
                bare += time.perf_counter() - t0
                n += 1
    step_ms, bare_ms = wall / steps * 1e3, bare / n * 1e3
    return {"rollout_step_png_ms": step_ms, "rollout_bare_raster_png_ms": bare_ms,
            "rollout_step_png_over_bare": step_ms / bare_ms}


def run(instances: int = 3000, steps: int = 300, procs: int = 2) -> dict[str, Any]:
    """All figures as one flat dict; `steps` caps the steps each process replays per figure."""
    out: dict[str, Any] = {"size": list(Phone().size), "instances": instances, "procs": procs,
                           "load_at_start": round(_load(), 2)}
    task = instantiate(POOL_TASK, 0)

    # memory per live instance (each has stepped a little so its state is not the bare base)
    gc.collect()
    before = _rss_bytes()
    pool = PhonePool(instances, task)
    for p in pool.phones[::10]:
        p.step(Action("open_app", app="Contacts"))
    gc.collect()
    out["bytes_per_instance"] = (_rss_bytes() - before) / instances
    out["instances_in_8gb"] = int(8 * 2**30 / max(1.0, out["bytes_per_instance"]))

    # reset / fork latency
    n = 2000
    t0 = time.perf_counter()
    for i in range(n):
        pool.reset(i % instances)
    out["reset_ms"] = (time.perf_counter() - t0) / n * 1e3
    t0 = time.perf_counter()
    for i in range(n):
        pool[i % instances].fork()
    out["fork_ms"] = (time.perf_counter() - t0) / n * 1e3
    del pool
    gc.collect()

    # step without any screenshot
    phone = task.make_phone()
    rng = random.Random(1)
    t0 = time.perf_counter()
    for _ in range(steps):
        phone.step(random_action(phone, rng))
        phone.observe()
    out["step_ms_no_screenshot"] = (time.perf_counter() - t0) / steps * 1e3

    global _WORKLOAD, _WORKLOAD_SHARES
    t0 = time.perf_counter()
    _WORKLOAD = rollout_workload()
    by_task: dict[str, list] = {}
    for task_, actions in _WORKLOAD:
        by_task.setdefault(task_.id, []).append((task_, actions))
    groups = list(by_task.values())
    _WORKLOAD_SHARES = [[a for g in groups[i::procs] for a in g] for i in range(procs)]
    out["workload"] = {"tasks": len(groups), "attempts": len(_WORKLOAD),
                       "steps": sum(len(a) for _, a in _WORKLOAD), "epsilon": EPSILON,
                       "build_s": round(time.perf_counter() - t0, 2)}

    for size in (tuple(phone.size), SMALL):
        sfx = "" if size == tuple(phone.size) else f"_{size[0]}x{size[1]}"
        load = _load()
        out.update({f"{k}{sfx}": v for k, v in _screen_costs(size).items()})
        out.update({f"{k}{sfx}": v for k, v in _rollout_vs_bare(size, steps).items()})
        out[f"single_proc_load{sfx}"] = round(max(load, _load()), 2)
        for mode in ("image", "png"):
            r = throughput(mode, size, procs, steps)
            out[f"steps_per_s_{mode}_all_procs{sfx}"] = r.pop("steps_per_s")
            out[f"steps_per_cpu_s_{mode}_all_procs{sfx}"] = r.pop("steps_per_cpu_s")
            out[f"throughput_{mode}{sfx}"] = r
        r = throughput("png", size, procs, steps, cached=False)
        out[f"steps_per_s_png_all_procs_no_cache{sfx}"] = r.pop("steps_per_s")
        out[f"steps_per_cpu_s_png_all_procs_no_cache{sfx}"] = r.pop("steps_per_cpu_s")
        out[f"throughput_png_no_cache{sfx}"] = r
    out["load_at_end"] = round(_load(), 2)
    return out
