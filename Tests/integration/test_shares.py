"""Share links (issue 12): one activity, live and read-only, for a limited time, and nothing else."""
from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

from wsclient import (close_code_after_reading, connect, recv_json, recv_until, refused_status, request, run,
                      send_json)


async def _start(ws, workout: str, rid: str) -> str:
    ack = await request(ws, {"type": "start", "requestId": rid, "attributes": {"workout": workout}, "durationSeconds": 120})
    assert ack["type"] == "ack", ack
    return ack["activityId"]


async def _share(ws, activity_id: str, rid: str, expires_in: float | None = None) -> dict:
    msg = {"type": "share", "requestId": rid, "activityId": activity_id}
    if expires_in is not None:
        msg["expiresIn"] = expires_in
    reply = await request(ws, msg, lambda m: m.get("requestId") == rid)
    assert reply["type"] == "shares", reply
    return reply["shares"][0]


def _status(url: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_share_viewer_sees_only_its_activity_and_cannot_control(server):
    async def scenario():
        async with connect(server.ws_url) as controller:
            await recv_json(controller)
            shared = await _start(controller, "yoga", "a")
            other = await _start(controller, "jogging", "b")
            share = await _share(controller, shared, "s", expires_in=600)
            assert share["url"].startswith("/s/") and len(share["url"]) > 3 + 30, "at least 128 random bits"
            token = share["url"][3:]
            async with connect(f"{server.ws_url}?share={token}") as viewer:
                snapshot = await recv_json(viewer)
                assert snapshot["type"] == "snapshot"
                assert [a["id"] for a in snapshot["activities"]] == [shared]
                assert other not in json.dumps(snapshot)
                await send_json(controller, {"type": "update", "activityId": other, "durationSeconds": 30})
                await send_json(controller, {"type": "update", "activityId": shared, "durationSeconds": 40})
                seen = []
                event = await recv_until(viewer, lambda m: m["type"] == "activity", 5, include_ticks=True, skipped=seen)
                assert event["activity"]["id"] == shared
                tick = await recv_until(viewer, lambda m: m["type"] == "tick", 5, include_ticks=True)
                assert [t["activityId"] for t in tick["timers"]] == [shared]
                for number, message in enumerate([{"type": "start", "attributes": {"workout": "yoga"}, "durationSeconds": 5},
                                                  {"type": "end", "activityId": shared}, {"type": "list"},
                                                  {"type": "share", "activityId": other}, {"type": "hello", "token": "x"}]):
                    await send_json(viewer, {**message, "requestId": f"v{number}"})
                    refusal = await recv_until(viewer, lambda m: m["type"] == "error", 5)
                    assert refusal["code"] == "forbidden"
                    assert refusal["requestId"] == f"v{number}", refusal  # echoed, as for every message
                    assert other not in json.dumps(refusal)
            listed = await request(controller, {"type": "shares", "requestId": "l"}, lambda m: m.get("requestId") == "l")
            assert [s["id"] for s in listed["shares"]] == [share["id"]]
            assert "url" not in listed["shares"][0], "the token is shown once only"
    run(scenario())


def test_expiry_and_revocation_close_the_viewer_with_1008(server):
    async def scenario():
        async with connect(server.ws_url) as controller:
            await recv_json(controller)
            activity = await _start(controller, "yoga", "a")
            short = await _share(controller, activity, "s1", expires_in=2)
            revoked = await _share(controller, activity, "s2", expires_in=600)
            async with connect(f"{server.ws_url}?share={short['url'][3:]}") as viewer:
                await recv_json(viewer)
                assert await close_code_after_reading(viewer, 6) == 1008
            async with connect(f"{server.ws_url}?share={revoked['url'][3:]}") as viewer:
                await recv_json(viewer)
                ack = await request(controller, {"type": "unshare", "requestId": "u", "shareId": revoked["id"]})
                assert ack["type"] == "ack"
                assert await close_code_after_reading(viewer, 5) == 1008
            for ended in (short, revoked):
                status, body = _status(server.url + ended["url"])
                assert status == 410 and b"share has ended" in body
            assert await refused_status(f"{server.ws_url}?share={revoked['url'][3:]}") == 410
    run(scenario())


def test_guessed_or_altered_tokens_get_404(server):
    async def scenario():
        async with connect(server.ws_url) as controller:
            await recv_json(controller)
            activity = await _start(controller, "yoga", "a")
            share = await _share(controller, activity, "s")
            token = share["url"][3:]
            assert _status(server.url + share["url"])[0] == 200
            for guess in (token[:-1] + ("A" if token[-1] != "A" else "B"), token + "x", "x" * len(token), ""):
                status, _ = _status(f"{server.url}/s/{guess}")
                assert status == 404, guess
            assert await refused_status(f"{server.ws_url}?share={token[:-1]}") == 404
    run(scenario())


def test_dismissal_ends_the_share(server):
    async def scenario():
        async with connect(server.ws_url) as controller:
            await recv_json(controller)
            activity = await _start(controller, "yoga", "a")
            share = await _share(controller, activity, "s")
            async with connect(f"{server.ws_url}?share={share['url'][3:]}") as viewer:
                await recv_json(viewer)
                await send_json(controller, {"type": "end", "activityId": activity, "dismissalPolicy": "immediate"})
                dismissed = await recv_until(viewer, lambda m: m.get("event") == "dismissed", 5)
                assert dismissed["activity"]["id"] == activity
                assert await close_code_after_reading(viewer, 5) == 1008
            assert _status(server.url + share["url"])[0] == 410
    run(scenario())


def test_http_share_creation_needs_the_controller(start_server):
    server = start_server("--controller-token", "ctl")
    async def scenario():
        async with connect(server.ws_url + "?token=ctl") as controller:
            await recv_json(controller)
            return await _start(controller, "aerobics", "a")
    activity = run(scenario())
    url = f"{server.url}/api/activities/{activity}/shares"
    assert _status(url, b'{"expiresIn":60}')[0] == 403
    status, body = _status(url, b'{"expiresIn":60}', {"Authorization": "Bearer ctl"})
    assert status == 201
    created = json.loads(body)["shares"][0]
    assert created["activityId"] == activity and created["url"].startswith("/s/")
    assert _status(url, b'{"expiresIn":999999}', {"Authorization": "Bearer ctl"})[0] == 400
    assert _status(f"{server.url}/api/activities/nope/shares", b"{}", {"Authorization": "Bearer ctl"})[0] == 404
    # Only POST takes a shares URL: GET is a 405 naming it (the new-user trial, session 19: it was a 404 for an
    # unknown activity "{id}/shares", from the catch-all GET /api/activities/**).
    try:
        urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": "Bearer ctl"}), timeout=5)
        raise AssertionError("GET of a shares URL answered 2xx")
    except urllib.error.HTTPError as error:
        assert error.code == 405 and error.headers["allow"] == "POST", (error.code, dict(error.headers))
    # A body too large for a share request is 413, not parsed from the part the server kept (was a 400 "expected
    # a closing quote" at the cut).
    status, body = _status(url, b'{"expiresIn":60,"pad":"' + b"x" * 200_000 + b'"}', {"Authorization": "Bearer ctl"})
    assert status == 413 and json.loads(body)["field"] == "body", (status, body)
