"""Simulator benchmark: memory per instance, reset/fork latency, step and render cost, the ratio
of a full step + screenshot to bare rasterization of the same screen, PNG encoding (palette vs
the RGB baseline, same run) and multi-process throughput with PNG screenshots, at the default
size and at the reduced observation size `SMALL`."""

from __future__ import annotations

import gc
import multiprocessing as mp
import random
import time
from typing import Any

from ops.actions import Action
from phonesim import render
from phonesim.layout import element_nodes
from phonesim.phone import Phone
from phonesim.pool import PhonePool
from phonesim.tasks import instantiate

WALK_TASK = "contacts.edit_phone"
SMALL = (540, 1200)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def random_action(phone: Phone, rng: random.Random) -> Action:
    """A plausible agent action: mostly taps on clickable elements, some swipes/back/typing."""
    elements = [e for e in element_nodes(phone.frame())[0] if e["clickable"]]
    r = rng.random()
    if r < 0.08:
        return Action("system_button", button="back")
    if r < 0.16:
        return Action("swipe", direction=rng.choice(["up", "down"]))
    if r < 0.22:
        return Action("type", text=rng.choice(["Ann", "555", "Work"]))
    if r < 0.25:
        return Action("open_app", app=rng.choice(["Contacts", "Settings"]))
    e = rng.choice(elements)
    x1, y1, x2, y2 = e["grid"]
    return Action("click", point=((x1 + x2) // 2, (y1 + y2) // 2))


def _walk(phone: Phone, n: int, seed: int, screenshot: str) -> tuple[float, int]:
    """Seconds for n random steps, observing after each ("none" | "image" | "png")."""
    rng = random.Random(seed)
    actions = []
    probe = phone.fork()
    for _ in range(n):  # pre-draw actions so timing covers stepping and observing only
        a = random_action(probe, rng)
        probe.step(a)
        actions.append(a)
    t0 = time.perf_counter()
    for a in actions:
        phone.step(a)
        obs = phone.observe()
        if screenshot == "image":
            obs.screenshot
        elif screenshot == "png":
            obs.png
    return time.perf_counter() - t0, n


def _throughput_worker(args: tuple[int, int, str, tuple[int, int]]) -> tuple[float, float]:
    """(steps per wall second, steps per CPU second of this process)."""
    seed, n, mode, size = args
    task = instantiate(WALK_TASK, seed)
    phone = task.make_phone(size)
    cpu = time.process_time()
    dt, _ = _walk(phone, n, seed, mode)
    return n / dt, n / (time.process_time() - cpu)


def run(instances: int = 3000, steps: int = 400, procs: int = 2) -> dict[str, Any]:
    task = instantiate(WALK_TASK, 0)
    out: dict[str, Any] = {"size": list(Phone().size), "instances": instances}

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

    # step cost with and without screenshots (cold render cache = every screenshot rasterized)
    phone = task.make_phone()
    for mode in ("none", "image", "png"):
        render.clear_caches()
        dt, k = _walk(phone.fork(), steps, 1, mode)
        out[f"step_ms_{mode}"] = dt / k * 1e3
        out[f"steps_per_s_{mode}"] = k / dt

    # one step + screenshot vs bare rasterization (+ PNG) of the very same screen
    for size in (tuple(phone.size), SMALL):
        sfx = "" if size == tuple(phone.size) else f"_{size[0]}x{size[1]}"
        out.update({f"{k}{sfx}": v for k, v in _screen_costs(task, size).items()})
        # aggregate throughput across processes, step + observe + render + PNG (warm caches as in rollouts)
        with mp.get_context("fork").Pool(procs) as workers:
            rates = workers.map(_throughput_worker, [(s, steps, "png", size) for s in range(procs)])
        out[f"steps_per_s_png_all_procs{sfx}"] = sum(r[0] for r in rates)
        # what the same processes would do on dedicated cores (the machine is often shared)
        out[f"steps_per_cpu_s_png_all_procs{sfx}"] = sum(r[1] for r in rates)
    out["procs"] = procs
    return out


def _screen_costs(task, size: tuple[int, int], reps: int = 20) -> dict[str, float]:
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
    forks = [phone.fork() for _ in range(reps)]
    t0 = time.perf_counter()
    for p in forks:
        render.clear_caches()
        p.step(Action("swipe", direction="up"))
        p.observe().screenshot
    full = (time.perf_counter() - t0) / reps
    return {"bare_raster_ms": bare * 1e3, "png_encode_ms": encode * 1e3, "png_kb": len(png) / 1024,
            "png_encode_rgb_baseline_ms": encode_rgb * 1e3, "png_rgb_baseline_kb": len(png_rgb) / 1024,
            "step_plus_render_ms": full * 1e3, "step_render_over_bare_raster": full / bare,
            "step_png_ms": (full + encode) * 1e3}
