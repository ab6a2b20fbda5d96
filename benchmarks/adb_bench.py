"""Steps per second through adb (`AdbEnvironment` against the served simulator) against the
in-process `SimEnvironment`, on the same tasks and action sequences, and the token reduction of
the MobileRL appendix C tree preprocessing on the screens seen:
`python benchmarks/adb_bench.py [--tasks 12] [--size 1080x2400]`.

A step is what a rollout does per action: `step(action)` then `observe()` (screenshot, element
list, app/screen). The sequences are the solver's plans of train-split template instances; the
verdicts of both environments are compared at the end of each. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ops.environments.a11y_tree import tree_reduction  # noqa: E402
from ops.environments.adb import AdbEnvConfig, AdbEnvironment, DeviceApp  # noqa: E402
from ops.agent.episode import TaskSpec  # noqa: E402
from ops.environments.simulator import SimEnvironment  # noqa: E402
from phonesim import instantiate, solve, templates  # noqa: E402
from phonesim.adb import AdbServer  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--size", default="1080x2400")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
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
        "token_ratio": round(kept / raw, 3),
    }))


if __name__ == "__main__":
    main()
