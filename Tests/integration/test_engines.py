"""Issue 19, item 3: the dashboard, the inspector, the gallery and a share page in every browser engine.

Chromium (Selenium + chromedriver), WebKit (Selenium's WebKitGTK driver + Debian's webkit2gtk-driver on Xvfb)
and Firefox (firefox-esr over its own WebDriver BiDi); see engines.py. One browser per engine for the whole
module, a few focused tests each:

- the dashboard: START a workout, watch the countdown move, PAUSE, STOP (real pointer input), and check that
  permessage-deflate was negotiated where the engine offers it: the offer and the answer are read from the
  handshake as a proxy between the engine and the server sees it, and the page's `ws.extensions` must agree;
- the push inspector lists what happened and opens a record; the gallery renders; a share link's page counts
  down.

Tests wait for states (polling the page), never for a fixed time.
"""
from __future__ import annotations

import json
import os
import re
import socket
import urllib.request
from pathlib import Path

import pytest

from engines import Engine, launch, missing
from test_page import TcpProxy
from wsclient import connect, recv_until, request, run

ARTIFACTS = Path(os.environ.get("LIVEACTIVITY_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "Tests" / "artifacts")) / "engines"
ENGINES = ["chromium", "webkit", "firefox"]
# What each engine's WebSocket offers, as measured here (Chromium 156, WebKitGTK 2.50, Firefox 153 ESR).
OFFERS_DEFLATE = {"chromium": True, "webkit": True, "firefox": True}
COUNTDOWN = r"^\d+:[0-5]\d$"


@pytest.fixture(scope="module", params=ENGINES)
def engine(request):
    """One browser of each engine for the module (tests run grouped by engine)."""
    name = request.param
    absent = missing(name)
    if absent:
        why = f"{name}: not installed: {', '.join(absent)} (bash Deploy/setup-debian.sh)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)  # CI installs every engine: a missing one is a broken set-up, not a skip
        pytest.skip(why)
    browser = launch(name)
    try:
        yield browser
    finally:
        browser.quit()


class HandshakeProxy(TcpProxy):
    """A TcpProxy that keeps the head (request or status line and headers) of each connection's first bytes
    in both directions, so a test sees the WebSocket handshake exactly as the engine and the server sent it."""

    def __init__(self, target_port: int):
        self.heads: dict[int, dict[str, str]] = {}
        super().__init__(target_port)

    def _pump(self, src: socket.socket, dst: socket.socket, from_client: bool) -> None:
        key = id(src if from_client else dst)
        first = True
        try:
            while data := src.recv(65536):
                if first:
                    first = False
                    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
                    with self._lock:
                        self.heads.setdefault(key, {})["request" if from_client else "response"] = head
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def websocket_handshakes(self) -> list[dict[str, str]]:
        """Each WebSocket connection's request and response heads, complete ones only."""
        with self._lock:
            return [h for h in self.heads.values()
                    if h.get("request", "").startswith("GET /ws") and "response" in h]


def header(head: str, name: str) -> str:
    """A header's value in a request or response head ('' when absent)."""
    for line in head.split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == name.lower():
            return value.strip()
    return ""


def api(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)


def no_errors(engine: Engine) -> None:
    """Firefox reports console errors over BiDi; the Selenium engines are judged by what the page did."""
    errors = getattr(engine, "errors", lambda: [])()
    assert not errors, f"{engine.name} console errors:\n" + "\n".join(errors)


# -- tests ----------------------------------------------------------------------------------------

def test_dashboard_starts_counts_down_pauses_and_stops(server, engine):
    proxy = HandshakeProxy(server.port)
    try:
        engine.open(proxy.url + "/")
        engine.wait("the page to connect", "return document.getElementById('status').dataset.state === 'open'",
                    timeout=10)

        # permessage-deflate: offered by the engine, accepted by the server, reported by the page.
        [handshake] = proxy.websocket_handshakes()
        offer = header(handshake["request"], "Sec-WebSocket-Extensions")
        answer = header(handshake["response"], "Sec-WebSocket-Extensions")
        in_page = engine.js("return document.getElementById('status').dataset.extensions")
        offered = "permessage-deflate" in offer
        assert offered == OFFERS_DEFLATE[engine.name], f"{engine.name} offered {offer!r}"
        if offered:
            assert "permessage-deflate" in answer and "permessage-deflate" in in_page, (offer, answer, in_page)
        else:
            assert answer == "" and in_page == "", (answer, in_page)

        engine.click('button[data-workout="yoga"]')
        engine.wait("Yoga picked", "return document.querySelector('button[data-workout=yoga]')"
                                   ".getAttribute('aria-pressed') === 'true'")
        engine.click("#start")
        activity = engine.wait("a Lock Screen view",
                               "const e = document.querySelector('.lock-screen'); return e && e.dataset.activityId")
        countdown = f'.lock-item[data-activity-id="{activity}"] .countdown'
        first = engine.wait("a countdown", "const t = document.querySelector(arguments[0]).textContent;"
                                           "return new RegExp(arguments[1]).test(t) && t", countdown, COUNTDOWN)
        engine.wait("the countdown to move", "const t = document.querySelector(arguments[0]).textContent;"
                                             "return t !== arguments[1] && t", countdown, first, timeout=4)
        engine.wait("the island", "return !document.getElementById('island').hidden")

        engine.click(f'.lock-item[data-activity-id="{activity}"] button.control-pause')
        engine.wait("the paused state", """
            const row = document.querySelector(`.lock-item[data-activity-id="${arguments[0]}"]`);
            return row.dataset.paused === 'true' && row.querySelector('.badge').textContent === 'Paused'
              && row.querySelector('button.control-pause').textContent === 'RESUME';""", activity)
        assert api(f"{server.url}/api/activities/{activity}")["content"]["state"].get("pausedAt")
        engine.screenshot(ARTIFACTS / f"{engine.name}-dashboard.png")

        engine.click("#stop")
        engine.wait("no Lock Screen view", "return document.querySelectorAll('.lock-screen').length === 0")
        engine.wait("the stopped workout in the history",
                    "const r = document.querySelector('#history-rows tr');"
                    "return r && r.dataset.activityId === arguments[0] && r.dataset.outcome", activity)
        assert engine.js("return document.getElementById('status').dataset.state") == "open"
        no_errors(engine)
    finally:
        proxy.close()


def test_inspector_gallery_and_share_page(server, engine):
    async def setup() -> tuple[str, str]:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "jogging"},
                                     "durationSeconds": 600})
            shared = await request(ws, {"type": "share", "requestId": "sh", "activityId": ack["activityId"],
                                        "expiresIn": 600}, lambda m: m.get("requestId") == "sh")
            return ack["activityId"], shared["shares"][0]["url"]

    activity, share_path = run(setup())

    # The push inspector: connected, the start listed, a record opened.
    engine.open(server.url + "/inspector")
    engine.wait("the inspector to connect and list the start", """
        return document.getElementById('status').dataset.state === 'open'
          && [...document.querySelectorAll('#inspections li.inspection')].some((li) => li.dataset.activityId === arguments[0]);
    """, activity, timeout=10)
    engine.click("#inspections li.inspection button.summary")
    engine.wait("the record opened", "const b = document.querySelector('#inspections li.inspection button.summary');"
                                     "return b.getAttribute('aria-expanded') === 'true'")
    no_errors(engine)

    # The gallery: every presentation of the synthetic activities, with their countdowns.
    engine.open(server.url + "/gallery")
    counts = engine.wait("the gallery", """
        const n = document.querySelectorAll('figure').length, c = document.querySelectorAll('.countdown').length;
        return n > 10 && c > 10 && [n, c];""")
    assert counts[0] > 10
    engine.screenshot(ARTIFACTS / f"{engine.name}-gallery.png")

    # A share link's page: the activity, counting down, read-only.
    engine.open(server.url + share_path)
    name = engine.wait("the shared Lock Screen", "const e = document.querySelector('.lock-screen .workout-name');"
                                                 "return e && e.textContent")
    assert "Jogging" in name
    first = engine.text(".lock-screen .countdown")
    assert re.match(COUNTDOWN, first or ""), first
    engine.wait("the shared countdown to move", "const t = document.querySelector('.lock-screen .countdown').textContent;"
                                                "return t !== arguments[0] && t", first, timeout=4)
    assert engine.js("return document.querySelectorAll('button').length") == 0, "a share page has no controls"
    engine.screenshot(ARTIFACTS / f"{engine.name}-share.png")
    no_errors(engine)
