"""`serve --event-loop epoll|poll` and `--io-uring on|off` (issue 30): what waits for the sockets, and how a
broadcast's sends reach the kernel.

The default is epoll (libev, through libwebsockets' libev plugin), which the rest of the suite runs on; this
file checks that the startup log says which loop runs, and that lws's own poll() loop, still offered, serves
the same conversation: a snapshot, a start, a burst of updates broadcast in order to two watchers, and a
clean stop on SIGTERM. Likewise a broadcast pass's sends: through io_uring (the default, one system call for the
pass) or one `send(2)` each (`--io-uring off`), the log saying which.
"""
from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

from support import DEFAULT_PUBLIC, Launched, launch, liveactivity_bin
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


def serves_a_burst_in_order_and_stops_cleanly(srv) -> None:
    """A start and a burst of updates, broadcast in order to two watchers; then SIGTERM, exit 0."""
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


@pytest.mark.parametrize("flag, expected, sends", [((), "epoll", "io_uring"), (("--event-loop", "poll"), "poll", "io_uring"),
                                                   (("--event-loop", "epoll"), "epoll", "io_uring"),
                                                   (("--io-uring", "off"), "epoll", "send"),
                                                   (("--event-loop", "poll", "--io-uring", "off"), "poll", "send")])
def test_each_event_loop_serves_the_broadcast_in_order_and_stops_cleanly(tmp_path, flag, expected, sends):
    srv = launch("--memory", "--rate", "10000", "--burst", "10000", *flag, cwd=tmp_path,
                 log_name=f"test_event_loop_{expected}_{sends}_{len(flag)}").wait_listening()
    try:
        line = wait_for_line(srv, "info liveactivity: listening")
        assert f"event_loop={expected}" in line and f"sends={sends}" in line, line
        assert not any("io_uring is not available" in l for l in srv.stderr_lines), srv.stderr_lines
        serves_a_burst_in_order_and_stops_cleanly(srv)
    finally:
        srv.stop()


def test_a_kernel_that_refuses_io_uring_gets_one_send_each_and_a_warning(tmp_path):
    """As under a container's seccomp profile: `io_uring_setup` answers EPERM (deny_io_uring.py), so the server
    says so once at startup and sends each write itself, serving the same conversation."""
    serve = [str(liveactivity_bin()), "serve", "--port", "0", "--public", str(DEFAULT_PUBLIC.resolve()),
             "--memory", "--rate", "10000", "--burst", "10000"]
    srv = Launched([sys.executable, str(Path(__file__).with_name("deny_io_uring.py")), *serve], tmp_path,
                   "test_event_loop_io_uring_denied", None).wait_listening()
    try:
        line = wait_for_line(srv, "info liveactivity: listening")
        assert "sends=send" in line, line
        wait_for_line(srv, "io_uring is not available")
        serves_a_burst_in_order_and_stops_cleanly(srv)
    finally:
        srv.stop()


@pytest.mark.parametrize("option, value, message", [
    ("--event-loop", "kqueue", '--event-loop must be epoll or poll, got "kqueue"'),
    ("--io-uring", "maybe", '--io-uring must be on or off, got "maybe"'),
])
def test_an_unknown_value_is_a_usage_error(tmp_path, option, value, message):
    srv = launch(option, value, cwd=tmp_path, log_name=f"test_event_loop_usage{option}")
    code = srv.proc.wait(30)
    srv.stop()
    assert code == 2, code
    assert message in srv.output()
