"""A budget of bytes that asyncio tasks reserve before they hold that much memory, granted in
arrival order (a large reservation is not overtaken forever by small ones). Used from one event
loop's thread only."""

from __future__ import annotations

import asyncio
from collections import deque


class Reservation:
    """Bytes held from a `ByteBudget` until `release()` (idempotent)."""

    def __init__(self, budget: ByteBudget, nbytes: int) -> None:
        self._budget, self.nbytes = budget, nbytes

    def release(self) -> None:
        nbytes, self.nbytes = self.nbytes, 0
        if nbytes:
            self._budget._give_back(nbytes)


class ByteBudget:
    """At most `capacity` bytes reserved at once."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity: must be >= 1, got {capacity}")
        self.capacity = capacity
        self.available = capacity
        self._waiting: deque[tuple[int, asyncio.Future[None]]] = deque()

    async def reserve(self, nbytes: int) -> Reservation:
        """Wait until `nbytes` are free and every earlier caller was served; ValueError if
        `nbytes` exceeds the whole capacity (it would wait forever)."""
        if not 0 <= nbytes <= self.capacity:
            raise ValueError(f"cannot reserve {nbytes} bytes of a budget of {self.capacity}")
        if not self._waiting and self.available >= nbytes:
            self.available -= nbytes
            return Reservation(self, nbytes)
        granted = asyncio.get_running_loop().create_future()
        self._waiting.append((nbytes, granted))
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():  # granted just as the waiter was cancelled
                self._give_back(nbytes)
            else:
                self._waiting.remove((nbytes, granted))
                self._grant()  # a large waiter leaving may unblock smaller ones behind it
            raise
        return Reservation(self, nbytes)

    def _give_back(self, nbytes: int) -> None:
        self.available += nbytes
        self._grant()

    def _grant(self) -> None:
        while self._waiting and self.available >= self._waiting[0][0]:
            nbytes, granted = self._waiting.popleft()
            if not granted.done():
                self.available -= nbytes
                granted.set_result(None)
