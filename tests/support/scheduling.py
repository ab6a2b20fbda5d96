"""How the suite's modules are shared between xdist's workers (`pytest_xdist_make_scheduler`, tests/conftest.py):
`--dist loadscope` (a module's tests on one worker, so its whole-graph run is built once), with two changes.

- Modules that read what another computed run on the same worker, right after it (`SAME_WORKER`).
- The longest modules start first (`LONGEST_FIRST`), longest processing time first: xdist's own order (most tests
  first) started modules of two long tests in the last minute, and one worker idled 17 s at the end while the
  other finished them. A module missing from the list only runs later; the list is a measurement, not a contract.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

# module -> the module whose worker it joins, because they solve the same task instances: they read
# `tests.phonesim.conftest.solved`'s solutions (a process-wide cache) of the target templates at seed 1, which
# test_templates solves all of (44 -> 30 s)
SAME_WORKER = dict.fromkeys(("tests/phonesim/test_disjoint.py", "tests/phonesim/test_judge.py",
                             "tests/phonesim/test_state.py"), "tests/phonesim/test_templates.py")

# wall seconds beside another worker on 2 cores, 2026-11-29 (`pytest -p` a timeline plugin): ≥ 7 s, longest first
LONGEST_FIRST = (
    "tests/pipelines/test_end_to_end.py",  # 101
    "tests/pipelines/test_your_apps.py",  # 77
    "tests/assets/test_sharded_stages.py",  # 35
    "tests/phonesim/test_templates.py",  # 27, with test_disjoint's, test_judge's and test_state's tests
    "tests/training/methods/hifpo/test_hifpo.py",  # 29
    "tests/hardening/test_lost_work.py",  # 20
    "tests/training/base/test_world_solutions.py",  # 20 (2026-11-29, on a slower moment of the host: 26)
    "tests/pipelines/test_wizard_experiment.py",  # 19
    "tests/reproducibility/test_reproducible_runs.py",  # 19
    "tests/hardening/test_config_before_work.py",  # 15
    "tests/deploy/test_launched_trainer.py",  # 14
    "tests/training/methods/adagrpo/test_adagrpo_reasoning_reward.py",  # 13
    "tests/pipelines/test_fork.py",  # 13
    "tests/training/methods/hifpo/test_hifpo_alignment_rounds.py",  # 13
    "tests/pipelines/test_forked_runs.py",  # 12
    "tests/training/methods/adagrpo/test_adagrpo_asset.py",  # 12
    "tests/pipelines/test_rollout_workers.py",  # 11
    "tests/hardening/test_killed_run.py",  # 11
    "tests/deploy/test_ecs_moto.py",  # 10
    "tests/deploy/test_device_leases.py",  # 9
    "tests/phonesim/pretrain/test_pretrain_world.py",  # 9 (its solutions stored; 54 when it searched them)
    "tests/mobileforge/viewer/test_viewer_browser.py",  # 8
    "tests/deploy/test_concurrency_pools.py",  # 8
    "tests/fuzz/test_reward_fuzz.py",  # 8
)


class SuiteScheduling(LoadScopeScheduling):
    """`--dist loadscope` with `SAME_WORKER` scopes merged and `LONGEST_FIRST` at the head of the queue."""

    def __init__(self, config, log=None):
        super().__init__(config, log)
        self._ordered = False

    def _split_scope(self, nodeid: str) -> str:
        return SAME_WORKER.get(nodeid.split("::", 1)[0]) or super()._split_scope(nodeid)

    def _assign_work_unit(self, node) -> None:
        if not self._ordered:  # the queue is complete when the first unit is handed out
            for scope in reversed(LONGEST_FIRST):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
            self._ordered = True
        super()._assign_work_unit(node)
