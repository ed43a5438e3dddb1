"""Tests of the script client: `liveactivity start|update|end|stop|list|watch`, run as subprocesses.

Against the real server (the `server` / `start_server` fixtures of conftest.py), plus a small in-process
`websockets` server (`fake_server`, below) for what the real server cannot show yet: the Authorization
header, TLS (`wss://`, self-signed certificate) and a server that never answers.

Exit statuses (docs in `liveactivity --help`): 0 success, 1 refused by the server, 2 usage error,
3 cannot connect / no reply / connection dropped.
"""
from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import signal
import socket
import ssl
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import serve

from support import REPO_ROOT, free_port, launch, liveactivity_bin
from wsclient import connect, recv_json, recv_until, run

UUID_RE = re.compile(r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")
SUBCOMMANDS = ["start", "update", "end", "stop", "list", "watch"]


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------
def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LIVEACTIVITY_SERVER", "LIVEACTIVITY_TOKEN")}
    env.setdefault("SWIFT_BACKTRACE", "enable=no,interactive=no")
    env.update(extra or {})
    return env


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 20) -> subprocess.CompletedProcess:
    """Run `liveactivity ARGS` to completion; returns the CompletedProcess (text stdout/stderr)."""
    return subprocess.run([str(liveactivity_bin()), *args], capture_output=True, text=True, timeout=timeout,
                          env=cli_env(env), stdin=subprocess.DEVNULL)


def ok(*args: str, **kwargs: Any) -> str:
    """Run a CLI command that must succeed; returns its stdout."""
    p = cli(*args, **kwargs)
    assert p.returncode == 0, f"liveactivity {' '.join(args)} exited {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}"
    return p.stdout


def start(server, workout: str = "jogging", duration: str = "70s", *extra: str) -> str:
    out = ok("start", workout, "--duration", duration, "--server", server.ws_url, *extra)
    activity_id = out.strip()
    assert UUID_RE.match(activity_id), f"start should print only the new id, got {out!r}"
    return activity_id


def list_json(server) -> list[dict[str, Any]]:
    out = ok("list", "--json", "--server", server.ws_url)
    activities = json.loads(out)
    assert isinstance(activities, list), out
    return activities


class LineReader:
    """Reads a subprocess's stdout lines on a thread, so tests can wait for a line with a timeout."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next(self, timeout: float = 5.0) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output line within {timeout}s; so far: {self.seen}") from None
        if line is None:
            raise AssertionError(f"stdout closed (exit {self.proc.poll()}); so far: {self.seen}")
        self.seen.append(line)
        return line

    def until(self, predicate, timeout: float = 5.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            line = self.next(max(0.01, deadline - time.monotonic()))
            if predicate(line):
                return line


def spawn(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, LineReader]:
    proc = subprocess.Popen([str(liveactivity_bin()), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, bufsize=1, env=cli_env(env))
    return proc, LineReader(proc)


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = 5.0) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
        raise AssertionError(f"process did not exit within {timeout}s of {signal.Signals(sig).name}") from None


@pytest.fixture
def watcher():
    """Factory for `liveactivity watch …` subprocesses; any still running are killed at teardown."""
    procs: list[subprocess.Popen] = []

    def factory(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, LineReader]:
        proc, reader = spawn("watch", *args, env=env)
        procs.append(proc)
        return proc, reader

    yield factory
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


# ---------------------------------------------------------------------------------------------------
# fake server: websockets in a background thread (headers, TLS, silence)
# ---------------------------------------------------------------------------------------------------
class FakeServer:
    """A protocol-shaped WebSocket server: sends a snapshot on connect and answers `list` (unless silent).

    Records each handshake's request headers and every message received.
    """

    def __init__(self, ssl_context: ssl.SSLContext | None = None, answer: bool = True):
        self.answer = answer
        self.headers: list[dict[str, str]] = []
        self.received: list[dict[str, Any]] = []
        self._ssl = ssl_context
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Future | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        assert self._ready.wait(5), "fake server did not start"
        scheme = "wss" if ssl_context else "ws"
        self.ws_url = f"{scheme}://127.0.0.1:{self.port}/ws"

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = self._loop.create_future()
        async with serve(self._handler, "127.0.0.1", 0, ssl=self._ssl, subprotocols=["liveactivity.v1"],
                         compression=None, ping_interval=None) as srv:
            self.port = srv.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stop

    async def _handler(self, ws) -> None:
        self.headers.append({k.lower(): v for k, v in ws.request.headers.raw_items()})
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        await ws.send(json.dumps({"type": "snapshot", "serverTime": now, "sequence": 0, "activities": []}))
        async for raw in ws:
            msg = json.loads(raw)
            self.received.append(msg)
            if self.answer and msg.get("type") == "list":
                await ws.send(json.dumps({"type": "snapshot", "requestId": msg.get("requestId"), "serverTime": now,
                                          "sequence": 0, "activities": []}))

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(5)


@pytest.fixture
def fake_server():
    """Factory: `fake_server(ssl_context=None, answer=True) -> FakeServer`; all are stopped at teardown."""
    servers: list[FakeServer] = []

    def factory(**kwargs: Any) -> FakeServer:
        srv = FakeServer(**kwargs)
        servers.append(srv)
        return srv

    yield factory
    for srv in servers:
        srv.close()


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for CN=localhost (needs the openssl CLI)."""
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                        "-out", str(cert), "-days", "1", "-subj", "/CN=localhost"],
                       check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot make a self-signed certificate with openssl: {e}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


# ---------------------------------------------------------------------------------------------------
# start / list / update / end against the real server
# ---------------------------------------------------------------------------------------------------
def test_start_prints_the_id_that_websocket_clients_and_list_json_see(server):
    async def body():
        async with connect(server.ws_url) as ws:
            snapshot = await recv_json(ws)
            assert snapshot["type"] == "snapshot"
            activity_id = await asyncio.to_thread(start, server, "yoga", "1m30s", "--relevance", "50")
            event = await recv_until(ws, lambda m: m["type"] == "activity")
            return activity_id, event

    activity_id, event = run(body())
    assert event["event"] == "started"
    assert event["activity"]["id"] == activity_id
    assert event["activity"]["attributes"] == {"workout": "yoga"}
    assert event["activity"]["content"]["relevanceScore"] == 50
    timer = event["activity"]["content"]["state"]["workoutTimer"]
    parse = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
    assert parse(timer["end"]) - parse(timer["start"]) == timedelta(seconds=90)

    activities = list_json(server)
    assert [a["id"] for a in activities] == [activity_id]
    assert activities[0]["activityState"] == "active"
    assert activities[0] == {k: v for k, v in event["activity"].items()}


def test_list_prints_a_table_in_presentation_order(server):
    low = start(server, "jogging", "70")
    high = start(server, "aerobics", "2m", "--relevance", "7.5")
    out = ok("list", "--server", server.ws_url)
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "ACTIVITY", "STATE", "REMAINING", "RELEVANCE"], out
    rows = [line.split() for line in lines[1:]]
    assert [r[0] for r in rows] == [high, low], out
    assert rows[0][1:3] == ["aerobics", "active"] and rows[0][4] == "7.5", out
    assert rows[1][1:3] == ["jogging", "active"] and rows[1][4] == "0", out
    assert re.fullmatch(r"1:[5-9]\d|2:00", rows[0][3]), out
    assert re.fullmatch(r"1:(0\d|10)", rows[1][3]), out


def test_list_shows_the_remaining_time_of_a_plain_date_countdown(start_server):
    # The new-user trial: the delivery example counts down to a `Date` (its ETA); ticks reported it, `list` "-".
    srv = start_server("--kinds", str(REPO_ROOT / "examples" / "kinds"))
    eta = (datetime.now(timezone.utc) + timedelta(minutes=5)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    attributes = {"restaurantName": "Pho 99", "orderNumber": "A-17", "items": ["pho"], "totalPrice": 12.5}
    state = {"status": "Your order has been confirmed", "estimatedDeliveryTime": eta}
    activity = ok("start", "delivery", "--attributes", json.dumps(attributes), "--state", json.dumps(state),
                  "--server", srv.ws_url).strip()
    out = ok("list", "--server", srv.ws_url)
    row = next(line.split() for line in out.splitlines() if line.startswith(activity))
    assert row[1:3] == ["delivery", "active"] and re.fullmatch(r"4:[45]\d|5:00", row[3]), out
    # From an hour on, hours (the second new-user trial read a day-long countdown as "1000:10").
    later = (datetime.now(timezone.utc) + timedelta(minutes=90)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    ok("update", activity, "--state", json.dumps({**state, "estimatedDeliveryTime": later}), "--server", srv.ws_url)
    out = ok("list", "--server", srv.ws_url)
    row = next(line.split() for line in out.splitlines() if line.startswith(activity))
    assert re.fullmatch(r"1:29:[45]\d|1:30:00", row[3]), out


def test_list_shows_a_paused_countdown_frozen_at_its_pause(server):
    # The new-user trial: after `pause`, `list` showed the countdown still running while the server's ticks held it.
    activity = start(server, "yoga", "30m")

    async def pause_and_let_the_server_clock_pass_it():
        async with connect(server.ws_url) as ws:
            await recv_json(ws)
            await ws.send(json.dumps({"type": "pause", "activityId": activity, "requestId": 1}))
            await recv_until(ws, lambda m: m["type"] == "ack" and m.get("requestId") == 1)
            paused = await recv_until(ws, lambda m: m["type"] == "activity" and m["event"] == "paused")
            paused_at = datetime.strptime(paused["activity"]["content"]["state"]["pausedAt"], "%Y-%m-%dT%H:%M:%S.%fZ")
            # Waits for the server's own clock, as its ticks give it, to be 2 s past the pause.
            await recv_until(ws, lambda m: m["type"] == "tick" and "serverTime" in m and datetime.strptime(
                m["serverTime"], "%Y-%m-%dT%H:%M:%S.%fZ") >= paused_at + timedelta(seconds=2), timeout=10, include_ticks=True)

    run(pause_and_let_the_server_clock_pass_it())
    [summary] = list_json(server)
    state = summary["content"]["state"]
    parse = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
    left = parse(state["workoutTimer"]["end"]) - parse(state["pausedAt"])
    seconds = int(-(-left.total_seconds() // 1))
    out = ok("list", "--server", server.ws_url)
    row = next(line.split() for line in out.splitlines() if line.startswith(activity))
    assert row[1:4] == ["yoga", "active,paused", f"{seconds // 60}:{seconds % 60:02d}"], out


def test_list_when_empty(server):
    assert list_json(server) == []
    assert ok("list", "--server", server.ws_url).split() == ["ID", "ACTIVITY", "STATE", "REMAINING", "RELEVANCE"]


def test_update_with_alert_reaches_websocket_clients(server):
    activity_id = start(server)

    async def body():
        async with connect(server.ws_url) as ws:
            await recv_json(ws)
            out = await asyncio.to_thread(ok, "update", activity_id, "--duration", "30s", "--alert-title", "Halfway",
                                          "--alert-body", "Keep going", "--server", server.ws_url)
            assert out == ""
            return await recv_until(ws, lambda m: m["type"] == "activity")

    event = run(body())
    assert event["event"] == "updated"
    assert event["activity"]["id"] == activity_id
    assert event["alert"]["title"] == "Halfway" and event["alert"]["body"] == "Keep going"
    timer = event["activity"]["content"]["state"]["workoutTimer"]
    parse = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
    assert parse(timer["end"]) - parse(timer["start"]) == timedelta(seconds=30)


def test_end_all_dismiss_immediate_empties_the_list(server):
    start(server, "jogging")
    start(server, "yoga")
    assert len(list_json(server)) == 2
    assert ok("end", "--all", "--dismiss", "immediate", "--server", server.ws_url) == ""
    assert list_json(server) == []


def test_end_one_and_stop_alias_with_dismissal_policies(server):
    a = start(server, "jogging")
    b = start(server, "aerobics")
    ok("end", a, "--server", server.ws_url)  # default policy: stays listed as ended
    after = (datetime.now(timezone.utc) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ok("stop", b, f"--dismiss=after={after}", "--server", server.ws_url)
    states = {x["id"]: x for x in list_json(server)}
    assert states[a]["activityState"] == "ended"
    assert states[b]["activityState"] == "ended"
    dismissal = datetime.strptime(states[b]["dismissalDate"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    assert abs((dismissal - datetime.strptime(after, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)).total_seconds()) < 1
    ok("end", a, "--dismiss", "immediate", "--server", server.ws_url)
    assert [x["id"] for x in list_json(server)] == [b]


def test_server_and_token_from_the_environment(server):
    out = ok("start", "jogging", "--duration", "1m", env={"LIVEACTIVITY_SERVER": server.ws_url,
                                                          "LIVEACTIVITY_TOKEN": "secret"})
    assert [a["id"] for a in list_json(server)] == [out.strip()]


# ---------------------------------------------------------------------------------------------------
# exit statuses
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["update", "00000000-0000-0000-0000-000000000000", "--duration", "30s"],
    ["end", "00000000-0000-0000-0000-000000000000"],
])
def test_unknown_activity_exits_1_with_the_servers_error(server, args):
    p = cli(*args, "--server", server.ws_url)
    assert p.returncode == 1, p
    assert "unknown_activity" in p.stderr and "00000000-0000-0000-0000-000000000000" in p.stderr, p.stderr
    assert p.stdout == ""


def test_an_unknown_workout_is_the_servers_to_refuse_naming_the_ones_it_has(server):
    # The CLI keeps no list of workouts: Kinds/workout/kind.json on the server says which exist.
    p = cli("start", "swimming", "--duration", "5", "--server", server.ws_url)
    assert p.returncode == 1, p
    assert "attributes.workout" in p.stderr and '"swimming"' in p.stderr and '"jogging"' in p.stderr, p.stderr


def test_server_limit_refusal_exits_1(server):
    p = cli("start", "jogging", "--duration", "9h", "--server", server.ws_url)
    assert p.returncode == 1, p
    assert "invalid_field" in p.stderr and "durationSeconds" in p.stderr, p.stderr


@pytest.mark.parametrize("args, names", [
    (["start", "jogging", "--duration", "5x"], ["--duration", "5x"]),
    (["start", "jogging", "--duration", "0s"], ["--duration"]),
    (["start", "jogging"], ["--duration"]),
    # A declared kind named without --attributes reads as a workout: the message says how to start one (trial).
    (["start", "delivery"], ["--duration", "KIND --attributes JSON --state JSON"]),
    (["start", "--duration", "5"], ["workout"]),
    (["start", "jogging", "--duration", "5", "--bogus"], ["--bogus"]),
    (["start", "jogging", "--duration"], ["--duration"]),
    (["start", "jogging", "--duration", "5", "--relevance", "high"], ["--relevance"]),
    (["start", "jogging", "--duration", "5", "--timeout", "-1"], ["--timeout"]),
    (["update", "--duration", "30s"], ["ID"]),
    (["update", "abc"], ["--duration", "--state"]),
    (["update", "abc", "--duration", "30s", "--alert-title", "T"], ["--alert-body"]),
    (["end"], ["ID"]),
    (["end", "abc", "--all"], ["--all"]),
    (["end", "--all", "--dismiss", "later"], ["--dismiss"]),
    (["end", "--all", "--dismiss", "after=tomorrow"], ["tomorrow"]),
    (["stop", "--frobnicate"], ["--frobnicate"]),
    (["list", "--json=yes"], ["--json"]),
    (["list", "extra"], ["extra"]),
    (["watch", "--color"], ["--color"]),
    # Where the JSON stops being JSON (the new-user trial got only "must be a JSON object").
    (["start", "--state", "{bad json"], ["--state is not JSON", "line 1, column 2"]),
    (["start", "--state", "[1]"], ["--state must be a JSON object, got array"]),
])
def test_usage_errors_exit_2_naming_the_option(args, names):
    # Usage errors are found before connecting: the (unused) server URL points nowhere.
    p = cli(*args, "--server", f"ws://127.0.0.1:{free_port()}/ws")
    assert p.returncode == 2, p
    for name in names:
        assert name in p.stderr, p.stderr
    assert p.stdout == ""


def test_serve_refuses_a_kinds_folder_that_loads_nothing(tmp_path):
    # The new-user trial: a wrong --kinds path started silently with only the built-in kinds.
    delivery = REPO_ROOT / "examples" / "kinds" / "delivery"
    (tmp_path / "file").write_text("not a folder\n")
    for path, words in [(tmp_path / "nonexistent", ["no such folder"]),
                        (tmp_path / "file", ["is a file"]),
                        (delivery, ["this is a kind folder itself", f"--kinds {delivery.parent}"])]:
        server = launch("--memory", "--kinds", str(path), cwd=tmp_path, log_name="serve-bad-kinds")
        try:
            code = server.proc.wait(20)
        finally:
            server.stop()
        assert code == 2, server.output()
        stderr = "\n".join(server.stderr)
        assert f"--kinds {path}" in stderr, stderr
        for word in words:
            assert word in stderr, stderr
        assert not server.stdout, server.output()


def test_nothing_listening_exits_3():
    p = cli("list", "--server", f"ws://127.0.0.1:{free_port()}/ws", timeout=15)
    assert p.returncode == 3, p
    assert "cannot connect" in p.stderr, p.stderr


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/ws", "not a url", "ws://:8080/ws", "ws://127.0.0.1:99999/ws"])
@pytest.mark.parametrize("command", [["list"], ["start", "yoga", "--duration", "10s"], ["end", "--all"], ["watch", "--json"],
                                     ["share", "x", "--for", "1h"], ["update", "x", "--duration", "5s"]])
def test_malformed_server_url_is_a_usage_error_exit_2(command, url):
    """A --server that is not a ws:// or wss:// URL is the caller's mistake (exit 2, usage), not a connection failure."""
    p = cli(*command, "--server", url, timeout=15)
    assert p.returncode == 2, p
    assert f"liveactivity {command[0]}: --server: " in p.stderr, p.stderr
    assert f'Run "liveactivity {command[0]} --help" for usage.' in p.stderr, p.stderr
    assert "cannot connect" not in p.stderr and p.stdout == "", p


def test_malformed_server_url_from_the_environment_is_a_usage_error_exit_2():
    p = cli("list", env={"LIVEACTIVITY_SERVER": "https://example.invalid/ws"})
    assert p.returncode == 2, p
    assert "--server: " in p.stderr and "ws or wss" in p.stderr, p.stderr


@pytest.mark.parametrize("command", [["list"], ["start", "yoga", "--duration", "10s"], ["watch", "--json"],
                                     ["end", "--all"], ["share", "x", "--for", "1h"]])
def test_wrong_token_exits_1(start_server, command):
    """A token the server does not accept (HTTP 401 on the handshake) is a refusal: exit 1, not 3."""
    srv = start_server("--controller-token", "right-token", "--viewer-token", "viewer-token")
    for args in (["--token", "wrong-token"], []):
        if not args and command[0] == "watch":
            continue  # without a token the handshake is allowed (unauthenticated) and watch waits for a snapshot
        p = cli(*command, "--server", srv.ws_url, *args, timeout=15)
        assert p.returncode == 1, (args, p)
        assert "refused the request: unauthorized: " in p.stderr and "cannot connect" not in p.stderr, p.stderr
        if args:
            assert "the token matches no role on the server (HTTP 401 on the handshake)" in p.stderr, p.stderr
        assert p.stdout == "", p
    p = cli(*command, "--server", srv.ws_url, env={"LIVEACTIVITY_TOKEN": "wrong-token"}, timeout=15)
    assert p.returncode == 1 and "matches no role" in p.stderr, p
    # The right token still works, and so does a viewer token for watching.
    assert ok("list", "--json", "--server", srv.ws_url, "--token", "viewer-token").strip() == "[]"


def test_share_for_errors_name_for():
    for value, words in (("99d", 'unknown unit "d"'), ("0s", "more than 0"), ("25h", "at most 24h"), ("soon", "soon")):
        p = cli("share", "x", "--for", value, "--server", "ws://127.0.0.1:9/ws")
        assert p.returncode == 2, p
        assert "--for" in p.stderr and "--duration" not in p.stderr and words in p.stderr, (value, p.stderr)


def test_handshake_failure_exits_3(server):
    p = cli("list", "--server", f"ws://127.0.0.1:{server.port}/not-the-endpoint")
    assert p.returncode == 3, p


def test_connect_timeout_exits_3():
    # A socket that listens but never accepts: TCP connects (backlog), the handshake never completes.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        began = time.monotonic()
        p = cli("list", "--timeout", "1", "--server", f"ws://127.0.0.1:{s.getsockname()[1]}/ws")
    assert p.returncode == 3, p
    assert time.monotonic() - began < 6, "--timeout 1 should give up quickly"


def test_reply_timeout_exits_3(fake_server):
    srv = fake_server(answer=False)
    began = time.monotonic()
    p = cli("list", "--timeout", "1", "--server", srv.ws_url)
    assert p.returncode == 3, p
    assert "no reply" in p.stderr, p.stderr
    assert time.monotonic() - began < 6


@pytest.mark.parametrize("command", ["", *SUBCOMMANDS])
def test_help_exits_0(command):
    args = [command, "--help"] if command else ["--help"]
    p = cli(*args)
    assert p.returncode == 0, p
    assert p.stdout.startswith("usage: liveactivity"), p.stdout
    if command:
        assert f"liveactivity {command}" in p.stdout
        assert "--server" in p.stdout and "--timeout" in p.stdout
    else:
        for name in SUBCOMMANDS:
            if name != "stop":
                assert name in p.stdout


def test_help_wins_over_other_mistakes():
    assert cli("start", "--bogus", "-h").returncode == 0


# ---------------------------------------------------------------------------------------------------
# the handshake: Authorization header, TLS
# ---------------------------------------------------------------------------------------------------
def test_token_is_sent_as_a_bearer_authorization_header(fake_server):
    srv = fake_server()
    ok("list", "--token", "s3cret", "--server", srv.ws_url)
    ok("list", "--server", srv.ws_url, env={"LIVEACTIVITY_TOKEN": "from-env"})
    ok("list", "--server", srv.ws_url)
    assert [h.get("authorization") for h in srv.headers] == ["Bearer s3cret", "Bearer from-env", None]
    assert srv.headers[0].get("sec-websocket-protocol") == "liveactivity.v1"
    assert srv.received[0]["type"] == "list" and srv.received[0]["requestId"]


def test_wss_with_a_self_signed_certificate_needs_insecure(fake_server, self_signed):
    srv = fake_server(ssl_context=self_signed)
    refused = cli("list", "--server", srv.ws_url, "--timeout", "5")
    assert refused.returncode == 3, refused
    assert "TLS handshake failed" in refused.stderr and "self-signed" in refused.stderr, refused.stderr
    assert "--insecure" in refused.stderr, refused.stderr
    assert ok("list", "--json", "--insecure", "--server", srv.ws_url).strip() == "[]"


# ---------------------------------------------------------------------------------------------------
# watch
# ---------------------------------------------------------------------------------------------------
def test_watch_json_prints_snapshot_then_activity_lines_and_exits_0_on_sigint(server, watcher):
    proc, out = watcher("--json", "--server", server.ws_url)
    first = json.loads(out.next(timeout=10))
    assert first["type"] == "snapshot" and first["activities"] == []
    activity_id = start(server, "aerobics", "3s")
    started = json.loads(out.until(lambda line: json.loads(line)["type"] == "activity"))
    assert started["event"] == "started" and started["activity"]["id"] == activity_id
    tick = json.loads(out.until(lambda line: json.loads(line)["type"] == "tick"))
    assert tick["timers"][0]["activityId"] == activity_id
    finished = json.loads(out.until(lambda line: json.loads(line).get("event") == "timerFinished", timeout=8))
    assert finished["activity"]["id"] == activity_id
    for line in out.seen:
        assert "\n" not in line and isinstance(json.loads(line), dict)
    assert stop_process(proc, signal.SIGINT) == 0, proc.stderr.read()


def test_watch_table_shows_changes_and_exits_0_on_sigint(server, watcher):
    existing = start(server, "yoga", "10m")
    proc, out = watcher("--server", server.ws_url)
    out.until(lambda line: line.startswith(existing) and "yoga" in line, timeout=10)
    added = start(server, "jogging", "70s", "--relevance", "99")
    row = out.until(lambda line: line.startswith(added))
    assert row.split()[1:3] == ["jogging", "active"], row
    ok("end", added, "--dismiss", "immediate", "--server", server.ws_url)
    out.until(lambda line: "dismissed" in line and added in line)
    assert stop_process(proc, signal.SIGINT) == 0


def test_watch_exits_3_when_the_server_goes_away_with_no_reconnect(start_server, watcher):
    srv = start_server()
    proc, out = watcher("--json", "--no-reconnect", "--server", srv.ws_url)
    assert json.loads(out.next(timeout=10))["type"] == "snapshot"
    assert srv.stop() == 0
    assert proc.wait(10) == 3
    assert "1001" in proc.stderr.read()


def test_watch_reconnects_and_resumes_after_the_server_restarts(start_server, watcher, tmp_path):
    """The server goes away and comes back on the same port with the same data: watch says so on
    standard error, reconnects with ?since=&log=, gets the events it missed, then live ones."""
    port = free_port()
    srv = start_server("--port", str(port), cwd=tmp_path)
    first = start(srv, "yoga", "10m")
    proc, out = watcher("--json", "--server", srv.ws_url)
    snapshot = json.loads(out.next(timeout=10))
    assert snapshot["type"] == "snapshot" and [a["id"] for a in snapshot["activities"]] == [first]
    assert srv.stop() == 0
    srv = start_server("--port", str(port), cwd=tmp_path)
    caught_up = json.loads(out.until(lambda line: json.loads(line)["type"] in ("caughtUp", "snapshot"), timeout=20))
    assert caught_up["type"] == "caughtUp" and caught_up["sequence"] == snapshot["sequence"], caught_up
    ok("end", first, "--dismiss", "immediate", "--server", srv.ws_url)
    ended = json.loads(out.until(lambda line: json.loads(line).get("event") == "ended"))
    assert ended["activity"]["id"] == first and ended["sequence"] == snapshot["sequence"] + 1
    assert stop_process(proc, signal.SIGINT) == 0
    err = proc.stderr.read()
    assert "connection lost" in err and "reconnected; resuming after event" in err, err


def test_watch_after_the_log_was_replaced_gets_a_reset_snapshot(start_server, watcher, tmp_path):
    """Same port, but a fresh data directory: the log id differs, so the server answers the resume with a
    reset snapshot rather than replaying another log's sequence numbers."""
    port = free_port()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    srv = start_server("--port", str(port), cwd=tmp_path / "a")
    start(srv, "yoga", "10m")
    proc, out = watcher("--json", "--server", srv.ws_url)
    assert json.loads(out.next(timeout=10))["type"] == "snapshot"
    assert srv.stop() == 0
    srv = start_server("--port", str(port), cwd=tmp_path / "b")
    reset = json.loads(out.until(lambda line: json.loads(line)["type"] in ("caughtUp", "snapshot"), timeout=20))
    assert reset["type"] == "snapshot" and reset.get("reset") is True and reset["activities"] == [], reset
    assert stop_process(proc, signal.SIGINT) == 0


def test_watch_cannot_connect_exits_3(watcher):
    proc, _ = watcher("--server", f"ws://127.0.0.1:{free_port()}/ws")
    assert proc.wait(15) == 3


def test_watch_without_a_token_on_a_server_that_needs_one_exits_1(start_server, watcher):
    srv = start_server("--viewer-token", "v-secret", "--controller-token", "c-secret")
    proc, _ = watcher("--json", "--server", srv.ws_url)
    assert proc.wait(10) == 1
    err = proc.stderr.read()
    assert "unauthorized" in err and "--token" in err, err
    proc, out = watcher("--json", "--token", "v-secret", "--server", srv.ws_url)
    assert json.loads(out.next(timeout=10))["type"] == "snapshot"
    assert stop_process(proc, signal.SIGINT) == 0


@pytest.mark.parametrize("args, message", [
    (["--port", "abc"], '--port must be a number from 0 to 65535, got "abc"'),
    (["--rate", "0"], '--rate must be a number of at least 0.1, got "0"'),
    (["--max-queued-bytes", "10"], '--max-queued-bytes must be a whole number of at least 65536, got "10"'),
    (["--log-hours"], "--log-hours needs a value"),
    (["--memory=yes"], "--memory takes no value"),
    (["stray"], 'unexpected argument "stray"'),
    (["--bogus"], 'unknown option "--bogus"'),
    (["--data-dir", "/tmp/x", "--memory"], "--memory and --data-dir cannot be used together: --memory writes nothing to disk (use --image-cache DIR for thumbnails)"),
])
def test_serve_usage_errors_exit_2_naming_the_option(args, message):
    p = cli("serve", *args)
    assert p.returncode == 2, p
    # The reason, then where the usage is, as the client commands say it (the whole usage after it scrolled
    # the reason away; found by the new-user trial).
    assert p.stderr == f'liveactivity serve: {message}\nRun "liveactivity serve --help" for usage.\n', p.stderr


def test_serve_takes_name_equals_value(start_server):
    srv = start_server("--memory", "--max-connections=5", "--log-level=warning")
    assert ok("list", "--json", "--server", srv.ws_url).strip() == "[]"


def test_pause_resume_and_extend_reach_websocket_clients(server):
    # The new-user trial (s22): the protocol and the dashboard had pause, resume and ±1 min; the script client
    # answered `unknown command "pause"`.
    activity_id = start(server, "yoga", "10m")

    async def body():
        async with connect(server.ws_url) as ws:
            await recv_json(ws)
            events = []
            for args in (["pause", activity_id], ["resume", activity_id], ["extend", activity_id, "--by", "2m"],
                         ["extend", activity_id, "--by=-1m"]):
                out = await asyncio.to_thread(ok, *args, "--server", server.ws_url)
                assert out == "", out
                events.append(await recv_until(ws, lambda m: m["type"] == "activity"))
            return events

    paused, resumed, longer, shorter = run(body())
    assert [e["event"] for e in (paused, resumed, longer, shorter)] == ["paused", "resumed", "extended", "extended"]
    assert "pausedAt" in paused["activity"]["content"]["state"]
    assert "pausedAt" not in resumed["activity"]["content"]["state"]
    parse = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
    end = lambda e: parse(e["activity"]["content"]["state"]["workoutTimer"]["end"])
    assert end(longer) - end(resumed) == timedelta(minutes=2)
    assert end(shorter) - end(longer) == timedelta(minutes=-1)


@pytest.mark.parametrize("args, names", [
    (["pause"], ["missing activity ID"]),
    (["resume", "a", "b"], ["unexpected argument \"b\""]),
    (["extend", "abc"], ["--by DURATION is required"]),
    (["extend", "abc", "--by", "soon"], ["--by"]),
    (["extend", "abc", "--by", "-0"], ["--by must be more than 0 seconds"]),
    (["pause", "abc", "--by", "1m"], ["unknown option \"--by\""]),
])
def test_countdown_commands_usage_errors_exit_2(args, names):
    p = cli(*args, "--server", f"ws://127.0.0.1:{free_port()}/ws")
    assert p.returncode == 2, p
    for name in names:
        assert name in p.stderr, p.stderr


def test_pause_of_a_paused_activity_exits_1_with_the_servers_error(server):
    activity_id = start(server, "yoga", "10m")
    ok("pause", activity_id, "--server", server.ws_url)
    p = cli("pause", activity_id, "--server", server.ws_url)
    assert p.returncode == 1 and "invalid_state" in p.stderr, p


def test_an_unknown_command_says_so_first():
    p = cli("frobnicate")
    assert p.returncode == 2
    assert p.stderr.splitlines()[0].startswith('liveactivity: unknown command "frobnicate"'), p.stderr
