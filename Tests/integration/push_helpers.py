"""Helpers for APNs-shaped pushes: the push-to-start token, Swift reference dates, `POST /3/device/{token}`.

APNs payload shape (Apple, "Starting and updating Live Activities with ActivityKit push notifications"):
`{"aps": {"timestamp": UNIX, "event": "start|update|end", "content-state": {...}, "stale-date": UNIX,
"dismissal-date": UNIX, "relevance-score": N, "alert": {"title", "body"}, "attributes-type", "attributes"}}`;
dates inside `content-state` use Swift's default `Date` coding: seconds since 2001-01-01.
"""
from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime, timezone

from support import iso_ms  # noqa: F401  (the tests' one date helper; re-exported for older imports)

REFERENCE_EPOCH = 978_307_200  # 2001-01-01T00:00:00Z in Unix seconds
UTC = timezone.utc


def ref_seconds(dt: datetime) -> float:
    """A date as Swift's default Codable writes it (timeIntervalSinceReferenceDate)."""
    return dt.timestamp() - REFERENCE_EPOCH


def from_ref_seconds(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds + REFERENCE_EPOCH, UTC)


def push_to_start_token(server, timeout: float = 5.0) -> str:
    """The token printed as the server's 2nd stdout line `Push-to-start token: …` (waits for it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(server.stdout_lines) >= 2:
            line = server.stdout_lines[1]
            prefix = "Push-to-start token: "
            assert line.startswith(prefix), f"2nd stdout line is not {prefix!r}…: {line!r}"
            return line[len(prefix):].strip()
        time.sleep(0.02)
    raise AssertionError(f"the server printed no 2nd stdout line within {timeout}s: {server.stdout_lines}")


@dataclass
class PushResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    json: dict | None = field(default=None)

    @property
    def verdict(self) -> str | None:
        return self.headers.get("liveactivity-verdict")


def http_push(base_url: str, token: str, payload: dict | bytes | str | None, *, push_type: str | None = "liveactivity",
              method: str = "POST", apns_id: str | None = None, headers: dict[str, str] | None = None,
              timeout: float = 5.0) -> PushResponse:
    """Send one APNs-shaped request to `{base_url}/3/device/{token}` and return status, headers, body."""
    url = urllib.parse.urlsplit(base_url)
    conn_cls = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    kwargs = {}
    if url.scheme == "https":
        import ssl
        kwargs["context"] = ssl._create_unverified_context()  # self-signed in tests
    conn = conn_cls(url.hostname, url.port, timeout=timeout, **kwargs)
    body: bytes | None
    if payload is None:
        body = b"" if method == "POST" else None
    elif isinstance(payload, (bytes, str)):
        body = payload.encode() if isinstance(payload, str) else payload
    else:
        body = json.dumps(payload).encode()
    h = {"content-type": "application/json"}
    if push_type is not None:
        h["apns-push-type"] = push_type
    if apns_id is not None:
        h["apns-id"] = apns_id
    h.update(headers or {})
    try:
        conn.request(method, f"{url.path.rstrip('/')}/3/device/{token}", body=body, headers=h)
        resp = conn.getresponse()
        data = resp.read()
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
        parsed = None
        if data:
            try:
                parsed = json.loads(data)
            except ValueError:
                parsed = None
        return PushResponse(resp.status, hdrs, data, parsed)
    finally:
        conn.close()
