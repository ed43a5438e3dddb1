"""Roles, tokens, origins, connection limits and TLS (issue 4; docs/SECURITY.md, docs/PROTOCOL.md "Access").

Handshakes whose HTTP status matters are sent by hand (hostile_support.http_upgrade); protocol traffic uses
hostile_support.RawWS or `websockets`. Servers that conftest's fixture cannot start (TLS prints an https URL,
--host 0.0.0.0 prints another address or refuses to start) are run with support.launch.
"""
from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hostile_support import RawWS, Watcher, healthz, http_upgrade
from support import http_get, launch, liveactivity_bin
from wsclient import LoopConnection

CONTROLLER = "controller-" + "c" * 24
VIEWER = "viewer-" + "v" * 24
START = {"type": "start", "attributes": {"workout": "yoga"}, "durationSeconds": 600}
CONTROL_MESSAGES = [
    dict(START),
    {"type": "update", "activityId": "X", "durationSeconds": 60},
    {"type": "end", "all": True, "dismissalPolicy": "immediate"},
    {"type": "stop", "activityId": "X"},
    {"type": "pause", "activityId": "X"},
    {"type": "resume", "activityId": "X"},
    {"type": "extend", "activityId": "X", "seconds": 60},
    {"type": "push", "pushToken": "0" * 64, "payload": {"aps": {"timestamp": 1, "event": "end"}}},
]


def ask(ws: RawWS, msg: dict, rid: str) -> dict:
    ws.send_json({**msg, "requestId": rid})
    return ws.recv_until(lambda m: m.get("requestId") == rid)


def http_status(url: str, headers: dict[str, str] | None = None, context: ssl.SSLContext | None = None) -> int:
    return http_get(url, headers=headers, timeout=5, context=context).status


# ---------------------------------------------------------------------------------------------------
# Roles
# ---------------------------------------------------------------------------------------------------
def test_no_tokens_on_loopback_every_client_is_controller(server):
    with RawWS(server.port) as ws:
        snap = ws.recv_json()
        assert snap["type"] == "snapshot" and snap["role"] == "controller", snap
        assert ask(ws, START, "s")["type"] == "ack"
    assert http_status(f"{server.url}/api/activities") == 200


def test_controller_token_makes_tokenless_clients_viewers(start_server):
    server = start_server("--memory", "--controller-token", CONTROLLER)
    controller = Watcher(server.ws_url, additional_headers={"Authorization": f"Bearer {CONTROLLER}"})
    assert controller.wait_for(lambda m: m["type"] == "snapshot")["role"] == "controller"
    since = time.monotonic()
    with RawWS(server.port) as viewer:
        snap = viewer.recv_json()
        assert snap["type"] == "snapshot" and snap["role"] == "viewer", snap
        for i, msg in enumerate(CONTROL_MESSAGES):
            err = ask(viewer, msg, f"v{i}")
            assert (err["type"], err.get("code"), err.get("field")) == ("error", "forbidden", "type"), (msg, err)
        # watching still works
        assert ask(viewer, {"type": "list"}, "l")["type"] == "snapshot"
        assert ask(viewer, {"type": "history"}, "h")["type"] == "history"
        assert ask(viewer, {"type": "catchUp", "since": 0}, "c")["type"] == "caughtUp"
    time.sleep(0.5)
    assert healthz(server.port)["activities"] == 0 and healthz(server.port)["sequence"] == 0
    assert controller.events(since) == [], "a viewer's refused control messages changed something"
    # the read API is open to viewers when no viewer token is configured
    assert http_status(f"{server.url}/api/activities") == 200
    controller.close()


@pytest.mark.parametrize("how", ["bearer-header", "bearer-lowercase", "query", "hello"])
def test_controller_token_is_accepted_three_ways(start_server, how):
    server = start_server("--memory", "--controller-token", CONTROLLER)
    path, headers = "/ws", {}
    if how == "bearer-header":
        headers = {"Authorization": f"Bearer {CONTROLLER}"}
    elif how == "bearer-lowercase":
        headers = {"Authorization": f"bearer {CONTROLLER}"}
    elif how == "query":
        path = f"/ws?token={CONTROLLER}"
    with RawWS(server.port, path, headers=headers) as ws:
        snap = ws.recv_json()
        if how == "hello":
            assert snap["role"] == "viewer"
            reply = ask(ws, {"type": "hello", "token": CONTROLLER}, "h")
            assert (reply["type"], reply["role"]) == ("hello", "controller"), reply
        else:
            assert snap["role"] == "controller", snap
        ack = ask(ws, START, "s")
        assert ack["type"] == "ack", ack
    assert healthz(server.port)["activities"] == 1


@pytest.mark.parametrize("how", ["bearer-header", "query"])
def test_wrong_token_is_refused_401_at_the_handshake(start_server, how):
    server = start_server("--memory", "--controller-token", CONTROLLER, "--viewer-token", VIEWER)
    wrong = CONTROLLER[:-1] + "x"  # same length, one character off
    if how == "bearer-header":
        status, _, body = http_upgrade(server.port, headers={"Authorization": f"Bearer {wrong}"})
    else:
        status, _, body = http_upgrade(server.port, f"/ws?token={wrong}")
    assert status == 401, (status, body)
    assert b"matches no role" in body
    # never downgraded silently: with only a controller token a wrong one is refused too (not "viewer")
    server2 = start_server("--memory", "--controller-token", CONTROLLER)
    status, _, _ = http_upgrade(server2.port, headers={"Authorization": f"Bearer {wrong}"})
    assert status == 401


def test_wrong_token_in_hello_is_unauthorized_and_changes_nothing(start_server):
    server = start_server("--memory", "--controller-token", CONTROLLER)
    with RawWS(server.port) as ws:
        assert ws.recv_json()["role"] == "viewer"
        err = ask(ws, {"type": "hello", "token": "nope"}, "h1")
        assert (err["type"], err["code"], err.get("field")) == ("error", "unauthorized", "token"), err
        assert ask(ws, START, "s")["code"] == "forbidden"  # still a viewer
        # the empty token is "no token", not a match
        err = ask(ws, {"type": "hello", "token": ""}, "h2")
        assert err["type"] in ("error", "hello"), err
        assert ask(ws, START, "s2")["code"] == "forbidden"
    assert healthz(server.port)["activities"] == 0


def test_viewer_token_hides_everything_until_hello(start_server):
    server = start_server("--memory", "--controller-token", CONTROLLER, "--viewer-token", VIEWER)
    # a running countdown, so that ticks flow to those allowed to see them
    with RawWS(server.port, headers={"Authorization": f"Bearer {CONTROLLER}"}) as ctl:
        assert ctl.recv_json()["role"] == "controller"
        aid = ask(ctl, START, "s")["activityId"]
        stranger = RawWS(server.port)
        first = stranger.recv_json(skip_ticks=False)
        assert (first["type"], first["code"]) == ("error", "unauthorized"), first
        # nothing else arrives: no snapshot, no tick, no event (the controller updates meanwhile)
        ask(ctl, {"type": "update", "activityId": aid, "durationSeconds": 300}, "u")
        with pytest.raises(TimeoutError):
            m = stranger.recv_json(2.5, skip_ticks=False)
            pytest.fail(f"an unauthenticated client received {m}")
        for i, msg in enumerate([{"type": "list"}, {"type": "history"}, {"type": "catchUp", "since": 0}, START]):
            err = ask(stranger, msg, f"x{i}")
            assert (err["type"], err["code"]) == ("error", "unauthorized"), (msg, err)
        hello = ask(stranger, {"type": "hello", "token": VIEWER}, "hv")
        assert (hello["type"], hello["role"]) == ("hello", "viewer")
        snap = stranger.recv_json()
        assert snap["type"] == "snapshot" and [a["id"] for a in snap["activities"]] == [aid], snap
        assert stranger.recv_json(3, skip_ticks=False)["type"] == "tick"
        assert ask(stranger, START, "s2")["code"] == "forbidden"
        stranger.close()
    # viewer token over the handshake and ?token= work directly
    with RawWS(server.port, headers={"Authorization": f"Bearer {VIEWER}"}) as v:
        assert v.recv_json()["role"] == "viewer"
    with RawWS(server.port, f"/ws?token={VIEWER}") as v:
        assert v.recv_json()["role"] == "viewer"
    # the HTTP read API needs a token now; /healthz does not
    for path in ("/api/activities", f"/api/activities/{aid}", "/api/history", "/api/push-to-start-token"):
        assert http_status(server.url + path) == 401, path
        assert http_status(server.url + path, {"Authorization": f"Bearer {VIEWER}"}) in (200, 403), path
        assert http_status(server.url + path, {"Authorization": f"Bearer {CONTROLLER}"}) == 200, path
        assert http_status(server.url + path, {"Authorization": "Bearer wrong"}) == 401, path
    assert http_status(server.url + "/api/activities", {"Authorization": f"Bearer {VIEWER}"}) == 200
    assert http_status(server.url + "/healthz") == 200


# ---------------------------------------------------------------------------------------------------
# Exposure
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1"])
def test_public_host_without_controller_token_exits_1(tmp_path, host):
    r = subprocess.run([str(liveactivity_bin()), "serve", "--host", host, "--port", "0", "--memory"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=20,
                       env={"PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"})
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == "", "it must not print a Listening line"
    assert "controller token" in r.stderr and host in r.stderr, r.stderr
    assert "--controller-token" in r.stderr or "LIVEACTIVITY_CONTROLLER_TOKEN" in r.stderr


def test_public_host_with_controller_token_starts(tmp_path):
    srv = launch("--host", "0.0.0.0", "--memory", cwd=tmp_path, log_name="test_access-public-host",
                 env={"LIVEACTIVITY_CONTROLLER_TOKEN": CONTROLLER}).wait_listening()
    try:
        assert srv.stdout[0].startswith("Listening on http://0.0.0.0:")
        with RawWS(srv.port) as ws:
            assert ws.recv_json()["role"] == "viewer"
    finally:
        assert srv.stop() == 0


# ---------------------------------------------------------------------------------------------------
# Origins
# ---------------------------------------------------------------------------------------------------
def test_cross_origin_handshake_is_403_same_origin_passes(start_server):
    server = start_server("--memory", "--allowed-origin", "https://dash.example.com/")
    port = server.port
    ok = [None, f"http://127.0.0.1:{port}", f"HTTP://127.0.0.1:{port}", "https://dash.example.com"]
    refused = ["http://evil.example", "null", f"https://127.0.0.1:{port}", f"http://127.0.0.1:{port + 1}",
               "http://127.0.0.1", "https://dash.example.com.evil.example", "http://dash.example.com",
               f"http://127.0.0.1:{port}.evil.example"]
    for origin in ok:
        status, _, body = http_upgrade(port, headers={"Origin": origin} if origin else {})
        assert status == 101, (origin, status, body)
    for origin in refused:
        status, _, body = http_upgrade(port, headers={"Origin": origin})
        assert status == 403, (origin, status, body)
    # a refused origin is refused whatever token it carries
    server2 = start_server("--memory", "--controller-token", CONTROLLER)
    status, _, _ = http_upgrade(server2.port, f"/ws?token={CONTROLLER}", headers={"Origin": "http://evil.example"})
    assert status == 403
    # other paths are 404
    assert http_upgrade(port, "/socket")[0] == 404


# ---------------------------------------------------------------------------------------------------
# Connection limit
# ---------------------------------------------------------------------------------------------------
def test_max_connections_refuses_the_fourth_with_503(start_server):
    server = start_server("--memory", "--max-connections", "3")
    clients = [RawWS(server.port) for _ in range(3)]
    for c in clients:
        assert c.recv_json()["type"] == "snapshot"
    status, _, body = http_upgrade(server.port)
    assert status == 503, (status, body)
    # plain HTTP is not a WebSocket connection and still works
    assert healthz(server.port)["connections"] == 3
    clients.pop().close()
    deadline = time.monotonic() + 3
    while True:
        status, _, _ = http_upgrade(server.port)
        if status == 101 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert status == 101, "a freed slot was not reusable"
    for c in clients:
        c.close()


# ---------------------------------------------------------------------------------------------------
# TLS
# ---------------------------------------------------------------------------------------------------
@pytest.fixture
def self_signed(tmp_path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return cert, key


def test_tls_serves_https_and_wss_with_deflate(tmp_path, self_signed):
    # Generous timeouts: they bound a wait for a state, and a TLS handshake under a loaded sanitizer run is slow.
    cert, key = self_signed
    srv = launch("--memory", "--tls-cert", str(cert), "--tls-key", str(key), cwd=tmp_path,
                 log_name="test_access-tls").wait_listening()
    try:
        assert srv.url.startswith("https://"), srv.stdout
        ctx = ssl.create_default_context(cafile=str(cert))
        with urllib.request.urlopen(f"https://127.0.0.1:{srv.port}/", timeout=30, context=ctx) as r:
            assert r.status == 200 and "text/html" in r.headers["content-type"]
            assert b"<html" in r.read().lower()
        assert healthz(srv.port, ctx)["status"] == "ok"
        # wss with permessage-deflate (websockets offers it by default)
        with LoopConnection(f"wss://127.0.0.1:{srv.port}/ws", ssl=ctx, open_timeout=30) as ws:
            ext = ws.response.headers.get("Sec-WebSocket-Extensions", "")
            assert "permessage-deflate" in ext, ext
            snap = json.loads(ws.recv(timeout=15))
            assert snap["type"] == "snapshot" and snap["role"] == "controller"
            ws.send(json.dumps({**START, "requestId": "s"}))
            while True:
                m = json.loads(ws.recv(timeout=15))
                if m.get("requestId") == "s":
                    break
            assert m["type"] == "ack", m
        # hand-built frames over TLS: the deflate extension is negotiated there too
        with RawWS(srv.port, tls=ctx, deflate=True) as raw:
            assert raw.recv_json()["type"] == "snapshot"
            raw.send_json({"type": "list", "requestId": "l"})
            assert raw.recv_until(lambda m: m.get("requestId") == "l")["type"] == "snapshot"
        # same-origin under TLS means the https origin
        assert http_upgrade(srv.port, headers={"Origin": f"https://127.0.0.1:{srv.port}"}, tls=ctx)[0] == 101
        assert http_upgrade(srv.port, headers={"Origin": f"http://127.0.0.1:{srv.port}"}, tls=ctx)[0] == 403
        # plaintext to the TLS port gets no WebSocket
        with pytest.raises(Exception):
            status, _, _ = http_upgrade(srv.port, timeout=3)
            assert status != 101
            raise RuntimeError(f"plaintext handshake answered {status}")
        # an untrusted certificate is refused by a verifying client (the server really presents this cert)
        with pytest.raises(urllib.error.URLError) as refused:
            urllib.request.urlopen(f"https://127.0.0.1:{srv.port}/", timeout=5,
                                   context=ssl.create_default_context())
        assert isinstance(refused.value.reason, ssl.SSLCertVerificationError), refused.value
    finally:
        assert srv.stop() == 0, srv.output()


def test_tls_main_port_takes_pushes_from_a_client_that_prefers_http2(tmp_path, self_signed):
    """curl offers h2 by ALPN over https; the main port answers HTTP/1.1, so the apns-* headers arrive and
    the push is applied (over h2, lws 4.1 dropped them and every push was refused as InvalidPushType)."""
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    cert, key = self_signed
    srv = launch("--memory", "--tls-cert", str(cert), "--tls-key", str(key), cwd=tmp_path,
                 log_name="test_access-tls-push").wait_listening()
    try:
        ctx = ssl.create_default_context(cafile=str(cert))
        with urllib.request.urlopen(f"https://127.0.0.1:{srv.port}/api/push-to-start-token", timeout=5, context=ctx) as r:
            token = json.loads(r.read())["pushToStartToken"]
        now = time.time() - 978307200  # seconds since 2001-01-01, as Swift's JSONEncoder writes dates
        payload = json.dumps({"aps": {"timestamp": int(time.time()), "event": "start",
                                      "attributes-type": "WorkoutWidgetAttributes", "attributes": {"workout": 2},
                                      "content-state": {"workoutTimer": [now, now + 600]}}})
        out = subprocess.run([curl, "-sS", "--cacert", str(cert), "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                              "-X", "POST", "-H", "apns-push-type: liveactivity", "-d", payload,
                              f"https://127.0.0.1:{srv.port}/3/device/{token}"],
                             capture_output=True, text=True, timeout=20)
        assert out.stdout.split() == ["1.1", "200"], out
    finally:
        assert srv.stop() == 0, srv.output()


def test_tls_needs_both_files(tmp_path, self_signed):
    cert, _ = self_signed
    r = subprocess.run([str(liveactivity_bin()), "serve", "--port", "0", "--memory", "--tls-cert", str(cert)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=20)
    assert r.returncode == 1 and "--tls-key" in r.stderr, r.stderr
    r = subprocess.run([str(liveactivity_bin()), "serve", "--port", "0", "--memory", "--tls-cert", str(cert),
                        "--tls-key", str(tmp_path / "missing.pem")], cwd=tmp_path, capture_output=True, text=True,
                       timeout=20)
    assert r.returncode == 1 and "missing.pem" in r.stderr, r.stderr


def _listening_addresses(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on `port`, from /proc/net/tcp and /proc/net/tcp6."""
    import ipaddress
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].split(":")
                if fields[3] != "0A" or int(hex_port, 16) != port:  # 0A = LISTEN
                    continue
                # The kernel prints each 32-bit word in host (little-endian) order.
                raw = b"".join(bytes.fromhex(address[i:i + 8])[::-1] for i in range(0, width, 8))
                found.add(str(ipaddress.ip_address(raw)))
    return found


@pytest.mark.parametrize("host, expected", [
    (None, {"127.0.0.1"}),          # the embedded default
    ("localhost", {"127.0.0.1"}),
    ("::1", {"::1"}),
])
def test_the_listening_socket_binds_only_the_host_asked_for(tmp_path, host, expected):
    """libwebsockets 4.1 with IPv6 on binds the IPv6 wildcard (every interface) whatever IPv4 address it is
    given; an open server (no tokens) said "loopback only" while anyone on the network could control it."""
    if host == "::1":
        try:
            socket.create_server(("::1", 0), family=socket.AF_INET6).close()
        except OSError:
            pytest.skip("this machine has no IPv6 loopback")
    srv = launch("--memory", *(["--host", host] if host else []), cwd=tmp_path,
                 log_name=f"test_access-host-{host}").wait_listening()
    try:
        assert _listening_addresses(srv.port) == expected
    finally:
        assert srv.stop(10) == 0


@pytest.mark.parametrize("host", ["999.1.1.1", "not-a-host", "example.org"])
def test_a_host_that_is_no_address_is_a_clear_error(host):
    out = subprocess.run([str(liveactivity_bin()), "serve", "--memory", "--host", host, "--controller-token", "t"],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 1, out
    assert f'--host must be an IP address' in out.stderr and host in out.stderr, out.stderr


def test_a_closed_stderr_does_not_stop_the_server(tmp_path):
    """`serve … 2>&1 | head -1`: once the reader of its log has gone, each log line fails with EPIPE. That
    crashed the server (a trap in FileHandle.write); the lines must be dropped and the server carry on."""
    srv = launch("--memory", cwd=tmp_path, log_name="test_access-closed-stderr", drain=False).wait_listening()
    proc, port = srv.proc, srv.port
    try:
        proc.stderr.close()  # the log's reader is gone
        for k in range(3):   # each start logs an event line
            out = subprocess.run([str(liveactivity_bin()), "start", "yoga", "--duration", "5m",
                                  "--server", f"ws://127.0.0.1:{port}/ws"], capture_output=True, text=True, timeout=10)
            assert out.returncode == 0, out
        assert proc.poll() is None, f"the server died (status {proc.returncode})"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
            assert r.status == 200
    finally:
        assert srv.stop(10) == 0


def test_the_script_client_talks_to_a_tls_server(tmp_path, self_signed):
    """`liveactivity start/list --server wss://…` against our own TLS server. The client used to send
    `Origin: http://HOST` over wss, which the server's same-origin check refused (403)."""
    cert, key = self_signed
    srv = launch("--memory", "--tls-cert", str(cert), "--tls-key", str(key), cwd=tmp_path,
                 log_name="test_access-tls-cli").wait_listening()
    try:
        url = f"wss://127.0.0.1:{srv.port}/ws"
        started = subprocess.run([str(liveactivity_bin()), "start", "yoga", "--duration", "5m", "--server", url, "--insecure"],
                                 capture_output=True, text=True, timeout=20)
        assert started.returncode == 0, started.stderr
        listed = subprocess.run([str(liveactivity_bin()), "list", "--json", "--server", url, "--insecure"],
                                capture_output=True, text=True, timeout=20)
        assert listed.returncode == 0, listed.stderr
        assert [a["id"] for a in json.loads(listed.stdout)] == [started.stdout.strip()]
    finally:
        srv.stop()


def test_a_viewers_small_receive_buffer_still_takes_large_messages(start_server):
    """A viewer's connection gets a 512-byte receive buffer (issue 30: memory per connection), so its messages
    arrive in pieces; a controller who became one by `hello` keeps that buffer. Both still get whole answers."""
    server = start_server("--memory", "--controller-token", CONTROLLER)
    big = "r" * 6000
    with RawWS(server.port) as ws:
        assert ws.recv_json()["role"] == "viewer"
        snap = ask(ws, {"type": "list"}, big)
        assert (snap["type"], snap["requestId"]) == ("snapshot", big), snap["type"]
        assert ask(ws, {"type": "hello", "token": CONTROLLER}, "h")["role"] == "controller"
        long_body = "b" * 3000
        ack = ask(ws, {**START, "alert": {"title": "t", "body": long_body}}, big + "s")
        assert ack["type"] == "ack", ack
        event = ws.recv_until(lambda m: m.get("type") == "activity")
        assert event["activity"]["attributes"] == {"workout": "yoga"}
    assert healthz(server.port)["activities"] == 1
