"""matplotlib.pyplot on the Agg backend (file output only: no display, no GUI toolkit), for the charts
(`ops.evaluation.plots`, on their first use) and for a run's forkserver to preload
(`pipelines.definitions.FORKSERVER_PRELOAD`), so that the steps forked from it draw without importing it."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as pyplot  # noqa: E402  (after the backend is chosen)

__all__ = ["pyplot"]
