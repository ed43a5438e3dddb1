"""Shared checks for the protocol tests: date format, activity/event/snapshot/error shapes, start helper.

All shapes follow docs/PROTOCOL.md (v1).
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
import re
from typing import Any

from support import iso, now  # noqa: F401  (the tests' one date helper; re-exported for older imports)
from wsclient import collect_non_ticks, recv_non_tick, request, send_json

UTC = timezone.utc
OUT_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
ACTIVITY_KEYS = {"id", "attributesType", "attributes", "content", "activityState", "startDate", "endDate",
                 "dismissalDate"}
STATES = {"pending", "active", "stale", "ended", "dismissed"}
EVENTS = {"scheduled", "started", "updated", "paused", "resumed", "extended", "stale", "timerFinished", "ended",
          "dismissed"}
END_REASONS = {"request", "lifetimeLimit"}
FOUR_HOURS = timedelta(hours=4)
MS = timedelta(milliseconds=1)


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------
def out_date(value: Any, what: str = "date") -> datetime:
    """Parse a date written by the server, which must be UTC with exactly milliseconds."""
    assert isinstance(value, str) and OUT_DATE_RE.match(value), \
        f"{what}: expected 'YYYY-MM-DDTHH:MM:SS.mmmZ', got {value!r}"
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def near(a: datetime, b: datetime, tol: float = 5.0) -> bool:
    return abs((a - b).total_seconds()) <= tol


def check_activity(a: dict) -> dict:
    """Validate the activity object shape of PROTOCOL.md; returns it."""
    assert isinstance(a, dict), a
    missing = ACTIVITY_KEYS - a.keys()
    assert not missing, f"activity lacks {missing}: {a}"
    assert isinstance(a["id"], str) and a["id"], a
    assert a["attributesType"] == "workout", a
    assert a["attributes"].get("workout") in ("jogging", "aerobics", "yoga"), a
    c = a["content"]
    assert isinstance(c, dict) and {"state", "staleDate", "relevanceScore"} <= c.keys(), f"content: {c}"
    t = c["state"]["workoutTimer"]
    start, end = out_date(t["start"], "workoutTimer.start"), out_date(t["end"], "workoutTimer.end")
    assert end >= start, t
    if c["staleDate"] is not None:
        out_date(c["staleDate"], "staleDate")
    assert isinstance(c["relevanceScore"], (int, float)) and not isinstance(c["relevanceScore"], bool), c
    if c["state"].get("pausedAt") is not None:
        out_date(c["state"]["pausedAt"], "content.state.pausedAt")
    assert a["activityState"] in STATES, a
    out_date(a["startDate"], "startDate")
    if a["activityState"] in ("pending", "active", "stale"):
        assert a["endDate"] is None and a["dismissalDate"] is None, a
        assert a.get("endReason") is None, f"endReason before the end: {a}"
    else:
        out_date(a["endDate"], "endDate")
        out_date(a["dismissalDate"], "dismissalDate")
        assert a.get("endReason") in END_REASONS, f"ended activity without a valid endReason: {a}"
    return a


def timer(a: dict) -> tuple[datetime, datetime]:
    t = a["content"]["state"]["workoutTimer"]
    return out_date(t["start"]), out_date(t["end"])


def check_event(m: dict, event: str, activity_id: str | None = None) -> dict:
    assert m["type"] == "activity", m
    assert m["event"] in EVENTS, m
    assert m["event"] == event, f"expected event {event!r}, got {m}"
    assert is_int(m["sequence"]), m
    out_date(m["serverTime"], "serverTime")
    check_activity(m["activity"])
    if activity_id is not None:
        assert m["activity"]["id"] == activity_id, m
    return m


def check_snapshot(m: dict) -> dict:
    assert m["type"] == "snapshot", m
    out_date(m["serverTime"], "serverTime")
    assert is_int(m["sequence"]) and m["sequence"] >= 0, m
    assert isinstance(m["activities"], list), m
    for a in m["activities"]:
        check_activity(a)
        assert a["activityState"] != "dismissed", m
    return m


def check_error(m: dict, code: str, field: str | tuple[str, ...] | None = None, request_id: Any = None) -> dict:
    assert m["type"] == "error", f"expected an error {code!r}, got {m}"
    assert m.get("code") == code, f"expected code {code!r}, got {m}"
    assert isinstance(m.get("message"), str) and m["message"].strip(), f"error without a message: {m}"
    if field is not None:
        fields = (field,) if isinstance(field, str) else field
        assert m.get("field") in fields, f"expected field in {fields}, got {m}"
        assert any(f in m["message"] for f in fields) or m.get("field") in fields, m
    if request_id is not None:
        assert m.get("requestId") == request_id and type(m.get("requestId")) is type(request_id), \
            f"requestId {request_id!r} not echoed unchanged: {m}"
    return m


def start_msg(workout: Any = "jogging", duration: Any = 70, rid: Any = "r-start", **extra) -> dict:
    msg = {"type": "start", "requestId": rid, "attributes": {"workout": workout}}
    if duration is not None:
        msg["durationSeconds"] = duration
    msg.update(extra)
    return msg


async def start_activity(ws, observers=(), **kw) -> tuple[dict, dict]:
    """Send a start on `ws`; return (ack, started event). Observers must receive the same event."""
    msg = start_msg(**kw)
    await send_json(ws, msg)
    got = await collect_non_ticks(ws, 2)
    acks = [m for m in got if m["type"] == "ack"]
    events = [m for m in got if m["type"] == "activity"]
    assert len(acks) == 1 and len(events) == 1, f"expected ack + activity/started, got {got}"
    ack, ev = acks[0], events[0]
    assert ack["requestId"] == msg["requestId"], ack
    assert isinstance(ack.get("activityId"), str) and ack["activityId"], ack
    check_event(ev, "started", ack["activityId"])
    for o in observers:
        ev_o = await recv_non_tick(o)
        check_event(ev_o, "started", ack["activityId"])
        assert ev_o["sequence"] == ev["sequence"] and ev_o["activity"] == ev["activity"], (ev, ev_o)
    return ack, ev


async def list_snapshot(ws, rid: Any = "r-list") -> dict:
    m = await request(ws, {"type": "list", "requestId": rid})
    check_snapshot(m)
    assert m.get("requestId") == rid, m
    return m
