"""Regenerates the README's and docs' screenshots (PNG) with headless Chromium against a real server:

- docs/screenshot.png: the dashboard with a workout, an emoji activity and a declared kind (the food-delivery
  tracker of Tests/fixtures/kinds) on the Lock Screen, the delivery (the most relevant) in the Dynamic Island;
- docs/images/presentations-{workout,emoji,delivery}.png: each kind's five presentations as the static
  renderings draw them (the delivery: the generated layout in the renderer's frame);
- docs/images/delivery-walkthrough.png: docs/TEMPLATES.md's walkthrough kind (examples/kinds/delivery).

Run after `swift build`: `.venv/bin/python Tests/visual/docs_screenshots.py`. Not a test; it asserts only that
each picture was taken. Waits for states, not for time."""
from __future__ import annotations

import asyncio
import base64
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Tests" / "integration"))
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from face_support import PRESENTATIONS, payloads  # noqa: E402
from wsclient import connect, recv_until, request  # noqa: E402


def wait(what, probe, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


async def start(ws_url: str) -> dict[str, str]:
    now = datetime.now(timezone.utc)
    delivery = payloads(now)["food-delivery"]
    messages = {
        "workout": {"attributesType": "workout", "attributes": {"workout": "yoga"}, "durationSeconds": 1200,
                    "relevanceScore": 100},
        "emoji": {"attributesType": "emoji", "attributes": {"name": "Morning run", "startTime": now.isoformat().replace("+00:00", "Z"),
                  "endTime": (now + timedelta(minutes=40)).isoformat().replace("+00:00", "Z")},
                  "content": {"state": {"emoji": "🏃"}, "relevanceScore": 10}},
        "delivery": {"attributesType": "food-delivery", "attributes": delivery["attributes"],
                     "content": {"state": delivery["state"], "relevanceScore": 50}},
    }
    ids = {}
    async with connect(ws_url) as ws:
        await recv_until(ws, lambda m: m["type"] == "snapshot")
        for name, body in messages.items():
            if "relevanceScore" in body and "content" not in body:
                body = {k: v for k, v in body.items() if k != "relevanceScore"}
            ack = await request(ws, {"type": "start", "requestId": name, **body})
            assert ack["type"] == "ack", ack
            ids[name] = ack["activityId"]
    return ids


def serve(kinds: Path) -> tuple[subprocess.Popen, str]:
    """A server with the kind folders of `kinds`, in a store of its own (not the work tree's); its base URL."""
    server = subprocess.Popen([str(REPO / ".build/debug/liveactivity"), "serve", "--port", "0", "--public", str(REPO / "Public"),
                               "--kinds", str(kinds)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              cwd=tempfile.mkdtemp(prefix="docs-screenshots-"))
    line = wait("the server", lambda: (lambda text: text if "Listening" in text or not text else None)(server.stdout.readline()))
    return server, re.search(r"http://[\d.]+:\d+", line).group(0)


def sheet(driver, base: str, activity: str, out: Path) -> None:
    """The five static renderings of `activity`, side by side, as one PNG."""
    shots = []
    for presentation in PRESENTATIONS:
        driver.get(f"{base}/activities/{activity}/render/{presentation}?theme=light&live=0")
        frame = wait("the rendering", lambda: driver.find_elements(By.CSS_SELECTOR, "main > *:not(h1)"))[0]
        shots.append((presentation, frame.screenshot_as_base64))
    cells = "".join(f"<figure><img src='data:image/png;base64,{shot}'><figcaption>{p}</figcaption></figure>" for p, shot in shots)
    driver.get("data:text/html;base64," + base64.b64encode(f"""<!doctype html><style>
      body {{ margin: 0; padding: 16px; background: #e5e5ea; font: 12px system-ui, sans-serif; display: flex;
              flex-wrap: wrap; gap: 16px; align-items: flex-start; width: 1100px; }}
      figure {{ margin: 0; display: flex; flex-direction: column; align-items: center; gap: 6px; }}
    </style>{cells}""".encode()).decode())
    driver.find_element(By.TAG_NAME, "body").screenshot(str(out))


async def start_walkthrough(ws_url: str) -> str:
    body = payloads(datetime.now(timezone.utc))["food-delivery"]
    async with connect(ws_url) as ws:
        await recv_until(ws, lambda m: m["type"] == "snapshot")
        ack = await request(ws, {"type": "start", "requestId": "d", "attributesType": "delivery",
                                 "attributes": body["attributes"], "content": {"state": body["state"]}})
        assert ack["type"] == "ack", ack
        return ack["activityId"]


def main() -> None:
    server, base = serve(REPO / "Tests/fixtures/kinds")
    example, example_base = serve(REPO / "examples/kinds")
    try:
        ids = asyncio.run(start(base.replace("http", "ws") + "/ws"))
        walkthrough = asyncio.run(start_walkthrough(example_base.replace("http", "ws") + "/ws"))
        options = webdriver.ChromeOptions()
        for argument in ("--headless=new", "--no-sandbox", "--window-size=1280,900", "--force-device-scale-factor=1",
                         "--force-color-profile=srgb", "--blink-settings=preferredColorScheme=1"):
            options.add_argument(argument)
        driver = webdriver.Chrome(options=options)
        try:
            driver.get(base + "/")
            wait("three Lock Screens", lambda: len(driver.find_elements(By.CSS_SELECTOR, ".lock-item .lock-screen")) == 3)
            wait("the island", lambda: driver.find_element(By.ID, "island").get_attribute("data-activity-id") == ids["delivery"])
            time.sleep(0.5)  # icons inlined, transitions done: a picture, not a check
            driver.save_screenshot(str(REPO / "docs" / "screenshot.png"))
            for name, activity in ids.items():
                sheet(driver, base, activity, REPO / "docs" / "images" / f"presentations-{name}.png")
            sheet(driver, example_base, walkthrough, REPO / "docs" / "images" / "delivery-walkthrough.png")
        finally:
            driver.quit()
    finally:
        for process in (server, example):
            process.terminate()
            process.wait(timeout=10)
    print("wrote docs/screenshot.png, docs/images/presentations-{workout,emoji,delivery}.png and delivery-walkthrough.png")


if __name__ == "__main__":
    main()
