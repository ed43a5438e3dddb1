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
from typing import Any, Callable

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as _ws_connect
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


async def send_json(ws: ClientConnection, obj: Any) -> None:
    """Send `obj` as one JSON text frame."""
    await ws.send(json.dumps(obj))


async def send_text(ws: ClientConnection, text: str) -> None:
    """Send a raw text frame (for malformed-input tests)."""
    await ws.send(text)


async def recv_json(ws: ClientConnection, timeout: float = DEFAULT_TIMEOUT) -> Message:
    """Receive the next message, which must be a text frame holding one JSON object."""
    raw = await asyncio.wait_for(ws.recv(), timeout)
    assert isinstance(raw, str), f"expected a text frame, got binary {raw[:80]!r}"
    msg = json.loads(raw)
    assert isinstance(msg, dict), f"expected a JSON object, got {raw[:200]}"
    assert isinstance(msg.get("type"), str), f"message without a string 'type': {raw[:200]}"
    # Every message the server sends in the integration tests must match its JSON Schema (docs/schemas).
    validate_server(msg)
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
