"""Curriculum mining (MobileForge §2.2.2): explored trajectories -> executable, grounded tasks.

The simulator's offline miner (`SimCurriculumConfig`, `SimCurriculumResult`, `mine_simulator_tasks`) is
imported on first use, so a run on devices never loads the simulator.

`mine_with_llm` (prompt G.1 per trajectory) and `mine_simulator_tasks` (offline, verifiable
template and navigation variants) produce `CurriculumTask` records; `deduplicate` removes
near-duplicates; `coverage` tabulates core functionality by app (MobileForge table 7).
"""

from ops.curriculum.coverage import coverage
from ops.curriculum.dedup import DedupResult, Duplicate, deduplicate, normalize_instruction, similarity
from ops.curriculum.llm_mining import LLMCurriculumConfig, LLMCurriculumResult, TrajectoryOutcome, mine_with_llm
from ops.curriculum.model import (CurriculumTask, ScreenReach, screens_reached, task_specs, trajectory_app,
                                  trajectory_id)

__all__ = [
    "CurriculumTask", "DedupResult", "Duplicate", "LLMCurriculumConfig", "LLMCurriculumResult", "ScreenReach",
    "SimCurriculumConfig", "SimCurriculumResult", "TrajectoryOutcome", "coverage", "deduplicate",
    "mine_simulator_tasks", "mine_with_llm", "normalize_instruction", "screens_reached", "similarity",
    "task_specs", "trajectory_app", "trajectory_id",
]

_SIMULATOR_MINING = ("SimCurriculumConfig", "SimCurriculumResult", "mine_simulator_tasks")


def __getattr__(name: str):
    if name in _SIMULATOR_MINING:
        from ops.curriculum import sim_mining

        return getattr(sim_mining, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
