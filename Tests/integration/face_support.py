"""Helpers for the tests of issue 27's presentation half (the generated layout, the frame, data-countdown):
the three public-looking declarations under Tests/fixtures/kinds, an activity of each, and what the browser
measures of a rendering (values visible, nothing cut mid-line)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from support import iso_ms as iso
from wsclient import connect, recv_until, request

REPO = Path(__file__).resolve().parents[2]
FIXTURE_KINDS = REPO / "Tests" / "fixtures" / "kinds"
PRESENTATIONS = ["lock-screen", "compact", "minimal", "expanded", "small"]


def payloads(now: datetime) -> dict[str, dict]:
    """One start message body per declared kind: (attributesType, attributes, state)."""
    return {
        "food-delivery": {
            "attributes": {"restaurantName": "Luigi's Trattoria", "orderNumber": "A-1042",
                           "items": ["Margherita", "Pepperoni", "Garlic bread", "Tiramisu"], "totalPrice": 38.5},
            "state": {"status": "Your courier is on the way", "estimatedDeliveryTime": iso(now + timedelta(minutes=18)),
                      "courierName": "Sam"},
        },
        "pizza-delivery": {
            "attributes": {"numberOfPizzas": 3, "totalAmount": "$42.90", "orderNumber": "PZ-77"},
            "state": {"driverName": "Bill James",
                      "deliveryTimer": {"start": iso(now - timedelta(minutes=5)), "end": iso(now + timedelta(minutes=25))}},
        },
        "sports-results": {
            "attributes": {"meetName": "County Championships", "venue": "Riverside High", "sport": "Track & field"},
            "state": {"eventStatus": "in_progress", "currentEvent": None,
                      "finishers": [{"place": 1, "athlete": "Maya Lopez", "school": "Riverside", "mark": "12.31"},
                                    {"place": 2, "athlete": "Jordan Smith", "school": "Eastlake", "mark": None},
                                    {"place": 3, "athlete": "Priya Patel", "school": "Northview", "mark": "12.58"}],
                      "teamScores": None, "heat": 2, "windSpeed": 1.2, "isFinal": False,
                      "lastUpdated": iso(now - timedelta(minutes=3))},
        },
    }


async def start_all(ws_url: str, now: datetime) -> dict[str, str]:
    """Starts one activity of each declared kind; their ids by kind."""
    ids = {}
    async with connect(ws_url) as ws:
        await recv_until(ws, lambda m: m["type"] == "snapshot")
        for kind, body in payloads(now).items():
            ack = await request(ws, {"type": "start", "requestId": kind, "attributesType": kind,
                                     "attributes": body["attributes"], "content": {"state": body["state"]}})
            assert ack["type"] == "ack", ack
            ids[kind] = ack["activityId"]
    return ids


# Measured in the browser, for the frame (`.la-frame`) under `arguments[0]`: each visible text element's box
# against the frame's, and whether a text that overflows its box ends in an ellipsis (text-overflow) rather
# than being cut. Returns {frame: {w, h}, cut: [...], texts: [visible texts]}.
MEASURE = """
const root = arguments[0];
const frame = root.matches('.la-frame') ? root : root.querySelector('.la-frame');
if (!frame) return null;
const box = frame.getBoundingClientRect();
const cut = [], texts = [];
for (const el of frame.querySelectorAll('.label, .countdown, .badge, .part')) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) continue;
  const outside = r.right <= box.left + 0.5 || r.left >= box.right - 0.5 || r.bottom <= box.top + 0.5 || r.top >= box.bottom - 0.5;
  if (outside) continue;  // left out whole (a field that did not fit)
  // A struct's part inside an ellipsised value is cut by that value, which is measured itself.
  const holder = el.matches('.part') ? el.parentElement.closest('.label') : null;
  if (holder && getComputedStyle(holder).textOverflow === 'ellipsis') { texts.push(el.textContent); continue; }
  const clipped = r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5 || r.left < box.left - 0.5 || r.right > box.right + 0.5;
  const style = getComputedStyle(el);
  const overflows = el.scrollWidth > el.clientWidth + 1 && style.textOverflow !== 'ellipsis';
  const wraps = style.whiteSpace !== 'nowrap' && el.getClientRects().length > 1;
  if (clipped || overflows || wraps) cut.push({text: el.textContent, clipped, overflows, wraps});
  texts.push(el.textContent);
}
return {frame: {w: box.width, h: box.height}, cut, texts};
"""


# What of each activity's content state must be visible on its Lock Screen: a text, or a date shown as a
# countdown (`[data-countdown=F]`) or as a time of day (`.label.time`).
VISIBLE_STATE = {
    "food-delivery": {"status": "Your courier is on the way", "estimatedDeliveryTime": "countdown",
                                   "courierName": "Sam"},
    "pizza-delivery": {"driverName": "Bill James", "deliveryTimer": "countdown"},
    "sports-results": {"eventStatus": "In progress", "finishers": "Maya Lopez", "heat": "Heat", "windSpeed": "1.2",
                              "isFinal": "No", "lastUpdated": "time"},
}


def first(driver, css: str):
    """The first element matching `css`, or None (for wait_for: no exception while it is not there yet)."""
    found = driver.find_elements("css selector", css)
    return found[0] if found else None
