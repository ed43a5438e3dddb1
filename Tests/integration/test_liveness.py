"""Issue 19, item 1: a connection that dies without a close is noticed (docs/PROTOCOL.md, `heartbeat`).

- The server sends a `heartbeat` every `--heartbeat-seconds` to every watching client, whatever runs.
- A TCP proxy between the client and the server stops forwarding without closing anything (a laptop that
  slept, a NAT that dropped the flow): within 3 heartbeat intervals the dashboard (headless Chromium) and
  `liveactivity watch` say they are reconnecting; once the proxy forwards again they are back, resumed with
  `since` so that what changed meanwhile is not missed.
- The dashboard also checks at once on `online`, on `visibilitychange` and after its timers jumped.

Tests wait for states (the page's DOM, output lines), never for a fixed time.
"""
from __future__ import annotations

import json
import socket
import subprocess
import threading
import time

from selenium.webdriver.common.by import By

from schema_check import checked
from test_cli import LineReader, spawn, stop_process
from test_page import (  # noqa: F401  (browser is a fixture)
    assert_clean_console, browser, lock_screens, open_dashboard, severe_console_entries, start_workout,
    status_state, wait_for,
)
from test_page_controls import RecordingProxy
from wsclient import connect, recv_json, recv_until, request, run, send_json

INTERVAL = 1  # --heartbeat-seconds in these tests


class StallingProxy(RecordingProxy):
    """A RecordingProxy that can stop forwarding in both directions without closing anything, and resume.

    While stalled, bytes stay in the kernel's buffers (nothing is lost or reordered) and new connections
    are accepted but get no further than the client's first bytes.
    """

    def __init__(self, target_port: int):
        self._flowing = threading.Event()
        self._flowing.set()
        super().__init__(target_port)

    def stall(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    def _pump(self, src: socket.socket, dst: socket.socket, from_client: bool) -> None:
        try:
            first = True
            while True:
                self._flowing.wait()
                data = src.recv(65536)
                if not data:
                    break
                if from_client and first:
                    self._first_client_chunk(data)
                    first = False
                self._flowing.wait()
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class StderrReader(LineReader):
    """A LineReader over the subprocess's standard error."""

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)


def status(driver) -> dict:
    return driver.execute_script("""
        const s = document.getElementById('status');
        return {state: s.dataset.state, text: s.textContent, lost: s.dataset.lost || null,
                heartbeat: s.dataset.heartbeatSeconds || null};
    """)


def is_reconnecting(driver) -> dict | None:
    s = status(driver)
    return s if s["state"] != "open" and "reconnecting" in s["text"].lower() else None


def not_websocket_noise(message: str) -> bool:
    """Console lines about the dropped and retried WebSockets are expected here."""
    return "WebSocket" in message


# -- the server's heartbeat ----------------------------------------------------------------------------

def test_heartbeats_reach_every_watching_client_when_nothing_runs(start_server):
    srv = start_server("--heartbeat-seconds", str(INTERVAL))

    async def body():
        async with connect(srv.ws_url) as raw:
            ws = checked(raw)  # heartbeats are validated against docs/schemas/server-heartbeat.json
            snapshot = await recv_json(ws)
            assert snapshot["type"] == "snapshot" and snapshot["activities"] == []
            beats = []
            while len(beats) < 3:
                message = await recv_json(ws, timeout=3 * INTERVAL, include_heartbeats=True)
                assert message["type"] == "heartbeat", message
                beats.append(message)
            assert all(b["intervalSeconds"] == INTERVAL for b in beats)
            times = [time.mktime(time.strptime(b["serverTime"][:19], "%Y-%m-%dT%H:%M:%S")) for b in beats]
            assert [round(b - a) for a, b in zip(times, times[1:])] == [INTERVAL, INTERVAL], beats
            # A share viewer (scoped to one activity) is watching too.
            started = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                         "durationSeconds": 600})
            share = await request(ws, {"type": "share", "requestId": "sh", "activityId": started["activityId"],
                                       "expiresIn": 600}, lambda m: m.get("requestId") == "sh")
            token = share["shares"][0]["url"].rsplit("/", 1)[1]
            async with connect(f"{srv.ws_url}?share={token}") as viewer:
                await recv_until(viewer, lambda m: m["type"] == "snapshot")
                beat = await recv_json(viewer, timeout=3 * INTERVAL, include_heartbeats=True)
                while beat["type"] != "heartbeat":
                    beat = await recv_json(viewer, timeout=3 * INTERVAL, include_heartbeats=True)
                assert beat["intervalSeconds"] == INTERVAL
    run(body())


# -- the dashboard ---------------------------------------------------------------------------------------

def test_page_notices_a_silent_connection_and_resumes_without_missing_anything(start_server, browser):
    srv = start_server("--heartbeat-seconds", str(INTERVAL))
    proxy = StallingProxy(srv.port)
    try:
        open_dashboard(browser, proxy.url)
        wait_for("the heartbeat interval learned", lambda: status(browser)["heartbeat"] == str(INTERVAL))
        start_workout(browser, "yoga", duration=600)
        [screen] = wait_for("one .lock-screen", lambda: lock_screens(browser))
        yoga = screen.get_attribute("data-activity-id")

        proxy.stall()
        lost = wait_for("the page to say it is reconnecting", lambda: is_reconnecting(browser), timeout=3 * INTERVAL)
        assert lost["lost"] == "silent", lost
        assert "no data from the server" in lost["text"].lower(), lost

        # While the page is cut off, another client changes things: the page must not miss them.
        async def meanwhile() -> str:
            async with connect(srv.ws_url) as ws:
                await recv_until(ws, lambda m: m["type"] == "snapshot")
                await request(ws, {"type": "pause", "requestId": "p", "activityId": yoga})
                ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "jogging"},
                                         "durationSeconds": 300, "relevanceScore": 50})
                return ack["activityId"]

        jogging = run(meanwhile())
        proxy.resume()
        wait_for("#status open again", lambda: status_state(browser) == "open", timeout=15)
        wait_for("the jogging workout started meanwhile", lambda: [
            s.get_attribute("data-activity-id") for s in lock_screens(browser)] == [jogging, yoga], timeout=5)
        paused = browser.find_element(By.CSS_SELECTOR, f'.lock-item[data-activity-id="{yoga}"]')
        wait_for("the yoga workout paused meanwhile", lambda: paused.get_attribute("data-paused") == "true")
        # It resumed after the last event it had applied (not a fresh snapshot).
        resumed = [line for line in proxy.ws_request_lines() if "since=" in line]
        assert resumed, proxy.ws_request_lines()
        assert status(browser)["lost"] is None and status(browser)["text"].startswith("Connected")
        severe = severe_console_entries(browser, ignore=not_websocket_noise)
        assert not severe, "\n".join(e["message"] for e in severe)
    finally:
        proxy.close()


def test_page_checks_at_once_when_it_comes_back_online_or_visible(start_server, browser):
    """With the default 15 s heartbeat the silence rule would take 37.5 s: an `online` or `visibilitychange`
    event makes the page ask the server at once, and no answer within 4 s means the connection is dead."""
    srv = start_server()
    proxy = StallingProxy(srv.port)
    try:
        open_dashboard(browser, proxy.url)
        for event in ("window.dispatchEvent(new Event('online'))",
                      "document.dispatchEvent(new Event('visibilitychange'))"):
            proxy.stall()
            browser.execute_script(event)
            lost = wait_for(f"the page to give up after {event}", lambda: is_reconnecting(browser), timeout=6)
            assert lost["lost"] == "unanswered", lost
            proxy.resume()
            wait_for("#status open again", lambda: status_state(browser) == "open", timeout=15)
    finally:
        proxy.close()


def test_page_checks_after_its_timers_jumped(start_server, browser):
    """The machine slept: the page's timers fire late. Keeping its main thread busy for a few seconds does the
    same; the page then asks the server at once (the 15 s heartbeat's silence rule would take 37.5 s)."""
    srv = start_server()
    proxy = StallingProxy(srv.port)
    try:
        open_dashboard(browser, proxy.url)
        proxy.stall()
        # Keep the page's main thread busy for 4.5 s: no timer can fire meanwhile, as when the machine sleeps.
        browser.execute_script("const end = Date.now() + 4500; while (Date.now() < end) { /* asleep */ }")
        lost = wait_for("the page to give up after the jump", lambda: is_reconnecting(browser), timeout=6)
        assert lost["lost"] == "unanswered", lost
        proxy.resume()
        wait_for("#status open again", lambda: status_state(browser) == "open", timeout=15)
    finally:
        proxy.close()


def test_inspector_notices_a_silent_connection_too(start_server, browser):
    srv = start_server("--heartbeat-seconds", str(INTERVAL))
    proxy = StallingProxy(srv.port)
    try:
        browser.get(proxy.url + "/inspector")
        wait_for("the inspector live", lambda: status_state(browser) == "open", timeout=10)
        run(_start_directly(srv.ws_url))
        wait_for("the start listed", lambda: browser.execute_script(
            "return document.querySelectorAll('#inspections li.inspection').length === 1"))
        wait_for("the heartbeat interval learned", lambda: browser.execute_script(
            "return document.getElementById('status').dataset.heartbeatSeconds") == str(INTERVAL))
        proxy.stall()
        wait_for("the inspector to reconnect", lambda: status_state(browser) != "open", timeout=3 * INTERVAL)
        run(_start_directly(srv.ws_url))  # recorded while the inspector is cut off
        proxy.resume()
        wait_for("the inspector live again", lambda: status_state(browser) == "open", timeout=15)
        wait_for("the record made meanwhile", lambda: browser.execute_script(
            "return document.querySelectorAll('#inspections li.inspection').length === 2"))
    finally:
        proxy.close()


def test_liveness_rules_in_the_browser(server, browser):
    """liveness.js with a fake clock: the interval comes from heartbeats; 2.5 silent intervals are dead;
    a timer jump sends a check whose own reply (not just any message) must come within 4 s."""
    browser.get(server.url + "/")
    result = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('/js/liveness.js').then((l) => {
          let now = 1_000_000;
          const dead = [], probes = [];
          const live = new l.Liveness({onDead: (r) => dead.push(r), now: () => now,
                                       probe: () => { probes.push(now); return `p${probes.length}`; }});
          const step = (ms) => { for (let t = 0; t < ms; t += 250) { now += 250; live.look(); } };
          live.opened();
          step(60_000);                                      // no interval known yet: silence proves nothing
          const unarmed = dead.length;
          live.heard({type: 'heartbeat', intervalSeconds: 2}, now);
          step(4_750);                                       // 4.75 s <= 2.5 x 2 s
          const alive = dead.length;
          step(500);                                         // 5.25 s > 5 s
          const silent = dead.slice();
          live.opened(); live.heard({type: 'tick'}, now);
          now += 10_000; live.look();                        // a jump: check, do not declare dead yet
          const afterJump = [dead.length, probes.length];
          step(1_000);
          live.heard({type: 'tick'}, now);                   // a message, but not the reply: still waiting
          const waiting = live._probeDueMs !== null;
          live.heard({type: 'caughtUp', requestId: 'p1'}, now);  // the reply: answered
          step(4_000);
          const answered = dead.length;
          live.check('online'); step(4_250);                 // unanswered (limit: min(4 s, 5 s))
          done({unarmed, alive, silent, afterJump, waiting, answered, last: dead[dead.length - 1],
                every: [null, 1000, 15000, 100].map(l.checkEveryMs),
                text: l.deadReasonText({kind: 'silent', silenceMs: 5250})});
        }).catch((e) => done({error: String(e)}));
    """)
    assert "error" not in result, result
    assert result["unarmed"] == 0 and result["alive"] == 0
    assert result["silent"] == [{"kind": "silent", "silenceMs": 5250}]
    assert result["afterJump"] == [1, 1]  # no new death, one probe
    assert result["waiting"] is True
    assert result["answered"] == 1
    assert result["last"] == {"kind": "unanswered", "trigger": "online"}
    assert result["every"] == [1000, 250, 1000, 50]
    assert result["text"] == "No data from the server for 5 s"
    assert_clean_console(browser)


# -- liveactivity watch ----------------------------------------------------------------------------------

def test_watch_notices_a_silent_connection_and_resumes_without_missing_anything(start_server):
    srv = start_server("--heartbeat-seconds", str(INTERVAL))
    proxy = StallingProxy(srv.port)
    proc, out = spawn("watch", "--json", "--server", f"ws://127.0.0.1:{proxy.port}/ws")
    err = StderrReader(proc)
    try:
        snapshot = json.loads(out.next(timeout=10))
        assert snapshot["type"] == "snapshot"
        out.until(lambda line: json.loads(line)["type"] == "heartbeat", timeout=3 * INTERVAL)

        proxy.stall()
        lost = err.until(lambda line: "connection lost" in line, timeout=3 * INTERVAL)
        assert "nothing from the server" in lost and "heartbeat every 1 s" in lost, lost

        activity = run(_start_directly(srv.ws_url))  # while watch is cut off
        proxy.resume()
        started = json.loads(out.until(lambda line: json.loads(line).get("event") == "started", timeout=20))
        assert started["activity"]["id"] == activity and started["sequence"] == snapshot["sequence"] + 1
        caught_up = json.loads(out.until(lambda line: json.loads(line)["type"] in ("caughtUp", "snapshot")))
        assert caught_up["type"] == "caughtUp", caught_up
        err.until(lambda line: "reconnected; resuming after event" in line)
        assert any(f"since={snapshot['sequence']}" in line for line in proxy.ws_request_lines()), proxy.ws_request_lines()
    finally:
        proxy.close()
        assert stop_process(proc, timeout=5) == 0


async def _start_directly(ws_url: str) -> str:
    async with connect(ws_url) as ws:
        await recv_until(ws, lambda m: m["type"] == "snapshot")
        ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "aerobics"},
                                 "durationSeconds": 120})
        return ack["activityId"]


# -- issue 29 item 3: the interval from the first message -----------------------------------------------------

FIRST_INTERVAL = 4  # --heartbeat-seconds: long enough that no heartbeat reaches the client before the freeze


def _right_after_a_heartbeat(ws_url: str) -> None:
    """Returns just after the server sent a heartbeat, so the next one is FIRST_INTERVAL seconds away: a client
    that connects now hears its first heartbeat only after the freeze, 1 s after it connected."""
    async def body():
        async with connect(ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            while (await recv_json(ws, timeout=3 * FIRST_INTERVAL, include_heartbeats=True))["type"] != "heartbeat":
                pass
    run(body())


def test_the_first_messages_carry_the_heartbeat_interval(start_server):
    """`snapshot`, `caughtUp` and `hello` say `heartbeatSeconds` (docs/schemas check the shapes)."""
    srv = start_server("--heartbeat-seconds", str(FIRST_INTERVAL), "--controller-token", "first-interval-token")

    async def body():
        async with connect(srv.ws_url + "?token=first-interval-token") as raw:
            ws = checked(raw)
            snapshot = await recv_json(ws)
            assert snapshot["type"] == "snapshot" and snapshot["heartbeatSeconds"] == FIRST_INTERVAL, snapshot
            hello = await request(ws, {"type": "hello", "requestId": "h", "token": "first-interval-token"},
                                  lambda m: m.get("requestId") == "h")
            assert hello["type"] == "hello" and hello["heartbeatSeconds"] == FIRST_INTERVAL, hello
            listed = await request(ws, {"type": "list", "requestId": "l"})
            assert listed["heartbeatSeconds"] == FIRST_INTERVAL, listed
        async with connect(srv.ws_url + f"?token=first-interval-token&since={snapshot['sequence']}") as raw:
            caught_up = await recv_until(checked(raw), lambda m: m["type"] == "caughtUp")
            assert caught_up["heartbeatSeconds"] == FIRST_INTERVAL, caught_up
        # A resume with events to replay (read off the loop, answered in a reserved place) and a reset say it too.
        async with connect(srv.ws_url + "?token=first-interval-token") as raw:
            ws = checked(raw)
            await recv_json(ws)
            started = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                         "durationSeconds": 600})
            assert started["type"] == "ack", started
            await send_json(ws, {"type": "catchUp", "requestId": "c", "since": snapshot["sequence"]})
            caught_up = await recv_until(ws, lambda m: m.get("requestId") == "c")
            assert caught_up["type"] == "caughtUp" and caught_up["heartbeatSeconds"] == FIRST_INTERVAL, caught_up
            await send_json(ws, {"type": "catchUp", "requestId": "r", "since": 0, "log": "another-log"})
            reset = await recv_until(ws, lambda m: m.get("requestId") == "r")
            assert reset.get("reset") is True and reset["heartbeatSeconds"] == FIRST_INTERVAL, reset
    run(body())


def test_page_frozen_one_second_after_connecting_says_it_is_reconnecting(start_server, browser):
    """Issue 29 item 3: the page learned the interval only from its first heartbeat (up to 15 s after
    connecting), so a path that froze before then was never noticed. The snapshot carries it now: frozen 1 s
    after the page connected, it says it is reconnecting within three heartbeat intervals."""
    srv = start_server("--heartbeat-seconds", str(FIRST_INTERVAL))
    proxy = StallingProxy(srv.port)
    try:
        _right_after_a_heartbeat(srv.ws_url)
        open_dashboard(browser, proxy.url)
        time.sleep(1)  # the scenario: the path freezes one second after the page connected
        proxy.stall()
        lost = wait_for("the page to say it is reconnecting", lambda: is_reconnecting(browser), timeout=3 * FIRST_INTERVAL)
        assert lost["lost"] == "silent", lost
        assert lost["heartbeat"] == str(FIRST_INTERVAL), lost  # learned from the snapshot
    finally:
        proxy.close()


def test_inspector_frozen_one_second_after_connecting_reconnects(start_server, browser):
    """The inspector learns the interval from its first message too."""
    srv = start_server("--heartbeat-seconds", str(FIRST_INTERVAL))
    proxy = StallingProxy(srv.port)
    try:
        _right_after_a_heartbeat(srv.ws_url)
        browser.get(proxy.url + "/inspector")
        wait_for("the inspector live", lambda: status_state(browser) == "open", timeout=10)
        time.sleep(1)
        proxy.stall()
        wait_for("the inspector to reconnect", lambda: status_state(browser) != "open", timeout=3 * FIRST_INTERVAL)
        assert browser.execute_script("return document.getElementById('status').dataset.heartbeatSeconds") == str(FIRST_INTERVAL)
    finally:
        proxy.close()


def test_share_page_frozen_one_second_after_connecting_reconnects(start_server, browser):
    """A share page's live script drops a connection silent for 2.5 intervals, the interval taken from its
    first message, and opens another (`html[data-socket-state]`)."""
    srv = start_server("--heartbeat-seconds", str(FIRST_INTERVAL))
    proxy = StallingProxy(srv.port)

    async def share() -> str:
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            started = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                         "durationSeconds": 600})
            made = await request(ws, {"type": "share", "requestId": "sh", "activityId": started["activityId"],
                                      "expiresIn": 600}, lambda m: m.get("requestId") == "sh")
            return made["shares"][0]["url"].split("/s/", 1)[1]
    try:
        token = run(share())
        _right_after_a_heartbeat(srv.ws_url)
        browser.get(f"{proxy.url}/s/{token}")
        state = lambda: browser.execute_script("return document.documentElement.dataset.socketState || null")
        wait_for("the share page's socket open", lambda: state() == "open", timeout=10)
        time.sleep(1)
        proxy.stall()
        wait_for("the share page to drop the silent socket", lambda: state() != "open", timeout=3 * FIRST_INTERVAL)
    finally:
        proxy.close()


def test_watch_frozen_one_second_after_connecting_notices(start_server):
    """`liveactivity watch` takes the interval from the snapshot too."""
    srv = start_server("--heartbeat-seconds", str(FIRST_INTERVAL))
    proxy = StallingProxy(srv.port)
    _right_after_a_heartbeat(srv.ws_url)
    proc, out = spawn("watch", "--json", "--server", f"ws://127.0.0.1:{proxy.port}/ws")
    err = StderrReader(proc)
    try:
        assert json.loads(out.next(timeout=10))["type"] == "snapshot"
        time.sleep(1)
        proxy.stall()
        lost = err.until(lambda line: "connection lost" in line, timeout=3 * FIRST_INTERVAL)
        assert f"heartbeat every {FIRST_INTERVAL} s" in lost, lost
    finally:
        proxy.close()
        assert stop_process(proc, timeout=5) == 0
