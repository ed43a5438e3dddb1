"""Tiny asyncio helpers around the real `websockets` client (websockets >= 14, `websockets.asyncio`).

Tests stay synchronous and call `run(coro)` (plain `asyncio.run`), so no pytest plugin is needed.

    async def body():
        async with connect(server.ws_url) as ws:
            snap = await recv_json(ws)
            await send_json(ws, {"type": "list"})
            reply = await recv_until(ws, lambda m: m["type"] == "snapshot")
    run(body())
"""
from __future__ import annotations

import asyncio
import json
import time
from contextlib import asynccontextmanager
from typing import Any, Callable

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as _ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from schema_check import validate_server

Message = dict[str, Any]
Predicate = Callable[[Message], bool]

DEFAULT_TIMEOUT = 3.0


def run(coro):
    """Run one coroutine to completion on a fresh event loop (for sync pytest tests)."""
    return asyncio.run(coro)


def connect(url: str, **kwargs: Any):
    """`websockets.asyncio.client.connect` with short test defaults; use as `async with connect(...) as ws`.

    Any keyword (compression=None, subprotocols=[...], max_size=...) is passed through unchanged.
    """
    kwargs.setdefault("open_timeout", 5)
    kwargs.setdefault("close_timeout", 2)
    kwargs.setdefault("ping_interval", None)  # keep the wire quiet; the server must not need pings
    kwargs.setdefault("max_size", 4 * 1024 * 1024)
    return _ws_connect(url, **kwargs)


@asynccontextmanager
async def two_clients(url: str, a_options: dict[str, Any] | None = None, b_options: dict[str, Any] | None = None):
    """Connect two clients to `url` and read each one's initial snapshot; use as `async with two_clients(url) as (a, b)`.

    `a_options` / `b_options` are passed as keywords to that client's `connect`. Yields the pair of connections
    (a, b), both past their first message, and closes both on exit.
    """
    async with connect(url, **(a_options or {})) as a, connect(url, **(b_options or {})) as b:
        await recv_json(a), await recv_json(b)
        yield a, b


async def send_json(ws: ClientConnection, obj: Any) -> None:
    """Send `obj` as one JSON text frame."""
    await ws.send(json.dumps(obj))


async def send_text(ws: ClientConnection, text: str) -> None:
    """Send a raw text frame (for malformed-input tests)."""
    await ws.send(text)


async def recv_json(ws: ClientConnection, timeout: float = DEFAULT_TIMEOUT, *,
                    include_heartbeats: bool = False) -> Message:
    """Receive the next message, which must be a text frame holding one JSON object.

    `heartbeat` messages (sent every --heartbeat-seconds whatever happens) are validated and skipped
    unless `include_heartbeats=True`: they may fall between any two messages a test expects.
    """
    deadline = time.monotonic() + timeout
    while True:
        raw = await asyncio.wait_for(ws.recv(), max(0.001, deadline - time.monotonic()))
        assert isinstance(raw, str), f"expected a text frame, got binary {raw[:80]!r}"
        msg = json.loads(raw)
        assert isinstance(msg, dict), f"expected a JSON object, got {raw[:200]}"
        assert isinstance(msg.get("type"), str), f"message without a string 'type': {raw[:200]}"
        # Every message the server sends in the integration tests must match its JSON Schema (docs/schemas).
        validate_server(msg)
        if msg["type"] != "heartbeat" or include_heartbeats:
            return msg


async def recv_until(
    ws: ClientConnection,
    predicate: Predicate,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    include_ticks: bool = False,
    skipped: list[Message] | None = None,
) -> Message:
    """Return the first message matching `predicate` within `timeout` seconds (total).

    `tick` messages are skipped unless `include_ticks=True`. Other non-matching messages are appended to
    `skipped` when given, so a test can check what else arrived on the way.
    """
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no matching message within {timeout}s; saw (types): {seen}")
        try:
            msg = await recv_json(ws, left)
        except asyncio.TimeoutError:
            raise AssertionError(f"no matching message within {timeout}s; saw (types): {seen}") from None
        if msg["type"] == "tick" and not include_ticks:
            continue
        if predicate(msg):
            return msg
        seen.append(msg["type"] + (f"/{msg['event']}" if "event" in msg else ""))
        if skipped is not None:
            skipped.append(msg)


async def recv_non_tick(ws: ClientConnection, timeout: float = DEFAULT_TIMEOUT) -> Message:
    """The next message that is not a `tick`."""
    return await recv_until(ws, lambda m: True, timeout)


async def collect_non_ticks(ws: ClientConnection, count: int, timeout: float = DEFAULT_TIMEOUT) -> list[Message]:
    """Exactly `count` non-tick messages, in arrival order, all within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    out: list[Message] = []
    while len(out) < count:
        out.append(await recv_non_tick(ws, max(0.01, deadline - time.monotonic())))
    return out


async def expect_silence(ws: ClientConnection, duration: float, *, include_ticks: bool = False) -> None:
    """Assert that no (non-tick, unless include_ticks) message arrives for `duration` seconds."""
    deadline = time.monotonic() + duration
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        try:
            msg = await recv_json(ws, left)
        except asyncio.TimeoutError:
            return
        if msg["type"] == "tick" and not include_ticks:
            continue
        raise AssertionError(f"expected no message, got {msg}")


async def request(ws: ClientConnection, obj: Message, predicate: Predicate | None = None,
                  timeout: float = DEFAULT_TIMEOUT) -> Message:
    """Send `obj` and return the reply carrying the same requestId (ack / error / snapshot)."""
    rid = obj.get("requestId")
    assert rid is not None, "request() needs a requestId"
    await send_json(ws, obj)
    pred = predicate or (lambda m: m.get("requestId") == rid and m["type"] in ("ack", "error", "snapshot"))
    return await recv_until(ws, pred, timeout)


async def close_code_after_reading(ws: ClientConnection, timeout: float = DEFAULT_TIMEOUT) -> int | None:
    """Read and drop messages until the server closes `ws`; returns the close code it sent.

    Each message must arrive within `timeout` seconds, so a connection the server leaves open fails the test
    (TimeoutError) instead of hanging.
    """
    try:
        while True:
            await recv_json(ws, timeout)
    except ConnectionClosed:
        return ws.close_code


async def refused_status(url: str, **kwargs: Any) -> int:
    """Open a WebSocket to `url`, which the server must refuse in the handshake; returns the refusal's HTTP status.

    Keywords go to `connect`. Fails the test (AssertionError) if the handshake succeeds.
    """
    try:
        async with connect(url, **kwargs):
            pass
    except InvalidStatus as refused:
        return refused.response.status_code
    raise AssertionError(f"the WebSocket handshake to {url} was accepted; expected a refusal")
