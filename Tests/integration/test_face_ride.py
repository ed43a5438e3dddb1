"""A new user's declaration (Tests/fixtures/declared-ride: a required `eta: Date` first, an optional
`pickupWindow: ClosedRange<Date>?` after it, a nested driver, an opaque `rideId: UUID`) through `kinds new`
and the server: the required date leads everywhere and is kind.json's `countdown`; a start without the optional
range still shows a time in compact, minimal and small; labels are never cut, only values ellipsise."""
from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta, timezone

from face_support import MEASURE, first
from support import get_json
from support import iso_ms as iso
from test_page import browser  # noqa: F401 (a fixture)
from wsclient import connect, recv_until, request, run

RIDE = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "declared-ride" / "Attributes.swift"


def start_ride(ws_url: str, now: datetime) -> str:
    async def go():
        async with connect(ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "r", "attributesType": "ride",
                                     "attributes": {"rideId": "6F9619FF-8B86-D011-B42D-00C04FC964FF",
                                                    "pickupAddress": "1 Infinite Loop, Cupertino", "tier": 2},
                                     "content": {"state": {"eta": iso(now + timedelta(minutes=9)), "status": "enRoute",
                                                           "driver": {"name": "María José Fernández", "rating": 4.93,
                                                                      "vehicle": {"make": "Toyota", "model": "Prius Prime Limited",
                                                                                  "color": "Silver"}}}}})
            assert ack["type"] == "ack", ack
            return ack["activityId"]
    return run(go())


def test_kinds_new_leads_with_the_required_date_and_no_presentation_is_empty(tmp_path, start_server, browser):
    from conftest import liveactivity_bin
    folder = tmp_path / "kinds" / "ride"
    out = subprocess.run([str(liveactivity_bin()), "kinds", "new", str(folder), "--from", str(RIDE)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    kind = json.loads((folder / "kind.json").read_text())
    assert kind.get("countdown") == "eta", kind
    # The Int-raw `Tier` is labelled by its cases and sent as the app's numbers, as without a kind.json.
    assert kind["enums"]["tier"] == [{"value": "standard", "rawValue": 1, "label": "Standard", "sentAs": "rawValue"},
                                     {"value": "xl", "rawValue": 2, "label": "XL", "sentAs": "rawValue"}], kind["enums"]
    for presentation in ("lock-screen", "compact", "minimal", "expanded", "small"):
        text = (folder / f"{presentation}.html").read_text()
        assert 'data-countdown="eta"' in text, presentation
        if "pickupWindow" in text:
            assert text.index('data-countdown="eta"') < text.index("pickupWindow"), presentation
    srv = start_server("--kinds", str(folder.parent))
    aid = start_ride(srv.ws_url, datetime.now(timezone.utc))
    assert get_json(f"{srv.url}/api/activities/{aid}")["attributes"]["tier"] == 2
    for presentation in ("compact", "minimal", "small"):
        browser.get(f"{srv.url}/activities/{aid}/render/{presentation}?theme=light")
        assert browser.find_elements("css selector", '.la-frame [data-countdown="eta"]'), presentation
        measured = browser.execute_script(MEASURE, first(browser, "main"))
        assert measured["cut"] == [] and measured["texts"], (presentation, measured)


def test_the_page_labels_acronyms_as_the_server_does():
    """Public/js/kinds/schema-form.js fieldLabel writes the well-known acronyms in capitals, as Words.swift does."""
    import shutil
    script = ("import { fieldLabel } from '" + str(RIDE.parents[3] / "Public/js/kinds/schema-form.js") + "';"
              "console.log(JSON.stringify(['eta', 'rideId', 'xl', 'etaURL', 'identity', 'in_progress'].map(fieldLabel)));")
    out = subprocess.run([shutil.which("node"), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["ETA", "Ride ID", "XL", "ETA URL", "Identity", "In progress"]


def test_labels_are_never_cut_and_identifiers_come_last(tmp_path, start_server, browser):
    """A long one-line driver ("María José Fernández · 4.93 · Toyota · …") ellipsises its value, never its label;
    the UUID comes after the address."""
    import shutil
    (tmp_path / "kinds" / "ride").mkdir(parents=True)
    shutil.copy(RIDE, tmp_path / "kinds" / "ride" / "Attributes.swift")
    (tmp_path / "kinds" / "ride" / "kind.json").write_text('{"name": "ride"}')
    srv = start_server("--kinds", str(tmp_path / "kinds"))
    aid = start_ride(srv.ws_url, datetime.now(timezone.utc))
    for presentation in ("lock-screen", "expanded"):
        browser.get(f"{srv.url}/activities/{aid}/render/{presentation}?theme=light")
        labels = browser.execute_script(
            "return [...document.querySelectorAll('.la-frame .label.secondary')].filter((e) => e.offsetWidth > 0)"
            ".map((e) => [e.textContent, e.scrollWidth <= e.clientWidth + 1]);")
        assert labels and all(whole for _, whole in labels), (presentation, labels)
        assert "Driver" in [text for text, _ in labels], (presentation, labels)
        measured = browser.execute_script(MEASURE, first(browser, "main"))
        assert measured["cut"] == [], (presentation, measured["cut"])
        if presentation == "lock-screen":
            texts = measured["texts"]
            assert "Pickup address" in texts, texts
            if "Ride ID" in texts:
                assert texts.index("Pickup address") < texts.index("Ride ID"), texts


GAME = """import ActivityKit
import Foundation

struct GameScoreAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var lastPlay: Play
        var homeScore: Int
        var clock: ClosedRange<Date>
    }

    enum Side: String, Codable, Hashable { case home, away }

    enum Play: Codable, Hashable {
        case kickoff
        case score(team: Side, points: Int, player: String)
    }

    var homeTeam: String
}
"""


def test_a_long_status_wraps_to_a_second_line_rather_than_being_cut(tmp_path, start_server, browser):
    """A keyed enum's status with three associated values ("Score · Team Home · Points 3 · Player Jonathan
    Kuminga") is wider than the Lock Screen: it takes a second line, whole, on the Lock Screen and in the expanded
    island (it was cut to "… · Player…"). From the new-user trial."""
    (tmp_path / "kinds" / "game").mkdir(parents=True)
    (tmp_path / "kinds" / "game" / "Attributes.swift").write_text(GAME)
    srv = start_server("--kinds", str(tmp_path / "kinds"))
    now = datetime.now(timezone.utc)

    async def go():
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "g", "attributesType": "game",
                                     "attributes": {"homeTeam": "Golden State Warriors"},
                                     "content": {"state": {"lastPlay": {"score": {"team": "home", "points": 3,
                                                                                  "player": "Jonathan Kuminga"}},
                                                           "homeScore": 98,
                                                           "clock": {"start": iso(now), "end": iso(now + timedelta(minutes=12))}}}})
            assert ack["type"] == "ack", ack
            return ack["activityId"]
    aid = run(go())
    for presentation in ("lock-screen", "expanded"):
        browser.get(f"{srv.url}/activities/{aid}/render/{presentation}?theme=light")
        headline = first(browser, ".la-frame .label.headline")
        assert headline.text.replace("\n", " ") == "Score · Team Home · Points 3 · Player Jonathan Kuminga", headline.text
        whole = browser.execute_script("const e = arguments[0]; return [e.scrollWidth <= e.clientWidth + 1, "
                                       "e.scrollHeight <= e.clientHeight + 1, e.getBoundingClientRect().height];", headline)
        assert whole[0] and whole[1] and whole[2] > 30, (presentation, whole)  # two lines of 20 px, nothing hidden
