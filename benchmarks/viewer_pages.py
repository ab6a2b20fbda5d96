"""How fast the viewer's pages answer on a stored run (target: under a second each).

Serves the viewer (uvicorn, in a thread) over a storage root and fetches each page over HTTP with
httpx: once right after the server starts (first: its tables and episodes read from the store) and
then `--repeats` times (median and p95; tables and the last episodes are cached in the process), and
each page's screenshots as a browser does (six at a time). Before those, episode pages are fetched for
`--distinct` different episodes, each once (what browsing attempts costs, nothing cached yet).

Baseline, measured in the same run: the rows of one episode, screenshots included, read from the
experiment's `rollout_steps` table with DuckDB — what a viewer answering from the tables alone would
pay per episode; the viewer reads the episode's staged attempt instead.

Run: python benchmarks/viewer_pages.py [--root ROOT] [--experiment default] [--repeats 20] [--distinct 20]
     [--screens docs/screens]   (also saves a full-page screenshot of each page with headless chromium)
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from html import unescape
from pathlib import Path

import httpx
import polars as pl

from mobileforge.viewer.attempts import template_facts
from mobileforge.viewer.episodes import episode_url
from mobileforge.viewer.server import serving_in_background
from mobileforge.viewer.store import ROLLOUT_STAGE, EpisodeKey, ViewerStore
from resources.storage import StorageLocation
from resources.viewer_links import experiment_path

BROWSER_CONNECTIONS = 6  # what a browser opens to one host


def _ms(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000


def pages_of(store: ViewerStore, experiment: str) -> tuple[dict[str, str], list[str]]:
    """The pages to time, by name, and the URLs of `distinct` rollout episodes (longest first)."""
    attempts = store.table(experiment, "rollout_attempts", ["task_id", "attempt", "policy_version", "n_steps",
                                                            "critic_decision"])
    if attempts is None:
        raise SystemExit(f"experiment {experiment!r} has no stored rollout_attempts under {store.location.root_uri}")
    longest = attempts.sort("n_steps", descending=True)
    episodes = [episode_url(EpisodeKey(experiment, ROLLOUT_STAGE, r["policy_version"], r["task_id"], r["attempt"]))
                for r in longest.iter_rows(named=True)]
    # a task whose first attempt failed and a later one, with the hints, succeeded; else the longest
    by_task = attempts.sort("attempt").group_by("task_id").agg(pl.col("critic_decision").first().alias("first"),
                                                                pl.col("critic_decision").max().alias("best"),
                                                                pl.col("n_steps").sum())
    helped = by_task.filter((pl.col("first") == 0) & (pl.col("best") == 1))
    task = (helped if helped.height else by_task).sort("n_steps", "task_id", descending=True)["task_id"][0]
    pages = {"experiments": "/", "attempts": experiment_path(experiment, "attempts"),
             "attempts filtered": experiment_path(experiment, "attempts", stage="rollouts", outcome="failure"),
             "task (K attempts side by side)": experiment_path(experiment, "task", task=task),
             "episode (longest)": episodes[0]}
    results = store.table(experiment, "benchmark_results", ["policy_id", "task_id", "attempt", "success"])
    if results is not None:
        pages["benchmark"] = experiment_path(experiment, "benchmark")
        adapted = sorted(set(results["policy_id"]) - {"base"})
        if adapted:
            won = results.filter(pl.col("success") & (pl.col("policy_id") == adapted[0]))
            task_id = (won if won.height else results)["task_id"][0]
            pages[f"compare (base vs {adapted[0]})"] = experiment_path(experiment, "compare", task=task_id,
                                                                        policy=adapted[0])
    forks = store.table(experiment, "fork_pairs", ["task_id", "success_attempt", "failed_attempt"])
    if forks is not None and forks.height:
        pages["forks"] = experiment_path(experiment, "forks")
        first = forks.row(0, named=True)
        pages["fork"] = experiment_path(experiment, "fork", task=first["task_id"], success=first["success_attempt"],
                                        failed=first["failed_attempt"])
    return pages, episodes


def fetch(client: httpx.Client, path: str) -> tuple[float, str]:
    start = time.perf_counter()
    response = client.get(path, follow_redirects=True)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise SystemExit(f"{path}: HTTP {response.status_code}: {response.text[-300:]}")
    return elapsed, response.text


def fetch_images(client: httpx.Client, html: str) -> tuple[float, int]:
    """Seconds to fetch every image of a page six at a time, and how many there were."""
    sources = [unescape(s) for s in re.findall(r'<img src="([^"]+)"', html)]
    start = time.perf_counter()
    with ThreadPoolExecutor(BROWSER_CONNECTIONS) as pool:
        for response in pool.map(client.get, sources):
            response.raise_for_status()
    return time.perf_counter() - start, len(sources)


def duckdb_episode_seconds(location: StorageLocation, experiment: str, episodes: int) -> list[float]:
    """The baseline: one episode's `rollout_steps` rows, screenshots included, through DuckDB."""
    from resources.catalog import open_catalog

    con = open_catalog(location)
    view = f'"{experiment}__rollout_steps"'
    keys = con.execute(f"SELECT DISTINCT task_id, attempt FROM {view} ORDER BY ALL LIMIT {episodes}").fetchall()
    seconds = []
    for task_id, attempt in keys:
        start = time.perf_counter()
        con.execute(f"SELECT * FROM {view} WHERE task_id = ? AND attempt = ?", [task_id, attempt]).fetchall()
        seconds.append(time.perf_counter() - start)
    return seconds


def save_screens(url: str, pages: dict[str, str], directory: Path) -> None:
    from playwright.sync_api import sync_playwright

    directory.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        for name, path in pages.items():
            if name in ("experiments", "attempts filtered"):  # little to see that the others do not show
                continue
            page.goto(url + path, wait_until="networkidle")
            file = directory / f"viewer-{name.split(' (')[0].replace(' ', '-')}.png"
            page.screenshot(path=file, full_page=False)
            print(f"saved {file}")
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=None, help="storage root (default: the one `mobileforge run` writes to)")
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--distinct", type=int, default=20, help="different episode pages, each fetched once")
    parser.add_argument("--screens", type=Path, default=None, help="save a screenshot of each page here")
    args = parser.parse_args()
    location = StorageLocation(root=args.root)
    store = ViewerStore(location)
    pages, episodes = pages_of(store, args.experiment)
    template_facts()  # as `mobileforge view` does before serving
    print(f"store {location.root_uri}, experiment {args.experiment}: {len(episodes)} rollout episodes")
    print(f"{'page':34} {'first ms':>9} {'median ms':>10} {'p95 ms':>8} {'KiB':>6} {'images':>7} {'images ms':>10}")
    with serving_in_background(location) as url, httpx.Client(base_url=url, timeout=60) as client:
        # first, while nothing is cached: the pages below read some of these episodes again
        distinct = [fetch(client, path)[0] for path in episodes[:args.distinct]]
        for name, path in pages.items():
            first, html = fetch(client, path)
            repeats = [fetch(client, path)[0] for _ in range(args.repeats)]
            median, p95 = _ms(repeats)
            images_s, images = fetch_images(client, html)
            print(f"{name:34} {first * 1000:9.0f} {median:10.1f} {p95:8.1f} {len(html.encode()) / 1024:6.0f} "
                  f"{images:7d} {images_s * 1000:10.0f}")
        median, p95 = _ms(distinct)
        print(f"{f'episode, {len(distinct)} distinct, uncached':34} {'':>9} {median:10.1f} {p95:8.1f}")
        baseline = duckdb_episode_seconds(location, args.experiment, args.distinct)
        base_median, base_p95 = _ms(baseline)
        print(f"{'baseline: one episode via DuckDB':34} {'':>9} {base_median:10.1f} {base_p95:8.1f}")
        print(f"distinct episode pages (HTML) take {median / base_median:.2f}x the baseline's median")
        if args.screens:
            save_screens(url, pages, args.screens)


if __name__ == "__main__":
    main()
