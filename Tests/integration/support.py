"""The one helper module of the integration tests: starting and stopping the server, dates, HTTP, WebSocket.

Test files take these from here, and conftest.py's `server` / `start_server` fixtures build this module's
`Server`, so there is one way to run and stop the server, one way to write a date and one way to make an HTTP
request. It is a module of its own rather than conftest.py because conftest.py is pytest's plugin file (its
fixtures are found by pytest, not imported; importing it as a module ties helpers to pytest's loading of it),
and rather than hostile_support.py because most tests are not hostile. The topical modules stay for their
topics and take their dates and server start-up from here: protocol_checks.py (message shapes; re-exports
`iso`, `now`), push_helpers.py (APNs payloads; re-exports `iso_ms`), hostile_support.py (hand-built frames;
re-exports `launch`), apns_support.py (the APNs port), schema_check.py (JSON Schemas).

What lives where:

Server (the real `liveactivity` binary)
- `liveactivity_bin()`, `free_port()`, `REPO_ROOT`, `ARTIFACTS`, `DEFAULT_PUBLIC`, `LISTENING_RE`.
- `Server(args, cwd, env, name)`: a running `liveactivity serve` whose first stdout line must be
  `Listening on http://127.0.0.1:PORT/`; its output is drained by threads; `stop(sig)` waits for the exit and
  fails (after SIGKILL) past the timeout; `kill()` is a simulated crash. conftest.py's `server` and
  `start_server` fixtures build these, check each exits 0 on SIGTERM and save the logs (`save_log`).
- `launch(*extra, cwd=, log_name=, env=, port="0", drain=True) -> Launched` for the cases the fixture cannot
  start: TLS (an https URL), other hosts, a refused start-up, or pipes the test must leave unread
  (`drain=False`: only the first stdout line is read, nothing else). `.wait_listening()` parses the first
  line into `url`/`port`/`host`; `.stop()` sends SIGTERM, returns the exit status (the caller asserts it is 0)
  and saves the log in Tests/artifacts/server-logs/<log_name>.log.

Dates
- `iso(moment, offset=UTC, millis=True, whole_seconds=False)`: ISO-8601 as a client may write it. `moment` is
  an aware datetime, a naive one (taken as UTC) or Unix seconds (a float). `millis=False` leaves the fraction
  out; `whole_seconds=True` drops it first (`.000`); any other `offset` is written as `+HH:MM`.
  The shapes the tests use, by name: `iso_ms` (as the server writes dates: UTC, milliseconds),
  `iso_s` (UTC, whole seconds, no fraction), `iso_ms0` (UTC, whole seconds written with `.000`).
- `parse_iso(text)`: any of those back to an aware datetime. `now()`: the current UTC datetime.

HTTP
- `http_request(method, url, body=None, headers=None, timeout=10, context=None) -> Response` with `status`,
  `headers` (lower-cased names), `body` (bytes) and `.text()` / `.json()`; error statuses are answers, not
  exceptions; `.ok()` asserts a 2xx status. `http_get`, `http_post` (a dict or list body is sent as JSON),
  `http_json(url)` -> (status, parsed body or None), `http_text(url)` -> (status, text), `get_json(url)` -> the
  parsed body of a 2xx answer. Test files keep their own small adapters where they want another tuple shape.

WebSocket
- The helpers of wsclient.py (`run`, `connect`, `send_json`, `recv_json`, `recv_until`, `request`, ...) are
  re-exported here; wsclient.py keeps their code and the files that already import it keep doing so.
  Hand-built frames and hostile clients stay in hostile_support.py.
"""
from __future__ import annotations

import json
import math
import os
import queue
import re
import signal
import socket
import ssl
import subprocess
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from wsclient import (DEFAULT_TIMEOUT, Message, Predicate, close_code_after_reading, collect_non_ticks,  # noqa: F401
                      connect, expect_silence, recv_json, recv_non_tick, recv_until, refused_status, request, run,
                      send_json, send_text, two_clients)

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("LIVEACTIVITY_ARTIFACTS", REPO_ROOT / "Tests" / "artifacts"))
DEFAULT_BIN = REPO_ROOT / ".build" / "debug" / "liveactivity"
DEFAULT_PUBLIC = REPO_ROOT / "Public"

STARTUP_TIMEOUT = 20.0
SHUTDOWN_TIMEOUT = 5.0
LISTENING_RE = re.compile(r"^Listening on http://127\.0\.0\.1:(\d+)/$")


# ---------------------------------------------------------------------------------------------------
# Server
# ---------------------------------------------------------------------------------------------------
def liveactivity_bin() -> Path:
    return Path(os.environ.get("LIVEACTIVITY_BIN", DEFAULT_BIN)).resolve()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released); returns its number."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def save_log(name: str, args: list[str], exit_code: int | None, output: str) -> None:
    """Writes a server's command line, exit status and output to Tests/artifacts/server-logs/<name>.log."""
    try:
        path = ARTIFACTS / "server-logs" / f"{name}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(" ".join(args) + f"\nexit status: {exit_code}\n" + output + "\n")
    except OSError:
        pass


class Server:
    """A running `liveactivity serve` process."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None, name: str = "server"):
        self.args = args
        self.name = name
        self.cwd = cwd
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self._first_line: queue.Queue[str | None] = queue.Queue()
        self.exit_code: int | None = None
        self.expected_exit: int | None = 0
        self.exited_by_itself: int | None = None  # exit status if the server stopped without being signalled
        self.signalled = False  # a test sent a signal itself (`send_signal`): its exit is not "by itself"
        full_env = dict(os.environ)
        full_env.setdefault("SWIFT_BACKTRACE", "enable=no,interactive=no")
        if env:
            full_env.update(env)
        self.proc = subprocess.Popen(
            args, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        )
        self._threads = [
            threading.Thread(target=self._drain, args=(self.proc.stdout, self.stdout_lines, True), daemon=True),
            threading.Thread(target=self._drain, args=(self.proc.stderr, self.stderr_lines, False), daemon=True),
        ]
        for t in self._threads:
            t.start()
        self.port = self._wait_listening()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws"

    # -- output ------------------------------------------------------------------------------------
    def _drain(self, stream, sink: list[str], is_stdout: bool) -> None:
        first = True
        for line in stream:
            line = line.rstrip("\r\n")
            sink.append(line)
            if is_stdout and first:
                self._first_line.put(line)
                first = False
        if is_stdout and first:
            self._first_line.put(None)  # EOF before any line
        stream.close()

    def output(self) -> str:
        return ("--- stdout ---\n" + "\n".join(self.stdout_lines)
                + "\n--- stderr ---\n" + "\n".join(self.stderr_lines))

    def _fail_start(self, why: str) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(2)
        except subprocess.TimeoutExpired:
            pass
        for t in self._threads:
            t.join(1)
        self.expected_exit = None
        raise RuntimeError(f"{why}\ncommand: {' '.join(self.args)}\nexit status: {self.proc.returncode}\n"
                           + self.output())

    def _wait_listening(self) -> int:
        try:
            line = self._first_line.get(timeout=STARTUP_TIMEOUT)
        except queue.Empty:
            self._fail_start(f"server printed no stdout line within {STARTUP_TIMEOUT}s")
        if line is None:
            self._fail_start("server closed stdout before printing 'Listening on ...'")
        m = LISTENING_RE.match(line)
        if not m:
            self._fail_start(f"first stdout line is not 'Listening on http://127.0.0.1:PORT/': {line!r}")
        port = int(m.group(1))
        if not 0 < port < 65536:
            self._fail_start(f"bad port in {line!r}")
        return port

    # -- lifecycle ---------------------------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send_signal(self, sig: int) -> None:
        """Send `sig` now without waiting (a test signalling mid-conversation); `stop` then collects the exit."""
        self.signalled = True
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = SHUTDOWN_TIMEOUT) -> int:
        """Send `sig` and wait for exit. Returns the exit status (negative = killed by a signal).

        Raises AssertionError (after SIGKILL) if the process does not exit within `timeout`.
        """
        if self.exit_code is not None:
            return self.exit_code
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        elif self.exited_by_itself is None and not self.signalled:
            self.exited_by_itself = self.proc.returncode  # gone before anyone signalled it
        try:
            self.exit_code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            self.exit_code = self.proc.returncode
            for t in self._threads:
                t.join(1)
            raise AssertionError(f"{self.name} (pid {self.pid}) did not exit within {timeout}s of "
                                 f"{signal.Signals(sig).name}; killed\n" + self.output())
        for t in self._threads:
            t.join(2)
        return self.exit_code

    def kill(self) -> int:
        """SIGKILL (simulated crash); teardown will not require a clean exit for this server."""
        self.expected_exit = None
        return self.stop(signal.SIGKILL)


class Launched:
    """`liveactivity serve` started by `launch`; `url` is the first stdout line's URL (http or https).

    With `drain=False` nothing reads the pipes but `wait_listening` (one byte at a time, up to the first line's
    end), so a test can leave them full or close them (`proc.stdout` / `proc.stderr`, bytes)."""

    def __init__(self, args: list[str], cwd: Path, log_name: str, env: dict[str, str] | None, drain: bool = True):
        full_env = dict(os.environ)
        full_env.setdefault("SWIFT_BACKTRACE", "enable=no,interactive=no")
        full_env.update(env or {})
        self.args = args
        self.log_name = log_name
        self.drain = drain
        if drain:
            self.proc = subprocess.Popen(args, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        else:
            self.proc = subprocess.Popen(args, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._first = threading.Event()
        self._threads = [threading.Thread(target=self._drain, args=(self.proc.stdout, self.stdout), daemon=True),
                         threading.Thread(target=self._drain, args=(self.proc.stderr, self.stderr), daemon=True)]
        if drain:
            for t in self._threads:
                t.start()
        else:
            self._threads = []
        self.url: str | None = None
        self.port: int | None = None
        self.host: str | None = None
        self.exit_code: int | None = None

    @property
    def stdout_lines(self) -> list[str]:  # the names `Server` uses, so helpers take either
        return self.stdout

    @property
    def stderr_lines(self) -> list[str]:
        return self.stderr

    def _drain(self, stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line.rstrip("\n"))
            if sink is self.stdout:
                self._first.set()
        self._first.set()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_listening(self, timeout: float = STARTUP_TIMEOUT) -> "Launched":
        if self.drain:
            self._first.wait(timeout)
        else:
            self.stdout.append(self.proc.stdout.readline().decode().rstrip("\n"))
        line = self.stdout[0] if self.stdout else ""
        m = re.match(r"^Listening on (https?)://([^/]+):(\d+)/$", line)
        if not m:
            self.stop()
            raise AssertionError(f"server did not start: first line {line!r}\n" + self.output())
        self.url = f"{m.group(1)}://127.0.0.1:{m.group(3)}"
        self.port = int(m.group(3))
        self.host = m.group(2)
        return self

    def output(self) -> str:
        return "--- stdout ---\n" + "\n".join(self.stdout) + "\n--- stderr ---\n" + "\n".join(self.stderr)

    def stop(self, timeout: float = SHUTDOWN_TIMEOUT) -> int:
        """SIGTERM, then the exit status (SIGKILL past `timeout`); saves the log. The caller asserts it is 0."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(5)
        for t in self._threads:
            t.join(2)
        self.exit_code = code
        save_log(self.log_name, self.args, code, self.output())
        return code


def launch(*extra: str, cwd: Path, log_name: str, env: dict[str, str] | None = None, port: str = "0",
           drain: bool = True) -> Launched:
    """Starts `liveactivity serve --port PORT --public Public *extra` in `cwd`; call `.wait_listening()`."""
    args = [str(liveactivity_bin()), "serve", "--port", port, "--public", str(DEFAULT_PUBLIC.resolve()), *extra]
    return Launched(args, cwd, log_name, env, drain)


# ---------------------------------------------------------------------------------------------------
# Dates
# ---------------------------------------------------------------------------------------------------
UTC = timezone.utc


def now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime | float, offset: timezone = UTC, millis: bool = True, whole_seconds: bool = False) -> str:
    """ISO-8601 as a client may write it (any offset, with or without milliseconds); see the module docstring."""
    if isinstance(moment, datetime):
        d = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    else:
        whole = math.floor(moment)  # as time.gmtime: the second is never rounded up
        d = datetime.fromtimestamp(whole, UTC) + timedelta(microseconds=int((moment - whole) * 1_000_000))
    d = d.astimezone(offset)
    if whole_seconds:
        d = d.replace(microsecond=0)
    s = d.strftime("%Y-%m-%dT%H:%M:%S")
    if millis:
        s += f".{d.microsecond // 1000:03d}"
    if offset == UTC:
        return s + "Z"
    return s + d.strftime("%z")[:3] + ":" + d.strftime("%z")[3:]


def iso_ms(moment: datetime | float) -> str:
    """ISO-8601 as the server writes it: UTC, milliseconds (`2026-01-02T03:04:05.678Z`)."""
    return iso(moment)


def iso_s(moment: datetime | float) -> str:
    """UTC, whole seconds, no fraction (`2026-01-02T03:04:05Z`)."""
    return iso(moment, millis=False)


def iso_ms0(moment: datetime | float) -> str:
    """UTC, whole seconds written with zero milliseconds (`2026-01-02T03:04:05.000Z`)."""
    return iso(moment, whole_seconds=True)


def parse_iso(text: str) -> datetime:
    """An ISO-8601 date (`Z` or an offset, with or without a fraction) as an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# ---------------------------------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------------------------------
@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)  # names lower-cased
    body: bytes = b""
    url: str = ""

    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        """The parsed body (an empty body is None)."""
        return json.loads(self.body or b"null")

    def ok(self) -> "Response":
        """This response if its status is 2xx; otherwise an AssertionError naming the status and the body."""
        assert 200 <= self.status < 300, f"HTTP {self.status} from {self.url}: {self.body[:500]!r}"
        return self


def http_request(method: str, url: str, body: bytes | str | dict | list | None = None,
                 headers: dict[str, str] | None = None, timeout: float = 10,
                 context: ssl.SSLContext | None = None) -> Response:
    """One HTTP request; error statuses (4xx, 5xx) are returned like any other. A dict or list body is sent
    as JSON (with `Content-Type: application/json` unless `headers` say otherwise)."""
    hdrs = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
        hdrs.setdefault("Content-Type", "application/json")
    if isinstance(body, str):
        body = body.encode()
    req = urllib.request.Request(url, data=body, headers=hdrs, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
            return Response(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read(), url)
    except urllib.error.HTTPError as e:
        return Response(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read(), url)


def http_get(url: str, headers: dict[str, str] | None = None, timeout: float = 10,
             context: ssl.SSLContext | None = None) -> Response:
    return http_request("GET", url, headers=headers, timeout=timeout, context=context)


def http_post(url: str, body: bytes | str | dict | list | None = b"", headers: dict[str, str] | None = None,
              timeout: float = 10, context: ssl.SSLContext | None = None) -> Response:
    return http_request("POST", url, body, headers=headers, timeout=timeout, context=context)


def http_json(url: str, timeout: float = 10) -> tuple[int, object]:
    """GET `url`; returns (HTTP status, parsed JSON body), for error statuses too (an empty body is None)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def http_text(url: str, timeout: float = 10) -> tuple[int, str]:
    """GET `url`; returns (HTTP status, body as text), for error statuses too."""
    r = http_get(url, timeout=timeout)
    return r.status, r.text()


def get_json(url: str, headers: dict[str, str] | None = None, timeout: float = 10) -> Any:
    """GET `url` and parse its JSON body; a status other than 2xx fails the test (AssertionError)."""
    return http_get(url, headers=headers, timeout=timeout).ok().json()
