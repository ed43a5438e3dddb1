"""Status lines of refused WebSocket upgrades: each carries its standard reason phrase (RFC 9110 §15), from the
server's one status table — `HTTP/1.1 410 Gone`, never `410 Error`.

Each case sends one raw handshake and reads the status line as written on the wire, with the body that names
the reason: 410 (an ended share link), 401 (a token that matches no role), 403 (an Origin that is not
allowed), 404 (a path other than /ws) and 503 (over --max-connections).
"""
from __future__ import annotations

import json

import pytest
from websockets.sync.client import connect as sync_connect

from hostile_support import _handshake_bytes, open_socket, read_until_closed

CONTROLLER = "ctl-status-token"


def refusal(port: int, path: str = "/ws", headers: dict[str, str] | None = None, timeout: float = 5) -> tuple[str, str]:
    """Sends one WebSocket handshake; returns the raw status line and the body of the (refusing) answer."""
    sock = open_socket("127.0.0.1", port, timeout=timeout)
    try:
        sock.sendall(_handshake_bytes("127.0.0.1", port, path, headers or {}))
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next((int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:")), 0)
        while len(body) < length:
            chunk = sock.recv(4096)
            if not chunk:
                break
            body += chunk
        return lines[0], body.decode("utf-8", "replace")
    finally:
        sock.close()


def _ask(ws, message: dict, want: str) -> dict:
    """Sends `message` and returns the first reply of type `want` (ticks and events skipped)."""
    ws.send(json.dumps(message))
    while True:
        reply = json.loads(ws.recv(timeout=5))
        if reply.get("type") in (want, "error"):
            return reply


def test_ended_share_is_410_gone(start_server):
    srv = start_server("--memory")
    with sync_connect(srv.ws_url, open_timeout=5) as controller:
        controller.recv(timeout=5)
        started = _ask(controller, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                    "durationSeconds": 120}, "ack")
        shared = _ask(controller, {"type": "share", "requestId": "sh", "activityId": started["activityId"]}, "shares")
        share = shared["shares"][0]
        token = share["url"][len("/s/"):]
        revoked = _ask(controller, {"type": "unshare", "requestId": "u", "shareId": share["id"]}, "ack")
        assert revoked["type"] == "ack", revoked
    line, body = refusal(srv.port, f"/ws?share={token}")
    assert line == "HTTP/1.1 410 Gone", line
    assert body == "410 Gone: this share has ended\n", body


def test_token_matching_no_role_is_401_unauthorized(start_server):
    srv = start_server("--memory", "--controller-token", CONTROLLER)
    line, body = refusal(srv.port, "/ws?token=wrong")
    assert line == "HTTP/1.1 401 Unauthorized", line
    assert body == "401 Unauthorized: the token matches no role\n", body


def test_foreign_origin_is_403_forbidden(start_server):
    srv = start_server("--memory")
    line, body = refusal(srv.port, "/ws", {"Origin": "http://evil.example"})
    assert line == "HTTP/1.1 403 Forbidden", line
    assert body.startswith("403 Forbidden: origin not allowed"), body


@pytest.mark.parametrize("path", ["/nope", "/wss", "/api/activities"])
def test_wrong_path_is_404_not_found(start_server, path):
    srv = start_server("--memory")
    line, body = refusal(srv.port, path)
    assert line == "HTTP/1.1 404 Not Found", (path, line)
    assert body == "404 Not Found: the WebSocket endpoint is /ws\n", (path, body)


def test_over_the_connection_limit_is_503_service_unavailable(start_server):
    srv = start_server("--memory", "--max-connections", "1")
    with sync_connect(srv.ws_url, open_timeout=5) as first:
        first.recv(timeout=5)  # the snapshot: the first connection is established and counted
        line, body = refusal(srv.port)
        assert line == "HTTP/1.1 503 Service Unavailable", line
        assert body == "503 Service Unavailable: too many connections (the limit is 1)\n", body


@pytest.mark.parametrize("path", ["/3/device/00", "/api/activities/x/shares"])
def test_a_chunked_request_body_is_411_length_required(start_server, path):
    """lws 4.1 never completes a chunked request body: the client waited for ever. It gets 411 at once, and the
    connection closes (what follows is chunks, not a request); the server goes on serving."""
    srv = start_server("--memory")
    sock = open_socket("127.0.0.1", srv.port, timeout=5)
    try:
        sock.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                      "Content-Type: application/json\r\n\r\n2\r\n{}\r\n0\r\n\r\n").encode())
        data = read_until_closed(sock)
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 411 Length Required"), data
    assert json.loads(body)["field"] == "transfer-encoding", body
    with sync_connect(srv.ws_url, open_timeout=5) as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "snapshot"


@pytest.mark.parametrize("length", ["99999999999999999999", "-5", "1e3"])
@pytest.mark.parametrize("path", ["/3/device/00", "/api/activities/x/shares"])
def test_a_content_length_no_body_can_have_is_400_naming_it(start_server, path, length):
    """The new-user trial (s22): `content-length: 99999999999999999999` on a push was answered "PayloadEmpty, the
    request has no body", and `-5` got no answer at all. Both get 400 naming `content-length` and close (where the
    body ends cannot be known); the server goes on serving."""
    srv = start_server("--memory")
    data = _raw_answer(srv.port, (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n"
                                  "Content-Type: application/json\r\n\r\n{}").encode())
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 Bad Request"), data
    answer = json.loads(body)
    assert answer["field"] == "content-length" and length in answer["message"], answer
    with sync_connect(srv.ws_url, open_timeout=5) as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "snapshot"


def _raw_answer(port: int, request: bytes) -> bytes:
    """Sends one raw HTTP/1.1 request and reads until the server closes (b"" when it closed without a word)."""
    sock = open_socket("127.0.0.1", port, timeout=10)
    try:
        sock.sendall(request)
        return read_until_closed(sock)
    finally:
        sock.close()


@pytest.mark.parametrize("target", ["/api/activities?x={}", "/{}", "/ws?token={}", "/activities/{}.png"])
def test_a_request_line_over_the_limit_is_414(start_server, target):
    """Issue 29 item 7: a request target of about 8 KB (over lws 4.1's 4 KB header buffer before) got an empty
    reply: lws closed the connection without a word. It gets 414 URI Too Long, naming the limit, and closes;
    the server goes on serving. A target just under the limit is served as before."""
    srv = start_server("--memory")
    for size in (8 * 1024, 100 * 1024):
        path = target.format("a" * size)
        data = _raw_answer(srv.port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 414 URI Too Long"), (size, data[:200])
        assert b"connection: close" in head.lower(), head
        answer = json.loads(body)
        assert answer["field"] == "path" and "8191" in answer["message"], body
    ok = _raw_answer(srv.port, f"GET /api/activities?x={'a' * 6000} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    assert ok.startswith(b"HTTP/1.1 200 OK"), ok[:200]
    with sync_connect(srv.ws_url, open_timeout=5) as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "snapshot"


@pytest.mark.parametrize("header", ["Cookie", "User-Agent", "Authorization", "Referer"])
def test_a_header_field_over_the_limit_is_431(start_server, header):
    """Issue 29 item 7: a header field over the limit (8 KB and more) is answered 431 Request Header Fields Too
    Large, naming the field, not with an empty reply."""
    srv = start_server("--memory")
    for size in (9 * 1024, 100 * 1024):
        data = _raw_answer(srv.port, (f"GET /api/activities HTTP/1.1\r\nHost: 127.0.0.1\r\n{header}: {'b' * size}\r\n"
                                      "Accept: */*\r\n\r\n").encode())
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 431 Request Header Fields Too Large"), (size, data[:200])
        assert json.loads(body)["field"] == header.lower(), body
    with sync_connect(srv.ws_url, open_timeout=5) as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "snapshot"


def test_a_websocket_handshake_over_the_limit_is_414(start_server):
    """Issue 29 item 7: a WebSocket handshake whose target is over the limit (a token of 9 KB) is refused 414,
    as a plain request is, rather than judged on a token lws cut short."""
    srv = start_server("--memory", "--controller-token", CONTROLLER)
    line, body = refusal(srv.port, "/ws?token=" + "a" * 9000)
    assert line == "HTTP/1.1 414 URI Too Long", (line, body)
    assert "8191" in body, body
