"""STAND-IN: android_world.suite_utils.create_suite (same signature and seeding)."""

import hashlib
import random


def create_suite(task_registry, n_task_combinations=1, seed=None, tasks=None, use_identical_params=False, env=None):
  suite = {}
  for name, task_type in task_registry.items():
    if tasks is not None and name not in tasks:
      continue
    current = []
    for i in range(n_task_combinations):
      instance_seed = int(hashlib.sha256(f"{seed}_{name}_{i}".encode()).hexdigest(), 16) % (2**32)
      task_type.set_device_time(env)
      random.seed(instance_seed)
      params = task_type.generate_random_params()
      params["seed"] = instance_seed
      current.append(task_type(params))
    suite[name] = current
  return dict(sorted(suite.items()))
