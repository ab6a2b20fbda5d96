"""The query parameters each viewer page takes, typed and bounded: a request that sends a wrong,
unknown, repeated or oversized parameter is answered 400 naming it, before anything is read."""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.datastructures import QueryParams

from mobileforge.viewer.store import check_stage

MAX_TEXT = 300  # characters of any text parameter (task ids are far shorter)
MAX_ATTEMPT = 1000
MAX_STEP = 10_000
MAX_PAGE = 10_000
OUTCOMES = ("success", "failure", "no verdict")


class BadRequest(ValueError):
    """A request the viewer answers 400 with this message."""


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_max_length=MAX_TEXT, str_min_length=1)


class AttemptFilters(Query):
    """The attempts page: every filter optional (empty means any), one page of tasks."""

    stage: Literal["rollouts", "benchmark"] | None = None
    app: str | None = None
    template: str | None = None
    difficulty: str | None = None
    split: str | None = None
    outcome: Literal[OUTCOMES] | None = None  # the verdict of the attempt's judge
    judge: str | None = None
    policy: str | None = None
    page: int = Field(default=1, ge=1, le=MAX_PAGE)


class TaskQuery(Query):
    """A rollout task: its attempts side by side."""

    task: str


class EpisodeQuery(Query):
    """One staged episode: the stage that ran it, the policy version that acted, task and attempt."""

    stage: str
    policy: str
    task: str
    attempt: int = Field(ge=1, le=MAX_ATTEMPT)

    @field_validator("stage")
    @classmethod
    def _known_stage(cls, stage: str) -> str:
        return check_stage(stage)


class ScreenshotQuery(EpisodeQuery):
    """A screenshot of an episode: the screen a step saw, or without `step` the screen after the last."""

    step: int | None = Field(default=None, ge=0, le=MAX_STEP)


class BenchmarkEpisodeQuery(Query):
    """A benchmark episode as its table names it: policy, task, attempt."""

    policy: str
    task: str
    attempt: int = Field(ge=1, le=MAX_ATTEMPT)


class BenchmarkQuery(Query):
    """The benchmark page: which tasks to list."""

    show: Literal["all", "changed", "gained", "lost"] = "all"
    page: int = Field(default=1, ge=1, le=MAX_PAGE)


class CompareQuery(Query):
    """One benchmark task: the base's attempts beside an adapted policy's."""

    task: str
    policy: str


class ForkQuery(Query):
    """One fork pair: a successful and a failed attempt of a task."""

    task: str
    success: int = Field(ge=1, le=MAX_ATTEMPT)
    failed: int = Field(ge=1, le=MAX_ATTEMPT)


Q = TypeVar("Q", bound=Query)


def parse_query(model: type[Q], params: QueryParams) -> Q:
    """`params` as `model`; BadRequest naming the first parameter that is wrong. An empty value
    means the parameter was not given (what an empty filter field of a form sends)."""
    seen: dict[str, str] = {}
    for name, value in params.multi_items():
        if name in seen:
            raise BadRequest(f"query parameter {name[:40]!r} is given more than once")
        seen[name] = value
    try:
        return model.model_validate({name: value for name, value in seen.items() if value != ""})
    except ValidationError as error:
        first = error.errors()[0]
        name = ".".join(str(part) for part in first["loc"]) or "query"
        if first["type"] == "extra_forbidden":
            raise BadRequest(f"unknown query parameter {name[:40]!r}; this page takes "
                             f"{', '.join(model.model_fields) or 'none'}") from None
        shown = first.get("input")
        shown = f" (got {str(shown)[:60]!r})" if isinstance(shown, (str, int)) else ""
        raise BadRequest(f"query parameter {name!r}: {first['msg']}{shown}") from None
