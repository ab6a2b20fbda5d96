import subprocess
import sys
import time

from ops.cpu_clock import CpuClock


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_counts_this_process_work_and_not_its_sleep():
    clock = CpuClock()
    _busy(0.3)
    time.sleep(0.3)
    assert 0.3 <= clock.cpu_seconds() < clock.wall_seconds()
    assert clock.wall_seconds() >= 0.6


def test_counts_a_finished_child_process():
    clock = CpuClock()
    subprocess.run([sys.executable, "-c", "import time\nend = time.process_time() + 0.5\n"
                                          "while time.process_time() < end: pass"], check=True)
    assert clock.cpu_seconds() >= 0.5  # the child's 0.5 s, though this process only waited


def test_figures_are_rounded_seconds():
    figures = CpuClock(cpu_start=0.0, wall_start=0.0).figures()
    assert set(figures) == {"cpu_seconds", "wall_seconds"} and figures["cpu_seconds"] > 0
