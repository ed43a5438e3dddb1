"""Fixtures that run the real `liveactivity` binary for the integration tests.

- `server`: one fresh server per test (`liveactivity serve --port 0 --public Public`).
- `start_server(*extra_args, public=None, env=None)`: factory for tests that need flags, a different
  static root, several servers or restarts. Every server it started is stopped at teardown.

Each server runs in its own temporary working directory (so a relative data directory never leaks
between tests), its stdout/stderr are drained by background threads (pipes never fill up) and saved to
Tests/artifacts/server-logs/<test>.log. Teardown sends SIGTERM and asserts exit status 0 within 5 s.

Tests that drive a browser (the fixtures `browser`, `browser_without_scripts`, `engine`, or marked
`@pytest.mark.browser`) are marked `browser`: under the sanitizers (`LIVEACTIVITY_SANITIZER`, set by
Tests/sanitizers.sh) they are left out, since what they add is the page's behaviour, not server code paths
the protocol tests miss, and they cost most of the sanitizer runs' time.

`LIVEACTIVITY_BIN` overrides the binary (default: <repo>/.build/debug/liveactivity);
`LIVEACTIVITY_TEST_VERBOSE=1` adds `--verbose` so the saved logs show every connection and event.
"""
from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("LIVEACTIVITY_ARTIFACTS", REPO_ROOT / "Tests" / "artifacts"))
DEFAULT_BIN = REPO_ROOT / ".build" / "debug" / "liveactivity"
DEFAULT_PUBLIC = REPO_ROOT / "Public"

STARTUP_TIMEOUT = 20.0
SHUTDOWN_TIMEOUT = 5.0
LISTENING_RE = re.compile(r"^Listening on http://127\.0\.0\.1:(\d+)/$")


BROWSER_FIXTURES = {"browser", "browser_without_scripts", "engine"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives a browser (left out under the sanitizers)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks browser tests; under a sanitizer, deselects them (see the module's docstring)."""
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
    if not os.environ.get("LIVEACTIVITY_SANITIZER"):
        return
    kept = [item for item in items if item.get_closest_marker("browser") is None]
    dropped = [item for item in items if item.get_closest_marker("browser") is not None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def liveactivity_bin() -> Path:
    return Path(os.environ.get("LIVEACTIVITY_BIN", DEFAULT_BIN)).resolve()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released); returns its number."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_json(url: str, timeout: float = 10) -> tuple[int, object]:
    """GET `url`; returns (HTTP status, parsed JSON body), for error statuses too (an empty body is None)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


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

    def stop(self, sig: int = signal.SIGTERM, timeout: float = SHUTDOWN_TIMEOUT) -> int:
        """Send `sig` and wait for exit. Returns the exit status (negative = killed by a signal).

        Raises AssertionError (after SIGKILL) if the process does not exit within `timeout`.
        """
        if self.exit_code is not None:
            return self.exit_code
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        elif self.exited_by_itself is None:
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


def _log_path(request: pytest.FixtureRequest, index: int) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid.split("::", 1)[-1])
    suffix = f"-{index}" if index else ""
    return ARTIFACTS / "server-logs" / f"{safe}{suffix}.log"


@pytest.fixture
def start_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Factory: `start_server(*extra_args, public=None, env=None, cwd=None) -> Server`."""
    binary = liveactivity_bin()
    if not binary.is_file():
        pytest.fail(f"server binary not found: {binary} (run `swift build`, or set LIVEACTIVITY_BIN)")
    servers: list[Server] = []

    def factory(*extra_args: str, public: Path | str | None = None, env: dict[str, str] | None = None,
                cwd: Path | None = None) -> Server:
        workdir = cwd or tmp_path_factory.mktemp("server-cwd")
        args = [str(binary), "serve", "--port", "0",
                "--public", str(Path(public or DEFAULT_PUBLIC).resolve()), *extra_args]
        if os.environ.get("LIVEACTIVITY_TEST_VERBOSE") == "1":
            args.append("--verbose")  # every connection and event in Tests/artifacts/server-logs/
        srv = Server(args, cwd=workdir, env=env, name=f"liveactivity#{len(servers)}")
        servers.append(srv)
        return srv

    yield factory

    problems = []
    for i, srv in enumerate(servers):
        stopped_by_test = srv.exit_code is not None  # the test checked that exit itself
        try:
            code = srv.stop()
        except AssertionError as e:
            problems.append(str(e))
            code = srv.exit_code
            stopped_by_test = True  # reported just now
        finally:
            try:
                p = _log_path(request, i)
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(" ".join(srv.args) + f"\nexit status: {srv.exit_code}\n" + srv.output() + "\n")
            except OSError:
                pass
        if srv.exited_by_itself is not None and srv.expected_exit is not None:
            problems.append(f"{srv.name} (pid {srv.pid}) stopped by itself during the test (exit status "
                            f"{srv.exited_by_itself}) before it was sent any signal\n" + srv.output())
        elif not stopped_by_test and srv.expected_exit is not None and code != srv.expected_exit:
            problems.append(f"{srv.name} (pid {srv.pid}) exited with status {code} after SIGTERM, "
                            f"expected {srv.expected_exit} (clean shutdown)\n" + srv.output())
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


@pytest.fixture
def server(start_server) -> Server:
    """A fresh `liveactivity serve --port 0 --public Public` for one test."""
    return start_server()
