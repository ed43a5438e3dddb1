"""The machine-readable protocol (docs/asyncapi.yaml + docs/schemas/*.json) against the real server.

Every frame sent and received in these tests goes through `schema_check.checked`, so each client message
is validated against its client-*.json schema and each server message (ticks included) against its
server-*.json schema. Deliberately bad input is sent with `send_invalid`, which asserts that the schemas
reject it too, whenever a schema can express the rule.
"""
from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from schema_check import (CLIENT_TYPES, SCHEMA_DIR, SERVER_TYPES, checked, client_errors, errors, schema_names,
                          validate, validate_apns, validate_client, validate_server)
from push_helpers import push_to_start_token
from support import http_get, iso, now
from wsclient import connect, recv_json, recv_until, request, run, send_json

REPO_ROOT = Path(__file__).resolve().parents[2]
ASYNCAPI = REPO_ROOT / "docs" / "asyncapi.yaml"
UTC = timezone.utc
REFERENCE_EPOCH = 978_307_200  # 2001-01-01T00:00:00Z in Unix seconds (Swift's Date reference)


def content(seconds: float = 60, relevance: float = 0, start: datetime | None = None) -> dict:
    begin = start or now()
    end = begin + timedelta(seconds=seconds)
    return {"state": {"workoutTimer": {"start": iso(begin), "end": iso(end)}}, "staleDate": iso(end),
            "relevanceScore": relevance}


def get_json(url: str) -> tuple[int, dict]:
    r = http_get(url, timeout=5)
    return r.status, json.loads(r.body)


async def reply(ws, rid, types=("ack", "error", "snapshot", "hello", "history", "pushResult", "caughtUp"), timeout=3.0):
    return await recv_until(ws, lambda m: m.get("requestId") == rid and m["type"] in types, timeout)


async def event(ws, name: str, activity_id: str | None = None, timeout: float = 3.0) -> dict:
    return await recv_until(ws, lambda m: m["type"] == "activity" and m["event"] == name
                            and (activity_id is None or m["activity"]["id"] == activity_id), timeout)


async def gather(ws, *predicates, timeout: float = 3.0) -> list[dict]:
    """One message for each predicate, whatever order they arrive in (ticks skipped)."""
    found: list[dict | None] = [None] * len(predicates)
    deadline = time.monotonic() + timeout

    def wanted(m: dict) -> bool:
        return any(f is None and p(m) for f, p in zip(found, predicates))

    while None in found:
        m = await recv_until(ws, wanted, max(0.01, deadline - time.monotonic()))
        found[next(i for i, (f, p) in enumerate(zip(found, predicates)) if f is None and p(m))] = m
    return found  # type: ignore[return-value]


async def start(ws, rid: str, **fields) -> tuple[dict, dict]:
    msg = {"type": "start", "requestId": rid, "attributes": {"workout": "jogging"}, **fields}
    if "content" not in msg and "durationSeconds" not in msg:
        msg["content"] = content()
    await send_json(ws, msg)
    ack = await reply(ws, rid)
    assert ack["type"] == "ack", ack
    ev = await event(ws, "scheduled" if "startDate" in fields else "started", ack["activityId"])
    return ack, ev


# ---------------------------------------------------------------------------------------------------
# the documents themselves
# ---------------------------------------------------------------------------------------------------
def test_schemas_are_valid_draft_2020_12():
    names = schema_names()
    assert "common" in names
    for name in names:
        schema = json.loads((SCHEMA_DIR / f"{name}.json").read_text())
        assert schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema", name
        assert schema.get("$id") == f"{name}.json", name
        Draft202012Validator.check_schema(schema)
    # one schema per message type, both directions
    for table in (CLIENT_TYPES, SERVER_TYPES):
        for kind, name in table.items():
            assert name in names, f"no schema for {kind}"
    # every server message's object is closed (its output is fixed)
    for name in SERVER_TYPES.values():
        assert json.loads((SCHEMA_DIR / f"{name}.json").read_text())["additionalProperties"] is False, name


def _refs(node, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                found.add(v)
            else:
                _refs(v, found)
    elif isinstance(node, list):
        for v in node:
            _refs(v, found)
    return found


def test_asyncapi_document_covers_every_message_and_its_examples_validate():
    doc = yaml.safe_load(ASYNCAPI.read_text())
    assert doc["asyncapi"].startswith("3.0"), doc["asyncapi"]
    channel = doc["channels"]["ws"]
    assert channel["address"] == "/ws"
    messages = doc["components"]["messages"]
    # every internal reference resolves
    for ref in _refs(doc, set()):
        if ref.startswith("#/"):
            node = doc
            for part in ref[2:].split("/"):
                assert part in node, f"dangling {ref}"
                node = node[part]
        else:
            assert (ASYNCAPI.parent / ref.split("#")[0]).is_file(), f"dangling {ref}"
    # every schema file is used, every message names one, and its examples validate against it
    used = set()
    for key, message in messages.items():
        payload = message["payload"]
        assert payload["schemaFormat"].startswith("application/schema+json;version=draft-2020-12"), key
        ref = payload["schema"]["$ref"]
        assert ref.startswith("./schemas/") and ref.endswith(".json"), ref
        name = ref[len("./schemas/"):-5]
        used.add(name)
        assert message.get("examples"), f"message {key} has no example"
        for example in message["examples"]:
            validate(example["payload"], name)
    every = (set(CLIENT_TYPES.values()) | set(SERVER_TYPES.values())) - {"server-pushToStartToken"}
    assert every <= used, f"schemas without an AsyncAPI message: {every - used}"
    # the channel lists every message, and the operations send/receive all of them
    assert {r["$ref"].rsplit("/", 1)[-1] for r in channel["messages"].values()} == set(messages)
    sent = {m["$ref"].rsplit("/", 1)[-1] for op in doc["operations"].values() if op["action"] == "send"
            for m in op["messages"]}
    received = {m["$ref"].rsplit("/", 1)[-1] for op in doc["operations"].values() if op["action"] == "receive"
                for m in op["messages"]}
    assert sent | received == set(messages)
    for key in received:
        assert messages[key]["payload"]["schema"]["$ref"].startswith("./schemas/client-"), key
    for key in sent:
        assert messages[key]["payload"]["schema"]["$ref"].startswith("./schemas/server-"), key


def test_protocol_md_examples_validate():
    """The JSON examples of docs/PROTOCOL.md that are complete messages match the schemas."""
    text = (REPO_ROOT / "docs" / "PROTOCOL.md").read_text()
    checked_count = 0
    for block in text.split("```json")[1:]:
        for line in block.split("```")[0].splitlines():
            line = line.strip()
            if not line.startswith("{\"type\"") or "…" in line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # a multi-line example or one with placeholders
            kind = msg["type"]
            if kind in CLIENT_TYPES and kind in SERVER_TYPES:  # hello, history: request or reply
                name = CLIENT_TYPES[kind] if not client_errors(msg) else SERVER_TYPES[kind]
            else:
                name = CLIENT_TYPES.get(kind) or SERVER_TYPES[kind]
            validate(msg, name)
            checked_count += 1
    assert checked_count >= 5, checked_count


# ---------------------------------------------------------------------------------------------------
# live traffic
# ---------------------------------------------------------------------------------------------------
def test_lifecycle_traffic_matches_schemas(server):
    async def body():
        async with connect(server.ws_url) as raw:
            ws = checked(raw)
            snap = await recv_json(ws)
            assert snap["type"] == "snapshot" and snap["role"] == "controller"

            # start (full content, integer raw value), update with alert, pause, resume, extend, end default
            ack, ev = await start(ws, "s1", attributes={"workout": 2}, content=content(120, relevance=50))
            aid = ack["activityId"]
            await send_json(ws, {"type": "update", "requestId": "u1", "activityId": aid, "content": content(90),
                                 "alert": {"title": "Halfway", "body": "Keep going", "sound": "chime"}})
            assert (await reply(ws, "u1"))["type"] == "ack"
            updated = await event(ws, "updated", aid)
            assert updated["alert"] == {"title": "Halfway", "body": "Keep going", "sound": "chime"}
            for rid, msg, name in [("p1", {"type": "pause"}, "paused"), ("r1", {"type": "resume"}, "resumed"),
                                   ("e1", {"type": "extend", "seconds": 30}, "extended")]:
                await send_json(ws, {**msg, "requestId": rid, "activityId": aid})
                assert (await reply(ws, rid))["type"] == "ack"
                await event(ws, name, aid)
            await send_json(ws, {"type": "end", "requestId": "d1", "activityId": aid, "dismissalPolicy": "default"})
            assert (await reply(ws, "d1"))["activityId"] == aid
            ended = await event(ws, "ended", aid)
            assert ended["activity"]["endReason"] == "request"

            # a short countdown: stale + timerFinished; then stop (alias) with immediate dismissal
            ack2, _ = await start(ws, "s2", durationSeconds=1, relevanceScore=3)
            due = {"stale", "timerFinished"}  # both at the countdown's end, in either order
            while due:
                due.discard((await recv_until(ws, lambda m: m["type"] == "activity" and m["event"] in due
                                              and m["activity"]["id"] == ack2["activityId"], 4))["event"])
            await send_json(ws, {"type": "stop", "requestId": "d2", "activityId": ack2["activityId"],
                                 "dismissalPolicy": "immediate"})
            await reply(ws, "d2")
            await event(ws, "ended", ack2["activityId"])
            await event(ws, "dismissed", ack2["activityId"])

            # end after a date, with final content; then end all
            ack3, _ = await start(ws, "s3", durationSeconds=600)
            await send_json(ws, {"type": "end", "requestId": "d3", "activityId": ack3["activityId"], "content": content(5),
                                 "dismissalPolicy": {"after": iso(now() + timedelta(minutes=30))}})
            await reply(ws, "d3")
            after = await event(ws, "ended", ack3["activityId"])
            assert after["activity"]["dismissalDate"] > after["activity"]["endDate"]
            await send_json(ws, {"type": "end", "requestId": "d4", "all": True, "dismissalPolicy": "immediate"})
            all_ack = await reply(ws, "d4")
            assert set(all_ack["activityIds"]) == {aid, ack3["activityId"]}, all_ack

            # list, history (with and without paging), catchUp (served and reset)
            listed = await request(ws, {"type": "list", "requestId": "l1"})
            assert listed["type"] == "snapshot" and listed["requestId"] == "l1"
            await send_json(ws, {"type": "history", "requestId": "h1", "limit": 10})
            history = await reply(ws, "h1")
            assert len(history["workouts"]) == 3, history
            await send_json(ws, {"type": "history", "requestId": "h2", "before": iso(now() - timedelta(days=1))})
            assert (await reply(ws, "h2"))["workouts"] == []
            await send_json(ws, {"type": "catchUp", "requestId": "c1", "since": snap["sequence"]})
            caught = await reply(ws, "c1", types=("caughtUp",), timeout=5)
            assert caught["sequence"] == listed["sequence"]
            await send_json(ws, {"type": "catchUp", "requestId": "c2", "since": caught["sequence"] + 1000})
            reset = await reply(ws, "c2")
            assert reset["type"] == "snapshot" and reset["reset"] is True

            seen = set(ws.received_types)
            for t in ["snapshot", "ack", "tick", "history", "caughtUp", "activity/started", "activity/updated",
                      "activity/paused", "activity/resumed", "activity/extended", "activity/stale",
                      "activity/timerFinished", "activity/ended", "activity/dismissed"]:
                assert t in seen, f"{t} never received; saw {sorted(seen)}"
            assert {"start", "update", "pause", "resume", "extend", "end", "stop", "list", "history",
                    "catchUp"} <= set(ws.sent_types)

        # resuming with /ws?since=N: replayed events, then caughtUp
        async with connect(server.ws_url + f"?since={snap['sequence']}") as raw:
            ws = checked(raw)
            caught = await recv_until(ws, lambda m: m["type"] == "caughtUp", 5)
            assert sum(1 for t in ws.received_types if t.startswith("activity/")) == caught["sequence"] - snap["sequence"]

        # the HTTP read API returns the same objects
        status, body = get_json(server.url + "/api/activities")
        assert status == 200 and validate_server(body)["type"] == "snapshot"
        status, body = get_json(server.url + "/api/history?limit=2")
        assert status == 200 and len(validate_server(body)["workouts"]) == 2
        status, body = get_json(server.url + "/api/push-to-start-token")
        assert status == 200 and validate_server(body)["pushToStartToken"] == push_to_start_token(server)
        status, body = get_json(server.url + "/api/history?limit=0")
        assert status == 400 and validate_server(body)["code"] == "invalid_field"
        status, body = get_json(server.url + "/api/activities/nope")
        assert status == 404 and validate_server(body)["code"] == "unknown_activity"
    run(body())


def test_scheduled_start_traffic_matches_schemas(server):
    async def body():
        async with connect(server.ws_url) as raw:
            ws = checked(raw)
            await recv_json(ws)
            begin = now() + timedelta(seconds=2)
            ack, scheduled = await start(ws, "s1", durationSeconds=30, startDate=iso(begin))
            assert scheduled["activity"]["activityState"] == "pending"
            tick = await recv_until(ws, lambda m: m["type"] == "tick" and any("startsInSeconds" in t for t in m["timers"]),
                                    3, include_ticks=True)
            assert tick["timers"][0]["activityId"] == ack["activityId"]
            status, body = get_json(server.url + f"/api/activities/{ack['activityId']}")
            assert status == 200
            validate({"type": "snapshot", "serverTime": iso(now()), "sequence": 0, "activities": [body]},
                     "server-snapshot")
            started = await event(ws, "started", ack["activityId"], timeout=5)
            assert started["activity"]["activityState"] == "active"
            # a paused countdown's tick carries paused: true
            await send_json(ws, {"type": "pause", "requestId": "p", "activityId": ack["activityId"]})
            await reply(ws, "p")
            await recv_until(ws, lambda m: m["type"] == "tick" and m["timers"][0].get("paused") is True, 3,
                             include_ticks=True)
    run(body())


def test_push_traffic_matches_schemas(server):
    token = push_to_start_token(server)
    t0 = int(time.time())

    def ref(dt: datetime) -> float:
        return dt.timestamp() - REFERENCE_EPOCH

    async def body():
        async with connect(server.ws_url) as raw:
            ws = checked(raw)
            await recv_json(ws)
            begin = now()
            start_payload = validate_apns({"aps": {
                "timestamp": t0, "event": "start", "attributes-type": "WorkoutWidgetAttributes",
                "attributes": {"workout": 0},
                "content-state": {"workoutTimer": [ref(begin), ref(begin + timedelta(seconds=60))]},
                "stale-date": t0 + 60, "relevance-score": 10,
                "alert": {"title": "Workout started", "body": "Jogging"}}})
            await send_json(ws, {"type": "push", "requestId": "p1", "pushToken": token, "payload": start_payload})
            res, started = await gather(ws, lambda m: m.get("requestId") == "p1",
                                        lambda m: m["type"] == "activity" and m["event"] == "started")
            assert res["type"] == "pushResult" and res["status"] == 200 and res["verdict"] == "applied", res
            assert started["activity"]["id"] == res["activityId"]
            activity_token = started["activity"]["pushToken"]

            update = validate_apns({"aps": {"timestamp": t0 + 1, "event": "update",
                                            "content-state": {"workoutTimer": [ref(begin), ref(begin + timedelta(seconds=90))]},
                                            "alert": {"title": "Halfway", "body": "Keep going"}}})
            await send_json(ws, {"type": "push", "requestId": "p2", "pushToken": activity_token, "payload": update})
            p2, _ = await gather(ws, lambda m: m.get("requestId") == "p2",
                                 lambda m: m.get("event") == "updated" and m["activity"]["id"] == res["activityId"])
            assert p2["verdict"] == "applied", p2
            # the same timestamp again: ignored
            await send_json(ws, {"type": "push", "requestId": "p3", "pushToken": activity_token, "payload": update})
            ignored = await reply(ws, "p3")
            assert ignored["verdict"] == "ignored" and ignored["detail"], ignored
            # a start without an alert: dropped
            no_alert = json.loads(json.dumps(start_payload))
            del no_alert["aps"]["alert"]
            await ws.send_invalid(json.dumps({"type": "push", "requestId": "p4", "pushToken": token, "payload": no_alert}))
            assert (await reply(ws, "p4"))["verdict"] == "dropped"
            # refused by "APNs": unknown token, bad payload
            await send_json(ws, {"type": "push", "requestId": "p5", "pushToken": "0" * 64, "payload": update})
            bad_token = await reply(ws, "p5")
            assert bad_token["status"] == 400 and bad_token["reason"] == "BadDeviceToken", bad_token
            await ws.send_invalid(json.dumps({"type": "push", "requestId": "p6", "pushToken": activity_token,
                                              "payload": {"aps": {"event": "update"}}}))
            bad_payload = await reply(ws, "p6")
            assert bad_payload["status"] == 400 and bad_payload["reason"] == "BadPayload", bad_payload
            end = validate_apns({"aps": {"timestamp": t0 + 2, "event": "end", "dismissal-date": t0 + 600}})
            await send_json(ws, {"type": "push", "requestId": "p7", "pushToken": activity_token, "payload": end})
            p7, _ = await gather(ws, lambda m: m.get("requestId") == "p7",
                                 lambda m: m.get("event") == "ended" and m["activity"]["id"] == res["activityId"])
            assert p7["verdict"] == "applied", p7
            # once dismissed, the token is gone: 410 Unregistered with when (issue 29 item 1)
            await send_json(ws, {"type": "end", "requestId": "e8", "activityId": res["activityId"], "dismissalPolicy": "immediate"})
            await gather(ws, lambda m: m.get("requestId") == "e8",
                         lambda m: m.get("event") == "dismissed" and m["activity"]["id"] == res["activityId"])
            await send_json(ws, {"type": "push", "requestId": "p9", "pushToken": activity_token, "payload": update})
            gone = await reply(ws, "p9")
            assert gone["status"] == 410 and gone["reason"] == "Unregistered" and gone["timestamp"] > 1e12, gone
    run(body())


def test_error_codes_match_schemas(server):
    async def body():
        async with connect(server.ws_url) as raw:
            ws = checked(raw)
            await recv_json(ws)
            ack, _ = await start(ws, "s1", durationSeconds=60)
            aid = ack["activityId"]

            async def expect(code: str, frame: str | bytes, invalid: bool, rid=None):
                if invalid:
                    await ws.send_invalid(frame)
                else:
                    await ws.send(frame)
                err = await recv_until(ws, lambda m: m["type"] == "error")
                assert err["code"] == code, err
                if rid is not None:
                    assert err["requestId"] == rid, err
                return err

            await expect("invalid_json", "{not json", True)
            await expect("invalid_json", "[1, 2]", True)
            await expect("unknown_type", json.dumps({"type": "teleport", "requestId": 1}), True, 1)
            await expect("missing_field", json.dumps({"type": "update", "requestId": "m", "content": content()}), True, "m")
            await expect("invalid_field", json.dumps({"type": "start", "requestId": "f", "attributes": {"workout": "swimming"},
                                                      "durationSeconds": 60}), True, "f")
            await expect("invalid_field", json.dumps({"type": "extend", "requestId": "z", "activityId": aid, "seconds": 0}),
                         True, "z")
            await expect("invalid_field", json.dumps({"type": "start", "requestId": "d", "attributes": {"workout": 1},
                                                      "content": {"state": {"workoutTimer": {"start": 5, "end": 6}}}}),
                         True, "d")
            await expect("unknown_activity", json.dumps({"type": "pause", "requestId": "u", "activityId": "nope"}), False, "u")
            await expect("invalid_state", json.dumps({"type": "resume", "requestId": "i", "activityId": aid}), False, "i")
            big = content()
            big["state"]["padding"] = "x" * 5000  # over ActivityKit's 4 KB content-state limit
            await expect("limit_exceeded", json.dumps({"type": "update", "requestId": "l", "activityId": aid,
                                                       "content": big}), False, "l")
            await expect("unsupported_frame", b"\x00\x01binary", False)
            await send_json(ws, {"type": "end", "requestId": "e", "activityId": aid})
            await reply(ws, "e")
            await expect("activity_ended", json.dumps({"type": "update", "requestId": "a", "activityId": aid,
                                                       "durationSeconds": 5}), False, "a")
            codes = {m["code"] for m in ws.received if m["type"] == "error"}
            assert codes == {"invalid_json", "unknown_type", "missing_field", "invalid_field", "unknown_activity",
                             "invalid_state", "limit_exceeded", "unsupported_frame", "activity_ended"}
    run(body())


def test_access_and_rate_errors_match_schemas(start_server):
    srv = start_server("--controller-token", "ctl-token", "--viewer-token", "view-token", "--rate", "1", "--burst", "4")

    async def body():
        # unauthenticated until hello; a wrong token is refused, the right one gives the role and a snapshot
        async with connect(srv.ws_url) as raw:
            ws = checked(raw)
            await send_json(ws, {"type": "hello", "requestId": "h0", "token": "wrong"})
            err = await reply(ws, "h0")
            assert err["type"] == "error" and err["code"] == "unauthorized", err
            await send_json(ws, {"type": "hello", "requestId": "h1", "token": "view-token"})
            hello = await reply(ws, "h1")
            assert hello == {"type": "hello", "requestId": "h1", "role": "viewer", "heartbeatSeconds": 15}
            snap = await recv_until(ws, lambda m: m["type"] == "snapshot")
            assert snap["role"] == "viewer"
            # a viewer may not control
            await send_json(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"}, "durationSeconds": 9})
            assert (await reply(ws, "s"))["code"] == "forbidden"
            await send_json(ws, {"type": "push", "requestId": "p", "pushToken": "0" * 64,
                                 "payload": {"aps": {"timestamp": 1, "event": "end"}}})
            assert (await reply(ws, "p", types=("error", "pushResult")))["code"] == "forbidden"
        # a controller by header; flooding gets rate_limited
        async with connect(srv.ws_url, additional_headers={"Authorization": "Bearer ctl-token"}) as raw:
            ws = checked(raw)
            snap = await recv_json(ws)
            assert snap["role"] == "controller"
            for i in range(12):
                await send_json(ws, {"type": "list", "requestId": f"r{i}"})
            limited = await recv_until(ws, lambda m: m["type"] == "error", 3)
            assert limited["code"] == "rate_limited", limited
    run(body())


def test_bad_client_messages_are_rejected_by_the_schemas_too():
    """Spot checks that the client schemas encode the server's input rules."""
    ok = {"type": "start", "attributes": {"workout": "yoga"}, "durationSeconds": 60}
    assert client_errors(ok) == []
    assert client_errors({**ok, "durationSeconds": 0})
    assert client_errors({**ok, "durationSeconds": 28801})
    assert client_errors({**ok, "startDate": "tomorrow"})
    assert client_errors({"type": "start", "attributes": {"workout": 3}, "durationSeconds": 5})
    assert client_errors({"type": "update", "activityId": "x", "durationSeconds": 5, "alert": {"title": "t"}})
    assert client_errors({"type": "end", "activityId": "x", "dismissalPolicy": "later"})
    assert client_errors({"type": "end", "all": False})
    assert client_errors({"type": "history", "limit": 501})
    assert client_errors({"type": "catchUp", "since": -1})
    assert client_errors({"type": "hello"})
    assert client_errors({"type": "list", "requestId": ["array"]})
    assert client_errors({"type": "list", "extra": 1}), "client schemas are closed, to catch typos"
    assert client_errors({"type": "start", "attributes": {"workout": "yoga"}, "content": {"state": {"workoutTimer": {"start": "2026-11-29T17:00:00+01:00", "end": "2026-11-29T17:00:00.5Z"}}}}) == []
    assert validate_client({"type": "stop", "activityId": "x"})["type"] == "stop"
    assert errors({"type": "tick", "serverTime": "2026-11-29T17:00:06Z", "timers": []}, "server-tick"), \
        "server dates always carry milliseconds"


def test_share_traffic_matches_schemas(server):
    async def body():
        async with connect(server.ws_url) as raw:
            ws = checked(raw)
            await recv_json(ws)
            ack, _ = await start(ws, "s1", durationSeconds=120)
            await send_json(ws, {"type": "share", "requestId": "sh1", "activityId": ack["activityId"], "expiresIn": 600})
            created = await reply(ws, "sh1", types=("shares", "error"))
            if created["type"] == "error" and created["code"] == "unknown_type":
                pytest.skip("this server has no share messages yet")
            assert created["type"] == "shares" and created["shares"][0]["url"].startswith("/s/"), created
            share = created["shares"][0]
            await send_json(ws, {"type": "shares", "requestId": "sh2"})
            listed = await reply(ws, "sh2", types=("shares", "error"))
            assert [s["id"] for s in listed["shares"]] == [share["id"]] and "url" not in listed["shares"][0], listed
            # a share viewer: snapshot of that one activity, schema-valid too
            async with connect(server.ws_url + "?share=" + share["url"].rsplit("/", 1)[1]) as raw_viewer:
                viewer = checked(raw_viewer)
                snap = await recv_until(viewer, lambda m: m["type"] == "snapshot")
                assert [a["id"] for a in snap["activities"]] == [ack["activityId"]], snap
            await send_json(ws, {"type": "unshare", "requestId": "sh3", "shareId": share["id"]})
            assert (await reply(ws, "sh3"))["type"] == "ack"
    run(body())
