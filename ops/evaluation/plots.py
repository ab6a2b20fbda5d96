"""Small PNG charts of run results (matplotlib, Agg backend): Pass@k per policy, training curves,
success-rate histogram, success by attempt. The assets show them inline in the Dagster UI."""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Sequence

import polars as pl

from ops.evaluation.benchmark import wilson_interval
from ops.judging.action_reward import COMPONENTS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 80
PANEL_SIZE = (3.2, 2.4)  # inches per panel: 256x192 px at DPI, readable in the UI's metadata column
REWARD_CURVES = ("reward", *COMPONENTS)  # drawn together on one panel


@dataclass(frozen=True)
class Chart:
    """A rendered chart: PNG bytes and the labelled series it draws (legend labels)."""

    title: str
    png: bytes
    series: tuple[str, ...]


@functools.cache
def _pyplot() -> ModuleType:
    """matplotlib.pyplot on the Agg backend, imported on the first chart: a second of import that
    the asset graph and the processes that draw nothing do not pay."""
    import matplotlib

    matplotlib.use("Agg")  # file output only: no display, no GUI toolkit
    import matplotlib.pyplot

    return matplotlib.pyplot


def _render(fig: Figure, title: str) -> Chart:
    series = tuple(label for ax in fig.axes for label in ax.get_legend_handles_labels()[1])
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    _pyplot().close(fig)
    return Chart(title, buffer.getvalue(), series)


def _figure(panels: int, columns: int = 3) -> tuple[Figure, list]:
    columns = min(columns, panels)
    rows = -(-panels // columns)
    figsize = (PANEL_SIZE[0] * columns, PANEL_SIZE[1] * rows + 0.3)
    fig, axes = _pyplot().subplots(rows, columns, figsize=figsize, squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[panels:]:
        ax.axis("off")
    return fig, flat[:panels]


def pass_at_k_chart(table: pl.DataFrame, k: int) -> Chart:
    """Pass@k per policy with 95% Wilson intervals, overall and by difficulty.

    `table` is `ops.evaluation.benchmark.pass_at_k` output: policy_id, difficulty ("all" or a level),
    tasks, pass@1..k."""
    metric = f"pass@{k}"
    policies = sorted(table["policy_id"].unique().to_list())
    levels = [d for d in table["difficulty"].unique(maintain_order=True).to_list() if d != "all"]
    fig, (overall_ax, levels_ax) = _figure(2, 2)
    width = 0.8 / max(1, len(policies))
    for i, policy in enumerate(policies):
        rows = {r["difficulty"]: r for r in table.filter(pl.col("policy_id") == policy).iter_rows(named=True)}
        for ax, groups in ((overall_ax, ["all"]), (levels_ax, levels)):
            values, low, high = [], [], []
            for group in groups:
                row = rows.get(group)
                value, tasks = (row[metric], row["tasks"]) if row else (0.0, 0)
                ci_low, ci_high = wilson_interval(round(value * tasks), tasks)
                values.append(value)
                low.append(value - ci_low)
                high.append(ci_high - value)
            xs = [g + (i - (len(policies) - 1) / 2) * width for g in range(len(groups))]
            bars = ax.bar(xs, values, width, yerr=[low, high], capsize=3, label=policy if ax is overall_ax else None,
                          color=f"C{i}")
            ax.bar_label(bars, fmt="%.2f", fontsize=6, padding=1)  # a bar at 0 still shows its value
    overall_ax.set_xticks([0], ["all tasks"])
    levels_ax.set_xticks(range(len(levels)), levels)
    for ax, title in ((overall_ax, "overall"), (levels_ax, "by difficulty")):
        ax.set_ylim(0, 1.3)  # headroom for the legend above bars at 1.0
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.set_ylabel(metric)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    overall_ax.legend(fontsize=7, loc="upper center", ncol=len(policies))
    return _render(fig, f"{metric} per policy (bars: 95% Wilson interval)")


def training_curves_chart(curves: dict[str, Sequence[Sequence[float]]], method: str) -> Chart:
    """One panel per training curve ([[step, value], ...]); the reward and its components share one."""
    drawn = {name: points for name, points in curves.items() if points}
    rewards = [name for name in REWARD_CURVES if name in drawn]
    panels: list[list[str]] = ([rewards] if rewards else []) + [[n] for n in drawn if n not in rewards]
    if not panels:
        raise ValueError(f"{method}: no curve has a logged point")
    fig, axes = _figure(len(panels))
    for ax, names in zip(axes, panels):
        for name in names:
            steps, values = zip(*((p[0], p[1]) for p in drawn[name]))
            ax.plot(steps, values, marker="." if len(steps) < 30 else None, label=name)
        ax.set_title("reward" if names is rewards else names[0], fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _render(fig, f"{method} training curves")


def sr_histogram_chart(success_rates: Sequence[float], kept: tuple[float, float] | None = None) -> Chart:
    """Tasks by success rate SR(x) over their K attempts, with the band [sr_min, sr_max] the filter keeps."""
    fig, (ax,) = _figure(1)
    fig.set_size_inches(PANEL_SIZE[0] * 1.5, PANEL_SIZE[1])
    if kept is not None:
        ax.axvspan(kept[0] - 0.02, kept[1] + 0.02, color="C2", alpha=0.15, label=f"kept [{kept[0]:g}, {kept[1]:g}]")
    ax.hist(list(success_rates), bins=[i / 10 - 0.05 for i in range(12)], color="C0", rwidth=0.9, label="tasks")
    ax.set_xlabel("SR(x) over the attempts", fontsize=8)
    ax.set_ylabel("tasks", fontsize=8)
    ax.legend(fontsize=7)
    return _render(fig, "success rate per task")


def success_by_attempt_chart(attempts: Sequence[int], critic_sr: Sequence[float],
                             ground_truth_sr: Sequence[float | None]) -> Chart:
    """Success rate of attempt k (hints of attempts 1..k-1 in its prompt) by the critic and the simulator."""
    fig, (ax,) = _figure(1)
    fig.set_size_inches(PANEL_SIZE[0] * 1.5, PANEL_SIZE[1])
    ax.plot(attempts, critic_sr, marker="o", label="critic")
    ax.plot(attempts, [v if v is not None else float("nan") for v in ground_truth_sr], marker="s",
            label="ground truth")
    ax.set_xticks(list(attempts))
    ax.set_xlabel("attempt", fontsize=8)
    ax.set_ylabel("success rate", fontsize=8)
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return _render(fig, "success by attempt")
