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
import threading
import time
from contextlib import asynccontextmanager
from typing import Any, Callable

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as _ws_connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidStatus
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


class LoopConnection:
    """A real `websockets` client for synchronous tests, with every socket and TLS call on one thread.

    websockets' sync client (`websockets.sync.client.connect`) reads on a thread of its own while the caller
    writes. Over TLS that puts two threads in one OpenSSL session at once, which OpenSSL forbids: CI's Python
    crashed (SIGSEGV in `ssl.read`) in a test that sent while the reader read. Here one event-loop thread owns the
    connection (asyncio's TLS runs there too) and `recv`, `send` and `close` hand it coroutines.

    `url` and keywords go to `connect` (so `ssl=`, `open_timeout=`, `compression=` work as there). `response` is
    the handshake's HTTP response. Use as a context manager, or call `close()`.
    """

    def __init__(self, url: str, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="LoopConnection", daemon=True)
        self._thread.start()

        async def open_connection() -> ClientConnection:
            return await connect(url, **kwargs)
        try:
            self._ws = self._call(open_connection())
        except BaseException:
            self._stop_loop()
            raise
        self.response = self._ws.response

    def _call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def recv(self, timeout: float | None = None) -> str | bytes:
        """The next message; raises TimeoutError after `timeout` seconds (cancelling a recv loses nothing in
        websockets' asyncio client), ConnectionClosed once the connection is closed."""
        return self._call(asyncio.wait_for(self._ws.recv(), timeout))

    def send(self, message: str | bytes) -> None:
        """Send one text (str) or binary (bytes) message."""
        self._call(self._ws.send(message))

    def __iter__(self):
        """Messages until the connection closes: ends on a normal closure, raises ConnectionClosedError on any
        other (as websockets' sync client does)."""
        try:
            while True:
                yield self.recv()
        except ConnectionClosedOK:
            return

    def close(self) -> None:
        """Close the connection (normal closure, 1000) and stop the loop thread; safe to call twice. A `recv`
        still waiting on another thread gets ConnectionClosed."""
        if self._loop.is_closed():
            return
        try:
            self._call(self._ws.close())
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        async def cancel_the_rest() -> None:  # so no caller waits on a future of a stopped loop
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
        self._call(cancel_the_rest())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> "LoopConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
