"""Broadcast channels (iOS 18), served as APNs serves them: the channel-management API, broadcast pushes that
reach every subscribed activity and no other, subscriptions by push-to-start (`input-push-channel`) and by
WebSocket `start` (`channelId`), Apple's channel errors on HTTP/2 and HTTP/1.1, channels kept across a restart,
and the inspector's record of which activities one broadcast reached.
"""
from __future__ import annotations

import base64
import time
import json

import pytest

from apns_support import BUNDLE, H2, Watcher, h1_request, new_id, start_apns, start_payload, update_payload
from support import get_json

CHANNELS = f"/1/apps/{BUNDLE}/channels"
BROADCAST = f"/4/broadcasts/apps/{BUNDLE}"


def _sender(server, transport: str):
    if transport == "http2":
        return H2(server)
    send = lambda *a: h1_request(server, *a)  # noqa: E731
    send.close = lambda: None
    return send


def _create(send, policy: int = 1):
    r = send("POST", CHANNELS, {"apns-request-id": new_id()}, json.dumps({"message-storage-policy": policy,
                                                                          "push-type": "LiveActivity"}).encode())
    assert r.status == 201 and r.body == b"", (r.status, r.body)
    channel = r.headers["apns-channel-id"]
    assert len(base64.b64decode(channel, validate=True)) == 16, channel
    return channel


def _broadcast(send, channel: str | None, payload, **headers):
    h = {"apns-push-type": "liveactivity", "apns-request-id": new_id(), **headers}
    if channel is not None:
        h["apns-channel-id"] = channel
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return send("POST", BROADCAST, h, body), h["apns-request-id"]


def _get(server, path: str):
    return get_json(server.url + path, timeout=5)


@pytest.fixture
def server(tmp_path):
    server = start_apns(tmp_path, tls=False, key=False, memory=False, name="test_channels")
    yield server
    assert server.stop() == 0, server.proc.output()


def test_a_broadcast_reaches_every_subscribed_activity_and_no_other(server):
    h2 = H2(server)
    watcher = Watcher(server)
    try:
        channel, other = _create(h2), _create(lambda *a: h1_request(server, *a))
        # Subscribed: two WebSocket starts with channelId, one push-to-start with input-push-channel.
        a = watcher.start(channel)["activityId"]
        b = watcher.start(channel)["activityId"]
        r = h2("POST", f"/3/device/{server.start_token}", {"apns-push-type": "liveactivity"}, json.dumps(start_payload(channel)).encode())
        assert r.status == 200 and r.headers["liveactivity-verdict"] == "applied", r.body
        c = r.headers["liveactivity-activity-id"]
        # Not subscribed: another channel, and none.
        d = watcher.start(other)["activityId"]
        e = watcher.start()["activityId"]
        for activity_id in (a, b, c, d, e):
            watcher.event("started", activity_id)
        listed = {x["id"]: x for x in _get(server, "/api/activities")["activities"]}
        assert [listed[x].get("channelId") for x in (a, b, c, d, e)] == [channel, channel, channel, other, None]
        before = {x: listed[x]["content"] for x in (d, e)}

        r, request_id = _broadcast(h2, channel, update_payload(1800, timestamp=time.time() + 1), **{"apns-priority": "5"})
        assert r.status == 200 and r.body == b"", (r.status, r.body)
        assert r.headers["apns-request-id"] == request_id and r.headers["apns-channel-id"] == channel
        assert r.headers["liveactivity-verdict"] == "applied"
        assert set(r.headers["liveactivity-activity-ids"].split(",")) == {a, b, c}
        for activity_id in (a, b, c):
            watcher.event("updated", activity_id)
        listed = {x["id"]: x for x in _get(server, "/api/activities")["activities"]}
        assert {x: listed[x]["content"] for x in (d, e)} == before, "a broadcast reached an activity not subscribed"

        # The inspector shows which activities the broadcast reached.
        records = _get(server, "/api/inspections")["inspections"]
        record = next(x for x in reversed(records) if x["type"] == "broadcast")
        assert record["channelId"] == channel and set(record["activityIds"]) == {a, b, c}
        assert record["transport"] == "http2" and record["verdict"] == "applied"
        assert {x["activityId"] for x in record["events"]} == {a, b, c}

        # A deleted channel answers as APNs does, and takes no more broadcasts.
        r = h2("DELETE", CHANNELS, {"apns-channel-id": channel}, None)
        assert r.status == 204, r.body
        r, _ = _broadcast(h2, channel, update_payload(60))
        assert (r.status, r.reason) == (404, "ChannelNotRegistered"), r.body
        r = h2("GET", CHANNELS, {"apns-channel-id": channel}, None)
        assert (r.status, r.reason) == (404, "ChannelNotRegistered")
        # A start naming it is refused, naming the field.
        refused = watcher.start(channel)
        assert refused["type"] == "error" and refused["field"] == "channelId", refused
    finally:
        watcher.close()
        h2.close()


@pytest.mark.parametrize("transport", ["http2", "http1.1"])
def test_channel_management_and_its_errors(server, transport):
    send = _sender(server, transport)
    try:
        stored, unstored = _create(send, 1), _create(send, 0)
        r = send("GET", CHANNELS, {"apns-channel-id": unstored}, None)
        assert r.status == 200 and r.json == {"message-storage-policy": 0, "push-type": "LiveActivity"}, r.body
        r = send("GET", f"/1/apps/{BUNDLE}/all-channels", {}, None)
        assert r.status == 200 and {stored, unstored} <= set(r.json["channels"]), r.body
        assert send("GET", f"/1/apps/com.other.app/all-channels", {}, None).json == {"channels": []}
        update = update_payload(120)
        table = [  # (case, send it, status, reason)
            ("no channel id", lambda: send("GET", CHANNELS, {}, None), 400, "MissingChannelId"),
            ("malformed channel id", lambda: send("GET", CHANNELS, {"apns-channel-id": "abc"}, None), 400, "BadChannelId"),
            ("unknown channel", lambda: send("GET", CHANNELS, {"apns-channel-id": base64.b64encode(b"x" * 16).decode()}, None),
             404, "ChannelNotRegistered"),
            ("another app's channel", lambda: send("GET", "/1/apps/com.other.app/channels", {"apns-channel-id": stored}, None),
             404, "ChannelNotRegistered"),
            ("storage policy 2", lambda: send("POST", CHANNELS, {}, b'{"message-storage-policy":2,"push-type":"LiveActivity"}'),
             400, "BadMessageStoragePolicy"),
            ("no push-type", lambda: send("POST", CHANNELS, {}, b'{"message-storage-policy":1}'), 400, "MissingPushType"),
            ("push-type alert", lambda: send("POST", CHANNELS, {}, b'{"message-storage-policy":1,"push-type":"alert"}'),
             400, "InvalidPushType"),
            ("not JSON", lambda: send("POST", CHANNELS, {}, b"{nope"), 400, "BadPayload"),
            ("request id not a UUID", lambda: send("GET", CHANNELS, {"apns-request-id": "r-1", "apns-channel-id": stored}, None),
             400, "BadMessageId"),
            ("PUT", lambda: send("PUT", CHANNELS, {}, b"{}"), 405, "MethodNotAllowed"),
            ("bad path", lambda: send("GET", f"/1/apps/{BUNDLE}/channel", {}, None), 404, "BadPath"),
            ("broadcast without a channel", lambda: _broadcast(send, None, update)[0], 400, "MissingChannelId"),
            ("broadcast to a bad id", lambda: _broadcast(send, "%%%", update)[0], 400, "BadChannelId"),
            ("broadcast of type alert", lambda: _broadcast(send, stored, update, **{"apns-push-type": "alert"})[0], 400, "InvalidPushType"),
            ("no-storage channel, no apns-expiration 0", lambda: _broadcast(send, unstored, update)[0], 400, "BadExpirationDate"),
            ("no-storage channel, apns-expiration 0", lambda: _broadcast(send, unstored, update, **{"apns-expiration": "0"})[0], 200, None),
            ("priority 3", lambda: _broadcast(send, stored, update, **{"apns-priority": "3"})[0], 400, "BadPriority"),
            ("over 5 KB", lambda: _broadcast(send, stored, {"aps": {**update["aps"], "pad": "x" * 5200}})[0], 413, "PayloadTooLarge"),
            ("4.5 KB is fine for a broadcast", lambda: _broadcast(send, stored, {"aps": {**update["aps"], "pad": "x" * 4500}})[0], 200, None),
            ("a broadcast cannot start", lambda: _broadcast(send, stored, start_payload())[0], 400, "BadPayload"),
            ("empty broadcast", lambda: _broadcast(send, stored, b"")[0], 400, "PayloadEmpty"),
        ]
        for case, call, status, reason in table:
            r = call()
            assert (r.status, r.reason) == (status, reason), (transport, case, r.status, r.body)
            assert r.headers.get("apns-request-id"), (case, r.headers)
            if status >= 400:
                assert set(r.json) == {"reason", "detail"}, r.body
        # With no subscriber a broadcast is accepted and reaches nobody.
        r, _ = _broadcast(send, stored, update)
        assert r.status == 200 and r.headers["liveactivity-cause"] == "noSubscribers" and r.headers["liveactivity-activity-ids"] == ""
        r = send("DELETE", CHANNELS, {"apns-channel-id": unstored}, None)
        assert r.status == 204 and r.body == b"", (r.status, r.body)
        assert unstored not in send("GET", f"/1/apps/{BUNDLE}/all-channels", {}, None).json["channels"]
    finally:
        send.close()


def test_channels_and_subscriptions_survive_a_restart(tmp_path):
    first = start_apns(tmp_path, tls=False, key=False, memory=False, name="test_channels-restart-1")
    try:
        h2 = H2(first)
        channel = _create(h2)
        deleted = _create(h2)
        assert h2("DELETE", CHANNELS, {"apns-channel-id": deleted}, None).status == 204
        h2.close()
        watcher = Watcher(first)
        activity = watcher.start(channel)["activityId"]
        watcher.event("started", activity)
        watcher.close()
    finally:
        assert first.stop() == 0
    second = start_apns(tmp_path, tls=False, key=False, memory=False, name="test_channels-restart-2")
    try:
        h2 = H2(second)
        r = h2("GET", f"/1/apps/{BUNDLE}/all-channels", {}, None)
        assert r.json["channels"] == [channel], r.body
        listed = {x["id"]: x for x in _get(second, "/api/activities")["activities"]}
        assert listed[activity]["channelId"] == channel
        watcher = Watcher(second)
        r, _ = _broadcast(h2, channel, update_payload(900))
        assert r.status == 200 and r.headers["liveactivity-activity-ids"] == activity, r.headers
        watcher.event("updated", activity)
        watcher.close()
        h2.close()
    finally:
        assert second.stop() == 0


def test_the_broadcast_example_runs_against_the_apns_port(server):
    import os
    import subprocess
    import sys
    from pathlib import Path
    example = Path(__file__).resolve().parents[2] / "examples" / "broadcast.py"
    env = {**os.environ, "LIVEACTIVITY_URL": server.url}
    r = subprocess.run([sys.executable, str(example), server.apns_url], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "reached 2:" in r.stdout and "broadcast after delete: HTTP 404 ChannelNotRegistered" in r.stdout, r.stdout
