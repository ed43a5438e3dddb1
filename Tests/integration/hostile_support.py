"""Helpers for the hostile-client and access tests (test_hostile.py, test_access.py).

- `RawWS`: a WebSocket client on a plain (or TLS) socket that builds every frame by hand, so it can send
  what `websockets` refuses to: invalid UTF-8, oversized control frames, bad fragmentation, unmasked frames,
  permessage-deflate bombs. It reads server frames (and inflates them when deflate was negotiated).
- `http_upgrade(...)`: one handshake, returning the HTTP status and headers (for 401/403/404/503 checks).
- `Watcher`: a client on its own thread that stays connected through a test and records every tick and
  event with its arrival time, so a test can assert that hostile input disturbed nobody else.
- `launch(...)` (servers the `start_server` fixture cannot start: TLS, refused start-ups) lives in support.py,
  the tests' one helper module; it is re-exported here for older imports.
- `vm_rss_kib(pid)`: the resident set size from /proc.
"""
from __future__ import annotations

import base64
import json
import os
import queue
import re
import select
import socket
import ssl
import struct
import threading
import time
import zlib
from typing import Any

from websockets.sync.client import connect as sync_connect

from support import Launched, launch  # noqa: F401  (re-exported)
from wsclient import LoopConnection

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class Closed(Exception):
    """The server closed the connection: `code` from its close frame, or None when the socket just ended
    (EOF) or was reset (`reset` True)."""

    def __init__(self, code: int | None, reason: str = "", reset: bool = False):
        super().__init__(f"closed: code={code} reason={reason!r} reset={reset}")
        self.code = code
        self.reason = reason
        self.reset = reset


class HandshakeRefused(Exception):
    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        super().__init__(f"handshake refused: HTTP {status} {body[:200]!r}")
        self.status = status
        self.headers = headers
        self.body = body


def read_http_head(sock: socket.socket, timeout: float) -> tuple[int, dict[str, str], bytes]:
    """Reads an HTTP response head; returns status, lower-cased headers and whatever followed the head."""
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0] if lines else "")
    if not m:
        raise AssertionError(f"not an HTTP response: {data[:200]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(m.group(1)), headers, rest


def read_until_closed(sock: socket.socket, bufsize: int = 65536) -> bytes:
    """Everything the peer sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(bufsize):
        data += chunk
    return data


def open_socket(host: str, port: int, *, tls: ssl.SSLContext | None = None, rcvbuf: int | None = None,
                timeout: float = 5) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:  # before connect, so the window is small from the start
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(timeout)
    sock.connect((host, port))
    if tls is not None:
        sock = tls.wrap_socket(sock, server_hostname=host)
    return sock


def http_upgrade(port: int, path: str = "/ws", headers: dict[str, str] | None = None, *, host: str = "127.0.0.1",
                 tls: ssl.SSLContext | None = None, timeout: float = 5) -> tuple[int, dict[str, str], bytes]:
    """Sends one WebSocket handshake and returns (status, headers, body-or-rest); closes the socket."""
    sock = open_socket(host, port, tls=tls, timeout=timeout)
    try:
        sock.sendall(_handshake_bytes(host, port, path, headers or {}))
        status, hdrs, rest = read_http_head(sock, timeout)
        if status != 101:
            # read the (short) body too
            want = int(hdrs.get("content-length", "0") or 0)
            sock.settimeout(timeout)
            while len(rest) < want:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                rest += chunk
        return status, hdrs, rest
    finally:
        sock.close()


def _handshake_bytes(host: str, port: int, path: str, headers: dict[str, str]) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class RawWS:
    """A hand-built WebSocket client connection (RFC 6455 framing, optional RFC 7692 deflate)."""

    def __init__(self, port: int, path: str = "/ws", *, host: str = "127.0.0.1", headers: dict[str, str] | None = None,
                 deflate: bool = False, rcvbuf: int | None = None, tls: ssl.SSLContext | None = None,
                 timeout: float = 5, offer: str | None = None, window_bits: int = 15):
        """`deflate` offers permessage-deflate (`offer` replaces the default offer); compressed server messages
        are inflated with a window of 2^`window_bits` bytes, keeping it between messages (context takeover),
        and strictly: a match reaching beyond that window fails (see `inflate_strictly`)."""
        hdrs = dict(headers or {})
        if deflate:
            hdrs["Sec-WebSocket-Extensions"] = offer or "permessage-deflate; client_no_context_takeover"
        self.sock = open_socket(host, port, tls=tls, rcvbuf=rcvbuf, timeout=timeout)
        self.sock.sendall(_handshake_bytes(host, port, path, hdrs))
        status, self.headers, rest = read_http_head(self.sock, timeout)
        if status != 101:
            self.sock.close()
            raise HandshakeRefused(status, self.headers, rest)
        self.deflate = "permessage-deflate" in self.headers.get("sec-websocket-extensions", "")
        if deflate:
            assert self.deflate, f"server did not negotiate permessage-deflate: {self.headers}"
        self._inflater = zlib.decompressobj(-window_bits)  # kept between messages, as context takeover allows
        self.compressed_messages = 0  # data messages that came with RSV1 set
        self.buf = rest
        self.closed_code: int | None = None

    # -- sending ----------------------------------------------------------------------------------
    @staticmethod
    def frame(opcode: int, payload: bytes, *, fin: bool = True, rsv1: bool = False, mask: bool = True,
              declared_length: int | None = None) -> bytes:
        b0 = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
        n = len(payload) if declared_length is None else declared_length
        mbit = 0x80 if mask else 0
        if n < 126:
            head = struct.pack("!BB", b0, mbit | n)
        elif n < 65536:
            head = struct.pack("!BBH", b0, mbit | 126, n)
        else:
            head = struct.pack("!BBQ", b0, mbit | 127, n)
        if not mask:
            return head + payload
        key = os.urandom(4)
        masked = bytes(b ^ key[i % 4] for i, b in enumerate(payload)) if len(payload) < 4096 else _mask_fast(payload, key)
        return head + key + masked

    def send_frame(self, opcode: int, payload: bytes, **kw: Any) -> None:
        self.sock.sendall(self.frame(opcode, payload, **kw))

    def send_text(self, text: str | bytes) -> None:
        data = text.encode() if isinstance(text, str) else text
        if self.deflate:
            self.send_frame(OP_TEXT, deflate_message(data), rsv1=True)
        else:
            self.send_frame(OP_TEXT, data)

    def send_json(self, obj: Any) -> None:
        self.send_text(json.dumps(obj))

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    # -- receiving --------------------------------------------------------------------------------
    def _need(self, n: int, deadline: float) -> None:
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no frame from the server in time")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                raise Closed(None, reset=True) from None
            except socket.timeout:
                raise TimeoutError("no frame from the server in time") from None
            if not chunk:
                raise Closed(None)
            self.buf += chunk

    def recv_frame(self, timeout: float = 3) -> tuple[bool, int, bool, bytes]:
        """(fin, opcode, rsv1, payload) of the next frame."""
        deadline = time.monotonic() + timeout
        self._need(2, deadline)
        b0, b1 = self.buf[0], self.buf[1]
        assert not b1 & 0x80, "server frames must not be masked"
        n = b1 & 0x7F
        off = 2
        if n == 126:
            self._need(4, deadline)
            n = struct.unpack("!H", self.buf[2:4])[0]
            off = 4
        elif n == 127:
            self._need(10, deadline)
            n = struct.unpack("!Q", self.buf[2:10])[0]
            off = 10
        self._need(off + n, deadline)
        payload = self.buf[off:off + n]
        self.buf = self.buf[off + n:]
        return bool(b0 & 0x80), b0 & 0x0F, bool(b0 & 0x40), payload

    def recv_message(self, timeout: float = 3) -> tuple[int, bytes]:
        """The next whole data message (opcode, payload), answering pings; raises `Closed` on a close frame."""
        deadline = time.monotonic() + timeout
        parts: list[bytes] = []
        first_op = None
        compressed = False
        while True:
            fin, op, rsv1, payload = self.recv_frame(max(0.01, deadline - time.monotonic()))
            if op == OP_CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                self.closed_code = code
                raise Closed(code, payload[2:].decode("utf-8", "replace"))
            if op == OP_PING:
                self.send_frame(OP_PONG, payload)
                continue
            if op == OP_PONG:
                continue
            if first_op is None:
                first_op, compressed = op, rsv1
            parts.append(payload)
            if fin:
                data = b"".join(parts)
                if compressed:
                    data = inflate_strictly(self._inflater, data + b"\x00\x00\xff\xff")
                    self.compressed_messages += 1
                return first_op, data

    def recv_json(self, timeout: float = 3, *, skip_ticks: bool = True) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            op, data = self.recv_message(max(0.01, deadline - time.monotonic()))
            assert op == OP_TEXT, f"expected a text message, got opcode {op}"
            msg = json.loads(data)
            if skip_ticks and msg.get("type") == "tick":
                continue
            return msg

    def recv_until(self, pred, timeout: float = 3) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message in {timeout}s; saw {seen}")
            try:
                m = self.recv_json(left)
            except TimeoutError:
                raise AssertionError(f"no matching message in {timeout}s; saw {seen}") from None
            if pred(m):
                return m
            seen.append(m.get("type"))

    def send_flood(self, messages: list[dict]) -> tuple[list[dict], Closed | None]:
        """Sends `messages` one at a time, reading whatever the server has sent meanwhile, as a real client
        reads while it writes; stops at the server's close frame. Returns the JSON messages read and the
        `Closed`, if the close came.

        A client that only writes would lose the close: a server that closes its socket while messages it
        did not read are still in its receive buffer makes the kernel answer with a reset, and Linux drops
        what the client had not read yet, close frame included (the "lingering close" problem of RFC 9112
        §9.6). Tests must not depend on that race."""
        received: list[dict] = []
        for message in messages:
            try:
                self.send_json(message)
            except (BrokenPipeError, ConnectionResetError):
                break
            while self.buf or select.select([self.sock], [], [], 0)[0]:
                try:
                    _, payload = self.recv_message(0.5)
                except Closed as closed:
                    return received, closed
                except TimeoutError:
                    break
                received.append(json.loads(payload))
        return received, None

    def expect_close(self, timeout: float = 5) -> Closed:
        """Reads (and drops) messages until the server closes; returns the `Closed` (code None = no close
        frame: EOF or reset)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"server did not close the connection within {timeout}s")
            try:
                self.recv_message(left)
            except Closed as c:
                return c
            except TimeoutError:
                raise AssertionError(f"server did not close the connection within {timeout}s") from None

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "RawWS":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _mask_fast(payload: bytes, key: bytes) -> bytes:
    n = len(payload)
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(k, "little")).to_bytes(n, "little")


def inflate_strictly(inflater, data: bytes, step: int = 64) -> bytes:
    """Inflates `data` at most `step` bytes at a time, so that every match must come from the inflater's
    window: zlib lets a match reach back into the output of the same call, which would hide a server that
    compresses with a larger window than the client allowed (RFC 7692 §7.1.2.1)."""
    out: list[bytes] = []
    while True:
        chunk = inflater.decompress(data, step)
        out.append(chunk)
        data = inflater.unconsumed_tail
        if not data and len(chunk) < step:
            return b"".join(out)


def deflate_message(data: bytes) -> bytes:
    """One permessage-deflate message body (raw deflate, sync flush, trailing 00 00 ff ff removed)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b"\x00\x00\xff\xff")
    return out[:-4]


# ---------------------------------------------------------------------------------------------------
# A client that watches throughout a test
# ---------------------------------------------------------------------------------------------------
class Watcher:
    """Connected on its own thread; records (arrival time, message) for every message it receives."""

    def __init__(self, url: str, *, ssl_context: ssl.SSLContext | None = None, **kw: Any):
        kw.setdefault("open_timeout", 5)
        kw.setdefault("max_size", 4 * 1024 * 1024)
        if ssl_context is not None:
            # Over TLS the sync client would read on its thread while `request` writes on the caller's: two
            # threads in one OpenSSL session (see wsclient.LoopConnection).
            self._cm = LoopConnection(url, ping_interval=None, ssl=ssl_context, **kw)
        else:
            self._cm = sync_connect(url, ping_interval=None, **kw)
        self.ws = self._cm.__enter__()
        self.log: list[tuple[float, dict[str, Any]]] = []
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()  # every message carrying a requestId
        self.error: BaseException | None = None
        self.closed = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for raw in self.ws:
                t = time.monotonic()
                msg = json.loads(raw)
                with self._lock:
                    self.log.append((t, msg))
                if msg.get("requestId") is not None:
                    self.replies.put(msg)
        except BaseException as e:  # noqa: BLE001 - recorded for the test to report
            self.error = e
        finally:
            self.closed.set()

    def messages(self, since: float = 0.0) -> list[tuple[float, dict[str, Any]]]:
        with self._lock:
            return [(t, m) for t, m in self.log if t >= since]

    def ticks(self, since: float = 0.0) -> list[float]:
        return [t for t, m in self.messages(since) if m["type"] == "tick"]

    def events(self, since: float = 0.0) -> list[dict[str, Any]]:
        return [m for _, m in self.messages(since) if m["type"] == "activity"]

    def request(self, obj: dict[str, Any], timeout: float = 5) -> dict[str, Any]:
        """Sends `obj` (which has a requestId) and returns the reply carrying that requestId."""
        self.ws.send(json.dumps(obj))
        deadline = time.monotonic() + timeout
        while True:
            try:
                m = self.replies.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no reply to {obj.get('requestId')!r} within {timeout}s; "
                                     f"connection error: {self.error!r}") from None
            if m["requestId"] == obj["requestId"]:
                return m

    def wait_for(self, pred, timeout: float = 5) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for _, m in self.messages():
                if pred(m):
                    return m
            time.sleep(0.02)
        raise AssertionError(f"watcher saw no matching message in {timeout}s")

    def assert_undisturbed(self, since: float, *, allowed_events: set[int] | None = None,
                           max_tick_gap: float = 1.6) -> None:
        """Still connected; ticks kept coming about once a second from `since` to now; and no activity
        events except those whose `sequence` is in `allowed_events`."""
        now = time.monotonic()
        assert not self.closed.is_set(), f"the watching client was disconnected: {self.error!r}"
        ticks = self.ticks(since)
        points = [since] + ticks + [now]
        gaps = [b - a for a, b in zip(points, points[1:])]
        assert max(gaps) <= max_tick_gap, (
            f"watcher's ticks stalled: largest gap {max(gaps):.2f}s over {now - since:.1f}s ({len(ticks)} ticks)")
        unexpected = [e for e in self.events(since) if e["sequence"] not in (allowed_events or set())]
        assert not unexpected, f"watcher saw events from refused input: {[(e['event'], e['sequence']) for e in unexpected]}"

    def close(self) -> None:
        try:
            self._cm.__exit__(None, None, None)
        except Exception:  # noqa: BLE001
            pass
        self._thread.join(3)


def vm_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def healthz(port: int, tls: ssl.SSLContext | None = None) -> dict[str, Any]:
    import http.client
    conn = (http.client.HTTPSConnection("127.0.0.1", port, context=tls, timeout=5) if tls
            else http.client.HTTPConnection("127.0.0.1", port, timeout=5))
    conn.request("GET", "/healthz")
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, (r.status, body)
    return json.loads(body)
