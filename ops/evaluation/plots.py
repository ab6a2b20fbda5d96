"""PNG charts of run results (matplotlib, Agg backend): Pass@k per policy, training curves,
success-rate histogram, success by attempt. The assets show them inline in the Dagster UI.

Each chart is sized to what it draws and scaled to its data (a Pass@k near 0.01 gets an axis that
shows it), with its legend beside the plot rather than over it."""

from __future__ import annotations

import io
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Sequence

import polars as pl

from ops.evaluation.benchmark import wilson_interval
from ops.judging.action_reward import COMPONENTS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
FONT_SIZE = 9
PANEL_SIZE = (4.2, 2.8)  # inches per panel: 420x280 px at DPI
REWARD_CURVES = ("reward", *COMPONENTS)  # drawn together on one panel
BAR_SLOT_INCHES = 0.32  # width of one bar of the Pass@k chart: room for its rotated value label
LABEL_HEADROOM = 1.35  # y-axis top over the highest interval end: room for the labels above the bars
MIN_SMOOTHED_POINTS = 8  # curves shorter than this are drawn raw only: a moving average would hide them
# line styles of the curves sharing a panel, in order: a curve equal to an earlier one still shows over it
PANEL_LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)))


@dataclass(frozen=True)
class Chart:
    """A rendered chart: PNG bytes and the labelled series it draws (legend labels)."""

    title: str
    png: bytes
    series: tuple[str, ...]


def _pyplot() -> ModuleType:
    """matplotlib.pyplot on the Agg backend, imported on the first chart: a second of import that
    the asset graph and the processes that draw nothing do not pay."""
    from ops.evaluation.agg_pyplot import pyplot

    return pyplot


def _render(fig: Figure, title: str) -> Chart:
    series = tuple(label for ax in fig.axes for label in ax.get_legend_handles_labels()[1])
    fig.suptitle(title, fontsize=FONT_SIZE + 1)
    buffer = io.BytesIO()
    # "tight" keeps a legend placed beside the axes inside the picture
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    _pyplot().close(fig)
    return Chart(title, buffer.getvalue(), series)


def _figure(panels: int, columns: int = 3, size: tuple[float, float] = PANEL_SIZE) -> tuple[Figure, list[Axes]]:
    columns = min(columns, panels)
    rows = -(-panels // columns)
    fig, axes = _pyplot().subplots(rows, columns, figsize=(size[0] * columns, size[1] * rows + 0.3), squeeze=False,
                                   layout="constrained")
    flat = [ax for row in axes for ax in row]
    for ax in flat[panels:]:
        ax.axis("off")
    for ax in flat[:panels]:
        ax.tick_params(labelsize=FONT_SIZE - 1)
    return fig, flat[:panels]


def _legend_beside(ax: Axes) -> None:
    ax.legend(fontsize=FONT_SIZE - 1, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


@dataclass(frozen=True)
class _Bar:
    """One bar of the Pass@k chart: a policy's rate on one group of tasks and its 95% interval."""

    value: float
    low: float
    high: float


def _pass_bars(table: pl.DataFrame, metric: str, policy: str, groups: Sequence[str]) -> list[_Bar]:
    rows = {r["difficulty"]: r for r in table.filter(pl.col("policy_id") == policy).iter_rows(named=True)}
    bars = []
    for group in groups:
        row = rows.get(group)
        value, tasks = (row[metric], row["tasks"]) if row else (0.0, 0)
        low, high = wilson_interval(round(value * tasks), tasks)
        bars.append(_Bar(value, low, high))
    return bars


def pass_at_k_chart(table: pl.DataFrame, k: int) -> Chart:
    """Pass@k per policy with 95% Wilson intervals, over all tasks and by difficulty, on one axis
    whose top follows the highest interval end, each bar labelled with its value.

    `table` is `ops.evaluation.benchmark.pass_at_k` output: policy_id, difficulty ("all" or a level),
    tasks, pass@1..k."""
    metric = f"pass@{k}"
    policies = sorted(table["policy_id"].unique().to_list())
    levels = sorted(d for d in table["difficulty"].unique().to_list() if d != "all")
    groups = ["all", *levels]
    bars = {policy: _pass_bars(table, metric, policy, groups) for policy in policies}
    tasks = {r["difficulty"]: r["tasks"] for r in table.filter(pl.col("policy_id") == policies[0]).iter_rows(named=True)} \
        if policies else {}
    width = 0.8 / max(1, len(policies))
    slots = max(1, len(groups) * (len(policies) + 1))
    fig, (ax,) = _figure(1, size=(max(5.0, slots * BAR_SLOT_INCHES), 3.4))
    top = max((b.high for policy_bars in bars.values() for b in policy_bars), default=0.0)
    decimals = 2 if top >= 0.1 else 3  # values near 0.01 keep a significant digit
    for i, policy in enumerate(policies):
        xs = [g + (i - (len(policies) - 1) / 2) * width for g in range(len(groups))]
        values = [b.value for b in bars[policy]]
        errors = [[b.value - b.low for b in bars[policy]], [b.high - b.value for b in bars[policy]]]
        ax.bar(xs, values, width * 0.92, yerr=errors, capsize=2, label=policy, color=f"C{i}",
               error_kw={"elinewidth": 0.8, "ecolor": "0.3"})
        for x, bar in zip(xs, bars[policy]):  # above the interval's end, so no label sits on a whisker
            ax.annotate(f"{bar.value:.{decimals}f}", (x, bar.high), xytext=(0, 2), textcoords="offset points",
                        rotation=90, ha="center", va="bottom", fontsize=FONT_SIZE - 2)
    ax.set_xticks(range(len(groups)), [f"{'all tasks' if g == 'all' else g}\n({tasks.get(g, 0)} tasks)"
                                       for g in groups], fontsize=FONT_SIZE - 1)
    ax.set_ylim(0, top * LABEL_HEADROOM if top > 0 else 0.1)
    ax.set_ylabel(metric, fontsize=FONT_SIZE)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _legend_beside(ax)
    return _render(fig, f"{metric} per policy (whiskers: 95% Wilson interval)")


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """Trailing mean over the last `window` values (fewer at the start), so a curve's smoothed
    value at a step uses only what was logged up to it."""
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def smoothing_window(points: int) -> int:
    """Window of the moving average drawn over a curve of `points` values: about a tenth of it."""
    return max(1, min(50, points // 10)) if points >= MIN_SMOOTHED_POINTS else 1


def training_curves_chart(curves: dict[str, Sequence[Sequence[float]]], method: str) -> Chart:
    """One panel per training curve ([[step, value], ...]); the reward and its components share one.
    Each curve is drawn raw (faint) and as a moving average (solid, the legend's line)."""
    drawn = {name: points for name, points in curves.items() if points}
    rewards = [name for name in REWARD_CURVES if name in drawn]
    panels: list[list[str]] = ([rewards] if rewards else []) + [[n] for n in drawn if n not in rewards]
    if not panels:
        raise ValueError(f"{method}: no curve has a logged point")
    fig, axes = _figure(len(panels), columns=2)
    windows = set()
    for ax, names in zip(axes, panels):
        for i, name in enumerate(names):
            steps, values = zip(*((p[0], p[1]) for p in drawn[name]))
            window = smoothing_window(len(values))
            color, style = f"C{i}", PANEL_LINE_STYLES[i % len(PANEL_LINE_STYLES)]
            if window > 1:
                windows.add(window)
                ax.plot(steps, values, color=color, alpha=0.25, linewidth=0.8)
                ax.plot(steps, moving_average(values, window), color=color, linestyle=style, linewidth=1.8, label=name)
            else:
                ax.plot(steps, values, color=color, linestyle=style, marker=".", linewidth=1.4, label=name)
        ax.set_title("reward" if names is rewards else names[0], fontsize=FONT_SIZE)
        ax.set_xlabel("step", fontsize=FONT_SIZE - 1)
        ax.grid(alpha=0.3)
        _legend_beside(ax)
    smoothing = (f" (faint: raw; solid: trailing mean over {'/'.join(str(w) for w in sorted(windows))} steps)"
                 if windows else "")
    return _render(fig, f"{method} training curves{smoothing}")


def sr_histogram_chart(success_rates: Sequence[float], kept: tuple[float, float] | None = None) -> Chart:
    """Tasks by success rate SR(x) over their K attempts, with the band [sr_min, sr_max] the filter keeps."""
    fig, (ax,) = _figure(1)
    if kept is not None:
        ax.axvspan(kept[0] - 0.02, kept[1] + 0.02, color="C2", alpha=0.15, label=f"kept [{kept[0]:g}, {kept[1]:g}]")
    ax.hist(list(success_rates), bins=[i / 10 - 0.05 for i in range(12)], color="C0", rwidth=0.9, label="tasks")
    ax.set_xlabel("SR(x) over the attempts", fontsize=FONT_SIZE - 1)
    ax.set_ylabel("tasks", fontsize=FONT_SIZE - 1)
    _legend_beside(ax)
    return _render(fig, "success rate per task")


def success_by_attempt_chart(attempts: Sequence[int], critic_sr: Sequence[float],
                             ground_truth_sr: Sequence[float | None]) -> Chart:
    """Success rate of attempt k (hints of attempts 1..k-1 in its prompt) by the critic and the simulator.
    The critic's line is dashed with hollow markers and drawn on top: where the two agree it shows
    over the ground truth's instead of hiding under it."""
    fig, (ax,) = _figure(1)
    truth = [v if v is not None else float("nan") for v in ground_truth_sr]
    ax.plot(attempts, critic_sr, color="C3", linewidth=1.6, linestyle="--", marker="o", markersize=6,
            markerfacecolor="white", markeredgewidth=1.6, label="critic", zorder=3)
    ax.plot(attempts, truth, color="C0", linewidth=3.0, marker="s", markersize=8, label="ground truth", zorder=2)
    top = max([v for v in (*critic_sr, *truth) if v == v] or [0.0])  # NaN != NaN: skip missing truth
    ax.set_xticks(list(attempts))
    ax.set_xlabel("attempt", fontsize=FONT_SIZE - 1)
    ax.set_ylabel("success rate", fontsize=FONT_SIZE - 1)
    ax.set_ylim(0, min(1.0, top * 1.2) if top > 0 else 0.1)
    ax.grid(alpha=0.3)
    _legend_beside(ax)
    return _render(fig, "success by attempt")
