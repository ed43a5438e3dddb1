"""Issue 8, "Outgrow one machine": several `liveactivity serve --cluster redis://…` instances behind a
balancer behave as one server (docs/PROTOCOL.md; Deploy/cluster/README.md).

Each test starts its own `redis-server` (a free loopback port, `--save "" --appendonly yes`, a temporary
`--dir`) and three instances through conftest's `start_server`; the balancer tests put Debian's nginx in
front (a generated config: an `upstream` of the three ports with WebSocket upgrade headers) and are skipped,
saying why, when nginx is not installed (`apt-get install -y nginx`).

- session: clients spread over the instances (directly and through nginx) see every event of a scripted
  session (starts, updates, pauses, ends from controllers on different instances, some racing each other)
  exactly once, in the same order, with the same `sequence`; every acknowledged change has its events.
- kill: `kill -9` of one instance in the middle of a session: every acknowledged change is on the others
  (`list`, `/api/activities`), and its client reconnecting elsewhere with `?since=N` sees no gap/duplicate.
- redis restart: Redis stopped mid-session: changes get `storage_unavailable` (not acked, not broadcast),
  reads go on; once Redis is back (same port and dir, appendonly) changes work again and clients that kept
  their connections saw every event once.
- contention: controllers on three instances racing for every sequence are all acknowledged (a lost race is
  caught up and retried, never refused).
- deadlines: `timerFinished`, `stale`, `dismissed` happen exactly once in the cluster, also when the
  instance that scheduled them is killed. (The 8-hour cap is not reachable in a test: a past `startDate`
  is clamped to now.)
- agreement: `?since=N` / `catchUp` on any instance, `list`, history, `/api/activities`, `/api/history` and
  the static renderings are the same everywhere.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from support import free_port, http_json, http_text, iso, now
from wsclient import connect, run

FAST = ("--rate", "100000", "--burst", "100000")
STREAM_KEY = "liveactivity:events"
SEQUENCE_KEY = "liveactivity:sequence"


# ---------------------------------------------------------------------------------------------------
# processes: redis-server and nginx
# ---------------------------------------------------------------------------------------------------
class Redis:
    """Our own `redis-server` on a loopback port (never someone else's: its INFO must show our pid)."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.log = directory / "redis.log"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Starts on a fresh free port, or on the same port (and dir, so the AOF is reloaded) again."""
        for _ in range(5):
            port = self.port or free_port()
            start = self.log.stat().st_size if self.log.exists() else 0
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
                 "--dir", str(self.dir), "--logfile", str(self.log)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                text = self.log.read_text(errors="replace")[start:] if self.log.exists() else ""
                if "Ready to accept connections" in text:
                    self.port = port
                    info = self.cli("INFO", "server")
                    assert f"process_id:{self.proc.pid}" in info, f"port {port} answers for another redis:\n{info}"
                    return
                time.sleep(0.05)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)
            if self.port is not None:  # a restart on a fixed port must not move
                raise AssertionError(f"redis-server did not come back on port {self.port}:\n"
                                     + self.log.read_text(errors="replace")[-2000:])
        raise AssertionError("redis-server did not start:\n" + self.log.read_text(errors="replace")[-2000:])

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """SIGTERM: Redis's own shutdown (the append-only file is flushed)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def cli(self, *args: str) -> str:
        out = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.port), *args],
                             capture_output=True, text=True, timeout=10)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    def sequence(self) -> int:
        return int(self.cli("GET", SEQUENCE_KEY) or 0)

    def stream_kinds(self) -> list[tuple[int, str, str]]:
        """(sequence, kind, activity id) of every entry in the event stream."""
        raw = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.port), "--json", "XRANGE", STREAM_KEY, "-", "+"],
                             capture_output=True, text=True, timeout=10)
        out = []
        if raw.returncode == 0 and raw.stdout.strip().startswith("["):
            for entry_id, fields in json.loads(raw.stdout):
                event = json.loads(fields[1])
                out.append((int(entry_id.split("-")[0]), event.get("kind") or event.get("event"), json.dumps(event)))
        return out


@pytest.fixture
def redis(tmp_path: Path):
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        pytest.skip("redis-server / redis-cli are not installed (Debian: apt-get install -y redis-server)")
    r = Redis(tmp_path / "redis")
    r.start()
    yield r
    r.stop()


@pytest.fixture
def cluster(redis: Redis, start_server):
    """Factory: `cluster(n=3, *extra_args)` -> n instances sharing `redis`."""
    def make(n: int = 3, *extra: str):
        return [start_server("--cluster", redis.url, *FAST, *extra) for _ in range(n)]
    return make


NGINX_CONF = """\
{user}worker_processes 1;
error_log {tmp}/error.log info;
pid {tmp}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    upstream liveactivity {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://liveactivity;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            proxy_next_upstream error timeout http_502;
            proxy_connect_timeout 2s;
        }}
    }}
}}
"""


class Nginx:
    def __init__(self, binary: str, directory: Path, ports: list[int]):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        conf = self.dir / "nginx.conf"
        conf.write_text(NGINX_CONF.format(
            user="user root;\n" if os.geteuid() == 0 else "", tmp=self.dir, port=self.port,
            servers="\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=10s;" for p in ports)))
        self.proc = subprocess.Popen([binary, "-p", str(self.dir), "-c", str(conf), "-g", "daemon off;"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws"
        deadline = time.monotonic() + 10
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"nginx exited with {self.proc.returncode}: {self.proc.stderr.read()}\n"
                                     + (self.dir / "error.log").read_text(errors="replace")[-2000:])
            try:
                if http_json(self.url + "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("nginx did not answer /healthz within 10 s")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


@pytest.fixture
def balancer(tmp_path: Path):
    """Factory: `balancer(servers) -> Nginx` in front of them; skips the test when nginx is missing."""
    binary = nginx_binary()
    if binary is None:
        pytest.skip("nginx is not installed (Debian: apt-get install -y nginx); the balancer tests need it")
    started: list[Nginx] = []

    def make(servers) -> Nginx:
        n = Nginx(binary, tmp_path / f"nginx{len(started)}", [s.port for s in servers])
        started.append(n)
        return n
    yield make
    for n in started:
        n.stop()


# ---------------------------------------------------------------------------------------------------
# clients
# ---------------------------------------------------------------------------------------------------
def strip(msg: dict) -> dict:
    """A message without what legitimately differs between instances (`serverTime`, `requestId`)."""
    return {k: v for k, v in msg.items() if k not in ("serverTime", "requestId")}


class Client:
    """One WebSocket connection whose every non-tick message is read in the background."""

    def __init__(self, name: str, url: str):
        self.name, self.url = name, url
        self.messages: list[dict] = []
        self.closed: BaseException | None = None
        self._rid = 0

    async def open(self) -> "Client":
        self.ws = await connect(self.url, max_queue=None)
        self.task = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                if msg.get("type") != "tick":
                    self.messages.append(msg)
        except ConnectionClosed as e:
            self.closed = e
        except Exception as e:  # noqa: BLE001 - reported by the checks
            self.closed = e
        else:
            self.closed = ConnectionError("closed")

    async def close(self) -> None:
        try:
            await self.ws.close()
        except Exception:  # noqa: BLE001
            pass
        self.task.cancel()

    @property
    def events(self) -> list[dict]:
        return [m for m in self.messages if m["type"] == "activity"]

    @property
    def last_sequence(self) -> int:
        """The newest sequence this client knows: its last event, else its snapshot / caughtUp."""
        for m in reversed(self.messages):
            if m["type"] == "activity" or m["type"] in ("snapshot", "caughtUp"):
                return m["sequence"]
        return 0

    async def wait(self, predicate, timeout: float = 10.0, what: str = "a message") -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for m in self.messages:
                if predicate(m):
                    return m
            if self.closed is not None or time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: no {what} within {timeout}s (closed: {self.closed!r}); "
                                     f"got {[(m['type'], m.get('event'), m.get('sequence')) for m in self.messages][-20:]}")
            await asyncio.sleep(0.01)

    async def wait_sequence(self, sequence: int, timeout: float = 10.0) -> None:
        await self.wait(lambda m: m["type"] == "activity" and m["sequence"] >= sequence, timeout,
                        f"event with sequence >= {sequence}")

    async def ack(self, msg: dict, timeout: float = 10.0) -> dict:
        """Sends a change and asserts it is acknowledged."""
        reply = await self.request(msg, timeout)
        assert reply["type"] == "ack", f"{self.name} ({self.url}): {msg} -> {reply}"
        return reply

    async def request(self, msg: dict, timeout: float = 10.0) -> dict:
        """Sends `msg` with a fresh requestId; returns its reply (ack / error / snapshot / history …)."""
        self._rid += 1
        rid = f"{self.name}-{self._rid}"
        await self.ws.send(json.dumps({**msg, "requestId": rid}))
        return await self.wait(lambda m: m.get("requestId") == rid, timeout, f"reply to {msg}")


async def open_clients(specs: list[tuple[str, str]]) -> list[Client]:
    clients = [Client(name, url) for name, url in specs]
    await asyncio.gather(*(c.open() for c in clients))
    for c in clients:
        await c.wait(lambda m: m["type"] in ("snapshot", "caughtUp"), 10, "snapshot")
    return clients


def start_msg(workout: str, score: float, duration: float = 600, **extra) -> dict:
    return {"type": "start", "attributes": {"workout": workout}, "durationSeconds": duration,
            "relevanceScore": score, **extra}


def update_msg(aid: str, score: float, duration: float = 300, **extra) -> dict:
    return {"type": "update", "activityId": aid, "durationSeconds": duration, "relevanceScore": score, **extra}


EVENT_OF = {"start": "started", "update": "updated", "pause": "paused", "resume": "resumed", "extend": "extended",
            "end": "ended"}


def check_stream(events: list[dict], since: int, until: int, who: str) -> None:
    """`events` are exactly sequences since+1 … until, each once, in order."""
    seqs = [e["sequence"] for e in events]
    dups = [s for s, n in Counter(seqs).items() if n > 1]
    assert not dups, f"{who}: duplicate sequences {dups} in {seqs}"
    assert seqs == list(range(since + 1, until + 1)), f"{who}: expected sequences {since + 1}..{until}, got {seqs}"


def check_same(clients: list[Client], reference: list[dict], who: str = "") -> None:
    ref = [strip(e) for e in reference]
    for c in clients:
        got = [strip(e) for e in c.events]
        if got != ref:
            first = next((i for i, (a, b) in enumerate(zip(got, ref)) if a != b), min(len(got), len(ref)))
            raise AssertionError(f"{who}{c.name}'s events differ from the reference at index {first}:\n"
                                 f"  {c.name}: {got[first] if first < len(got) else '(missing)'}\n"
                                 f"  reference: {ref[first] if first < len(ref) else '(missing)'}")


def healthz_sequences(servers) -> list[int]:
    return [http_json(s.url + "/healthz")[1]["sequence"] for s in servers]


# ===================================================================================================
# 1. one server to the outside: a scripted session seen identically everywhere
# ===================================================================================================
async def scripted_session(ctrls: list[Client]) -> list[tuple[dict, dict]]:
    """Starts, updates, pause/resume/extend, ends from controllers on different instances, some of them
    racing; returns (request, reply) for every change."""
    done: list[tuple[dict, dict]] = []

    async def do(i: int, msg: dict) -> dict:
        reply = await ctrls[i % len(ctrls)].request(msg)
        done.append((msg, reply))
        return reply

    async def race(*pairs: tuple[int, dict]) -> list[dict]:
        return list(await asyncio.gather(*(do(i, m) for i, m in pairs)))

    x = (await do(0, start_msg("yoga", 10)))["activityId"]
    y = (await do(1, start_msg("jogging", 20)))["activityId"]
    await do(2, update_msg(x, 11, alert={"title": "Halfway", "body": "Keep going"}))
    z = (await do(3, start_msg("aerobics", 30)))["activityId"]
    # Racing writers on different instances: the losers catch up and retry (StoreConflict).
    await race((0, update_msg(y, 21)), (1, update_msg(z, 31)), (2, update_msg(x, 12)), (3, update_msg(x, 13)))
    await do(1, {"type": "pause", "activityId": x})
    await do(2, {"type": "resume", "activityId": x})
    await do(0, {"type": "extend", "activityId": y, "seconds": 60})
    w = (await do(2, start_msg("yoga", 40)))["activityId"]
    await race((0, update_msg(w, 41)), (1, update_msg(w, 42)), (2, update_msg(w, 43)), (3, update_msg(z, 32)))
    await do(2, {"type": "end", "activityId": y, "dismissalPolicy": "immediate"})
    await race((0, {"type": "end", "activityId": x}), (1, update_msg(z, 33)), (3, update_msg(w, 44)))
    await do(3, {"type": "end", "activityId": w, "dismissalPolicy": {"after": iso(now() + timedelta(hours=1))}})
    return done


def expected_events(done: list[tuple[dict, dict]]) -> Counter:
    """(activityId, event) -> count, from the acknowledged changes."""
    want: Counter = Counter()
    for msg, reply in done:
        assert reply["type"] == "ack", f"{msg} was not acknowledged: {reply}"
        aid = reply["activityId"]
        want[(aid, EVENT_OF[msg["type"]])] += 1
        if msg["type"] == "end" and msg.get("dismissalPolicy") == "immediate":
            want[(aid, "dismissed")] += 1
    return want


def test_session_seen_identically_everywhere(cluster, balancer, redis):
    servers = cluster(3)
    lb = balancer(servers)

    async def body():
        specs = [(f"w{i}{k}", s.ws_url) for i, s in enumerate(servers) for k in range(2)]
        specs += [(f"lb{k}", lb.ws_url) for k in range(4)]
        watchers = await open_clients(specs)
        ctrls = await open_clients([(f"c{i}", s.ws_url) for i, s in enumerate(servers)] + [("clb", lb.ws_url)])
        base = watchers[0].last_sequence
        assert all(c.last_sequence == base for c in watchers + ctrls), "snapshots disagree on the sequence"
        done = await scripted_session(ctrls)
        want = expected_events(done)
        final = redis.sequence()
        assert final == base + sum(want.values()), f"Redis sequence {final}, expected {base} + {sum(want.values())}"
        everyone = watchers + ctrls
        await asyncio.gather(*(c.wait_sequence(final) for c in everyone))
        await asyncio.sleep(0.5)  # anything doubled would arrive now
        ref = watchers[0].events
        for c in everyone:
            check_stream(c.events, base, final, c.name)
        check_same(everyone, ref)
        got = Counter((e["activity"]["id"], e["event"]) for e in ref)
        assert got == want, f"events per acknowledged change: expected {dict(want)}, got {dict(got)}"
        # the balancer spread its clients over the instances
        conns = [http_json(s.url + "/healthz")[1]["connections"] for s in servers]
        assert all(n >= 3 for n in conns), f"nginx did not spread the clients: connections per instance {conns}"
        assert healthz_sequences(servers) == [final] * 3
        for c in everyone:
            await c.close()
    run(body())


# ===================================================================================================
# 2. kill -9 of one instance in the middle of a session
# ===================================================================================================
def test_kill_one_instance_mid_session(cluster, redis, request):
    servers = cluster(3)
    a, b, c = servers
    lb = None
    if nginx_binary():
        lb = request.getfixturevalue("balancer")(servers)

    async def body():
        wa, wb, victim = await open_clients([("wa", a.ws_url), ("wb", b.ws_url), ("victim", c.ws_url)])
        ca, cb, cc = await open_clients([("ca", a.ws_url), ("cb", b.ws_url), ("cc", c.ws_url)])
        base = wa.last_sequence
        ids = [(await ca.ack(start_msg("yoga", 1)))["activityId"], (await cb.ack(start_msg("jogging", 2)))["activityId"]]
        acked: list[tuple[str, int]] = []    # (activityId, relevanceScore) of every acknowledged update
        sent: list[tuple[str, int]] = []
        killed = asyncio.Event()
        score = iter(range(100, 10_000))
        refused: list[dict] = []

        async def writer(ctrl: Client, count: int) -> None:
            for k in range(count):
                aid, s = ids[k % 2], next(score)
                sent.append((aid, s))
                try:
                    reply = await ctrl.request(update_msg(aid, s), timeout=5)
                except (AssertionError, ConnectionClosed):
                    assert ctrl is cc and killed.is_set(), f"{ctrl.name} got no reply to an update"
                    return
                if reply["type"] == "error" and reply["code"] == "storage_unavailable":
                    refused.append(reply)  # lost the race too often (see test_racing_controllers_…): not applied
                    continue
                assert reply["type"] == "ack", f"{ctrl.name}: {reply}"
                acked.append((aid, s))
                if len(acked) == 12 and not killed.is_set():
                    killed.set()
                    c.kill()             # SIGKILL, with changes in flight from cc (and ca, cb)

        await asyncio.gather(writer(ca, 15), writer(cb, 15), writer(cc, 15))
        assert killed.is_set()
        for _ in range(300):  # the killed instance's connection is gone
            if victim.closed is not None:
                break
            await asyncio.sleep(0.01)
        assert victim.closed is not None, "the killed instance's client is still connected"
        last_seen = victim.last_sequence
        # The victim's client reconnects through the balancer (or straight to a survivor) and resumes.
        url = (lb.ws_url if lb else a.ws_url) + f"?since={last_seen}"
        log_id = victim.messages[0].get("logId")  # as the dashboard does: its log's identity, when the server has one
        if log_id:
            url += f"&log={log_id}"
        resumed = await open_clients([("resumed", url)])
        resumed = resumed[0]
        caught = next(m for m in resumed.messages if m["type"] in ("snapshot", "caughtUp"))
        assert caught["type"] == "caughtUp", f"resume from {last_seen} gave {caught}"
        # more changes after the kill, from the survivors
        for k in range(4):
            sent.append((ids[k % 2], 20_000 + k))
            await [ca, cb][k % 2].ack(update_msg(ids[k % 2], 20_000 + k))
            acked.append((ids[k % 2], 20_000 + k))
        final = redis.sequence()
        await asyncio.gather(wa.wait_sequence(final), wb.wait_sequence(final), resumed.wait_sequence(final))
        await asyncio.sleep(0.5)
        check_stream(wa.events, base, final, "wa")
        check_same([wb], wa.events)
        joined = victim.events + resumed.events
        check_stream(joined, base, final, f"victim (events up to {last_seen} on the killed instance, then resumed)")
        assert [strip(e) for e in joined] == [strip(e) for e in wa.events], "the resumed client's events differ"
        # every acknowledged change is there, once
        updates = Counter((e["activity"]["id"], e["activity"]["content"]["relevanceScore"])
                          for e in wa.events if e["event"] == "updated")
        missing = [x for x in acked if updates[x] != 1]
        assert not missing, f"acknowledged updates missing or doubled on the survivors: {missing}"
        assert set(updates) <= set(sent), "an update nobody sent"
        refused_scores = {r_["requestId"] for r_ in refused}
        assert len(refused_scores) == len(refused)
        # and the survivors' state is the newest of them
        newest = {}
        for e in wa.events:
            newest[e["activity"]["id"]] = e["activity"]
        for srv, ctrl in ((a, ca), (b, cb)):
            snap = await ctrl.request({"type": "list"})
            assert snap["sequence"] == final
            assert {x["id"]: x for x in snap["activities"]} == newest, f"{srv.url}: list disagrees with the events"
            status, api = http_json(srv.url + "/api/activities")
            assert status == 200 and api["sequence"] == final, (status, api)
            assert {x["id"]: x for x in api["activities"]} == newest, f"{srv.url}/api/activities disagrees with the events"
        for cl in (wa, wb, ca, cb, resumed):
            await cl.close()
    run(body())


def test_racing_controllers_all_acknowledged(cluster, redis):
    """Three controllers, one per instance, each sending updates back to back: the instances race for
    every sequence number (StoreConflict → catch up → retry). Contention is not a storage failure: every
    change must be acknowledged, none refused with storage_unavailable."""
    servers = cluster(3)

    async def body():
        ctrls = await open_clients([(f"c{i}", s.ws_url) for i, s in enumerate(servers)])
        (watcher,) = await open_clients([("w", servers[0].ws_url)])
        base = watcher.last_sequence
        x = (await ctrls[0].ack(start_msg("yoga", 1)))["activityId"]
        replies: list[tuple[str, dict]] = []
        counter = iter(range(100, 10_000))

        async def writer(ctrl: Client) -> None:
            for _ in range(40):
                replies.append((ctrl.name, await ctrl.request(update_msg(x, next(counter)))))

        await asyncio.gather(*(writer(c_) for c_ in ctrls))
        refused = [(name, r) for name, r in replies if r["type"] != "ack"]
        acked = len(replies) - len(refused)
        final = redis.sequence()
        assert final == base + 1 + acked, f"Redis holds {final - base} events for {acked + 1} acknowledged changes"
        await watcher.wait_sequence(final)
        check_stream(watcher.events, base, final, "watcher")
        assert not refused, (f"{len(refused)} of {len(replies)} racing updates were refused instead of retried, e.g. "
                             f"{refused[0][0]}: {refused[0][1]['message']}")
        for c_ in ctrls + [watcher]:
            await c_.close()
    run(body())


def test_change_on_another_instance_right_after_the_ack(cluster, redis):
    """Through a balancer, the next request after an `ack` may land on another instance before that
    instance's stream read has brought it the change. It must still be judged against the cluster's state:
    start on A, then at once update, pause, resume and end on B and C, 15 times over; every one is acked."""
    a, b, c = cluster(3)

    async def body():
        ca, cb, cc = await open_clients([("ca", a.ws_url), ("cb", b.ws_url), ("cc", c.ws_url)])
        for k in range(15):
            x = (await ca.ack(start_msg("jogging", k)))["activityId"]
            await cb.ack(update_msg(x, 100 + k))
            await cc.ack({"type": "pause", "activityId": x})
            await cb.ack({"type": "resume", "activityId": x})
            await cc.ack({"type": "end", "activityId": x, "dismissalPolicy": "immediate"})
        for c_ in (ca, cb, cc):
            await c_.close()
    run(body())


# ===================================================================================================
# 3. Redis restart in the middle of a session
# ===================================================================================================
def test_redis_restart_mid_session(cluster, redis):
    servers = cluster(3)
    a, b, c = servers

    async def body():
        watchers = await open_clients([(f"w{i}", s.ws_url) for i, s in enumerate(servers)])
        ca, cb, cc = await open_clients([("ca", a.ws_url), ("cb", b.ws_url), ("cc", c.ws_url)])
        base = watchers[0].last_sequence
        x = (await ca.ack(start_msg("yoga", 1)))["activityId"]
        for k in range(3):
            await [cb, cc, ca][k].ack(update_msg(x, 10 + k))
        before = redis.sequence()
        await asyncio.gather(*(w.wait_sequence(before) for w in watchers))

        redis.stop()
        t0 = time.monotonic()
        reply = await ca.request(update_msg(x, 666), timeout=10)
        assert reply["type"] == "error" and reply["code"] == "storage_unavailable", reply
        assert time.monotonic() - t0 < 5, "a refused change took more than 5 s"
        reply = await cb.request({"type": "start", "attributes": {"workout": "yoga"}, "durationSeconds": 60}, timeout=10)
        assert reply["type"] == "error" and reply["code"] == "storage_unavailable", reply
        # reads keep working
        for ctrl, srv in ((ca, a), (cb, b), (cc, c)):
            snap = await ctrl.request({"type": "list"})
            assert snap["type"] == "snapshot" and snap["sequence"] == before, snap
            assert [x_["content"]["relevanceScore"] for x_ in snap["activities"]] == [12]
            status, api = http_json(srv.url + "/api/activities")
            assert status == 200 and api["sequence"] == before, (status, api)
            assert http_json(srv.url + "/healthz")[0] == 200
        await asyncio.sleep(1.0)  # let the feeds back off a little

        redis.start()  # same port, same dir: the append-only file is reloaded
        assert redis.sequence() == before, "Redis lost data across its restart (appendonly)"
        async def until_acked(ctrl: Client, msg: dict) -> tuple[dict, dict]:
            """Retries a change refused with storage_unavailable; returns (first reply, ack)."""
            first, deadline = None, time.monotonic() + 15
            while True:
                reply = await ctrl.request(msg)
                first = first or reply
                if reply["type"] == "ack":
                    return first, reply
                assert reply.get("code") == "storage_unavailable" and time.monotonic() < deadline, reply
                await asyncio.sleep(0.2)

        await until_acked(ca, update_msg(x, 20))
        # Once A's change has reached B's and C's clients, their feeds are back (back-off done): from now on
        # Redis has been up for a while, and a change on B or C should work at the first attempt.
        await asyncio.gather(*(w.wait_sequence(before + 1, timeout=15) for w in watchers))
        first_b, ack_b = await until_acked(cb, start_msg("jogging", 30))
        first_c, _ = await until_acked(cc, update_msg(x, 21))
        y = ack_b["activityId"]
        await ca.ack({"type": "end", "activityId": y, "dismissalPolicy": "immediate"})
        final = redis.sequence()
        assert final == before + 5
        await asyncio.gather(*(cl.wait_sequence(final, timeout=15) for cl in watchers + [ca, cb, cc]))
        await asyncio.sleep(0.5)
        for cl in watchers + [ca, cb, cc]:
            assert cl.closed is None, f"{cl.name} lost its connection: {cl.closed!r}"
            check_stream(cl.events, base, final, cl.name)
        check_same(watchers + [ca, cb, cc], watchers[0].events)
        scores = [e["activity"]["content"]["relevanceScore"] for e in watchers[0].events]
        assert 666 not in scores, "the change refused with storage_unavailable was broadcast anyway"
        assert healthz_sequences(servers) == [final] * 3
        for cl in watchers + [ca, cb, cc]:
            await cl.close()
        stale = [(name, r_) for name, r_ in (("B", first_b), ("C", first_c)) if r_["type"] != "ack"]
        assert not stale, (f"Redis had been back for a while (A's change reached every instance's feed), yet the "
                           f"first change on {', '.join(n for n, _ in stale)} was refused: {stale[0][1]['message']}")
    run(body())


# ===================================================================================================
# 4. deadlines fire once in the cluster
# ===================================================================================================
def test_deadlines_fire_once(cluster, redis):
    servers = cluster(3)

    async def body():
        watchers = await open_clients([(f"w{i}", s.ws_url) for i, s in enumerate(servers)])
        ca, cb = await open_clients([("ca", servers[0].ws_url), ("cb", servers[1].ws_url)])
        base = watchers[0].last_sequence
        x = (await ca.ack(start_msg("yoga", 5, duration=2)))["activityId"]
        for w in watchers:
            await w.wait(lambda m: m.get("event") == "stale", 6, "stale")
        reply = await cb.request({"type": "end", "activityId": x,
                                  "dismissalPolicy": {"after": iso(now() + timedelta(seconds=2))}})
        assert reply["type"] == "ack", reply
        for w in watchers:
            await w.wait(lambda m: m.get("event") == "dismissed", 6, "dismissed")
        await asyncio.sleep(1.5)  # a second instance firing the same deadline would show now
        final = redis.sequence()
        kinds = [e["event"] for e in watchers[0].events]
        assert sorted(kinds) == sorted(["started", "timerFinished", "stale", "ended", "dismissed"]), kinds
        assert final == base + 5, f"Redis holds {final - base} events, expected 5"
        for cl in watchers + [ca, cb]:
            check_stream(cl.events, base, final, cl.name)
        check_same(watchers + [ca, cb], watchers[0].events)
        for cl in watchers + [ca, cb]:
            await cl.close()
    run(body())


def test_deadlines_fire_when_their_instance_dies(cluster, redis):
    """An activity started on A, A killed: its countdown and stale date fire once on B or C; ended on B
    with a dismissal date, B killed: C dismisses it. (The 8-hour cap cannot be brought near in a test:
    a past `startDate` is clamped to now.)"""
    servers = cluster(3)
    a, b, c = servers

    async def body():
        wb, wc = await open_clients([("wb", b.ws_url), ("wc", c.ws_url)])
        ca, cb = await open_clients([("ca", a.ws_url), ("cb", b.ws_url)])
        base = wb.last_sequence
        x = (await ca.ack(start_msg("yoga", 1, duration=2)))["activityId"]
        await asyncio.gather(wb.wait_sequence(base + 1), wc.wait_sequence(base + 1))
        a.kill()
        for w in (wb, wc):
            await w.wait(lambda m: m.get("event") == "stale", 6, "stale (fired by B or C)")
        await cb.ack({"type": "end", "activityId": x, "dismissalPolicy": {"after": iso(now() + timedelta(seconds=2))}})
        await wc.wait(lambda m: m.get("event") == "ended", 3, "ended")
        b.kill()
        await wc.wait(lambda m: m.get("event") == "dismissed", 6, "dismissed (fired by C)")
        await asyncio.sleep(1.0)
        final = redis.sequence()
        kinds = [e["event"] for e in wc.events]
        assert sorted(kinds) == sorted(["started", "timerFinished", "stale", "ended", "dismissed"]), kinds
        assert final == base + 5, f"Redis holds {final - base} events, expected 5: {redis.stream_kinds()}"
        check_stream(wc.events, base, final, "wc")
        check_stream(wb.events, base, base + 4, "wb (until B was killed)")
        assert [strip(e) for e in wb.events] == [strip(e) for e in wc.events[:4]]
        await wc.close()
    run(body())


# ===================================================================================================
# 5. resume, list, history, the read API and renderings agree everywhere
# ===================================================================================================
def test_resume_list_history_agree_everywhere(cluster, redis, request):
    servers = cluster(3)
    endpoints = [(f"s{i}", s.url) for i, s in enumerate(servers)]
    if nginx_binary():
        endpoints.append(("nginx", request.getfixturevalue("balancer")(servers).url))

    async def body():
        ctrls = await open_clients([(f"c{i}", s.ws_url) for i, s in enumerate(servers)])
        base = ctrls[0].last_sequence
        x = (await ctrls[0].ack(start_msg("yoga", 10)))["activityId"]
        y = (await ctrls[1].ack(start_msg("jogging", 20)))["activityId"]
        z = (await ctrls[2].ack(start_msg("aerobics", 30)))["activityId"]
        await ctrls[1].ack(update_msg(x, 11, alert={"title": "Go", "body": "on"}))
        await ctrls[2].ack({"type": "end", "activityId": y, "dismissalPolicy": "immediate"})
        await ctrls[0].ack({"type": "end", "activityId": z})
        await ctrls[1].ack(update_msg(x, 12))
        final = redis.sequence()
        await asyncio.gather(*(cl.wait_sequence(final) for cl in ctrls))

        # ?since=N and catchUp on every instance (and through the balancer)
        for since in (base, base + 2, final - 1, final):
            replays = {}
            for name, url in endpoints:
                (cl,) = await open_clients([(f"{name}-since{since}", url.replace("http", "ws") + f"/ws?since={since}")])
                caught = await cl.wait(lambda m: m["type"] == "caughtUp", 5, "caughtUp")
                assert caught["sequence"] == final, caught
                events = [m for m in cl.messages if m["type"] == "activity" and m["sequence"] <= final]
                check_stream(events, since, final, cl.name)
                replays[name] = [strip(e) for e in events]
                reply = await cl.request({"type": "catchUp", "since": since})
                assert reply["type"] == "caughtUp" and reply["sequence"] == final, reply
                again = [strip(m) for m in cl.messages if m["type"] == "activity"][len(events):]
                assert again == replays[name], f"{name}: catchUp since={since} differs from ?since="
                await cl.close()
            ref = replays["s0"]
            for name, got in replays.items():
                assert got == ref, f"?since={since}: {name} replays differently from s0"
            assert ref == [strip(e) for e in ctrls[0].events if e["sequence"] > since]
        # ahead of the cluster: a reset snapshot everywhere
        for name, url in endpoints:
            (cl,) = await open_clients([(f"{name}-ahead", url.replace("http", "ws") + f"/ws?since={final + 5}")])
            snap = cl.messages[0]
            assert snap["type"] == "snapshot" and snap.get("reset") is True and snap["sequence"] == final, snap
            await cl.close()

        # list and history over WebSocket
        lists = [strip(await cl.request({"type": "list"})) for cl in ctrls]
        assert lists[0]["sequence"] == final and [a_["id"] for a_ in lists[0]["activities"]] == [z, x], lists[0]
        assert all(l_ == lists[0] for l_ in lists), "list differs between instances"
        log_ids = {cl.messages[0].get("logId") for cl in ctrls}
        assert len(log_ids) == 1, f"the instances name different event logs: {log_ids}"
        histories = [strip(await cl.request({"type": "history"})) for cl in ctrls]
        assert [h["id"] for h in histories[0]["workouts"]] == [z, y], histories[0]
        assert all(h == histories[0] for h in histories), "history differs between instances"
        for cl in ctrls:
            await cl.close()

        # the read API and the static renderings
        fixed = iso(now())
        paths = ["/api/activities", f"/api/activities/{x}", f"/api/activities/{z}", "/api/history", "/api/history?limit=1",
                 f"/activities/{x}/render/lock-screen?now={fixed}", f"/activities/{y}/render/compact?now={fixed}",
                 f"/activities/{z}/render/expanded?now={fixed}"]
        for path in paths:
            answers = {}
            for name, url in endpoints:
                if path.startswith("/api/"):
                    status, doc = http_json(url + path)
                    answers[name] = (status, strip(doc) if isinstance(doc, dict) else doc)
                else:
                    answers[name] = http_text(url + path)
            assert answers["s0"][0] == 200, f"{path}: {answers['s0']}"
            for name, got in answers.items():
                assert got == answers["s0"], f"{path}: {name} answers differently from s0:\n{got}\n---\n{answers['s0']}"
        status, api = http_json(servers[0].url + "/api/activities")
        assert api["sequence"] == lists[0]["sequence"] and api["activities"] == lists[0]["activities"], \
            "/api/activities differs from list"
    run(body())


def test_broadcast_channels_are_kept_in_redis(redis, tmp_path):
    """A channel created on one instance is there for the next one (the store keeps channels in Redis too)."""
    from apns_support import BUNDLE, H2, start_apns
    first = start_apns(tmp_path, "--cluster", redis.url, tls=False, key=False, memory=False, name="test_cluster-channels-1")
    try:
        client = H2(first)
        created = client("POST", f"/1/apps/{BUNDLE}/channels", {}, b'{"message-storage-policy":0,"push-type":"LiveActivity"}')
        assert created.status == 201, created.body
        channel = created.headers["apns-channel-id"]
        client.close()
    finally:
        assert first.stop() == 0
    second = start_apns(tmp_path, "--cluster", redis.url, tls=False, key=False, memory=False, name="test_cluster-channels-2")
    try:
        client = H2(second)
        r = client("GET", f"/1/apps/{BUNDLE}/channels", {"apns-channel-id": channel}, None)
        assert r.status == 200 and r.json["message-storage-policy"] == 0, r.body
        assert client("DELETE", f"/1/apps/{BUNDLE}/channels", {"apns-channel-id": channel}, None).status == 204
        assert client("GET", f"/1/apps/{BUNDLE}/all-channels", {}, None).json == {"channels": []}
        client.close()
    finally:
        assert second.stop() == 0
