"""Steps per second through adb (`AdbEnvironment` against the served simulator) against the
in-process `SimEnvironment`, on the same tasks and action sequences, and the token reduction of
the MobileRL appendix C tree preprocessing on the screens seen:
`python benchmarks/adb_bench.py [--tasks 12] [--size 1080x2400] [--surfaces-only]`.

A step is what a rollout does per action: `step(action)` then `observe()` (screenshot, element
list, app/screen). The sequences are the solver's plans of train-split template instances; the
verdicts of both environments are compared at the end of each.

Also the served device's surfaces, each against a baseline measured in the same run: a shell
round trip (`echo`) against `host:version`; `screencap -p` (an RGBA PNG, as a phone's) and raw
`screencap` against phonesim's own palette PNG of the same screen; and another client's
`host:version` latency while a backtracking grep runs on one device (its budget set to 3 s)
against the same latency idle. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ops.environments.a11y_tree import tree_reduction  # noqa: E402
from ops.environments.adb import AdbEnvConfig, AdbEnvironment, DeviceApp  # noqa: E402
from ops.agent.episode import TaskSpec  # noqa: E402
from ops.environments.simulator import SimEnvironment  # noqa: E402
from phonesim import instantiate, solve, templates  # noqa: E402
from phonesim.adb import AdbServer, ServerLimits  # noqa: E402
from phonesim.phone import Phone  # noqa: E402
from phonesim.adb.uiautomator import hierarchy_xml  # noqa: E402
from phonesim.apps import load_apps  # noqa: E402


def workload(n_tasks: int) -> list[tuple[TaskSpec, list]]:
    out = []
    for template in templates(split="train")[:n_tasks]:
        instance = instantiate(template.id, 0)
        try:
            plan = solve(instance.make_phone(), instance)
        except RuntimeError:
            continue
        out.append((TaskSpec(task_id=instance.id, instruction=instance.instruction, step_budget=instance.step_budget,
                             app=instance.apps[0], template_id=template.id, seed=0), plan))
    return out


def run(env, tasks) -> tuple[float, int, list]:
    steps, verdicts, started = 0, [], time.perf_counter()
    for task, plan in tasks:
        env.reset(task)
        for action in plan:
            env.step(action)
            env.observe()
        steps += len(plan)
        verdicts.append(env.ground_truth(task, None, True, len(plan)))
    return time.perf_counter() - started, steps, verdicts


def _median_ms(action, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def surfaces(size: tuple[int, int], repeats: int = 20) -> dict:
    """The served device's shell, screencap and hostile-client figures (see the docstring)."""
    import adbutils

    out: dict = {}
    with AdbServer(devices=2, size=size, limits=ServerLimits(command_budget_s=3.0)) as server:
        client = adbutils.AdbClient(port=server.port)
        device = client.device("phonesim-1")
        out["host_version_ms"] = _median_ms(client.server_version, repeats)
        out["shell_echo_ms"] = _median_ms(lambda: device.shell2("echo hi", v2=True, timeout=10), repeats)
        phone = Phone(0, size)
        screens = []  # a new screen per capture: the server keeps recent encodings
        for app in ("contacts", "clock", "settings", "notes", "files", "calendar")[:max(1, repeats // 4)]:
            phone.launch(app)
            screens.append(phone.snapshot())

        def capture(command: str) -> float:
            """Median ms to capture a new screen, read off the stream in large pieces (adbutils'
            `shell()` joins 4 KiB reads one by one: quadratic in a 10 MB raw frame)."""
            times = []
            for state in screens:
                server.device("phonesim-1").phone.restore(state)
                started = time.perf_counter()
                stream, data = device.shell(command, stream=True), bytearray()
                while chunk := stream.conn.recv(1 << 20):
                    data += chunk
                stream.close()
                times.append((time.perf_counter() - started) * 1000)
            return round(statistics.median(times), 1)

        def palette_png() -> float:
            times = []
            for state in screens:
                fresh = Phone(0, size)
                fresh.restore(state)
                started = time.perf_counter()
                fresh.observe().png
                times.append((time.perf_counter() - started) * 1000)
            return round(statistics.median(times), 1)

        out["phonesim_png_ms"] = palette_png()
        out["screencap_png_ms"] = capture("screencap -p")
        out["screencap_raw_ms"] = capture("screencap")
        out["screencap_png_ratio"] = round(out["screencap_png_ms"] / out["phonesim_png_ms"], 2)
        idle = [_median_ms(client.server_version, 1) for _ in range(repeats)]
        hostile = threading.Thread(target=lambda: device.shell2(
            "echo " + "a" * 40 + "! | grep -E '(a|a)+b'", v2=True, timeout=30))
        hostile.start()
        time.sleep(0.2)
        during = []
        while hostile.is_alive():
            during.append(_median_ms(client.server_version, 1))
            time.sleep(0.05)
        out["version_idle_max_ms"] = max(idle)
        out["version_during_backtracking_grep_max_ms"] = max(during) if during else None
        out["version_during_backtracking_grep_median_ms"] = round(statistics.median(during), 2) if during else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--size", default="1080x2400")
    parser.add_argument("--surfaces-only", action="store_true", help="only the served device's surfaces")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    if args.surfaces_only:
        print(json.dumps({"size": list(size), **surfaces(size)}))
        return
    tasks = workload(args.tasks)
    apps = tuple(DeviceApp(name, app.package, app.label) for name, app in load_apps().items())

    sim_s, steps, sim_verdicts = run(SimEnvironment(size=size), tasks)
    with AdbServer(devices=1, size=size) as server:
        env = AdbEnvironment(AdbEnvConfig(serial="phonesim-1", port=server.port, apps=apps, simulator=True,
                                          settle_s=0.0, retry_delay_s=0.0))
        adb_s, _, adb_verdicts = run(env, tasks)
        stats = env.stats

    reductions = []
    for task, plan in tasks:
        phone = instantiate(task.template_id, task.seed).make_phone(size)
        for action in [None, *plan]:
            if action is not None:
                phone.step(action)
            reductions.append(tree_reduction(hierarchy_xml(phone.observe().a11y), size))
    raw, kept = sum(r.raw_tokens for r in reductions), sum(r.kept_tokens for r in reductions)
    print(json.dumps({
        "tasks": len(tasks), "steps": steps, "size": list(size),
        "in_process_steps_per_s": round(steps / sim_s, 1), "adb_steps_per_s": round(steps / adb_s, 1),
        "adb_slowdown": round(adb_s / sim_s, 1), "adb_commands_per_step": round(stats.commands / steps, 2),
        "verdicts_equal": sim_verdicts == adb_verdicts,
        "successes": sum(v.success for v in adb_verdicts),
        "screens": len(reductions), "raw_nodes_mean": round(sum(r.raw_nodes for r in reductions) / len(reductions), 1),
        "kept_nodes_mean": round(sum(r.kept_nodes for r in reductions) / len(reductions), 1),
        "raw_tokens_mean": round(raw / len(reductions)), "kept_tokens_mean": round(kept / len(reductions)),
        "token_ratio": round(kept / raw, 3), **surfaces(size),
    }))


if __name__ == "__main__":
    main()
