"""A pool of phones sharing world data, each reset cheaply from one shared base snapshot."""

from __future__ import annotations

from phonesim.phone import DEFAULT_SIZE, Phone
from phonesim.state import copy_json
from phonesim.tasks import TaskInstance


class PhonePool:
    """`n` phones in one process. `reset(i)` restores phone i to the base (a task's initial
    state, or the world's initial state); `fork_group(i, k)` copies phone i's state into k
    fresh phones (GRPO-style rollouts from one state)."""

    def __init__(self, n: int, task: TaskInstance | None = None, world_seed: int = 0,
                 size: tuple[int, int] = DEFAULT_SIZE) -> None:
        if n < 1:
            raise ValueError(f"pool size must be ≥ 1, got {n}")
        seed = task.world_seed if task is not None else world_seed
        template = Phone(seed, size)
        self.base = task.initial if task is not None else template.snapshot()
        template.restore(self.base)
        self.phones = [template.fork() for _ in range(n)]

    def __len__(self) -> int:
        return len(self.phones)

    def __getitem__(self, i: int) -> Phone:
        return self.phones[i]

    def reset(self, i: int) -> Phone:
        self.phones[i].restore(self.base)
        return self.phones[i]

    def reset_all(self) -> None:
        for p in self.phones:
            p.restore(self.base)

    def set_base(self, snapshot: dict) -> None:
        self.base = copy_json(snapshot)

    def fork_group(self, i: int, k: int) -> list[Phone]:
        return [self.phones[i].fork() for _ in range(k)]
