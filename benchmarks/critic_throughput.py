"""Critic-call throughput of `ops.agent.llm.LLMClient` against a fixed-latency local endpoint.

Each call is a critic final-decision request (MobileForge prompt 3: text plus one PNG as a data
URL) answered with valid JSON that is validated into `FinalDecision`. The local
OpenAI-compatible server (tests/support/openai_server.py, run in its own process so it does
not share the client's GIL) waits `--latency-ms` before every answer, so the ideal rate at
concurrency c is c / latency. Printed per concurrency: calls, wall time, calls/s, the ideal,
the fraction of the ideal reached, median request latency (send to answer), and the most requests the server saw
in flight. A run against a zero-latency server shows the client's own ceiling on this
machine (litellm + HTTP + JSON validation per call), measured in the same run.

Run: python benchmarks/critic_throughput.py [--latency-ms 200 --concurrency 1 8 32 --rounds 5]
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # repo root, when run as a script

from PIL import Image  # noqa: E402

from ops.agent.llm import JSONRequest, LLMClient, LLMConfig  # noqa: E402
from ops.agent.llm_errors import LLMCallError  # noqa: E402
from ops.judging.critic.prompts import CriticStep, FinalDecision, build_final_decision_prompt

ROOT = Path(__file__).resolve().parents[1]

N_STEPS = 6
ANSWER = json.dumps({
    "decision": 0,
    "reason": "The Wi-Fi switch was never turned on.",
    "failure_step": 4,
    "task_feasible": True,
    "task_feasible_reason": "Settings has a Wi-Fi switch.",
    "task_barriers": [],
    "step_analysis": {
        str(i): {"reasonableness": "reasonable" if i != 4 else "unreasonable", "explanation": f"step {i}"}
        for i in range(1, N_STEPS + 1)
    },
})


def _composite_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (540, 600), (240, 240, 240)).save(buffer, format="PNG")
    return buffer.getvalue()


def _requests(n: int) -> list[JSONRequest]:
    steps = [CriticStep(i, "click", f"element {i}") for i in range(1, N_STEPS + 1)]
    messages = build_final_decision_prompt("Turn on Wi-Fi", steps, _composite_png())
    return [JSONRequest(messages, FinalDecision, context={"n_steps": N_STEPS}, key=str(i)) for i in range(n)]


@contextmanager
def endpoint(latency_s: float) -> Iterator[str]:
    """Base URL of a fixed-latency server running in a child process."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server",
         "--content", ANSWER, "--latency-ms", str(latency_s * 1000)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )
    try:
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def server_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/stats", timeout=5) as response:
        return json.load(response)


def measure(base_url: str, concurrency: int, calls: int) -> tuple[float, float, int]:
    """Wall seconds and median request latency (send to answer, without waiting for a slot)
    for `calls` critic calls at `concurrency`, and how many failed."""
    client = LLMClient(LLMConfig(model="openai/critic", api_base=base_url, max_concurrency=concurrency,
                                 timeout_s=30.0, max_retries=0))
    client.map_json(_requests(concurrency))  # open the connections first: measure the steady state
    client.stats.latencies_s.clear()
    start = time.perf_counter()
    results = client.map_json(_requests(calls))
    wall = time.perf_counter() - start
    return wall, client.stats.summary()["request_latency_p50_s"], sum(isinstance(r, LLMCallError) for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--rounds", type=int, default=5, help="calls per run = rounds × concurrency (at least 10)")
    args = parser.parse_args()
    latency = args.latency_ms / 1000

    print(f"critic final-decision JSON calls; server latency {args.latency_ms:.0f} ms")
    print(f"{'concurrency':>11} {'calls':>6} {'wall s':>7} {'calls/s':>8} {'ideal/s':>8} {'of ideal':>9} "
          f"{'p50 ms':>7} {'in flight':>9} {'failed':>6}")
    for c in args.concurrency:
        with endpoint(latency) as base_url:
            measure(base_url, 1, 2)  # the first litellm call pays lazy imports; keep it out of the numbers
            calls = max(10, args.rounds * c)
            wall, p50, failed = measure(base_url, c, calls)
            in_flight = server_stats(base_url)["max_in_flight"]
        rate, ideal = calls / wall, c / latency
        print(f"{c:>11} {calls:>6} {wall:>7.2f} {rate:>8.1f} {ideal:>8.1f} {rate / ideal:>9.1%} "
              f"{p50 * 1000:>7.0f} {in_flight:>9} {failed:>6}")
    c = max(args.concurrency)
    calls = max(10, args.rounds * c)
    with endpoint(0.0) as base_url:
        measure(base_url, 1, 2)
        wall, p50, failed = measure(base_url, c, calls)
    print(f"client ceiling (0 ms server, concurrency {c}): {calls / wall:.1f} calls/s, "
          f"{wall / calls * 1000:.1f} ms per call, p50 {p50 * 1000:.0f} ms, failed {failed}")


if __name__ == "__main__":
    main()
