"""Child process for the kill test: runs rollouts into a store until killed."""

import sys

from ops.data.attempt_store import ParquetAttemptStore
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.environments.simulator import SimEnvironment
from tests.ops.rollout.test_rollout import sim_tasks
from tests.support.scripted_policy import RandomClickPolicy

if __name__ == "__main__":
    store_dir = sys.argv[1]
    run_rollouts(sim_tasks(), lambda: SimEnvironment(size=(270, 600)),
                 RandomClickPolicy(seed=1, delay_s=0.05), ProgrammaticCritic(),
                 ParquetAttemptStore.from_uri(store_dir), RolloutConfig(attempts=3, max_parallel_tasks=2))
