"""APNs's provider API over HTTP/2 (`serve --apns-port`), with real clients: aioapns (TLS, no ALPN, JWTs),
curl --http2 (TLS, ALPN h2) and --http2-prior-knowledge (h2c), httpx for every APNs reason code (against the
same table on HTTP/1.1), and the `h2` library for many streams on one connection and for hostile input.

Every push here goes through the same push endpoint as the main port's, so it reaches a WebSocket watcher.
"""
from __future__ import annotations

import asyncio
import json
import socket
import ssl
import subprocess
import time

import h2.config
import h2.connection
import h2.events
import pytest
from hyperframe.frame import Frame, GoAwayFrame, HeadersFrame, RstStreamFrame, SettingsFrame

from apns_support import (BUNDLE, KID, TEAM, TOPIC, H2, Watcher, h1_request, make_auth_key, new_id, provider_token,
                          start_apns, start_payload, update_payload)
from support import liveactivity_bin
from hostile_support import healthz


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """One server for the module: TLS on both ports, `--apns-key AuthKey_ABC123DEFG.p8`."""
    server = start_apns(tmp_path_factory.mktemp("apns-tls"), name="test_apns_http2-tls")
    yield server
    assert server.stop() == 0, server.proc.output()


@pytest.fixture(scope="module")
def h2c_server(tmp_path_factory):
    """One server for the module: plain HTTP, h2c with prior knowledge on the APNs port, no key (open, loopback),
    and small limits for the hostile tests."""
    server = start_apns(tmp_path_factory.mktemp("apns-h2c"), "--apns-max-streams", "8", "--apns-max-header-bytes", "4096",
                        tls=False, key=False, name="test_apns_http2-h2c")
    yield server
    assert server.stop() == 0, server.proc.output()


# ---------------------------------------------------------------------------------------------------------------
# Real clients
# ---------------------------------------------------------------------------------------------------------------
def test_aioapns_over_tls_without_alpn_reaches_a_watcher(tls_server, monkeypatch):
    from aioapns import APNs, NotificationRequest, PushType
    from aioapns.connection import APNsDevelopmentClientProtocol
    monkeypatch.setattr(APNsDevelopmentClientProtocol, "APNS_SERVER", "127.0.0.1")
    monkeypatch.setattr(APNsDevelopmentClientProtocol, "APNS_PORT", tls_server.apns_port)
    watcher = Watcher(tls_server)
    loop = asyncio.new_event_loop()
    try:
        async def make_client():
            return APNs(key=tls_server.key_pem.decode(), key_id=KID, team_id=TEAM, topic=TOPIC, use_sandbox=True,
                        ssl_context=ssl.create_default_context(cafile=str(tls_server.cert)))
        client = loop.run_until_complete(make_client())

        def send(token: str, message: dict, priority: int | None = None):
            return loop.run_until_complete(client.send_notification(NotificationRequest(
                device_token=token, message=message, push_type=PushType.LIVEACTIVITY, priority=priority)))

        started = send(tls_server.start_token, start_payload(), 10)
        assert started.is_successful, (started.status, started.description)
        activity = watcher.event("started")["activity"]
        updated = send(activity["pushToken"], update_payload(900, timestamp=time.time() + 1), 5)
        assert updated.is_successful, (updated.status, updated.description)
        watcher.event("updated", activity["id"])
        refused = send("0" * 64, update_payload())
        assert (refused.status, refused.description) == ("400", "BadDeviceToken")
    finally:
        loop.close()
        watcher.close()


def _curl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "-v", "-o", "-", "-w", "\nstatus=%{http_code} version=%{http_version}\n", *args],
                          capture_output=True, text=True, timeout=20)


def test_curl_http2_over_tls_negotiates_h2_and_reaches_a_watcher(tls_server):
    watcher = Watcher(tls_server)
    try:
        activity = watcher.start()
        token = watcher.event("started", activity["activityId"])["activity"]["pushToken"]
        r = _curl("--http2", "--cacert", str(tls_server.cert), "-X", "POST", f"{tls_server.apns_url}/3/device/{token}",
                  "-H", "apns-push-type: liveactivity", "-H", f"apns-topic: {TOPIC}",
                  "-H", f"authorization: bearer {tls_server.token()}", "-d", json.dumps(update_payload(1200)))
        assert "status=200 version=2" in r.stdout, r.stdout + r.stderr
        assert "ALPN: server accepted h2" in r.stderr, r.stderr
        assert "liveactivity-verdict: applied" in r.stderr.lower()
        watcher.event("updated", activity["activityId"])
    finally:
        watcher.close()


def test_curl_h2c_prior_knowledge_reaches_a_watcher(h2c_server):
    watcher = Watcher(h2c_server)
    try:
        activity = watcher.start()
        token = watcher.event("started", activity["activityId"])["activity"]["pushToken"]
        r = _curl("--http2-prior-knowledge", "-X", "POST", f"{h2c_server.apns_url}/3/device/{token}",
                  "-H", "apns-push-type: liveactivity", "-d", json.dumps(update_payload(1200)))
        assert "status=200 version=2" in r.stdout, r.stdout + r.stderr
        watcher.event("updated", activity["activityId"])
        # HTTP/1.1 to the HTTP/2 port: a plain answer saying what the port speaks.
        r = _curl("--http1.1", "-X", "POST", f"{h2c_server.apns_url}/3/device/{token}", "-d", "{}")
        assert "status=505" in r.stdout and "HTTP/2 only" in r.stdout, r.stdout
    finally:
        watcher.close()


# ---------------------------------------------------------------------------------------------------------------
# Every reason, on HTTP/2 and on HTTP/1.1, against one table
# ---------------------------------------------------------------------------------------------------------------
def _reason_table(server, token: str):
    """(case, method, path, headers, body, status, reason): APNs's answers ("Handling notification responses from
    APNs"). Headers are merged over a good request's; None removes one."""
    good = update_payload(300)
    other_key = make_auth_key(server.cert.parent / "other", KID) if (server.cert.parent / "other").mkdir(exist_ok=True) is None else None
    return [
        ("accepted", "POST", f"/3/device/{token}", {}, good, 200, None),
        ("push type alert", "POST", f"/3/device/{token}", {"apns-push-type": "alert"}, good, 400, "InvalidPushType"),
        ("no push type", "POST", f"/3/device/{token}", {"apns-push-type": None}, good, 400, "InvalidPushType"),
        ("apns-id not a UUID", "POST", f"/3/device/{token}", {"apns-id": "id-1"}, good, 400, "BadMessageId"),
        ("no authorization", "POST", f"/3/device/{token}", {"authorization": None}, good, 403, "MissingProviderToken"),
        ("token of another key", "POST", f"/3/device/{token}",
         {"authorization": f"bearer {provider_token(other_key.read_bytes())}"}, good, 403, "InvalidProviderToken"),
        ("token of another kid", "POST", f"/3/device/{token}",
         {"authorization": f"bearer {server.token(kid='ZZZ123DEFG')}"}, good, 403, "InvalidProviderToken"),
        ("not a JWT", "POST", f"/3/device/{token}", {"authorization": "bearer nope"}, good, 403, "InvalidProviderToken"),
        ("token issued 2 h ago", "POST", f"/3/device/{token}",
         {"authorization": f"bearer {server.token(iat=time.time() - 7200)}"}, good, 403, "ExpiredProviderToken"),
        ("no topic", "POST", f"/3/device/{token}", {"apns-topic": None}, good, 400, "MissingTopic"),
        ("bundle id as topic", "POST", f"/3/device/{token}", {"apns-topic": BUNDLE}, good, 400, "TopicDisallowed"),
        ("priority 7", "POST", f"/3/device/{token}", {"apns-priority": "7"}, good, 400, "BadPriority"),
        ("expiration not a number", "POST", f"/3/device/{token}", {"apns-expiration": "tomorrow"}, good, 400, "BadExpirationDate"),
        ("collapse id of 65 bytes", "POST", f"/3/device/{token}", {"apns-collapse-id": "c" * 65}, good, 400, "BadCollapseId"),
        ("empty body", "POST", f"/3/device/{token}", {}, b"", 400, "PayloadEmpty"),
        ("over 4 KB", "POST", f"/3/device/{token}", {}, {"aps": {**good["aps"], "pad": "x" * 4200}}, 413, "PayloadTooLarge"),
        ("not JSON", "POST", f"/3/device/{token}", {}, b"{nope", 400, "BadPayload"),
        ("no aps", "POST", f"/3/device/{token}", {}, {"event": "update"}, 400, "BadPayload"),
        ("unknown device token", "POST", f"/3/device/{'0' * 64}", {}, good, 400, "BadDeviceToken"),
        ("not under /3/device", "POST", f"/3/devices/{token}", {}, good, 404, "BadPath"),
        ("GET", "GET", f"/3/device/{token}", {}, None, 405, "MethodNotAllowed"),
    ]


@pytest.mark.parametrize("transport", ["http2", "http1.1"])
def test_every_reason_as_apns_gives_it(tls_server, transport):
    watcher = Watcher(tls_server)
    h2client = H2(tls_server)
    try:
        activity = watcher.start()
        token = watcher.event("started", activity["activityId"])["activity"]["pushToken"]
        send = h2client if transport == "http2" else (lambda *a: h1_request(tls_server, *a))
        jwt = tls_server.token()  # one provider token per connection: APNs refuses a new one within 20 minutes
        for case, method, path, changes, payload, status, reason in _reason_table(tls_server, token):
            apns_id = new_id()
            headers = {"apns-push-type": "liveactivity", "apns-id": apns_id, **tls_server.headers,
                       "authorization": f"bearer {jwt}"}
            for name, value in changes.items():
                if value is None:
                    headers.pop(name, None)
                else:
                    headers[name] = value
            body = payload if payload is None or isinstance(payload, bytes) else json.dumps(payload).encode()
            r = send(method, path, headers, body)
            assert (r.status, r.reason) == (status, reason), (transport, case, r.status, r.body)
            if "apns-id" in changes:
                assert r.headers.get("apns-id") not in (None, "id-1"), (case, r.headers)
            elif reason not in ("BadPath", "MethodNotAllowed"):
                assert r.headers.get("apns-id") == apns_id, (case, r.headers)
                assert len(r.headers.get("apns-unique-id", "")) == 36, (case, r.headers)
            if status == 200:
                assert r.body == b"" and r.headers["liveactivity-verdict"] == "applied", (case, r.headers)
            else:
                assert r.headers["content-type"].startswith("application/json") and set(r.json) == {"reason", "detail"}, r.body
        watcher.event("updated", activity["activityId"])
    finally:
        h2client.close()
        watcher.close()


def test_a_dismissed_activitys_token_is_unregistered_over_http2_and_http1(tls_server, monkeypatch):
    """Issue 29 item 1: a push to the token of a dismissed activity gets APNs's 410 `Unregistered` with the time
    the token stopped being valid (milliseconds since 1970), from aioapns and httpx over HTTP/2 and from HTTP/1.1;
    a token never issued stays 400 `BadDeviceToken`. (Before: 400 `BadDeviceToken` for both.)"""
    from aioapns import APNs, NotificationRequest, PushType
    from aioapns.connection import APNsDevelopmentClientProtocol
    monkeypatch.setattr(APNsDevelopmentClientProtocol, "APNS_SERVER", "127.0.0.1")
    monkeypatch.setattr(APNsDevelopmentClientProtocol, "APNS_PORT", tls_server.apns_port)
    watcher = Watcher(tls_server)
    h2client = H2(tls_server)
    loop = asyncio.new_event_loop()
    try:
        activity = watcher.start()
        token = watcher.event("started", activity["activityId"])["activity"]["pushToken"]
        before_ms = int(time.time() * 1000) - 1000
        rid = new_id()
        watcher.ws.send(json.dumps({"type": "end", "requestId": rid, "activityId": activity["activityId"],
                                    "dismissalPolicy": "immediate"}))
        watcher.wait(lambda m: m.get("requestId") == rid and m["type"] == "ack")
        watcher.event("dismissed", activity["activityId"])
        after_ms = int(time.time() * 1000) + 1000

        async def make_client():
            return APNs(key=tls_server.key_pem.decode(), key_id=KID, team_id=TEAM, topic=TOPIC, use_sandbox=True,
                        ssl_context=ssl.create_default_context(cafile=str(tls_server.cert)))
        client = loop.run_until_complete(make_client())
        gone = loop.run_until_complete(client.send_notification(NotificationRequest(
            device_token=token, message=update_payload(), push_type=PushType.LIVEACTIVITY)))
        assert (gone.status, gone.description) == ("410", "Unregistered"), (gone.status, gone.description)
        assert isinstance(gone.timestamp, int) and before_ms <= gone.timestamp <= after_ms, (gone.timestamp, before_ms, after_ms)

        headers = {"apns-push-type": "liveactivity", **tls_server.headers}
        body = json.dumps(update_payload()).encode()
        for transport, send in (("http2", h2client), ("http1.1", lambda *a: h1_request(tls_server, *a))):
            r = send("POST", f"/3/device/{token}", headers, body)
            assert (r.status, r.reason) == (410, "Unregistered"), (transport, r.status, r.body)
            assert set(r.json) == {"reason", "detail", "timestamp"}, (transport, r.body)
            assert r.json["timestamp"] == gone.timestamp, (transport, r.json, gone.timestamp)
            never = send("POST", f"/3/device/{'0' * 64}", headers, body)
            assert (never.status, never.reason) == (400, "BadDeviceToken"), (transport, never.status, never.body)
    finally:
        loop.close()
        h2client.close()
        watcher.close()


def test_a_new_provider_token_within_20_minutes_is_too_many_updates(tls_server):
    """Issue 29 item 2: APNs takes a new provider token on a connection at most about once every 20 minutes; a
    sooner one gets 429 `TooManyProviderTokenUpdates`, and the connection keeps working with the previous token.
    Another connection may use the new token. (Before: every valid token was taken, 200.)"""
    watcher = Watcher(tls_server)
    first, second = H2(tls_server), H2(tls_server)
    try:
        activity = watcher.start()
        token = watcher.event("started", activity["activityId"])["activity"]["pushToken"]
        old_jwt, new_jwt = tls_server.token(iat=time.time() - 60), tls_server.token()
        assert old_jwt != new_jwt

        def push(client, jwt: str, seconds: int):
            headers = {"apns-push-type": "liveactivity", "apns-topic": TOPIC, "authorization": f"bearer {jwt}"}
            return client("POST", f"/3/device/{token}", headers, json.dumps(update_payload(seconds, timestamp=time.time() + seconds)).encode())

        assert push(first, old_jwt, 100).status == 200
        refused = push(first, new_jwt, 200)
        assert (refused.status, refused.reason) == (429, "TooManyProviderTokenUpdates"), (refused.status, refused.body)
        assert set(refused.json) == {"reason", "detail"}, refused.body
        again = push(first, old_jwt, 300)
        assert again.status == 200 and again.headers["liveactivity-verdict"] == "applied", (again.status, again.body)
        # the refused push changed nothing: the watcher sees the updates of the first and third pushes only
        assert watcher.event("updated", activity["activityId"])["activity"]["content"]["state"]["workoutTimer"]
        watcher.event("updated", activity["activityId"])
        assert push(second, new_jwt, 400).status == 200
    finally:
        first.close()
        second.close()
        watcher.close()


def test_without_a_key_a_guarded_server_takes_the_controller_token_not_jwts(tmp_path):
    server = start_apns(tmp_path, "--controller-token", "ctl", tls=False, key=False, name="test_apns_http2-guarded")
    client = H2(server)
    try:
        jwt_token = provider_token(make_auth_key(tmp_path).read_bytes())
        base = {"apns-push-type": "liveactivity"}
        path = f"/3/device/{server.start_token}"
        body = json.dumps(start_payload()).encode()
        r = client("POST", path, {**base, "authorization": f"bearer {jwt_token}", "apns-topic": TOPIC}, body)
        assert (r.status, r.reason) == (403, "InvalidProviderToken") and "--apns-key" in r.json["detail"], r.body
        assert client("POST", path, base, body).reason == "MissingProviderToken"
        r = client("POST", path, {**base, "authorization": "bearer ctl"}, body)
        assert (r.status, r.headers.get("liveactivity-verdict")) == (200, "applied"), r.body
    finally:
        client.close()
        assert server.stop() == 0


# ---------------------------------------------------------------------------------------------------------------
# Many streams on one connection, and hostile input (the `h2` library, h2c)
# ---------------------------------------------------------------------------------------------------------------
class RawH2:
    """A bare HTTP/2 client connection (the `h2` state machine over a socket), for multiplexing and abuse."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8", validate_outbound_headers=False,
                                           normalize_outbound_headers=False)
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        self.flush()
        self.responses: dict[int, dict] = {}
        self.resets: dict[int, int] = {}
        self.terminated: int | None = None
        self.closed = False

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, path: str, headers: dict[str, str], body: bytes | None = None, end: bool = True) -> int:
        stream = self.conn.get_next_available_stream_id()
        fields = [(":method", "POST"), (":scheme", "http"), (":authority", "127.0.0.1"), (":path", path), *headers.items()]
        self.conn.send_headers(stream, fields, end_stream=end and not body)
        if body:
            self.conn.send_data(stream, body, end_stream=end)
        self.flush()
        return stream

    def pump(self, until, timeout: float = 5.0) -> None:
        """Reads until `until(self)` holds, the connection ends, or `timeout` passes (then fails)."""
        deadline = time.monotonic() + timeout
        while not until(self):
            assert not self.closed, "the connection closed first"
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            assert time.monotonic() < deadline, "timed out"
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                data = b""
            if not data:
                self.closed = True
                continue
            for event in self.conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    self.responses.setdefault(event.stream_id, {"body": b""})["headers"] = dict(event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    self.responses.setdefault(event.stream_id, {"body": b""})["body"] += event.data
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    self.responses.setdefault(event.stream_id, {"body": b""})["ended"] = True
                elif isinstance(event, h2.events.StreamReset):
                    self.resets[event.stream_id] = event.error_code
                elif isinstance(event, h2.events.ConnectionTerminated):
                    self.terminated = event.error_code
            try:
                self.flush()
            except OSError:
                self.closed = True

    def close(self) -> None:
        self.sock.close()


def _push_headers() -> dict[str, str]:
    return {"apns-push-type": "liveactivity", "content-type": "application/json"}


def test_many_concurrent_streams_on_one_connection(h2c_server):
    watcher = Watcher(h2c_server)
    client = RawH2(h2c_server.apns_port)
    try:
        ids = [watcher.start()["activityId"] for _ in range(4)]
        tokens = [watcher.event("started", i)["activity"]["pushToken"] for i in ids]
        # 8 streams at once (the limit this server announces), 4 rounds: 32 pushes on one connection.
        base = int(time.time())
        for round_ in range(4):
            streams = [client.request(f"/3/device/{tokens[k % 4]}", _push_headers(),
                                      json.dumps(update_payload(600 + k, timestamp=base + round_ * 8 + k)).encode())
                       for k in range(8)]
            client.pump(lambda c: all(c.responses.get(s, {}).get("ended") for s in streams))
            for s in streams:
                assert client.responses[s]["headers"][":status"] == "200", client.responses[s]
                assert client.responses[s]["headers"]["liveactivity-verdict"] == "applied"
        for i in ids:
            watcher.event("updated", i)
    finally:
        client.close()
        watcher.close()


def _still_serving(server, bystander: RawH2) -> None:
    """The server answers a connection opened before the abuse, a new one, and the main port."""
    token = server.start_token
    stream = bystander.request(f"/3/device/{token}", _push_headers(), b"{nope")
    bystander.pump(lambda c: c.responses.get(stream, {}).get("ended"))
    assert bystander.responses[stream]["headers"][":status"] == "400"
    fresh = RawH2(server.apns_port)
    try:
        stream = fresh.request(f"/3/device/{token}", _push_headers(), b"{nope")
        fresh.pump(lambda c: c.responses.get(stream, {}).get("ended"))
        assert json.loads(fresh.responses[stream]["body"])["reason"] == "BadPayload"
    finally:
        fresh.close()
    assert healthz(server.port)["status"] == "ok"


def test_a_bad_preface_costs_only_that_connection(h2c_server):
    bystander = RawH2(h2c_server.apns_port)
    try:
        with socket.create_connection(("127.0.0.1", h2c_server.apns_port), timeout=5) as sock:
            sock.sendall(b"\x16\x03\x01garbage that is not HTTP/2 at all" * 4)
            sock.settimeout(5)
            while sock.recv(4096):
                pass  # the server closes it
        _still_serving(h2c_server, bystander)
    finally:
        bystander.close()


class FrameFlood:
    """A connection that writes HTTP/2 frames by hand (hpack + hyperframe), ignoring what the server announces,
    and reads back which frames the server sent (RST_STREAM codes, GOAWAY code)."""

    def __init__(self, port: int):
        import hpack
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.encoder = hpack.Encoder()
        self.sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + SettingsFrame(0).serialize())
        self.next_stream = 1
        self.resets: list[int] = []
        self.goaway: int | None = None
        self.buffer = b""

    def open_stream(self, path: str) -> int:
        stream = self.next_stream
        self.next_stream += 2
        block = self.encoder.encode([(":method", "POST"), (":scheme", "http"), (":authority", "127.0.0.1"), (":path", path),
                                     ("apns-push-type", "liveactivity")])
        frame = HeadersFrame(stream, block)
        frame.flags.add("END_HEADERS")
        self.send(frame.serialize())
        return stream

    def reset(self, stream: int) -> None:
        self.send(RstStreamFrame(stream, error_code=8).serialize())  # CANCEL

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            pass  # the server may have closed it already

    def read_until_closed(self, timeout: float = 5.0) -> None:
        """Reads frames until the server closes the connection (fails after `timeout`)."""
        deadline = time.monotonic() + timeout
        while True:
            assert time.monotonic() < deadline, f"the server kept the connection (resets {len(self.resets)})"
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            self.buffer += data
            while len(self.buffer) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
                if len(self.buffer) < 9 + length:
                    break
                frame.parse_body(memoryview(self.buffer[9:9 + length]))
                self.buffer = self.buffer[9 + length:]
                if isinstance(frame, RstStreamFrame):
                    self.resets.append(frame.error_code)
                elif isinstance(frame, GoAwayFrame):
                    self.goaway = frame.error_code

    def close(self) -> None:
        self.sock.close()


def test_a_stream_flood_costs_only_that_connection(h2c_server):
    bystander = RawH2(h2c_server.apns_port)
    flood = FrameFlood(h2c_server.apns_port)
    try:
        # The server announced 8 streams at once; open 40 that never end.
        for _ in range(40):
            flood.open_stream(f"/3/device/{h2c_server.start_token}")
        _still_serving(h2c_server, bystander)
        flood.sock.shutdown(socket.SHUT_WR)
        flood.read_until_closed()
        assert flood.resets or flood.goaway is not None, "the streams over the limit were neither refused nor the connection ended"
        _still_serving(h2c_server, bystander)
    finally:
        flood.close()
        bystander.close()


def test_huge_headers_reset_only_that_stream(h2c_server):
    client = RawH2(h2c_server.apns_port)
    try:
        big = client.request(f"/3/device/{h2c_server.start_token}", {**_push_headers(), "x-padding": "p" * 6000}, b"{}")
        client.pump(lambda c: big in c.resets or c.terminated is not None)
        assert big in client.resets, (client.resets, client.terminated)
        _still_serving(h2c_server, client)  # the same connection goes on
    finally:
        client.close()


def test_an_rst_flood_ends_that_connection_with_enhance_your_calm(h2c_server):
    bystander = RawH2(h2c_server.apns_port)
    flood = FrameFlood(h2c_server.apns_port)
    try:
        for _ in range(400):  # open and reset at once (CVE-2023-44487, "rapid reset")
            flood.reset(flood.open_stream(f"/3/device/{h2c_server.start_token}"))
        flood.read_until_closed()
        assert flood.goaway == 11, flood.goaway  # 0xb ENHANCE_YOUR_CALM (RFC 9113 §7)
        _still_serving(h2c_server, bystander)
    finally:
        flood.close()
        bystander.close()


def test_serve_help_lists_the_apns_listener_and_its_limits():
    r = subprocess.run([str(liveactivity_bin()), "serve", "--help"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0
    for option in ("--apns-port", "--apns-key", "--apns-max-streams", "--apns-max-header-bytes", "--apns-max-body-bytes",
                   "--apns-max-connections"):
        assert option in r.stdout, option
    bad = subprocess.run([str(liveactivity_bin()), "serve", "--apns-port", "http"], capture_output=True, text=True, timeout=10)
    assert bad.returncode == 2 and "--apns-port" in bad.stderr
