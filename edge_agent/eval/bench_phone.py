"""Phone page: click -> first pill / answer in headless Chromium on the scripted model, page bytes.

One run, side by side: the same `serve` (zero-latency scripted model) answers N questions from
the Python MQTT client and then N from the page in Debian's chromium (360x780, Playwright). The
page times each question itself (performance.now() from the Send click to the pill / answer
being drawn), so the figures hold no Playwright round trips. page_bytes is what the browser
downloads to show the page, uncompressed as Mosquitto serves it (it does not compress).
"""
from __future__ import annotations

import asyncio
import gzip
import os
import tempfile
import time
from pathlib import Path

from edge_agent.config import Settings
from edge_agent.eval.bench_mqtt import _ask
from edge_agent.ops.metrics import percentile
from edge_agent.net.rpc import AgentClient
from edge_agent.net.webpage import MQTT_JS_VERSION, PAGE_BYTES_GOAL, PAGE_FILES, WEB_DIR, page_bytes

QUESTIONS = 30  # measured questions each way
WARMUP = 5  # questions before measuring (first-use imports, the page's JIT)
QUESTION = "What is the date today?"
GOAL_OVER_ZERO_LATENCY_MS = 50.0  # click -> answer, beyond the model's (zero) time
STEP_TIMEOUT_MS = 20_000


def add_arguments(parser) -> None:
    parser.add_argument("--questions", type=int, default=QUESTIONS, help="measured questions each way")


async def _python_client(settings: Settings, n: int) -> list[float]:
    async with AgentClient(settings) as client:
        for _ in range(WARMUP):
            await _ask(client, QUESTION, 30)
        return [(await _ask(client, QUESTION, 30))[0] for _ in range(n)]


def _page_questions(rig, n: int) -> tuple[list[float], list[float], float, str]:
    """(click->pill ms, click->answer ms, load->connected ms, screenshot path) from the page."""
    context = rig.new_phone()
    page = context.new_page()
    started = time.perf_counter()
    page.goto(rig.url("phone"))
    page.wait_for_selector("#conn[data-state=online]", timeout=STEP_TIMEOUT_MS)
    connected_ms = (time.perf_counter() - started) * 1000
    pills, answers = [], []
    for i in range(WARMUP + n):
        page.fill("#q", QUESTION)
        page.click("#send")
        entry = page.locator("article.entry").last
        entry.locator(".answer").wait_for(timeout=STEP_TIMEOUT_MS)
        if i >= WARMUP:
            pills.append(float(entry.get_attribute("data-pill-ms")))
            answers.append(float(entry.get_attribute("data-answer-ms")))
    shot = rig.root / "phone.png"
    page.screenshot(path=str(shot))
    context.close()
    return pills, answers, connected_ms, str(shot)


def _stats(key: str, values: list[float]) -> dict:
    return {f"{key}_p50_ms": round(percentile(values, 50), 1), f"{key}_p95_ms": round(percentile(values, 95), 1),
            f"{key}_max_ms": round(max(values), 1)}


def run(args, settings: Settings) -> dict:
    from edge_agent.eval.phone_rig import PhoneRig, find_chromium

    sizes = page_bytes()
    gz = sum(len(gzip.compress((WEB_DIR / n).read_bytes(), 9)) for n in PAGE_FILES)
    out: dict = {"model": "scripted, zero latency", "broker": "mosquitto websockets listener on loopback",
                 "browser": find_chromium(), "mqtt_js": MQTT_JS_VERSION, "questions": args.questions,
                 "cpu_count": os.cpu_count(), "load_avg_1m_start": round(os.getloadavg()[0], 2),
                 "page_bytes": sizes["total"], "page_bytes_by_file": {k: v for k, v in sizes.items() if k != "total"},
                 "page_bytes_gzip": gz, "page_bytes_goal": PAGE_BYTES_GOAL,
                 "page_bytes_within_goal": sizes["total"] <= PAGE_BYTES_GOAL}
    with tempfile.TemporaryDirectory(prefix="edge-agent-bench-phone-") as tmp:
        rig = PhoneRig(Path(tmp))
        try:
            rig.start_agent_online(0.0)
            python_ms = asyncio.run(_python_client(rig.settings("phone2"), args.questions))
            rig.launch_browser()
            pills, answers, connected_ms, _ = _page_questions(rig, args.questions)
        finally:
            rig.close()
    out.update(_stats("python_client_answer", python_ms))
    out.update(_stats("click_to_first_pill", pills))
    out.update(_stats("click_to_answer", answers))
    out["page_load_to_connected_ms"] = round(connected_ms, 1)
    # What the page adds over the Python client on the same agent and model.
    out["page_overhead_p50_ms"] = round(out["click_to_answer_p50_ms"] - out["python_client_answer_p50_ms"], 1)
    out["goal_over_zero_latency_ms"] = GOAL_OVER_ZERO_LATENCY_MS
    out["click_to_answer_within_goal"] = out["click_to_answer_p95_ms"] <= GOAL_OVER_ZERO_LATENCY_MS
    out["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    return out
