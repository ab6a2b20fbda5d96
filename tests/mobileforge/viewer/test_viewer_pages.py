"""The viewer's pages over a small store, through starlette's test client: what each page shows, that
links lead where they say, and that a wrong request is a 4xx naming what is wrong (never a 500)."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import urlsplit

import polars as pl
import pyarrow.fs as pafs
import pytest
from starlette.testclient import TestClient

from mobileforge.viewer.app import create_app
from mobileforge.viewer.episodes import episode_url
from mobileforge.viewer.overlay import action_overlay
from mobileforge.viewer.store import EpisodeKey, ViewerStore
from resources.viewer_links import ATTEMPTS_PAGE, BENCHMARK_PAGE, FORKS_PAGE, VIEWER_URL_ENV, viewer_link
from tests.mobileforge.viewer.small_store import HELD_OUT, K, ROLLOUT_VERSION, TRAIN_TEMPLATES

WIFI = "settings.connect_wifi#0"


@pytest.fixture(scope="module")
def client(small_store):
    return TestClient(create_app(ViewerStore(small_store[0])))


def _text(response) -> str:
    """What the page says: its text without tags, runs of white space as one space."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


def _listed(response) -> set[str]:
    """The task ids a list page shows in its rows."""
    return set(re.findall(r"<td><strong>([^<]+)</strong>", response.text))


def _get(client, path, **params):
    response = client.get(path, params=params)
    assert response.status_code == 200, (path, params, _text(response)[-500:])
    return response


def test_the_attempts_page_lists_every_task_with_its_attempts_and_filters_them(client):
    page = _get(client, "/e/default/attempts")
    assert _listed(page) == {f"{t}#0" for t in TRAIN_TEMPLATES + tuple(HELD_OUT)}
    badges = re.findall(r'class="badge (?:success|failure|no-verdict)"', page.text)
    assert len(badges) == len(TRAIN_TEMPLATES) * K + 2 * len(HELD_OUT) * K  # rollouts, and the benchmark's 2 policies
    only_rft = _get(client, "/e/default/attempts", stage="benchmark", policy="rft")
    assert len(re.findall(r'class="badge ', only_rft.text)) == len(HELD_OUT) * K
    assert _listed(only_rft) == {f"{t}#0" for t in HELD_OUT}
    easy = {"stage": "benchmark", "difficulty": "L1"}
    assert _listed(_get(client, "/e/default/attempts", outcome="success", **easy)) == {"clock.alarm_on#0"}
    assert len(re.findall(r'class="badge ', _get(client, "/e/default/attempts", outcome="failure", **easy).text)) == K
    judged = _get(client, "/e/default/attempts", judge="programmatic", split="train", app="settings")
    assert _listed(judged) == {f"{t}#0" for t in TRAIN_TEMPLATES}
    assert "no attempt matches" in _get(client, "/e/default/attempts", template="clock.alarm_on", stage="rollouts").text


def test_an_episode_page_shows_each_step_with_its_action_drawn_output_and_critic_verdict(client, small_store):
    _, tables = small_store
    key = EpisodeKey("default", "rollouts", ROLLOUT_VERSION, WIFI, 1)
    page = client.get(episode_url(key))
    text = _text(page)
    steps = tables["rollout_steps"].filter((pl.col("task_id") == WIFI) & (pl.col("attempt") == 1)).sort("step")
    assert len(re.findall(r'<section class="step[ "]', page.text)) == steps.height + 1  # and the screen after the last
    assert page.text.count("<svg") == steps.height and "swipe up" in text and "press back" in text
    for row in steps.iter_rows(named=True):
        assert row["raw_output"].splitlines()[0] in text
    feedback = tables["critic_feedback"].filter((pl.col("task_id") == WIFI) & (pl.col("attempt") == 1)).row(0, named=True)
    assert feedback["reason"] in text and "failure step" in text and "no hint in force" in text
    assert feedback["hint_summary"] in text  # the hint it leaves for attempt 2
    shot = client.get(f"/e/default/screenshot?{urlsplit(episode_url(key)).query}&step=1")
    assert shot.headers["content-type"] == "image/png" and shot.content == steps["screenshot_png"][1]
    second = _text(client.get(episode_url(EpisodeKey("default", "rollouts", ROLLOUT_VERSION, WIFI, 2))))
    assert f"Hint from attempt 1: {feedback['hint_summary']}" in second  # the hint in force


def test_the_task_page_puts_the_attempts_side_by_side_with_their_hints(client):
    page = _get(client, "/e/default/task", task=WIFI).text
    assert page.count('class="column attempt"') == K
    assert "no hint in force" in page and "Hint from attempt 1:" in page
    assert page.count("<svg") == len(re.findall(r'<figure class="shot', page))


def test_the_benchmark_page_marks_what_a_policy_gained_and_links_to_both_episodes(client):
    page = _get(client, "/e/default/benchmark").text
    assert re.search(r'<td class="gained"[^>]*>.*?gained', page, re.S) and "lost (0)" in page
    assert _listed(_get(client, "/e/default/benchmark", show="gained")) == {"clock.alarm_on#0"}
    assert _listed(_get(client, "/e/default/benchmark", show="changed")) == {"clock.alarm_on#0"}
    assert _listed(_get(client, "/e/default/benchmark", show="lost")) == set()
    redirect = client.get("/e/default/benchmark/episode", params={"policy": "rft", "task": "clock.alarm_on#0",
                                                                 "attempt": 1}, follow_redirects=False)
    assert redirect.status_code == 303
    episode = _text(client.get(redirect.headers["location"]))
    assert "benchmark/rft" in episode and "success" in episode
    compare = _get(client, "/e/default/compare", task="clock.alarm_on#0", policy="rft").text
    assert compare.count('class="column policy"') == 2 and compare.count('class="attempt"') == 2 * K
    assert "base against rft" in compare


def test_fork_pairs_link_both_attempts_with_the_fork_steps_marked(client, small_store):
    pairs = small_store[1]["fork_pairs"]
    assert pairs.height > 0
    listing = _get(client, "/e/default/forks").text
    assert listing.count("<tr>") == pairs.height + 1
    first = pairs.row(0, named=True)
    page = _get(client, "/e/default/fork", task=first["task_id"], success=first["success_attempt"],
                failed=first["failed_attempt"]).text
    same_pair = pairs.filter((pl.col("task_id") == first["task_id"]) & (pl.col("failed_attempt") == first["failed_attempt"]))
    marked = same_pair["success_step"].n_unique() + same_pair["failed_step"].n_unique()
    assert page.count('<span class="tag" style="border-color: var(--mark)">fork</span>') == marked
    assert first["teacher_response"].splitlines()[0] in unescape(page)


def test_a_device_run_without_ground_truth_templates_or_benchmark_shows_its_pages(client):
    page = _text(_get(client, "/e/device/attempts"))
    assert "llm:openai/critic" in page and "settings.airplane_on#0" in page
    episode = _text(_get(client, "/e/device/episode", stage="rollouts", policy=ROLLOUT_VERSION, task=WIFI, attempt=2))
    assert "ground truth" not in episode and "by llm:openai/critic" in episode and "Hint from attempt 1" in episode
    assert _get(client, "/e/device/task", task=WIFI).text.count('class="column attempt"') == K
    for page in ("benchmark", "forks"):
        missing = client.get(f"/e/device/{page}")
        assert missing.status_code == 404 and "no stored" in _text(missing)


@pytest.mark.parametrize(("path", "params", "status", "names"), [
    ("/e/nowhere/attempts", {}, 404, "experiment 'nowhere' is not stored"),
    ("/e/_staging/attempts", {}, 404, "'_staging'"),
    ("/e/a..b/attempts", {}, 404, "'a..b'"),
    ("/e/default/task", {"task": "no-such-task"}, 404, "task 'no-such-task'"),
    ("/e/default/task", {}, 400, "'task'"),
    ("/e/default/task", {"task": "x" * 400}, 400, "'task'"),
    ("/e/default/attempts", {"page": "0"}, 400, "'page'"),
    ("/e/default/attempts", {"outcome": "maybe"}, 400, "'outcome'"),
    ("/e/default/attempts", {"colour": "red"}, 400, "unknown query parameter 'colour'"),
    ("/e/default/episode", {"stage": "../../etc", "policy": "p", "task": "t", "attempt": "1"}, 400, "'stage'"),
    ("/e/default/episode", {"stage": "rollouts", "policy": ROLLOUT_VERSION, "task": WIFI, "attempt": "abc"}, 400, "'attempt'"),
    ("/e/default/episode", {"stage": "rollouts", "policy": ROLLOUT_VERSION, "task": WIFI, "attempt": "9"}, 404, "attempt 9"),
    ("/e/default/episode", {"stage": "rollouts", "policy": "other", "task": WIFI, "attempt": "1"}, 404, "'other'"),
    ("/e/default/screenshot", {"stage": "rollouts", "policy": ROLLOUT_VERSION, "task": WIFI, "attempt": "1", "step": "99"},
     404, "no a step 99"),
    ("/e/default/benchmark/episode", {"policy": "grsd", "task": "clock.alarm_on#0", "attempt": "1"}, 404, "'grsd'"),
    ("/e/default/compare", {"task": "clock.alarm_on#0", "policy": "hifpo"}, 404, "'hifpo'"),
    ("/e/default/fork", {"task": WIFI, "success": "1", "failed": "2"}, 404, "fork pair"),
    ("/e/default/benchmark", {"show": "everything"}, 400, "'show'"),
    ("/nothing-here", {}, 404, "Not Found"),
])
def test_a_wrong_request_is_a_4xx_naming_what_is_wrong(client, path, params, status, names):
    response = client.get(path, params=params)
    assert response.status_code == status and names in _text(response), _text(response)[-400:]


def test_a_parameter_given_twice_is_refused(client):
    response = client.get("/e/default/task?task=a&task=b")
    assert response.status_code == 400 and "more than once" in _text(response)


def test_the_viewer_writes_nothing_to_the_store(small_store, client):
    location, _ = small_store
    fs, root = location.filesystem()

    def listing():
        return sorted((i.path, i.size, i.mtime_ns) for i in fs.get_file_info(pafs.FileSelector(root, recursive=True)))

    before = listing()
    for path, params in (("/e/default/attempts", {}), ("/e/default/forks", {}), ("/e/default/benchmark", {}),
                         ("/e/default/episode", {"stage": "benchmark/hifpo", "policy": "v", "task": "t", "attempt": 1})):
        client.get(path, params=params)
    assert listing() == before


def test_the_links_asset_metadata_carries_open_the_viewer_pages(client, monkeypatch):
    monkeypatch.setenv(VIEWER_URL_ENV, "http://viewer.example:9000/")
    for link in (viewer_link("default", ATTEMPTS_PAGE, stage="rollouts"), viewer_link("default", BENCHMARK_PAGE),
                 viewer_link("default", FORKS_PAGE)):
        url = urlsplit(link.value)
        assert url.netloc == "viewer.example:9000"
        assert client.get(f"{url.path}?{url.query}").status_code == 200, link.value


ELEMENTS = [{"text": "Wi-Fi", "grid": [0, 100, 1000, 200]}, {"text": "Bluetooth", "grid": [0, 300, 500, 400]}]


def test_overlays_put_taps_swipes_and_text_in_the_screenshots_pixels():
    tap = action_overlay({"type": "click", "args": {"element": 1}}, ELEMENTS, (540, 1200))
    assert (tap.taps[0].x, tap.taps[0].y) == (135.0, 420.0) and tap.caption == "tap “Bluetooth”"
    assert (tap.boxes[0].x0, tap.boxes[0].y1) == (0.0, 480.0)
    point = action_overlay({"type": "long_press", "args": {"point": [500, 150]}}, ELEMENTS, (1080, 2400))
    assert (point.taps[0].x, point.taps[0].y) == (540.0, 360.0) and point.caption == "long press “Wi-Fi”"
    swipe = action_overlay({"type": "swipe", "args": {"direction": "up"}}, [], (100, 200))
    arrow = swipe.arrows[0]
    assert (arrow.x0, arrow.y0, arrow.x1, arrow.y1) == (50.0, 100.0, 50.0, 40.0) and not swipe.taps
    assert arrow.head[0] == "50.0,40.0"  # the head's tip is where the finger ends
    typed = action_overlay({"type": "type", "args": {"text": "hello"}}, [], (100, 200))
    assert typed.caption == "type “hello”" and not typed.taps
    gone = action_overlay({"type": "click", "args": {"element": 7}}, ELEMENTS, (100, 200))
    assert "element #7 not on this screen" in gone.caption and not gone.taps
    invalid = action_overlay(None, ELEMENTS, (100, 200), "no action found")
    assert invalid.invalid and invalid.caption == "invalid output: no action found"


def test_the_attempts_list_comes_in_pages_of_a_hundred_tasks():
    from mobileforge.viewer.attempts import COLUMNS, TASKS_PER_PAGE, filter_attempts
    from mobileforge.viewer.queries import AttemptFilters

    rows = pl.DataFrame([{"stage": "rollouts", "task_id": f"t{i:03d}", "attempt": a, "policy": "p", "app": "a",
                          "template": None, "difficulty": None, "split": None, "instruction": None,
                          "outcome": "failure", "judge": "j", "ground_truth": None, "steps": 1, "end_reason": "budget",
                          "hints": a - 1} for i in range(250) for a in (1, 2)], schema=COLUMNS)
    last = filter_attempts(rows, AttemptFilters(page=3))
    assert (last.pages, last.matching_tasks, len(last.groups)) == (3, 250, 250 - 2 * TASKS_PER_PAGE)
    assert last.groups[0].task_id == "t200" and [a["attempt"] for a in last.groups[0].attempts] == [1, 2]
    assert filter_attempts(rows, AttemptFilters(page=9)).groups == []
