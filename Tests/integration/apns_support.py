"""Helpers for the APNs tests: a server with `--apns-port`, TLS material, provider tokens, and senders.

- `make_tls(dir)`: a self-signed P-256 certificate for 127.0.0.1 / localhost (the server's `--tls-cert`).
- `make_auth_key(dir, kid)`: an APNs-style `AuthKey_<kid>.p8` (PKCS#8 P-256), as Apple hands out.
- `provider_token(key_pem, kid=, team=, iat=)`: the JWT an APNs client sends (ES256, `kid`, `iss`, `iat`).
- `start_apns(tmp_path, *args, tls=, key=)`: `liveactivity serve --apns-port 0`, waiting for its three stdout
  lines (main URL, push-to-start token, APNs URL).
- `h1_request` / `H2`: one request over HTTP/1.1 (http.client) or HTTP/2 (httpx, one connection).
- `Watcher`: a WebSocket client that waits for activity events (by state, never by sleeping).
"""
from __future__ import annotations

import http.client
import json
import re
import ssl
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import jwt

from support import Launched, launch
from wsclient import LoopConnection

KID, TEAM = "ABC123DEFG", "TEAM123456"
BUNDLE = "com.example.liveactivity"
TOPIC = BUNDLE + ".push-type.liveactivity"
REFERENCE_EPOCH = 978_307_200
APNS_LINE = re.compile(r"^APNs \(HTTP/2\) on (https?)://127\.0\.0\.1:(\d+)/$")


def make_tls(directory: Path) -> tuple[Path, Path]:
    """A self-signed P-256 certificate valid for IP 127.0.0.1 and localhost; returns (cert, key) paths."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    if not cert.exists():
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return cert, key


def make_auth_key(directory: Path, kid: str = KID) -> Path:
    """`AuthKey_<kid>.p8`: a PKCS#8 P-256 private key, the shape of the key Apple gives for APNs tokens."""
    path = directory / f"AuthKey_{kid}.p8"
    if not path.exists():
        curve = subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout"], check=True,
                               capture_output=True, timeout=30).stdout
        pkcs8 = subprocess.run(["openssl", "pkcs8", "-topk8", "-nocrypt"], input=curve, check=True, capture_output=True,
                               timeout=30).stdout
        path.write_bytes(pkcs8)
    return path


def provider_token(key_pem: bytes, *, kid: str = KID, team: str = TEAM, iat: float | None = None) -> str:
    """The provider token (JWT, ES256) an APNs client puts in `authorization: bearer …`."""
    return jwt.encode({"iss": team, "iat": int(time.time() if iat is None else iat)}, key_pem, algorithm="ES256",
                      headers={"kid": kid})


@dataclass
class APNsServer:
    proc: Launched
    url: str               # main port, http(s)://127.0.0.1:PORT
    port: int
    apns_url: str          # the HTTP/2 port, http(s)://127.0.0.1:PORT
    apns_port: int
    start_token: str
    cert: Path | None = None
    key_pem: bytes | None = None
    tls: ssl.SSLContext | None = None
    headers: dict[str, str] = field(default_factory=dict)   # authorization + topic to send with each request

    @property
    def ws_url(self) -> str:
        return self.url.replace("http", "ws", 1) + "/ws"

    def token(self, **kwargs) -> str:
        assert self.key_pem is not None
        return provider_token(self.key_pem, **kwargs)

    def stop(self) -> int:
        return self.proc.stop()


def start_apns(tmp_path: Path, *extra: str, tls: bool = True, key: bool = True, name: str = "apns",
               memory: bool = True) -> APNsServer:
    """Starts `liveactivity serve --apns-port 0` (TLS and `--apns-key` unless told otherwise) and waits for its
    three stdout lines. The caller stops it (`server.stop()` returns the exit status)."""
    args = ["--apns-port", "0", *(["--memory"] if memory else []), *extra]
    cert = key_path = None
    if tls:
        cert, tls_key = make_tls(tmp_path)
        args += ["--tls-cert", str(cert), "--tls-key", str(tls_key)]
    if key:
        key_path = make_auth_key(tmp_path)
        args += ["--apns-key", str(key_path)]
    proc = launch(*args, cwd=tmp_path, log_name=name).wait_listening()
    deadline = time.monotonic() + 10
    while len(proc.stdout) < 3:
        assert proc.proc.poll() is None and time.monotonic() < deadline, "no APNs line\n" + proc.output()
        time.sleep(0.02)
    assert proc.stdout[1].startswith("Push-to-start token: "), proc.output()
    match = APNS_LINE.match(proc.stdout[2])
    assert match, f"3rd stdout line is not the APNs URL: {proc.stdout[2]!r}"
    assert match.group(1) == ("https" if tls else "http")
    context = ssl.create_default_context(cafile=str(cert)) if cert else None
    server = APNsServer(proc=proc, url=proc.url, port=proc.port, apns_url=f"{match.group(1)}://127.0.0.1:{match.group(2)}",
                        apns_port=int(match.group(2)), start_token=proc.stdout[1].split(": ", 1)[1].strip(), cert=cert,
                        key_pem=key_path.read_bytes() if key_path else None, tls=context)
    server.headers = {"apns-topic": TOPIC}
    if key:
        server.headers["authorization"] = f"bearer {server.token()}"
    return server


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self):
        return json.loads(self.body) if self.body else None

    @property
    def reason(self) -> str | None:
        return (self.json or {}).get("reason") if self.status >= 300 else None


def h1_request(server: APNsServer, method: str, path: str, headers: dict[str, str], body: bytes | None) -> Reply:
    """One request over HTTP/1.1 to the main port."""
    if server.tls:
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=server.tls, timeout=5)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


class H2:
    """An HTTP/2 client on the APNs port (httpx: ALPN h2 over TLS, prior knowledge over h2c); one connection."""

    def __init__(self, server: APNsServer):
        # A context of its own: httpx sets ALPN on the context it is given.
        verify = ssl.create_default_context(cafile=str(server.cert)) if server.cert else False
        self.client = httpx.Client(http1=False, http2=True, verify=verify,
                                   base_url=server.apns_url, timeout=10)

    def __call__(self, method: str, path: str, headers: dict[str, str], body: bytes | None) -> Reply:
        r = self.client.request(method, path, headers=headers, content=body)
        assert r.http_version == "HTTP/2", r.http_version
        return Reply(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.content)

    def close(self) -> None:
        self.client.close()


def update_payload(seconds: int = 600, timestamp: float | None = None) -> dict:
    """An `update` push whose countdown ends `seconds` from now (Swift reference-date numbers)."""
    now = time.time()
    ref = now - REFERENCE_EPOCH
    return {"aps": {"timestamp": int(timestamp if timestamp is not None else now), "event": "update",
                    "content-state": {"workoutTimer": [ref, ref + seconds]}}}


def start_payload(channel: str | None = None) -> dict:
    """A push-to-start payload (a 10-minute workout), subscribing to `channel` when given."""
    ref = time.time() - REFERENCE_EPOCH
    aps = {"timestamp": int(time.time()), "event": "start", "attributes-type": "WorkoutWidgetAttributes",
           "attributes": {"workout": 2}, "content-state": {"workoutTimer": [ref, ref + 600]},
           "alert": {"title": "Go", "body": "Yoga"}}
    if channel:
        aps["input-push-channel"] = channel
    return {"aps": aps}


def new_id() -> str:
    return str(uuid.uuid4()).upper()


class Watcher:
    """A WebSocket client of the main port: starts activities, waits for events by predicate."""

    def __init__(self, server: APNsServer):
        # A fresh TLS server's first handshake has taken over 5 s on a loaded 2-core CI machine (as in
        # test_access.py): wait for the handshake generously; nothing here measures its speed.
        self.ws = LoopConnection(server.ws_url, ssl=server.tls, open_timeout=30 if server.tls else 5)
        self.buffer: list[dict] = []
        snapshot = self.wait(lambda m: m["type"] == "snapshot")
        self.snapshot = snapshot

    def wait(self, predicate, timeout: float = 5.0) -> dict:
        for i, m in enumerate(self.buffer):
            if predicate(m):
                return self.buffer.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no matching message within {timeout}s; buffered {[m.get('type') for m in self.buffer]}"
            try:
                m = json.loads(self.ws.recv(timeout=left))
            except TimeoutError:
                continue
            if m.get("type") == "tick":
                continue
            if predicate(m):
                return m
            self.buffer.append(m)

    def event(self, name: str, activity_id: str | None = None, timeout: float = 5.0) -> dict:
        return self.wait(lambda m: m["type"] == "activity" and m["event"] == name
                         and (activity_id is None or m["activity"]["id"] == activity_id), timeout)

    def start(self, channel: str | None = None, request_id: str | None = None) -> dict:
        """Starts a 60 s jogging activity (subscribed to `channel`); returns the `ack` or `error`."""
        rid = request_id or new_id()
        msg = {"type": "start", "requestId": rid, "attributes": {"workout": "jogging"}, "durationSeconds": 60}
        if channel:
            msg["channelId"] = channel
        self.ws.send(json.dumps(msg))
        return self.wait(lambda m: m.get("requestId") == rid and m["type"] in ("ack", "error"))

    def close(self) -> None:
        self.ws.close()
