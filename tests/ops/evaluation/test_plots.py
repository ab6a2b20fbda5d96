"""The charts the UI shows: valid PNGs drawing the expected series, from data shaped like a small
run's (benchmark episodes in the `benchmark_results` schema, TRL log history, rollout SRs)."""

import base64
import io

import polars as pl
import pytest
from PIL import Image

from assets.metadata import chart_md, md_table, rounded, thumbnail_md, tidy
from ops.evaluation.benchmark import pass_at_k
from ops.evaluation.plots import pass_at_k_chart, sr_histogram_chart, success_by_attempt_chart, training_curves_chart
from ops.rollout.progress import CountdownLog, duration
from ops.data.schemas import from_rows


def _png(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.verify()
    return Image.open(io.BytesIO(data))


def _episodes() -> pl.DataFrame:
    rows = []
    for policy, wins in (("base", {("t1", 2)}), ("hifpo", {("t1", 1), ("t2", 1)})):
        for task, difficulty in (("t1", "easy"), ("t2", "hard")):
            for attempt in (1, 2):
                success = (task, attempt) in wins
                rows.append({"policy_id": policy, "task_id": f"{task}#0", "template_id": task,
                             "difficulty": difficulty, "seed": 0, "attempt": attempt, "success": success,
                             "progress": 1.0 if success else 0.25, "false_complete": False, "side_effects": 0,
                             "overdue": False, "steps": 4, "first_app_right": True, "answer_seen": None, "judge": "simulator"})
    return from_rows(rows, "benchmark_results")


def test_pass_at_k_chart_draws_one_series_per_policy():
    chart = pass_at_k_chart(pass_at_k(_episodes(), 2), 2)
    image = _png(chart.png)
    assert image.format == "PNG" and image.width >= 400 and image.height >= 150
    assert chart.series == ("base", "hifpo")


def test_training_curves_share_one_reward_panel_and_keep_every_curve():
    from training.trainers.runs import curves_from_history

    history = [{"step": s, "loss": 1.0 / s, "reward": 0.1 * s, "rewards/type_reward/mean": 0.2 * s, "kl": 0.01}
               for s in (1, 2, 3)] + [{"step": 3, "train_runtime": 1.0}]
    curves = curves_from_history(history, {"loss": "loss", "reward": "reward", "type": "rewards/type_reward/mean",
                                           "kl": "kl", "completion_length": "completions/mean_length"})
    chart = training_curves_chart(curves, "hifpo")
    _png(chart.png)
    assert chart.series == ("reward", "type", "loss", "kl")  # the empty completion_length curve is left out
    with pytest.raises(ValueError, match="no curve"):
        training_curves_chart({"loss": []}, "grsd")


def test_sr_histogram_and_success_by_attempt():
    histogram = sr_histogram_chart([0.0, 0.0, 0.5, 1.0], (0.0, 0.9))
    assert histogram.series == ("kept [0, 0.9]", "tasks")
    by_attempt = success_by_attempt_chart([1, 2, 3], [0.1, 0.3, 0.4], [0.1, None, 0.5])
    assert by_attempt.series == ("critic", "ground truth")
    for chart in (histogram, by_attempt):
        _png(chart.png)


def test_a_chart_goes_inline_into_markdown_metadata():
    chart = sr_histogram_chart([0.5])
    markdown = chart_md(chart).value
    assert markdown.startswith("![success rate per task](data:image/png;base64,")
    assert base64.b64decode(markdown.split(",", 1)[1].rstrip(")")) == chart.png


def test_tidy_rounds_figures_and_puts_lineage_last():
    import dagster as dg

    tidied = tidy({"config": dg.MetadataValue.json({"lr": 0.0123456}), "mean": 0.007246376811594203,
                   "rates": dg.MetadataValue.json({"a": [0.123456, 12345.678]}), "upstream": "u", "rows": 3})
    assert list(tidied) == ["mean", "rates", "rows", "config", "upstream"]
    assert tidied["mean"] == 0.00725 and tidied["rates"].data == {"a": [0.123, 12300.0]}
    assert tidied["config"].data == {"lr": 0.0123456}  # config is what was asked for: kept exact
    assert rounded(float("nan")) != rounded(float("nan")) and rounded(0.0) == 0.0


def test_table_cells_are_cut_to_fit_but_images_are_kept():
    long_text, image = "x" * 300, "![](data:image/jpeg;base64," + "A" * 400 + ")"
    cells = md_table(["text", "screen"], [(long_text, image)]).value.splitlines()[2].split(" | ")
    assert len(cells[0].strip("| ")) == 60 and cells[0].endswith("…") and image in cells[1]


def test_countdown_log_reports_about_ten_times_with_an_eta():
    lines: list[str] = []
    now = [0.0]
    progress = CountdownLog("episodes", 40, lines.append, clock=lambda: now[0])
    for _ in range(40):
        now[0] += 1.0  # one second per episode
        progress()
    assert len(lines) == 10 and lines[0] == "episodes: 4/40 (10%), ETA 36s" and lines[-1] == "episodes: 40/40 (100%)"
    assert duration(95) == "1m35s" and duration(3700) == "1h01m"


@pytest.fixture
def figures(monkeypatch):
    """The matplotlib figures the charts draw, kept for inspection after rendering."""
    from ops.evaluation import plots

    drawn = []
    render = plots._render

    def keep(fig, title):
        chart = render(fig, title)
        drawn.append(fig)
        return chart

    monkeypatch.setattr(plots, "_render", keep)
    return drawn


def _benchmark_near_one_percent() -> pl.DataFrame:
    rows = []
    for policy, passed in (("base", 1), ("hifpo", 0), ("rft", 3), ("grsd", 1), ("adagrpo", 2)):
        for t in range(77):
            for attempt in (1, 2, 3):
                success = t < passed and attempt == 1
                rows.append({"policy_id": policy, "task_id": f"t{t}#0", "template_id": f"t{t}",
                             "difficulty": f"L{t % 4 + 1}", "seed": 0, "attempt": attempt, "success": success,
                             "progress": 0.2, "false_complete": False, "side_effects": 0, "overdue": False,
                             "steps": 5, "first_app_right": True, "answer_seen": None, "judge": "simulator"})
    return from_rows(rows, "benchmark_results")


def test_the_pass_at_k_chart_scales_to_its_data_with_labels_apart_and_the_legend_beside(figures):
    pass_at_k_chart(pass_at_k(_benchmark_near_one_percent(), 3), 3)
    (fig,) = figures
    (ax,) = fig.axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # the closed figure, laid out again as it was saved
    canvas.draw()
    renderer = canvas.get_renderer()
    highest = max(line.get_ydata().max() for line in ax.lines if len(line.get_ydata()))  # whisker ends
    assert highest <= ax.get_ylim()[1] < 0.5  # values near 0.01: not a 0-1 axis
    labels = [t.get_window_extent(renderer) for t in ax.texts]
    assert len(labels) == 5 * 5  # a value on every bar: 5 policies x (all tasks + 4 levels)
    assert not any(a.overlaps(b) for i, a in enumerate(labels) for b in labels[i + 1:])
    assert ax.get_legend().get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1  # beside the bars


def test_the_critic_line_is_drawn_over_the_ground_truth_in_another_style(figures):
    success_by_attempt_chart([1, 2, 3], [0.1, 0.3, 0.4], [0.1, 0.3, 0.4])
    critic, truth = {line.get_label(): line for line in figures[0].axes[0].lines}.values()
    assert critic.get_label() == "critic" and critic.get_zorder() > truth.get_zorder()
    assert (critic.get_linestyle(), critic.get_marker()) != (truth.get_linestyle(), truth.get_marker())
    assert critic.get_markerfacecolor() != truth.get_markerfacecolor()


def test_long_training_curves_are_drawn_raw_and_smoothed():
    from ops.evaluation.plots import moving_average, smoothing_window

    assert moving_average([1.0, 3.0, 5.0, 7.0], 2) == [1.0, 2.0, 4.0, 6.0]
    assert smoothing_window(5) == 1 and smoothing_window(200) == 20


def test_every_long_curve_gets_a_faint_raw_line_and_a_solid_mean(figures):
    curves = {"reward": [[s, (s % 7) / 7] for s in range(100)], "loss": [[s, 1 / (s + 1)] for s in range(100)],
              "kl": [[1, 0.1], [2, 0.2]]}
    chart = training_curves_chart(curves, "hifpo")
    assert chart.series == ("reward", "loss", "kl") and "trailing mean over 10 steps" in chart.title
    panels = {ax.get_title(): ax.lines for ax in figures[0].axes if ax.lines}
    assert [line.get_alpha() for line in panels["reward"]] == [0.25, None]  # raw, then the mean
    assert len(panels["kl"]) == 1  # two points: drawn as they are


def test_thumbnails_are_large_enough_to_read():
    from tests.support.images import solid_png

    markdown = thumbnail_md(solid_png(540, 1200, (200, 200, 200)))
    image = Image.open(io.BytesIO(base64.b64decode(markdown.split(",", 1)[1].rstrip(")"))))
    assert image.size == (144, 320)
