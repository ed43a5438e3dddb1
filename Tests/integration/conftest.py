"""Fixtures that run the real `liveactivity` binary for the integration tests.

The `Server` class, `launch` (servers the fixtures cannot start), dates, HTTP and WebSocket helpers live in
support.py, the tests' one helper module; these fixtures build `support.Server`s and check how they stop.

- `server`: one fresh server per test (`liveactivity serve --port 0 --public Public`).
- `start_server(*extra_args, public=None, env=None)`: factory for tests that need flags, a different
  static root, several servers or restarts. Every server it started is stopped at teardown.

Each server runs in its own temporary working directory (so a relative data directory never leaks
between tests), its stdout/stderr are drained by background threads (pipes never fill up) and saved to
Tests/artifacts/server-logs/<test>.log. Teardown sends SIGTERM and asserts exit status 0 within 5 s.

Tests that drive a browser (the fixtures `browser`, `browser_without_scripts`, `engine`, or marked
`@pytest.mark.browser`) are marked `browser`: under the sanitizers (`LIVEACTIVITY_SANITIZER`, set by
Tests/sanitizers.sh) they are left out, since what they add is the page's behaviour, not server code paths
the protocol tests miss, and they cost much of the sanitizer runs' time. The modules in `PURE_LOGIC` are left
out under both sanitizers, and those in `SINGLE_THREADED_CONCERNS` under ThreadSanitizer (see there).

`LIVEACTIVITY_BIN` overrides the binary (default: <repo>/.build/debug/liveactivity);
`LIVEACTIVITY_TEST_VERBOSE=1` adds `--verbose` so the saved logs show every connection and event.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

# The server, dates, HTTP and WebSocket helpers live in support.py; these names stay importable from here.
from support import (ARTIFACTS, DEFAULT_BIN, DEFAULT_PUBLIC, LISTENING_RE, REPO_ROOT, SHUTDOWN_TIMEOUT,  # noqa: F401
                     STARTUP_TIMEOUT, Server, free_port, http_json, liveactivity_bin, save_log)


BROWSER_FIXTURES = {"browser", "browser_without_scripts", "engine"}
# Left out under both sanitizers: modules whose subject is pure Swift logic on the service thread (lifecycle
# rules, parsing, schemas, kinds and their rendering, deploy files), which no unsafe pointer code or second
# thread of theirs reaches beyond what every other module's servers run. The sanitizers can only find memory
# errors (the lws, SQLite, Redis, OpenSSL, nghttp2, zlib and image bindings) and races between threads.
PURE_LOGIC = {"test_lifecycle", "test_schemas", "test_kinds", "test_examples", "test_deploy", "test_render", "test_face",
              "test_face_ride", "test_bidi", "test_declared_shapes"}
# Left out under ThreadSanitizer only (AddressSanitizer runs them: they drive lws's framing and the client's
# lws code): the protocol's edge cases and the script client, single-threaded concerns; the modules TSan keeps
# drive each thread the server has (store writer and reader, log writers, thumbnail workers, the HTTP/2
# listener, the kind folder watcher, the cluster feed).
SINGLE_THREADED_CONCERNS = PURE_LOGIC | {"test_hostile", "test_http_status", "test_cli"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives a browser (left out under the sanitizers)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks browser tests; under a sanitizer, deselects them (see the module's docstring)."""
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
    sanitizer = os.environ.get("LIVEACTIVITY_SANITIZER")
    if not sanitizer:
        return

    def left_out(item: pytest.Item) -> bool:
        if item.get_closest_marker("browser") is not None:
            return True
        return item.module.__name__ in (SINGLE_THREADED_CONCERNS if sanitizer == "thread" else PURE_LOGIC)

    kept = [item for item in items if not left_out(item)]
    dropped = [item for item in items if left_out(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _log_name(request: pytest.FixtureRequest, index: int) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid.split("::", 1)[-1])
    suffix = f"-{index}" if index else ""
    return f"{safe}{suffix}"


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
            save_log(_log_name(request, i), srv.args, srv.exit_code, srv.output())
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
