"""A kind that is none of ours, declared the way an app declares it (issue 17, items 4-6): an interval
workout's `Attributes.swift` in a folder given with `--kinds`.

- Over WebSocket and the CLI its attributes and state are in the protocol's form (ISO-8601 dates,
  `{"start","end"}` ranges): started, updated, paused, resumed and ended.
- APNs-shaped pushes (HTTP `POST /3/device/{token}`) carry Swift's Codable form; a push the app could not
  decode is judged `dropped` with Swift's terms and the key path; keys the app ignores are a warning.
- A malformed `Attributes.swift` is skipped with `file:line: message`; the server and the other kinds go on.
- A declaration changed on disk reloads; an activity that no longer decodes is kept, with `kindProblem`.
- `liveactivity kinds check DIR`: exit 0, or 1 with `file:line: message` lines.
"""
from __future__ import annotations

import asyncio
import json
import re
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from push_helpers import http_push, push_to_start_token, ref_seconds
from support import REPO_ROOT, get_json, iso_ms, liveactivity_bin
from wsclient import connect, recv_until, request, run

ATTRIBUTES_SWIFT = """\
import ActivityKit
import Foundation

struct IntervalWorkoutAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var heartRate: Int
        var distance: Double
        var phase: Phase
        var interval: ClosedRange<Date>
        var note: String?
    }

    enum Plan: String, Codable {
        case fiveByFive = "5x5"
        case pyramid
        case tabata
    }

    var athlete: String
    var plan: Plan
}

enum Phase: String, Codable, Hashable {
    case warmUp = "warm-up", work, rest
}
"""

MALFORMED_SWIFT = """\
import ActivityKit

struct BrokenAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var tint: Color
    }
}
"""


def write_kinds(root: Path) -> Path:
    kinds = root / "kinds"
    (kinds / "interval").mkdir(parents=True)
    (kinds / "interval" / "Attributes.swift").write_text(ATTRIBUTES_SWIFT)
    (kinds / "interval" / "kind.json").write_text(json.dumps({"name": "interval", "label": "Intervals",
                                                              "swiftNames": ["IntervalWorkoutAttributes"]}))
    (kinds / "broken").mkdir()
    (kinds / "broken" / "Attributes.swift").write_text(MALFORMED_SWIFT)
    return kinds


@pytest.fixture
def declared(start_server, tmp_path):
    kinds = write_kinds(tmp_path)
    return start_server("--kinds", str(kinds)), kinds


def state(now: datetime, heart: int = 140, phase: str = "work", **extra) -> dict:
    return {"heartRate": heart, "distance": 1.25, "phase": phase,
            "interval": {"start": iso_ms(now), "end": iso_ms(now + timedelta(minutes=4))}, **extra}


def codable_state(now: datetime, **overrides) -> dict:
    value = {"heartRate": 150, "distance": 2.5, "phase": "rest",
             "interval": [ref_seconds(now), ref_seconds(now + timedelta(minutes=2))]}
    value.update(overrides)
    return value


def test_declared_kind_over_websocket(declared):
    srv, _ = declared
    kinds = {k["name"]: k for k in get_json(f"{srv.url}/kinds")["kinds"]}
    assert list(kinds) == ["workout", "emoji", "interval"]
    assert kinds["interval"]["countdown"] == "interval" and kinds["interval"]["label"] == "Intervals"
    assert "IntervalWorkoutAttributes" in kinds["interval"]["swiftNames"]

    async def go():
        now = datetime.now(timezone.utc).replace(microsecond=0)
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributesType": "interval",
                                     "attributes": {"athlete": "Ada", "plan": "5x5"},
                                     "content": {"state": state(now), "relevanceScore": 0}})
            assert ack["type"] == "ack", ack
            aid = ack["activityId"]
            bad = await request(ws, {"type": "start", "requestId": "b", "attributesType": "interval",
                                     "attributes": {"athlete": "Ada", "plan": "sprint"},
                                     "content": {"state": state(now)}})
            assert bad["type"] == "error" and bad["field"] == "attributes.plan", bad
            missing = await request(ws, {"type": "update", "requestId": "m", "activityId": aid,
                                         "content": {"state": {"distance": 1, "phase": "work",
                                                               "interval": state(now)["interval"]}}})
            assert missing["type"] == "error" and missing["field"] == "content.state.heartRate", missing
            ack = await request(ws, {"type": "update", "requestId": "u", "activityId": aid,
                                     "content": {"state": state(now, heart=171, phase="rest", note="last one")}})
            assert ack["type"] == "ack", ack
            for kind in ("pause", "resume"):
                ack = await request(ws, {"type": kind, "requestId": kind, "activityId": aid})
                assert ack["type"] == "ack", ack
            ack = await request(ws, {"type": "extend", "requestId": "x", "activityId": aid, "seconds": 60})
            assert ack["type"] == "ack", ack
            current = get_json(f"{srv.url}/api/activities/{aid}")
            assert current["attributes"] == {"athlete": "Ada", "plan": "5x5"}
            st = current["content"]["state"]
            assert st["heartRate"] == 171 and st["note"] == "last one" and st["phase"] == "rest"
            end = datetime.strptime(st["interval"]["end"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
            assert abs((end - (now + timedelta(minutes=5))).total_seconds()) < 2, st  # extended by 60 s (and the pause)
            assert current.get("kindProblem") is None
            ack = await request(ws, {"type": "end", "requestId": "e", "activityId": aid})
            assert ack["type"] == "ack", ack
            assert get_json(f"{srv.url}/api/activities/{aid}")["activityState"] == "ended"
    run(go())


def test_declared_kind_over_apns_pushes(declared):
    srv, _ = declared
    start_token = push_to_start_token(srv)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    ts = int(time.time())
    start = {"aps": {"timestamp": ts, "event": "start", "attributes-type": "IntervalWorkoutAttributes",
                     "attributes": {"athlete": "Ada", "plan": "pyramid", "coach": "Bo"},
                     "content-state": codable_state(now), "alert": {"title": "Go", "body": "Intervals"}}}
    r = http_push(srv.url, start_token, start)
    assert r.status == 200 and r.verdict == "applied", (r.headers, r.body)
    assert "coach" in r.headers.get("liveactivity-warning", ""), r.headers
    aid = r.headers["liveactivity-activity-id"]
    activity = get_json(f"{srv.url}/api/activities/{aid}")
    assert activity["attributesType"] == "interval"
    assert activity["content"]["state"]["interval"] == {"start": iso_ms(now), "end": iso_ms(now + timedelta(minutes=2))}
    token = activity["pushToken"]

    def update(n: int, content_state: dict):
        return http_push(srv.url, token, {"aps": {"timestamp": ts + n, "event": "update", "content-state": content_state}})

    cases = [
        ({k: v for k, v in codable_state(now).items() if k != "heartRate"}, 'keyNotFound "heartRate"', "undecodableContentState"),
        (codable_state(now, interval=[ref_seconds(now), "soon"]), "typeMismatch Double at interval[1]", "undecodableContentState"),
        (codable_state(now, phase="sprint"), 'dataCorrupted: invalid enum raw value "sprint" for Phase', "undecodableContentState"),
        (codable_state(now, heartRate=1.5), "heartRate", "undecodableContentState"),
        (codable_state(now, note=None, distance="far"), "typeMismatch Double at distance", "undecodableContentState"),
    ]
    for n, (content_state, words, cause) in enumerate(cases, start=1):
        r = update(n, content_state)
        assert r.status == 200 and r.verdict == "dropped", (content_state, r.headers)
        assert words in r.headers["liveactivity-detail"], (words, r.headers["liveactivity-detail"])
        assert r.headers["liveactivity-cause"] == cause
    r = update(10, codable_state(now, heartRate=160, hartRate=1))
    assert r.verdict == "applied", r.headers
    assert "hartRate" in r.headers.get("liveactivity-warning", ""), r.headers
    assert get_json(f"{srv.url}/api/activities/{aid}")["content"]["state"]["heartRate"] == 160
    # Issue 27 item 6: a date in Unix milliseconds. Foundation's Date(from:) reads any Double, so iOS applies it
    # (a date tens of thousands of years ahead): applied, with a warning naming the year and the likely mistake.
    unix_ms = int(now.timestamp() * 1000)
    r = update(11, codable_state(now, interval=[ref_seconds(now), unix_ms]))
    assert r.status == 200 and r.verdict == "applied", r.headers
    warning = r.headers.get("liveactivity-warning", "")
    assert "interval[1]" in warning and "lands in the year 5" in warning and "looks like Unix milliseconds" in warning, warning
    assert get_json(f"{srv.url}/api/activities/{aid}")["content"]["state"]["interval"]["end"].startswith("3015-"), r.headers
    # attributes that would not decode: a start dropped with the key path
    bad_start = json.loads(json.dumps(start))
    bad_start["aps"]["attributes"] = {"athlete": "Ada"}
    bad_start["aps"]["timestamp"] = ts + 20
    r = http_push(srv.url, start_token, bad_start)
    assert r.verdict == "dropped" and 'keyNotFound "plan"' in r.headers["liveactivity-detail"], r.headers
    assert r.headers["liveactivity-cause"] == "undecodableAttributes"
    r = http_push(srv.url, token, {"aps": {"timestamp": ts + 30, "event": "end", "content-state": codable_state(now)}})
    assert r.verdict == "applied", r.headers


def test_cli_starts_a_declared_kind_and_kinds_check(declared):
    srv, kinds = declared

    def cli(*args: str, server: bool = True) -> subprocess.CompletedProcess:
        extra = ["--server", srv.ws_url] if server else []
        return subprocess.run([str(liveactivity_bin()), *args, *extra], capture_output=True, text=True, timeout=20,
                              stdin=subprocess.DEVNULL)
    now = datetime.now(timezone.utc)
    started = cli("start", "interval", "--attributes", json.dumps({"athlete": "Bo", "plan": "tabata"}),
                  "--state", json.dumps(state(now)))
    assert started.returncode == 0, started.stderr
    aid = started.stdout.strip()
    assert get_json(f"{srv.url}/api/activities/{aid}")["attributes"]["plan"] == "tabata"
    refused = cli("start", "interval", "--attributes", json.dumps({"athlete": "Bo", "plan": "tabata"}),
                  "--state", json.dumps(state(now, phase="sprint")))
    assert refused.returncode == 1 and "content.state.phase" in refused.stderr, refused.stderr

    check = cli("kinds", "check", str(kinds), server=False)
    assert check.returncode == 1, (check.stdout, check.stderr)
    assert re.search(r"broken/Attributes\.swift:5: .*Color", check.stdout + check.stderr), (check.stdout, check.stderr)
    # Said once (the new-user trial, session 19, saw each problem twice).
    assert len(re.findall(r"broken/Attributes\.swift:5: ", check.stdout + check.stderr)) == 1, check.stderr
    (kinds / "broken" / "Attributes.swift").unlink()
    (kinds / "broken").rmdir()
    (kinds / "interval" / "compact.html").write_text("<b>{{athlete}}</b>\n{{#plan}}unclosed\n")
    check = cli("kinds", "check", str(kinds), server=False)
    assert check.returncode == 1 and re.search(r"interval/compact\.html:2:\d+: ", check.stderr), check.stderr
    (kinds / "interval" / "compact.html").write_text("<b>{{athlete}}</b> {{#note}}{{note}}{{/note}}\n")
    check = cli("kinds", "check", str(kinds), server=False)
    assert check.returncode == 0, (check.stdout, check.stderr)
    assert "interval" in check.stdout
    assert cli("kinds", "check", str(kinds / "nope"), server=False).returncode == 1
    assert cli("kinds", "check", server=False).returncode == 2
    # Checking nothing is not a pass: a kind folder given instead of its parent, or an empty folder.
    itself = cli("kinds", "check", str(kinds / "interval"), server=False)
    assert itself.returncode == 1 and "no kind folders found" in itself.stderr and str(kinds) in itself.stderr, itself
    (kinds / "empty").mkdir()
    empty = cli("kinds", "check", str(kinds / "empty"), server=False)
    assert empty.returncode == 1 and "no kind folders found" in empty.stderr, empty


def test_malformed_declaration_is_skipped_and_others_keep_working(declared):
    srv, _ = declared
    deadline = time.monotonic() + 5  # standard error is drained on a thread of its own
    while "kind folder skipped" not in "\n".join(srv.stderr_lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    log = "\n".join(srv.stderr_lines)
    assert re.search(r"kind folder skipped.*broken/Attributes\.swift:5: .*Color", log), log
    names = [k["name"] for k in get_json(f"{srv.url}/kinds")["kinds"]]
    assert names == ["workout", "emoji", "interval"]
    assert srv.alive()


def test_changed_declaration_reloads_and_keeps_the_activity(declared):
    srv, kinds = declared

    async def start() -> str:
        now = datetime.now(timezone.utc)
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributesType": "interval",
                                     "attributes": {"athlete": "Ada", "plan": "5x5"},
                                     "content": {"state": state(now)}})
            assert ack["type"] == "ack", ack
            return ack["activityId"]
    aid = run(start())
    source = kinds / "interval" / "Attributes.swift"

    async def watch_the_change():
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            source.write_text(ATTRIBUTES_SWIFT.replace("var note: String?", "var note: String"))  # made required
            fresh = await recv_until(ws, lambda m: m["type"] == "snapshot", timeout=10)
            marked = [a for a in fresh["activities"] if a["id"] == aid]
            assert marked and "content.state.note" in marked[0].get("kindProblem", ""), fresh
    run(watch_the_change())
    deadline = time.monotonic() + 10
    activity = {}
    while time.monotonic() < deadline:
        activity = get_json(f"{srv.url}/api/activities/{aid}")
        if activity.get("kindProblem"):
            break
        time.sleep(0.2)
    assert "content.state.note" in activity.get("kindProblem", ""), activity
    snapshot = get_json(f"{srv.url}/api/activities")
    listed = [a for a in snapshot["activities"] if a["id"] == aid]
    assert listed and "note" in listed[0]["kindProblem"]
    # `kinds check --server` lists it, with its kind and the reason, and says so in its exit status
    checked = subprocess.run([str(liveactivity_bin()), "kinds", "check", "--server", srv.ws_url], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 1, checked
    assert re.search(rf"^marked\t{aid}\tinterval\t.*content\.state\.note", checked.stdout, re.M), checked.stdout
    # `list` shows it marked, with the same reason (issue 29 item 6)
    listed_cli = subprocess.run([str(liveactivity_bin()), "list", "--server", srv.ws_url], capture_output=True, text=True, timeout=30)
    assert listed_cli.returncode == 0, listed_cli
    lines = listed_cli.stdout.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith(aid))
    assert lines[row].split()[2] == "active,marked", listed_cli.stdout
    problem = listed[0]["kindProblem"]
    assert lines[row + 1] == f"  marked: {problem}", listed_cli.stdout
    assert srv.alive()
    # the fix on disk clears the mark
    source.write_text(ATTRIBUTES_SWIFT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and get_json(f"{srv.url}/api/activities/{aid}").get("kindProblem"):
        time.sleep(0.2)
    assert get_json(f"{srv.url}/api/activities/{aid}").get("kindProblem") is None
    clean = subprocess.run([str(liveactivity_bin()), "kinds", "check", "--server", srv.ws_url], capture_output=True, text=True, timeout=30)
    assert clean.returncode == 0 and clean.stdout == "", clean
    assert "the server's one activity is not marked" in clean.stderr, clean


PICKUP_SWIFT = """\
import ActivityKit
import Foundation

struct PickupAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var ready: Date
        var window: ClosedRange<Date>
        var slot: Date?
        var label: String
    }

    var shop: String
    var opened: Date
}
"""


def test_date_lens_covers_a_declared_kinds_date_fields(start_server, tmp_path):
    """Issue 29 item 5: the inspector's date lens lists a declared kind's `Date` and `ClosedRange<Date>` fields
    in pushes, whatever their names (`ready`, `window`, `opened` name no date), and flags wrong epochs (Unix
    seconds, milliseconds) as it does the workout's `workoutTimer`. Before, it found dates by key names only."""
    kinds = tmp_path / "kinds"
    (kinds / "pickup").mkdir(parents=True)
    (kinds / "pickup" / "Attributes.swift").write_text(PICKUP_SWIFT)
    srv = start_server("--kinds", str(kinds))
    start_token = push_to_start_token(srv)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    unix = now.timestamp()
    ts = int(time.time())
    start = {"aps": {"timestamp": ts, "event": "start", "attributes-type": "PickupAttributes",
                     "attributes": {"shop": "Corner", "opened": unix - 3600},          # Unix seconds: 31 years off
                     "content-state": {"ready": unix + 600,                             # Unix seconds
                                       "window": [ref_seconds(now), ref_seconds(now + timedelta(minutes=20))],
                                       "label": "Two coffees"},
                     "alert": {"title": "Order", "body": "Placed"}}}
    r = http_push(srv.url, start_token, start)
    assert r.status == 200 and r.verdict == "applied", (r.headers, r.body)
    lens = {d["path"]: d for d in get_json(f"{srv.url}/api/inspections")["inspections"][-1]["dates"]}
    assert {"aps.attributes.opened", "aps.content-state.ready", "aps.content-state.window[0]",
            "aps.content-state.window[1]"} <= set(lens), sorted(lens)
    assert "aps.content-state.label" not in lens and "aps.attributes.shop" not in lens, sorted(lens)
    for path in ("aps.attributes.opened", "aps.content-state.ready"):
        assert any("looks like Unix seconds" in w for w in lens[path]["warnings"]), lens[path]
    assert lens["aps.content-state.window[1]"]["warnings"] == [], lens["aps.content-state.window[1]"]

    token = get_json(f"{srv.url}/api/activities/{r.headers['liveactivity-activity-id']}")["pushToken"]
    update = {"aps": {"timestamp": ts + 1, "event": "update",
                      "content-state": {"ready": ref_seconds(now + timedelta(minutes=5)),
                                        "window": [ref_seconds(now), (unix + 1200) * 1000],   # milliseconds
                                        "slot": ref_seconds(now + timedelta(minutes=8)), "label": "Two coffees"}}}
    r = http_push(srv.url, token, update)
    assert r.status == 200, (r.headers, r.body)
    lens = {d["path"]: d for d in get_json(f"{srv.url}/api/inspections")["inspections"][-1]["dates"]}
    assert lens["aps.content-state.ready"]["warnings"] == [] and lens["aps.content-state.slot"]["warnings"] == [], lens
    assert any("looks like milliseconds" in w for w in lens["aps.content-state.window[1]"]["warnings"]), lens


MY_WORKOUT_SWIFT = """\
import ActivityKit

struct WorkoutAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var laps: Int
    }

    var runner: String
}
"""

RIDE_SWIFT = """\
import ActivityKit

struct RideAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var stops: Int
    }

    var driver: String
}
"""


def test_swift_name_clashes_between_kinds(start_server, tmp_path):
    """A user kind declaring the built-in workout's struct name (WorkoutAttributes) gets its pushes (it was
    routed to the built-in and dropped, keyNotFound "workout"); two user kinds declaring RideAttributes make it
    ambiguous: warned at load and by `kinds check` (exit 0), a push naming only the struct is refused 400
    BadPayload naming both kinds, and a wire name reaches its kind."""
    kinds = tmp_path / "kinds"
    for name, source in [("my-workout", MY_WORKOUT_SWIFT), ("ride", RIDE_SWIFT), ("ride2", RIDE_SWIFT)]:
        (kinds / name).mkdir(parents=True)
        (kinds / name / "Attributes.swift").write_text(source)
    (kinds / "ride2" / "kind.json").write_text(json.dumps({"swiftNames": ["RideAttributes"]}))
    srv = start_server("--kinds", str(kinds))
    start_token = push_to_start_token(srv)
    ts = int(time.time())

    def start(type_name: str, attributes: dict, content_state: dict, n: int):
        return http_push(srv.url, start_token, {"aps": {"timestamp": ts + n, "event": "start", "attributes-type": type_name,
                                                        "attributes": attributes, "content-state": content_state,
                                                        "alert": {"title": "Go", "body": "Go"}}})

    r = start("WorkoutAttributes", {"runner": "Ada"}, {"laps": 3}, 0)
    assert r.status == 200 and r.verdict == "applied", (r.headers, r.body)
    assert get_json(f"{srv.url}/api/activities/{r.headers['liveactivity-activity-id']}")["attributesType"] == "my-workout"

    r = start("RideAttributes", {"driver": "Bo"}, {"stops": 2}, 1)
    assert r.status == 400, (r.status, r.headers, r.body)
    body = json.loads(r.body)
    assert body["reason"] == "BadPayload", body
    assert '"ride", "ride2"' in body["detail"] and "wire name" in body["detail"], body
    r = start("ride2", {"driver": "Bo"}, {"stops": 2}, 2)
    assert r.status == 200 and r.verdict == "applied", (r.headers, r.body)
    assert get_json(f"{srv.url}/api/activities/{r.headers['liveactivity-activity-id']}")["attributesType"] == "ride2"

    log = srv.output()
    assert re.search(r"kind 'my-workout' \(\S*my-workout\) takes attributes-type WorkoutAttributes from the built-in kind 'workout'", log), log
    assert "attributes-type RideAttributes is ambiguous" in log, log

    check = subprocess.run([str(liveactivity_bin()), "kinds", "check", str(kinds)], capture_output=True, text=True,
                           timeout=20, stdin=subprocess.DEVNULL)
    assert check.returncode == 0, (check.stdout, check.stderr)
    assert "warning: attributes-type RideAttributes is ambiguous" in check.stderr and "ride2" in check.stderr, check.stderr


def test_kinds_check_reports_a_built_in_kinds_name_as_serve_does(start_server, tmp_path):
    """The new-user trial: a kind.json naming its kind `workout` passed `kinds check` (exit 0) while `serve`
    skipped it; the check loads the folder after the built-in kinds, as `serve --kinds` does."""
    kinds = tmp_path / "kinds"
    (kinds / "mine").mkdir(parents=True)
    (kinds / "mine" / "Attributes.swift").write_text(RIDE_SWIFT)
    (kinds / "mine" / "kind.json").write_text(json.dumps({"name": "workout"}))
    clash = f'{kinds / "mine"}: a kind named "workout" is already loaded; skipped'
    check = subprocess.run([str(liveactivity_bin()), "kinds", "check", str(kinds)], capture_output=True, text=True,
                           timeout=20, stdin=subprocess.DEVNULL)
    assert check.returncode == 1, (check.stdout, check.stderr)
    assert clash in check.stderr and "ok\tworkout" not in check.stdout, (check.stdout, check.stderr)
    srv = start_server("--kinds", str(kinds))
    deadline = time.monotonic() + 5  # standard error is drained on a thread of its own
    logged = re.compile(r'mine: a kind named \\?"workout\\?" is already loaded; skipped')
    while not logged.search(srv.output()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert logged.search(srv.output()), srv.output()
    # The built-in folder checked by itself clashes with nothing.
    builtin = subprocess.run([str(liveactivity_bin()), "kinds", "check", str(REPO_ROOT / "Kinds")], capture_output=True,
                             text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert builtin.returncode == 0 and "ok\tworkout" in builtin.stdout, (builtin.stdout, builtin.stderr)


DELIVERY_SWIFT = """\
import ActivityKit
import Foundation

struct DeliveryAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var eta: Date
        var window: ClosedRange<Date>
    }

    var order: String
}
"""


def test_a_date_sent_as_unix_seconds_is_applied_with_a_warning(start_server, tmp_path):
    """The commonest backend date bug: `"eta": <Unix seconds>` where Swift's Date(from:) counts from 2001-01-01.
    iOS applies it (31 years later), so the verdict stays applied, but the push answer's liveactivity-warning
    names the field, the year it lands in and the number to send; a right date gets no warning."""
    kinds = tmp_path / "kinds"
    (kinds / "delivery").mkdir(parents=True)
    (kinds / "delivery" / "Attributes.swift").write_text(DELIVERY_SWIFT)
    srv = start_server("--kinds", str(kinds))
    start_token = push_to_start_token(srv)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    ts = int(time.time())
    eta_unix = int((now + timedelta(hours=1)).timestamp())
    right = [ref_seconds(now), ref_seconds(now + timedelta(hours=2))]
    start = {"aps": {"timestamp": ts, "event": "start", "attributes-type": "DeliveryAttributes",
                     "attributes": {"order": "42"}, "content-state": {"eta": eta_unix, "window": right},
                     "alert": {"title": "Go", "body": "Go"}}}
    r = http_push(srv.url, start_token, start)
    assert r.status == 200 and r.verdict == "applied", (r.headers, r.body)
    warning = r.headers.get("liveactivity-warning", "")
    assert "aps.content-state.eta" in warning and "looks like Unix seconds" in warning, r.headers
    assert "lands in the year 20" in warning and f"send {eta_unix - 978307200}" in warning, warning
    token = get_json(f"{srv.url}/api/activities/{r.headers['liveactivity-activity-id']}")["pushToken"]
    # A range bound in Unix seconds is flagged too; dates sent right are not.
    r = http_push(srv.url, token, {"aps": {"timestamp": ts + 1, "event": "update",
                                           "content-state": {"eta": ref_seconds(now), "window": [right[0], eta_unix]}}})
    assert r.status == 200 and r.verdict == "applied", r.headers
    assert "aps.content-state.window[1]" in r.headers.get("liveactivity-warning", ""), r.headers
    r = http_push(srv.url, token, {"aps": {"timestamp": ts + 2, "event": "update",
                                           "content-state": {"eta": ref_seconds(now), "window": right}}})
    assert r.status == 200 and r.verdict == "applied" and "liveactivity-warning" not in r.headers, r.headers
