"""`serve --event-loop epoll|poll` (issue 30): what waits for the sockets.

The default is epoll (libev, through libwebsockets' libev plugin), which the rest of the suite runs on; this
file checks that the startup log says which loop runs, and that lws's own poll() loop, still offered, serves
the same conversation: a snapshot, a start, a burst of updates broadcast in order to two watchers, and a
clean stop on SIGTERM.
"""
from __future__ import annotations

import signal
import time

import pytest

from support import launch
from wsclient import connect, recv_json, recv_until, request, run

UPDATES = 50


def wait_for_line(srv, needle: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in list(srv.stderr_lines):
            if needle in line:
                return line
        time.sleep(0.05)
    raise AssertionError(f"no log line with {needle!r}:\n" + "\n".join(srv.stderr_lines))


@pytest.mark.parametrize("flag, expected", [((), "epoll"), (("--event-loop", "poll"), "poll"),
                                            (("--event-loop", "epoll"), "epoll")])
def test_each_event_loop_serves_the_broadcast_in_order_and_stops_cleanly(tmp_path, flag, expected):
    srv = launch("--memory", "--rate", "10000", "--burst", "10000", *flag, cwd=tmp_path,
                 log_name=f"test_event_loop_{expected}_{len(flag)}").wait_listening()
    try:
        line = wait_for_line(srv, "info liveactivity: listening")
        assert f"event_loop={expected}" in line, line
        url = f"ws://127.0.0.1:{srv.port}/ws"

        async def conversation():
            async with connect(url) as control, connect(url) as first, connect(url) as second:
                for ws in (control, first, second):
                    assert (await recv_json(ws))["type"] == "snapshot"
                start = {"type": "start", "requestId": "s", "attributes": {"workout": "jogging"}, "durationSeconds": 600}
                activity = (await request(control, start))["activityId"]
                for index in range(UPDATES):
                    await control.send('{"type":"update","requestId":"u%d","activityId":"%s","durationSeconds":%d}'
                                       % (index, activity, 600 + index))
                await recv_until(control, lambda m: m.get("requestId") == f"u{UPDATES - 1}")
                for ws in (first, second):
                    sequences = []
                    while len(sequences) < UPDATES + 1:
                        message = await recv_json(ws)
                        if message.get("type") == "activity":
                            sequences.append(message["sequence"])
                    assert sequences == sorted(sequences) and len(set(sequences)) == UPDATES + 1, sequences

        run(conversation())
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(30) == 0
    finally:
        srv.stop()


def test_an_unknown_event_loop_is_a_usage_error(tmp_path):
    srv = launch("--event-loop", "kqueue", cwd=tmp_path, log_name="test_event_loop_unknown")
    code = srv.proc.wait(30)
    srv.stop()
    assert code == 2, code
    assert '--event-loop must be epoll or poll, got "kqueue"' in srv.output()
