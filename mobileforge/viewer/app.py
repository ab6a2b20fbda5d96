"""The viewer's web app (starlette, jinja2 templates rendered on the server, no script): its routes,
what each page reads, and how a wrong request is answered (400 naming the parameter, 404 naming
what is not stored, never a 500 for a client's mistake).

Pages of experiment E, under `/e/E/`: `attempts` (tasks and attempts, filterable), `task` (a rollout
task's K attempts side by side), `episode` (one attempt, step by step), `benchmark` (per task, the
base against each adapted policy), `compare` (one benchmark task, base beside a policy), `forks`
and `fork` (GRSD's fork pairs, the fork step marked), and `screenshot` (a step's PNG, from the store).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from mobileforge.viewer.attempts import attempt_rows, filter_attempts
from mobileforge.viewer.benchmark import BASELINE, benchmark_page
from mobileforge.viewer.episodes import (BENCHMARK_EPISODE, COMPARE_PAGE, EPISODE_PAGE, FORK_PAGE, SCREENSHOT,
                                         TASK_PAGE, EpisodeView, benchmark_episode_url, episode_url, episode_view,
                                         screenshot_url)
from mobileforge.viewer.queries import (AttemptFilters, BadRequest, BenchmarkEpisodeQuery, BenchmarkQuery,
                                        CompareQuery, EpisodeQuery, ForkQuery, ScreenshotQuery, TaskQuery,
                                        parse_query)
from mobileforge.viewer.store import ROLLOUT_STAGE, EpisodeKey, NotFound, ViewerStore
from ops.data.stored_files import DamagedFileError
from resources.viewer_links import ATTEMPTS_PAGE, BENCHMARK_PAGE, FORKS_PAGE, experiment_path

TEMPLATES = Path(__file__).parent / "templates"
MAX_FORK_PAIRS = 200  # listed on the forks page (a default run finds far fewer)
SCREENSHOT_CACHE = "private, max-age=300"  # a rerun may restage an attempt under the same name


class Viewer:
    """The pages over one `ViewerStore`."""

    def __init__(self, store: ViewerStore):
        self.store = store
        self.templates = Jinja2Templates(directory=TEMPLATES)
        self.templates.env.globals.update(
            episode_url=episode_url, screenshot_url=screenshot_url, benchmark_episode_url=benchmark_episode_url,
            experiment_path=experiment_path, EpisodeKey=EpisodeKey, root=store.location.root_uri)

    def render(self, request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
        return self.templates.TemplateResponse(request, template, context, status_code=status_code)

    def _experiment(self, request: Request) -> str:
        return self.store.check_experiment(request.path_params["experiment"])

    def _rollout_key(self, experiment: str, task_id: str, attempt: int) -> EpisodeKey:
        attempts = self.store.table(experiment, "rollout_attempts", ["task_id", "attempt", "policy_version"])
        rows = [] if attempts is None else attempts.filter(
            (pl.col("task_id") == task_id) & (pl.col("attempt") == attempt)).rows()
        if not rows:
            raise NotFound(f"experiment {experiment!r} has no rollout attempt {attempt} of task {task_id!r}")
        return EpisodeKey(experiment, ROLLOUT_STAGE, rows[0][2], task_id, attempt)

    def _benchmark_key(self, experiment: str, policy: str, task_id: str, attempt: int) -> EpisodeKey:
        results = self.store.table(experiment, "benchmark_results", ["policy_id", "task_id", "attempt", "success", "steps"])
        rows = [] if results is None else results.filter(
            (pl.col("policy_id") == policy) & (pl.col("task_id") == task_id) & (pl.col("attempt") == attempt)).rows()
        if not rows:
            raise NotFound(f"experiment {experiment!r} has no benchmark episode of policy {policy!r} on task "
                           f"{task_id!r}, attempt {attempt}")
        return self.store.benchmark_episode(experiment, policy, task_id, attempt, rows[0][3], rows[0][4])

    def _view(self, key: EpisodeKey, marked_steps: frozenset[int] = frozenset()) -> EpisodeView:
        return episode_view(key, self.store.episode(key), marked_steps)

    # --- pages ------------------------------------------------------------------------------

    def experiments(self, request: Request) -> Response:
        return self.render(request, "experiments.html", experiments=self.store.experiments())

    def overview(self, request: Request) -> Response:
        experiment = self._experiment(request)
        rows = attempt_rows(self.store, experiment)
        stages = rows.group_by("stage").agg(pl.col("task_id").n_unique().alias("tasks"), pl.len().alias("attempts"))
        forks = self.store.table(experiment, "fork_pairs", ["task_id"])
        return self.render(request, "overview.html", experiment=experiment, stages=stages.sort("stage").to_dicts(),
                           fork_pairs=None if forks is None else forks.height)

    def attempts(self, request: Request) -> Response:
        experiment = self._experiment(request)
        filters = parse_query(AttemptFilters, request.query_params)
        page = filter_attempts(attempt_rows(self.store, experiment), filters)
        chosen = {k: v for k, v in filters.model_dump(exclude={"page"}).items() if v is not None}
        return self.render(request, "attempts.html", experiment=experiment, filters=filters, chosen=chosen,
                           page=page)

    def task(self, request: Request) -> Response:
        experiment = self._experiment(request)
        query = parse_query(TaskQuery, request.query_params)
        attempts = self.store.table(experiment, "rollout_attempts", ["task_id", "attempt", "policy_version"])
        rows = [] if attempts is None else attempts.filter(pl.col("task_id") == query.task).sort("attempt").rows()
        if not rows:
            raise NotFound(f"experiment {experiment!r} has no rollout attempts of task {query.task!r}")
        views = [self._view(EpisodeKey(experiment, ROLLOUT_STAGE, version, task, attempt))
                 for task, attempt, version in rows]
        return self.render(request, "task.html", experiment=experiment, task=views[0].record.task, views=views)

    def episode(self, request: Request) -> Response:
        experiment = self._experiment(request)
        query = parse_query(EpisodeQuery, request.query_params)
        view = self._view(EpisodeKey(experiment, query.stage, query.policy, query.task, query.attempt))
        return self.render(request, "episode.html", experiment=experiment, view=view,
                           rollout=query.stage == ROLLOUT_STAGE)

    def benchmark(self, request: Request) -> Response:
        experiment = self._experiment(request)
        query = parse_query(BenchmarkQuery, request.query_params)
        results = self.store.table(experiment, "benchmark_results",
                                   ["policy_id", "task_id", "template_id", "difficulty", "attempt", "success", "steps"])
        if results is None or results.is_empty():
            raise NotFound(f"experiment {experiment!r} has no stored benchmark_results")
        return self.render(request, "benchmark.html", experiment=experiment, query=query,
                           page=benchmark_page(results, query.show, query.page), baseline=BASELINE)

    def benchmark_episode(self, request: Request) -> Response:
        experiment = self._experiment(request)
        query = parse_query(BenchmarkEpisodeQuery, request.query_params)
        key = self._benchmark_key(experiment, query.policy, query.task, query.attempt)
        return RedirectResponse(episode_url(key), status_code=303)

    def compare(self, request: Request) -> Response:
        experiment = self._experiment(request)
        query = parse_query(CompareQuery, request.query_params)
        results = self.store.table(experiment, "benchmark_results", ["policy_id", "task_id", "attempt", "success"])
        rows = [] if results is None else results.filter(pl.col("task_id") == query.task).rows()
        policies = {policy for policy, *_ in rows}
        for policy in dict.fromkeys((BASELINE, query.policy)):
            if policy not in policies:
                raise NotFound(f"experiment {experiment!r} has no benchmark episodes of policy {policy!r} on "
                               f"task {query.task!r}")
        columns = {policy: [self._view(self._benchmark_key(experiment, policy, query.task, attempt))
                            for _, _, attempt, _ in sorted(r for r in rows if r[0] == policy)]
                   for policy in dict.fromkeys((BASELINE, query.policy))}
        return self.render(request, "compare.html", experiment=experiment, task_id=query.task, columns=columns,
                           task=next(iter(columns.values()))[0].record.task)

    def forks(self, request: Request) -> Response:
        experiment = self._experiment(request)
        pairs = self._fork_pairs(experiment)
        return self.render(request, "forks.html", experiment=experiment, pairs=pairs.head(MAX_FORK_PAIRS).to_dicts(),
                           total=pairs.height, shown=min(pairs.height, MAX_FORK_PAIRS))

    def _fork_pairs(self, experiment: str) -> pl.DataFrame:
        pairs = self.store.table(experiment, "fork_pairs", ["task_id", "success_attempt", "failed_attempt",
                                                           "success_step", "failed_step", "similarity",
                                                           "teacher_response"])
        versions = self.store.table(experiment, "rollout_attempts", ["task_id", "policy_version"])
        if pairs is None or versions is None:
            raise NotFound(f"experiment {experiment!r} has no stored fork_pairs (or no rollouts they come from)")
        return pairs.join(versions.unique("task_id"), on="task_id", how="left").sort("task_id", "failed_attempt")

    def fork(self, request: Request) -> Response:
        experiment = self._experiment(request)
        query = parse_query(ForkQuery, request.query_params)
        rows = self._fork_pairs(experiment).filter(
            (pl.col("task_id") == query.task) & (pl.col("success_attempt") == query.success)
            & (pl.col("failed_attempt") == query.failed)).to_dicts()
        if not rows:
            raise NotFound(f"experiment {experiment!r} has no fork pair of task {query.task!r} between successful "
                           f"attempt {query.success} and failed attempt {query.failed}")
        success = self._view(self._rollout_key(experiment, query.task, query.success),
                             frozenset(r["success_step"] for r in rows))
        failed = self._view(self._rollout_key(experiment, query.task, query.failed),
                            frozenset(r["failed_step"] for r in rows))
        return self.render(request, "fork.html", experiment=experiment, forks=rows, success=success, failed=failed)

    def screenshot(self, request: Request) -> Response:
        experiment = self._experiment(request)
        query = parse_query(ScreenshotQuery, request.query_params)
        record = self.store.episode(EpisodeKey(experiment, query.stage, query.policy, query.task, query.attempt))
        if query.step is None:
            png = record.final_screenshot_png
        else:
            png = next((s.screenshot_png for s in record.steps if s.step == query.step), None)
        if png is None:
            what = "a final screenshot" if query.step is None else f"a step {query.step}"
            raise NotFound(f"attempt {query.attempt} of task {query.task!r} has no {what} "
                           f"({len(record.steps)} steps)")
        return Response(png, media_type="image/png", headers={"Cache-Control": SCREENSHOT_CACHE})

    # --- errors -------------------------------------------------------------------------------

    def error(self, request: Request, status: int, message: str) -> Response:
        return self.render(request, "error.html", status_code=status, status=status, message=message)


def create_app(store: ViewerStore) -> Starlette:
    """The viewer over `store`."""
    viewer = Viewer(store)
    exp = "/e/{experiment}/"
    routes = [
        Route("/", viewer.experiments),
        Route(exp, viewer.overview),
        Route(exp + ATTEMPTS_PAGE, viewer.attempts),
        Route(exp + TASK_PAGE, viewer.task),
        Route(exp + EPISODE_PAGE, viewer.episode),
        Route(exp + BENCHMARK_PAGE, viewer.benchmark),
        Route(exp + BENCHMARK_EPISODE, viewer.benchmark_episode),
        Route(exp + COMPARE_PAGE, viewer.compare),
        Route(exp + FORKS_PAGE, viewer.forks),
        Route(exp + FORK_PAGE, viewer.fork),
        Route(exp + SCREENSHOT, viewer.screenshot),
    ]
    handlers = {
        NotFound: lambda request, error: viewer.error(request, 404, str(error)),
        BadRequest: lambda request, error: viewer.error(request, 400, str(error)),
        # stored files that differ from their digests: the store is damaged, not the request
        DamagedFileError: lambda request, error: viewer.error(request, 500, f"damaged store: {error}"),
        HTTPException: lambda request, error: viewer.error(request, error.status_code, str(error.detail)),
    }
    return Starlette(routes=routes, exception_handlers=handlers)
