"""How `benchmarks/fuzz.py` feeds a surface its inputs: each one timed in CPU seconds, abandoned after `HANG_S`
of wall clock, and whatever escapes it counted by kind."""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.hostile_inputs import sweep_texts

SLOW_S = 0.1  # issue #41: no input may cost more than 100 ms of CPU
HANG_S = 30  # an input still running after this is abandoned (and counted as a crash)

Case = Callable[[], None]


@dataclass
class Tally:
    inputs: int = 0
    crashes: int = 0
    slow: int = 0
    slowest_ms: float = 0.0
    kinds: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)


class Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"still running after {HANG_S} s")


def arm_hang_alarm() -> None:
    """Make the alarm `run_surface` sets before each input abandon an input still running after `HANG_S`."""
    signal.signal(signal.SIGALRM, _alarm)


@dataclass(frozen=True)
class Surface:
    """A surface's random inputs and, when it reads text, its swept ones (`sweep_texts`), which come first."""

    random_case: Callable[[random.Random], Case]
    text_case: Callable[[Any], Case] | None = None
    prefixes: tuple[str, ...] = ("",)  # what each swept flood follows
    sweep_chars: int = 99_000  # just under the parsers' 100,000-character limit


def run_surface(surface: Surface, n: int, seed: int) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    swept = sweep_texts(surface.prefixes, surface.sweep_chars) if surface.text_case else iter(())
    for _ in range(n):
        text = next(swept, None)
        call = surface.random_case(rng) if text is None or surface.text_case is None else surface.text_case(text)
        signal.alarm(HANG_S)
        start = time.process_time()  # CPU seconds: the work an input costs, not the machine's load
        try:
            call()
        except Exception as exc:  # noqa: BLE001 — counting what escapes is the point
            tally.crashes += 1
            kind = type(exc).__name__
            tally.kinds[kind] += 1
            tally.examples.setdefault(kind, str(exc)[:160])
        finally:
            elapsed = time.process_time() - start
            signal.alarm(0)
        tally.inputs += 1
        tally.slow += elapsed > SLOW_S
        tally.slowest_ms = max(tally.slowest_ms, elapsed * 1000)
    return tally
