"""What `mobileforge run` prints when its output is not a terminal: plain lines as the stages go
(a rich live display would print nothing until the run ends), run messages throttled."""

import io
import re

from mobileforge.cli.progress import StageProgress, stage_progress
from pipelines.run.observer import LineObserver


def test_output_that_is_not_a_terminal_gets_a_timestamped_line_per_stage_event():
    out = io.StringIO()
    with stage_progress(out) as progress:
        assert not isinstance(progress, StageProgress)
        progress.stage_started("training", 2)
        progress.run_message("training", "hifpo training: step 3/300\nmore")  # within the first minute: dropped
        progress.stage_finished("training", 3.24)
    lines = out.getvalue().splitlines()
    assert [re.sub(r"^\d\d:\d\d:\d\d ", "", line) for line in lines] == ["training: 2 runs", "  training done in 3.2s"]


def test_run_messages_are_dropped_or_shown_at_most_every_interval():
    quiet, every = [], []
    for log, interval in ((quiet.append, None), (every.append, 0.0)):
        observer = LineObserver(log, status_every_s=interval)
        observer.stage_started("interaction", 1)
        observer.run_message("interaction", "rollout attempts: 64/642 (9%)\nsecond line")
        observer.run_message("interaction", "")
    assert quiet == ["interaction: 1 run"]
    assert every == ["interaction: 1 run", "  interaction: rollout attempts: 64/642 (9%)"]
