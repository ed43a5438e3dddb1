#!/usr/bin/env python3
"""Feed one workout's Live Activity to a LiveActivityServer over its WebSocket protocol.

    python3 examples/feed_workout.py [URL] [--workout yoga] [--minutes 10] [--step 2] [--token TOKEN]

URL is the server (http://host:port, https://…, ws://host:port/ws or wss://…); default $LIVEACTIVITY_URL,
else http://127.0.0.1:8080. The token defaults to $LIVEACTIVITY_CONTROLLER_TOKEN (needed when the server has
one). Needs the `websockets` package (pip install websockets).

It starts a workout countdown, sends updates with alerts, pauses and resumes it, then ends it, printing each
event the server broadcasts. Exit status: 0 when every request was acknowledged, 1 on an `error` reply,
2 on a connection problem. Protocol: docs/PROTOCOL.md.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import urllib.parse
from datetime import datetime, timedelta, timezone

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus, WebSocketException


def ws_url(url: str) -> str:
    """http(s)://host[:port][/] or ws(s)://… → the protocol endpoint ws(s)://host[:port]/ws."""
    parts = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path if parts.path.endswith("/ws") else parts.path.rstrip("/") + "/ws"
    return urllib.parse.urlunsplit((scheme, parts.netloc, path, parts.query, ""))


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Feed:
    def __init__(self, ws):
        self.ws = ws
        self.ids = itertools.count(1)

    async def request(self, message: dict) -> dict:
        """Send one request; print the events that arrive meanwhile; return its ack (exit 1 on an error)."""
        rid = f"feed-{next(self.ids)}"
        await self.ws.send(json.dumps({**message, "requestId": rid}))
        while True:
            reply = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
            self.show(reply)
            if reply.get("requestId") == rid:
                if reply["type"] == "error":
                    print(f"refused: {reply['code']}: {reply['message']}", file=sys.stderr)
                    raise SystemExit(1)
                return reply

    async def drain(self, seconds: float) -> None:
        """Print what arrives for `seconds`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while (left := deadline - loop.time()) > 0:
            try:
                self.show(json.loads(await asyncio.wait_for(self.ws.recv(), left)))
            except asyncio.TimeoutError:
                return

    @staticmethod
    def show(message: dict) -> None:
        if message["type"] == "activity":
            a = message["activity"]
            alert = f"  alert: {message['alert']['title']} / {message['alert']['body']}" if "alert" in message else ""
            print(f"event {message['event']:<13} #{message['sequence']} {a['attributes']['workout']} "
                  f"{a['activityState']}{alert}", flush=True)
        elif message["type"] == "tick":
            for t in message["timers"]:
                print(f"tick  {t['remainingSeconds']}s left{' (paused)' if t.get('paused') else ''}", flush=True)
        elif message["type"] == "ack":
            print(f"ack   {message.get('activityId') or message.get('activityIds')}", flush=True)


async def feed(url: str, token: str | None, workout: str, minutes: float, step: float) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with connect(url, additional_headers=headers, open_timeout=10) as ws:
        snapshot = json.loads(await ws.recv())
        if snapshot.get("type") != "snapshot" or snapshot.get("role") != "controller":
            print(f"this connection may not control activities (role {snapshot.get('role')!r}); "
                  "give the controller token", file=sys.stderr)
            raise SystemExit(1)
        f = Feed(ws)
        start = datetime.now(timezone.utc)
        end = start + timedelta(minutes=minutes)

        def content(finish: datetime, relevance: float = 50) -> dict:
            return {"state": {"workoutTimer": {"start": iso(start), "end": iso(finish)}},
                    "staleDate": iso(finish), "relevanceScore": relevance}

        ack = await f.request({"type": "start", "attributesType": "workout", "attributes": {"workout": workout},
                               "content": content(end)})
        activity = ack["activityId"]
        await f.drain(step)
        await f.request({"type": "update", "activityId": activity, "content": content(end, 75),
                         "alert": {"title": "Warmed up", "body": f"{workout.capitalize()}: keep the pace"}})
        await f.drain(step)
        await f.request({"type": "pause", "activityId": activity})
        await f.drain(step)
        await f.request({"type": "resume", "activityId": activity})
        await f.drain(step)
        await f.request({"type": "extend", "activityId": activity, "seconds": 60})
        await f.drain(step)
        halfway = await f.request({"type": "list"})
        current = next(a for a in halfway["activities"] if a["id"] == activity)
        await f.request({"type": "update", "activityId": activity, "content": current["content"],
                         "alert": {"title": "Halfway", "body": "Keep going"}})
        await f.drain(step)
        await f.request({"type": "end", "activityId": activity, "dismissalPolicy": "default",
                         "content": current["content"]})
        await f.drain(min(step, 1.0))
        print(f"done: {activity}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", nargs="?", default=os.environ.get("LIVEACTIVITY_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--token", default=os.environ.get("LIVEACTIVITY_CONTROLLER_TOKEN"))
    parser.add_argument("--workout", choices=["jogging", "aerobics", "yoga"], default="jogging")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--step", type=float, default=2.0, help="seconds between steps (default 2)")
    args = parser.parse_args(argv)
    try:
        asyncio.run(feed(ws_url(args.url), args.token, args.workout, args.minutes, args.step))
    except InvalidStatus as e:
        print(f"handshake refused: HTTP {e.response.status_code}", file=sys.stderr)
        return 2
    except (OSError, WebSocketException, asyncio.TimeoutError) as e:
        print(f"connection failed: {e!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
