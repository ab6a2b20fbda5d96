import subprocess
import sys

from ops.evaluation.cpu_clock import CpuClock


_WORK_THEN_SLEEP = """
import time
from ops.evaluation.cpu_clock import CpuClock
clock = CpuClock()
end = time.process_time() + 0.3
while time.process_time() < end:
    pass
time.sleep(0.3)
print(clock.cpu_seconds(), clock.wall_seconds())
"""


def test_counts_this_process_work_and_not_its_sleep():
    # in a fresh interpreter: the test process's other threads and reaped children (earlier tests'
    # servers and workers) would add their CPU to the clock's
    out = subprocess.run([sys.executable, "-c", _WORK_THEN_SLEEP], check=True, capture_output=True, text=True)
    cpu, wall = map(float, out.stdout.split())
    assert 0.3 <= cpu < wall
    assert wall >= 0.6


def test_counts_a_finished_child_process():
    clock = CpuClock()
    subprocess.run([sys.executable, "-c", "import time\nend = time.process_time() + 0.5\n"
                                          "while time.process_time() < end: pass"], check=True)
    assert clock.cpu_seconds() >= 0.5  # the child's 0.5 s, though this process only waited


def test_figures_are_rounded_seconds():
    figures = CpuClock(cpu_start=0.0, wall_start=0.0).figures()
    assert set(figures) == {"cpu_seconds", "wall_seconds"} and figures["cpu_seconds"] > 0
