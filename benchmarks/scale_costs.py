"""The per-step costs the scale model of docs/deploy.md is built from, measured on this machine:
`python benchmarks/scale_costs.py [--tasks 6] [--trainer-steps 6]`.

- device step: one action and the observation after it (what a rollout does per step), on the
  in-process simulator and through adb against the served simulator (the device path: adb protocol,
  `screencap`, `uiautomator dump`); wall seconds per step.
- policy call: the bundled tiny policy answering one screen (batch 1) and 16 screens at once (batch
  16), one torch thread; wall seconds per call and per screen.
- trainer step: SFT optimizer steps of the tiny policy on step samples (batch 4), one torch thread.
- lease: one acquire + release of a device lease on PostgreSQL, when --lease-dsn is given.

Prints one JSON object. Everything is the tiny model on a CPU: the scale model puts these beside
the anchors' figures for real models on GPUs and emulators.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.adb_bench import workload  # noqa: E402  (the solver plans of train-split templates)
from ops.environments.adb import AdbEnvConfig, AdbEnvironment, DeviceApp  # noqa: E402
from ops.environments.simulator import SimEnvironment  # noqa: E402
from ops.agent.episode import PolicyRequest, TaskSpec  # noqa: E402
from phonesim.adb import AdbServer  # noqa: E402
from phonesim.apps import load_apps  # noqa: E402

SIZE = (540, 1200)  # the local profile's screens


def seconds_per_step(env, tasks: list[tuple[TaskSpec, list]]) -> tuple[float, list]:
    observations, steps, start = [], 0, time.perf_counter()
    for task, plan in tasks:
        observations.append((task, env.reset(task)))
        for action in plan:
            env.step(action)
            observations.append((task, env.observe()))
            steps += 1
    return (time.perf_counter() - start) / max(steps, 1), observations


def policy_costs(observations: list) -> dict[str, float]:
    from training.base.bundled import BUNDLED_DIR
    from training.inference.local_policy import GenerationSettings, LocalPolicy

    policy = LocalPolicy(BUNDLED_DIR, generation=GenerationSettings(max_new_tokens=48), batch_size=16, threads=1)
    requests = [PolicyRequest(obs, task.instruction, [], []) for task, obs in observations[:32]]
    policy.act_batch(requests[:2])  # warm-up
    start = time.perf_counter()
    for request in requests[:8]:
        policy.act_batch([request])
    single = (time.perf_counter() - start) / 8
    start = time.perf_counter()
    policy.act_batch(requests[:16])
    batch = time.perf_counter() - start
    return {"policy_call_batch1_s": round(single, 4), "policy_call_batch16_s": round(batch, 4),
            "policy_screen_in_batch16_s": round(batch / 16, 4)}


def trainer_cost(steps: int) -> dict[str, float]:
    from tests.training.samples import step_frame
    from training.base.bundled import BUNDLED_DIR
    from training.trainers.sft import train_sft
    from training.trainers.sft_config import SFTTrainConfig
    from training.trainers.step_datasets import build_step_dataset

    samples = build_step_dataset(step_frame(16), require_response=True)
    with tempfile.TemporaryDirectory() as tmp:
        report = train_sft(BUNDLED_DIR, samples, Path(tmp) / "out", SFTTrainConfig.cpu_tiny(
            max_steps=steps, per_device_train_batch_size=4, report_to=[]))
    return {"trainer_step_s": round(report.seconds_per_step, 4), "trainer_steps": report.steps}


def lease_cost(dsn: str, rounds: int = 50) -> dict[str, float]:
    from ops.environments.postgres_leases import PostgresLeases

    leases = PostgresLeases(dsn, ttl_s=30)
    start = time.perf_counter()
    for i in range(rounds):
        assert leases.try_acquire(f"bench/{i % 4}")
        leases.release(f"bench/{i % 4}")
    elapsed = (time.perf_counter() - start) / rounds
    leases.close()
    return {"lease_acquire_release_s": round(elapsed, 5)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--trainer-steps", type=int, default=6)
    parser.add_argument("--lease-dsn", default=None, help="PostgreSQL URL to time device leases on.")
    args = parser.parse_args()
    tasks = workload(args.tasks)
    sim_step, observations = seconds_per_step(SimEnvironment(size=SIZE), tasks)
    apps = tuple(DeviceApp(name, app.package, app.label) for name, app in load_apps().items())
    with AdbServer(devices=1, size=SIZE) as server:
        adb = AdbEnvironment(AdbEnvConfig(serial="phonesim-1", port=server.port, apps=apps, simulator=True,
                                          settle_s=0.0, retry_delay_s=0.0))
        adb_step, _ = seconds_per_step(adb, tasks)
    figures = {"tasks": len(tasks), "steps": len(observations) - len(tasks),
               "sim_device_step_s": round(sim_step, 4), "adb_device_step_s": round(adb_step, 4),
               **policy_costs(observations), **trainer_cost(args.trainer_steps)}
    if args.lease_dsn:
        figures.update(lease_cost(args.lease_dsn))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
