"""The viewer as a person sees it: Debian's headless chromium, driven by Playwright, over the viewer
served by uvicorn on a small store. It follows the links a person would (the task list, an episode,
the benchmark, base against an adapted policy), checks that every screenshot loaded with its action
drawn over it and that the page logged no error, and saves a screenshot of each page."""

from __future__ import annotations

import pytest
from playwright.sync_api import sync_playwright  # the dev extra; the browser is Debian's (never `playwright install`)

VIEWPORT = {"width": 1400, "height": 900}
EAGER = "document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager')"  # load what is off screen too
IMAGES_LOADED = "Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"
# every overlay mark is centred inside the screenshot it is drawn on (the overlay lies over its image)
MARKS_INSIDE = """() => Array.from(document.querySelectorAll('figure.shot')).every(fig => {
  const img = fig.querySelector('img').getBoundingClientRect();
  return Array.from(fig.querySelectorAll('svg circle, svg line, svg rect')).every(mark => {
    const r = mark.getBoundingClientRect(), x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
    return x >= img.left && x <= img.right && y >= img.top && y <= img.bottom;
  });
})"""


@pytest.fixture(scope="module")
def page(chromium, viewer_url):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport=VIEWPORT)
        page.errors = []
        page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.on("response", lambda response: page.errors.append(f"{response.status} {response.url}")
                if response.status >= 400 else None)
        yield page
        browser.close()


def _settled(page, screens_dir, name: str) -> None:
    page.evaluate(EAGER)
    page.wait_for_load_state("networkidle")
    page.wait_for_function(IMAGES_LOADED, timeout=20_000)
    assert page.evaluate(MARKS_INSIDE), f"{name}: an overlay mark lies outside its screenshot"
    assert page.errors == [], f"{name}: {page.errors}"
    page.screenshot(path=screens_dir / f"viewer-{name}.png", full_page=True)


def test_a_person_follows_the_task_list_to_an_episode_and_its_attempts(page, viewer_url, screens_dir):
    page.goto(f"{viewer_url}/e/default/attempts")
    rows = page.locator("#tasks tr")
    assert rows.count() == 1 + 2 + 2 * 2  # the header, 2 rollout tasks, 2 benchmark tasks of each of 2 policies
    _settled(page, screens_dir, "attempts")

    page.get_by_role("link", name="1 ✗").first.click()  # attempt 1 of the first rollout task
    page.wait_for_url("**/episode?**")
    steps = page.locator("section.step")
    assert steps.count() >= 3 and page.locator("figure.shot svg").count() == steps.count() - 1  # the final screen: no mark
    assert page.locator("figure.shot svg circle.tap").count() >= 1 and page.locator("svg line.arrow").count() >= 1
    assert page.locator("pre.raw-output").count() == steps.count() - 1
    assert page.get_by_text("critic: unreasonable").count() >= 1
    _settled(page, screens_dir, "episode")

    page.get_by_role("link", name="all attempts of this task side by side").click()
    assert page.locator("section.column.attempt").count() == 2
    assert page.get_by_text("Hint from attempt 1:").count() == 1
    _settled(page, screens_dir, "task")


def test_a_person_compares_the_base_with_an_adapted_policy(page, viewer_url, screens_dir):
    page.goto(f"{viewer_url}/e/default/benchmark")
    gained = page.locator("#per-task td.gained")
    assert gained.count() == 1
    _settled(page, screens_dir, "benchmark")

    gained.get_by_role("link", name="vs base").click()
    page.wait_for_url("**/compare?**")
    columns = page.locator("section.column.policy")
    assert columns.count() == 2 and columns.nth(0).locator("h2").inner_text() == "base"
    assert columns.nth(1).locator(".badge.success").count() == 2 and columns.nth(0).locator(".badge.failure").count() == 2
    _settled(page, screens_dir, "compare")

    columns.nth(1).get_by_role("link", name="Attempt 1").click()
    page.wait_for_url("**/episode?**")
    assert "benchmark/rft" in page.locator("dl.facts").inner_text()
    _settled(page, screens_dir, "benchmark-episode")


def test_a_person_opens_a_fork_pair(page, viewer_url, screens_dir):
    page.goto(f"{viewer_url}/e/default/forks")
    _settled(page, screens_dir, "forks")
    page.locator("#fork-pairs a strong").first.click()
    page.wait_for_url("**/fork?**")
    assert page.locator("figure.shot.marked").count() >= 2  # a fork step in each attempt
    _settled(page, screens_dir, "fork")
