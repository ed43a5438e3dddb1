"""Deploy/ exercised for real.

- nginx (Debian's, `apt-get install nginx`) runs a config derived from Deploy/nginx/liveactivity.conf — only
  ports, server_name and certificate paths are replaced — in front of the real server: plain http, and
  TLS with a self-signed certificate (wss, http→https redirect, HTTP/2 pushes when curl can speak it).
- `systemd-analyze verify` and `systemd-analyze security --offline` on Deploy/liveactivity.service; the
  unit's command line and environment file run the real server.
- Deploy/Containerfile is not built here (no container engine); its stages and the library list are checked.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus

from support import free_port
from push_helpers import http_push, push_to_start_token
from schema_check import checked
from wsclient import connect, recv_json, recv_until, run, send_json

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY = REPO_ROOT / "Deploy"
SITE = DEPLOY / "nginx" / "liveactivity.conf"
UNIT = DEPLOY / "liveactivity.service"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")


# ---------------------------------------------------------------------------------------------------
# nginx
# ---------------------------------------------------------------------------------------------------
def top_level_blocks(text: str) -> list[str]:
    """The top-level directives/blocks of an nginx file, comments dropped."""
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    blocks, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                blocks.append(text[start:i + 1].strip())
                start = i + 1
        elif ch == ";" and depth == 0:
            blocks.append(text[start:i + 1].strip())
            start = i + 1
    return [b for b in blocks if b]


def derive_site(upstream: int, *, https_port: int | None, http_port: int, cert: Path | None = None,
                key: Path | None = None) -> str:
    """Deploy/nginx/liveactivity.conf for a test: loopback ports, the test's certificate.

    With `https_port=None` the TLS server block is served as plain http on `http_port` (its ssl_* lines and
    HSTS dropped) and the redirect block is left out; everything else is the file as shipped."""
    blocks = top_level_blocks(SITE.read_text())
    servers = [b for b in blocks if b.startswith("server ")]
    redirect = next(b for b in servers if "listen 80;" in b)
    tls = next(b for b in servers if "ssl_certificate" in b)
    others = [b for b in blocks if b not in servers]
    assert any(b.startswith("upstream liveactivity") for b in others) and any(b.startswith("map ") for b in others)
    out = []
    for b in others:
        out.append(b.replace("server 127.0.0.1:8080;", f"server 127.0.0.1:{upstream};"))
    lines_of = lambda b: [l for l in b.splitlines() if not re.match(r"\s*listen \[::\]", l)]
    if https_port is None:
        site = []
        for line in lines_of(tls):
            if re.match(r"\s*(ssl_|add_header Strict-Transport-Security)", line):
                continue
            site.append(re.sub(r"listen 443 ssl http2;", f"listen 127.0.0.1:{http_port};", line))
        out.append("\n".join(site))
    else:
        out.append("\n".join(lines_of(redirect)).replace("listen 80;", f"listen 127.0.0.1:{http_port};"))
        site = "\n".join(lines_of(tls)).replace("listen 443 ssl http2;", f"listen 127.0.0.1:{https_port} ssl http2;")
        site = re.sub(r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};", site)
        site = re.sub(r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};", site)
        out.append(site)
    return "\n\n".join(out) + "\n"


class Nginx:
    def __init__(self, workdir: Path, site: str):
        self.workdir = workdir
        (workdir / "site.conf").write_text(site)
        temp = "\n".join(f"    {d}_temp_path {workdir / d};" for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (workdir / "nginx.conf").write_text(f"""
pid {workdir / 'nginx.pid'};
error_log {workdir / 'error.log'} info;
worker_processes 1;
events {{ worker_connections 256; }}
http {{
    access_log {workdir / 'access.log'};
{temp}
    include {workdir / 'site.conf'};
}}
""")
        self.conf = workdir / "nginx.conf"

    def check(self) -> subprocess.CompletedProcess:
        return subprocess.run([NGINX, "-t", "-c", str(self.conf), "-e", str(self.workdir / "error.log")],
                              capture_output=True, text=True, timeout=20)

    def start(self, ports: list[int]) -> None:
        self.proc = subprocess.Popen([NGINX, "-c", str(self.conf), "-e", str(self.workdir / "error.log"),
                                      "-g", "daemon off;"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        for port in ports:
            while True:
                assert self.proc.poll() is None, f"nginx exited: {self.proc.stdout.read().decode()}\n{self.log()}"
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"nginx is not listening on {port}\n{self.log()}"
                    time.sleep(0.05)

    def log(self) -> str:
        p = self.workdir / "error.log"
        return p.read_text()[-3000:] if p.exists() else ""

    def stop(self) -> None:
        if getattr(self, "proc", None) and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture
def nginx(tmp_path_factory):
    """Factory: `nginx(site_text, ports)` → a running nginx (stopped at teardown)."""
    if NGINX is None:
        pytest.skip("nginx is not installed (apt-get install nginx)")
    started: list[Nginx] = []

    def factory(site: str, ports: list[int]) -> Nginx:
        n = Nginx(tmp_path_factory.mktemp("nginx"), site)
        result = n.check()
        assert result.returncode == 0, f"nginx -t failed:\n{result.stderr}\n{site}"
        n.start(ports)
        started.append(n)
        return n

    yield factory
    for n in started:
        n.stop()


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


async def live_session(ws_url: str, **kwargs) -> None:
    """Through the proxy: snapshot, start → ack + started, ticks counting down, end → ended."""
    async with connect(ws_url, **kwargs) as raw:
        ws = checked(raw)
        snap = await recv_json(ws)
        assert snap["type"] == "snapshot", snap
        await send_json(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "aerobics"}, "durationSeconds": 30})
        ack = await recv_until(ws, lambda m: m.get("requestId") == "s")
        assert ack["type"] == "ack", ack
        started = await recv_until(ws, lambda m: m["type"] == "activity" and m["event"] == "started")
        assert started["activity"]["id"] == ack["activityId"]
        ticks = []
        while len(ticks) < 3:
            tick = await recv_until(ws, lambda m: m["type"] == "tick", 3, include_ticks=True)
            ticks.append(next(t["remainingSeconds"] for t in tick["timers"] if t["activityId"] == ack["activityId"]))
        # counting down (under load two ticks may round to the same second)
        assert ticks == sorted(ticks, reverse=True) and ticks[-1] < ticks[0] and 0 < ticks[-1] <= 30, ticks
        await send_json(ws, {"type": "end", "requestId": "e", "activityId": ack["activityId"], "dismissalPolicy": "immediate"})
        await recv_until(ws, lambda m: m["type"] == "activity" and m["event"] == "dismissed")


def test_nginx_site_passes_nginx_t(nginx, self_signed, tmp_path):
    """The shipped site, with only the certificate paths replaced, is valid for Debian's nginx."""
    cert, key = self_signed
    text = SITE.read_text()
    text = re.sub(r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};", text)
    text = re.sub(r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};", text)
    n = Nginx(tmp_path, text)
    result = n.check()
    assert result.returncode == 0, result.stderr
    for directive in ("proxy_set_header Upgrade", "proxy_set_header Connection", "proxy_set_header Host              $http_host",
                      "proxy_http_version 1.1", "location = /ws", "location /3/device/"):
        assert directive in text, directive


@needs_nginx
def test_websocket_and_http_through_nginx(start_server, nginx):
    srv = start_server()
    port = free_port()
    proxy = nginx(derive_site(srv.port, https_port=None, http_port=port), [port])
    base = f"http://127.0.0.1:{port}"

    run(live_session(f"ws://127.0.0.1:{port}/ws"))
    # a browser on the proxy's origin passes the same-origin check (nginx keeps Host)
    run(live_session(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}"))
    # a cross-site page does not
    with pytest.raises(InvalidStatus) as refused:
        run(live_session(f"ws://127.0.0.1:{port}/ws", origin="http://evil.example"))
    assert refused.value.response.status_code == 403

    with urllib.request.urlopen(base + "/healthz", timeout=5) as r:
        assert json.loads(r.read())["status"] == "ok"
    with urllib.request.urlopen(base + "/", timeout=5) as r:
        assert r.status == 200 and b"<html" in r.read().lower()
    with urllib.request.urlopen(base + "/metrics", timeout=5) as r:  # allowed from 127.0.0.1
        assert b"# TYPE" in r.read()

    # APNs-shaped pushes: headers go through, and the server (not nginx) answers 413 with APNs' JSON
    now = time.time()
    token = push_to_start_token(srv)
    r = http_push(base, token, {"aps": {"timestamp": int(now), "event": "start", "attributes-type": "workout",
                                        "attributes": {"workout": 2},  # yoga, as the app's Int enum encodes it
                                        "content-state": {"workoutTimer": [now - 978307200, now - 978307200 + 60]},
                                        "alert": {"title": "Go", "body": "Yoga"}}}, apns_id="11111111-2222-4333-8444-555555555555")
    assert r.status == 200 and r.verdict == "applied", (r.status, r.headers, r.body, proxy.log())
    assert r.headers["apns-id"] == "11111111-2222-4333-8444-555555555555"
    big = http_push(base, token, {"aps": {"timestamp": int(now) + 1, "event": "update", "pad": "x" * 5000}})
    assert big.status == 413 and big.json == {**big.json, "reason": "PayloadTooLarge"}, (big.status, big.body)


@needs_nginx
def test_wss_through_nginx_with_tls(start_server, nginx, self_signed):
    cert, key = self_signed
    https_port, http_port = free_port(), free_port()
    origin = f"https://127.0.0.1:{https_port}"
    # as Deploy/liveactivity.service runs it: the public https origin listed (LIVEACTIVITY_PUBLIC_ORIGIN)
    srv = start_server("--allowed-origin", origin)
    proxy = nginx(derive_site(srv.port, https_port=https_port, http_port=http_port, cert=cert, key=key),
                  [https_port, http_port])
    context = ssl.create_default_context(cafile=str(cert))

    run(live_session(f"wss://127.0.0.1:{https_port}/ws", ssl=context))
    run(live_session(f"wss://127.0.0.1:{https_port}/ws", ssl=context, origin=origin))

    # plain http redirects to https
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None
    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as redirect:
        opener.open(f"http://127.0.0.1:{http_port}/ws", timeout=5)
    assert redirect.value.code == 301 and redirect.value.headers["Location"] == f"https://127.0.0.1/ws"

    with urllib.request.urlopen(f"https://127.0.0.1:{https_port}/healthz", context=context, timeout=5) as r:
        assert r.status == 200 and r.headers["Strict-Transport-Security"].startswith("max-age=")

    # HTTP/2 to nginx, as APNs clients speak it, when this curl has HTTP/2
    curl = shutil.which("curl")
    if curl and "HTTP2" in subprocess.run([curl, "-V"], capture_output=True, text=True).stdout:
        now = time.time()
        payload = json.dumps({"aps": {"timestamp": int(now), "event": "start", "attributes-type": "WorkoutWidgetAttributes",
                                      "attributes": {"workout": 1},
                                      "content-state": {"workoutTimer": [now - 978307200, now - 978307200 + 60]},
                                      "alert": {"title": "Go", "body": "Aerobics"}}})
        out = subprocess.run([curl, "-sS", "--http2", "--cacert", str(cert), "-o", "/dev/null", "-D", "-",
                              "-H", "apns-push-type: liveactivity", "--data-binary", payload,
                              f"https://127.0.0.1:{https_port}/3/device/{push_to_start_token(srv)}"],
                             capture_output=True, text=True, timeout=20)
        assert out.returncode == 0, out.stderr
        head = out.stdout.lower()
        assert head.startswith("http/2 200") and "liveactivity-verdict: applied" in head, (out.stdout, proxy.log())


# ---------------------------------------------------------------------------------------------------
# systemd
# ---------------------------------------------------------------------------------------------------
def unit_directives() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "[")) and "=" in line:
            k, v = line.split("=", 1)
            out.setdefault(k, []).append(v)
    return out


def test_unit_has_the_hardening():
    d = unit_directives()
    expected = {"DynamicUser": "yes", "StateDirectory": "liveactivity", "ProtectSystem": "strict",
                "NoNewPrivileges": "yes", "CapabilityBoundingSet": "", "Restart": "on-failure",
                "SystemCallFilter": "@system-service"}
    for key, value in expected.items():
        assert value in d.get(key, []), f"{key}={value} missing: {d.get(key)}"
    assert set(d["RestrictAddressFamilies"][0].split()) == {"AF_UNIX", "AF_INET", "AF_INET6"}
    assert d["EnvironmentFile"] == ["/etc/liveactivity/liveactivity.env"]
    assert "--data-dir ${STATE_DIRECTORY}" in d["ExecStart"][0]


def _unit_for_this_checkout(tmp_path: Path) -> Path:
    """The unit with ExecStart pointing at the built binary (verify checks that it exists)."""
    from support import liveactivity_bin
    text = UNIT.read_text().replace("/usr/local/bin/liveactivity", str(liveactivity_bin()))
    path = tmp_path / "liveactivity.service"
    path.write_text(text)
    return path


def _systemd_analyze() -> str:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    probe = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=20)
    if probe.returncode != 0:
        pytest.skip(f"systemd-analyze does not run here: {probe.stderr.strip()}")
    return tool


def test_systemd_analyze_verify(tmp_path):
    tool = _systemd_analyze()
    unit = _unit_for_this_checkout(tmp_path)
    result = subprocess.run([tool, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60)
    # verify works without a running systemd; it reports unit problems on stderr with a non-zero status
    assert result.returncode == 0 and "liveactivity.service" not in result.stderr, result.stderr


def test_systemd_analyze_security_exposure(tmp_path):
    tool = _systemd_analyze()
    unit = _unit_for_this_checkout(tmp_path)
    result = subprocess.run([tool, "security", "--offline=yes", "--no-pager", str(unit)], capture_output=True,
                            text=True, timeout=60)
    if "--offline" in result.stderr and result.returncode != 0:
        pytest.skip(f"this systemd-analyze has no --offline: {result.stderr.strip()}")
    m = re.search(r"Overall exposure level for liveactivity\.service: ([0-9.]+)", result.stdout)
    assert m, result.stdout[-2000:] + result.stderr
    assert float(m.group(1)) <= 2.0, result.stdout  # systemd calls <= 2.0 "OK"


def test_unit_command_line_and_environment_file_run_the_server(start_server, tmp_path):
    """ExecStart's flags and the env example's variables, as systemd would expand them, start the server."""
    env = {}
    for line in (DEPLOY / "liveactivity.env.example").read_text().splitlines():
        if line and not line.startswith("#"):
            k, v = line.split("=", 1)
            env[k] = v
    from support import liveactivity_bin
    help_text = subprocess.run([str(liveactivity_bin()), "serve", "--help"], capture_output=True, text=True).stdout
    for key in env:
        assert key in help_text or key == "LIVEACTIVITY_PUBLIC_ORIGIN", f"{key} is not a variable the server reads"
    exec_start = unit_directives()["ExecStart"][0].split()
    assert exec_start[:2] == ["/usr/local/bin/liveactivity", "serve"]
    flags = [a for a in exec_start if a.startswith("--")]
    for flag in flags:
        assert flag in help_text, f"{flag} is not a serve option"
    # run it: ExecStart's arguments with systemd's substitutions, the env file's variables (port 0 for the test)
    state = tmp_path / "state"
    state.mkdir()
    args: list[str] = []
    rest = iter(exec_start[2:])
    for flag in rest:
        value = next(rest)
        if flag == "--public":
            continue  # the fixture passes the checkout's Public folder
        args += [flag, value.replace("${STATE_DIRECTORY}", str(state))
                            .replace("${LIVEACTIVITY_PUBLIC_ORIGIN}", env["LIVEACTIVITY_PUBLIC_ORIGIN"])]
    srv = start_server(*args, env={**env, "LIVEACTIVITY_PORT": "0"})

    async def roles():
        async with connect(srv.ws_url) as ws:
            assert (await recv_json(ws))["role"] == "viewer"  # the env file's controller token is in force
        headers = {"Authorization": f"Bearer {env['LIVEACTIVITY_CONTROLLER_TOKEN']}"}
        async with connect(srv.ws_url, additional_headers=headers) as ws:
            assert (await recv_json(ws))["role"] == "controller"
        # a browser on the public origin passes the origin check
        async with connect(srv.ws_url, origin=env["LIVEACTIVITY_PUBLIC_ORIGIN"]) as ws:
            assert (await recv_json(ws))["type"] == "snapshot"
    run(roles())
    with urllib.request.urlopen(srv.url + "/healthz", timeout=5) as r:
        assert json.loads(r.read())["status"] == "ok"
    assert any(state.iterdir()), "nothing was stored in --data-dir ${STATE_DIRECTORY}"


# ---------------------------------------------------------------------------------------------------
# container build (not built here: checked statically, and its library script run on this binary)
# ---------------------------------------------------------------------------------------------------
def test_containerfile_is_multi_stage_and_installs_what_the_binary_links():
    text = (DEPLOY / "Containerfile").read_text()
    froms = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.M)
    assert len(froms) == 2, froms
    assert froms[0][0].startswith("swift:") and froms[0][1] == "build", froms
    assert froms[1][0] == "debian:${DEBIAN_RELEASE}-slim" and 'ARG DEBIAN_RELEASE=bookworm' in text, froms
    assert "swift build -c release" in text
    runtime = text.split("FROM debian:")[1]
    for package in ("libwebsockets17", "libsqlite3-0", "zlib1g"):
        assert package in runtime, package
    assert "COPY --from=build" in runtime and "ENTRYPOINT" in runtime and "USER liveactivity" in runtime
    # every apt provider in Package.swift is installed by the build stage's grep
    providers = re.findall(r'\.apt\(\[([^\]]*)\]\)', (REPO_ROOT / "Package.swift").read_text())
    assert providers, "no apt providers found in Package.swift"
    # the runtime library script finds a Debian package for every library this binary links
    from support import liveactivity_bin
    if shutil.which("objdump") is None or shutil.which("dpkg") is None:
        pytest.skip("objdump/dpkg not available")
    out = subprocess.run(["sh", str(DEPLOY / "runtime-packages.sh"), str(liveactivity_bin())], capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    # libnghttp2-14 and libssl3: the APNs port (HTTP/2, TLS), found from the binary like every other library
    # libev4 and libwebsockets-evlib-ev: the default epoll loop (libev, and the lws plugin lws opens for it)
    for package in ("libwebsockets17", "libsqlite3-0", "libnghttp2-14", "libssl3", "libev4", "libwebsockets-evlib-ev"):
        assert package in out, out
    needed = [l.split()[-1].strip("[]") for l in subprocess.run(["objdump", "-p", str(liveactivity_bin())],
              capture_output=True, text=True).stdout.splitlines() if l.strip().startswith("NEEDED")]
    system = [n for n in needed if not re.match(r"(libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime|ld-linux)", n)]
    assert len(out) >= 1 and all(re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", p) for p in out), out
    # each system library maps to one of the listed packages
    for soname in system:
        owner = subprocess.run(["dpkg", "-S", f"*/{soname}"], capture_output=True, text=True).stdout.split(":")[0]
        assert owner in out, (soname, owner, out)
    # and so does each library the C shims open with dlopen (libvips, libcurl: not NEEDED entries)
    dlopened = {m for h in (REPO_ROOT / "Sources").glob("C*/shim.h")
                for m in re.findall(r'#define \w+_LIBRARY "(lib[^"]+\.so\.\d+)"', h.read_text())}
    assert dlopened >= {"libvips.so.42", "libcurl.so.4"}, dlopened
    assert not dlopened & set(needed), (dlopened, needed)
    for soname in dlopened:
        owner = subprocess.run(["dpkg", "-S", f"*/{soname}"], capture_output=True, text=True).stdout.split(":")[0]
        assert owner and owner in out, (soname, owner, out)


# ---------------------------------------------------------------------------------------------------
# backups, as Deploy/OPERATIONS.md says
# ---------------------------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="sqlite3 is not installed (apt-get install sqlite3)")
def test_online_backup_with_sqlite3_restores(start_server, tmp_path):
    data = tmp_path / "data"
    srv = start_server("--data-dir", str(data))

    async def start_one() -> tuple[str, int]:
        async with connect(srv.ws_url) as ws:
            await recv_json(ws)
            await send_json(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"}, "durationSeconds": 3600})
            ack = await recv_until(ws, lambda m: m.get("requestId") == "s")
            ev = await recv_until(ws, lambda m: m["type"] == "activity")
            return ack["activityId"], ev["sequence"]
    activity_id, sequence = run(start_one())
    backup = tmp_path / "backup.sqlite"
    out = subprocess.run(["sqlite3", str(data / "liveactivity.sqlite"), f".backup '{backup}'"], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    check = subprocess.run(["sqlite3", str(backup), "PRAGMA integrity_check"], capture_output=True, text=True, timeout=30)
    assert check.stdout.strip() == "ok", check
    srv.stop()
    restored = tmp_path / "restored"
    restored.mkdir()
    shutil.copy(backup, restored / "liveactivity.sqlite")
    srv2 = start_server("--data-dir", str(restored))
    with urllib.request.urlopen(srv2.url + "/api/activities", timeout=5) as r:
        snap = json.loads(r.read())
    assert [a["id"] for a in snap["activities"]] == [activity_id] and snap["sequence"] == sequence, snap
