"""Every Codable shape real declarations use, over the wire (issue 27, item 4): a kind folder whose
`Attributes.swift` has an enum without a raw type (Swift 5.5's `{"case": {…}}`), `[String: T]`, `[Int: T]` and
flat-array dictionaries, `UUID`, `Decimal`, sized integers and a `let` with a default value, started by an
APNs push-to-start and updated by pushes. Verdicts are JSONDecoder's (proven by DecoderDifferentialTests); here
they reach the sender, the store and the schema endpoint. The folder has no kind.json: its name is the wire name.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from push_helpers import http_push, push_to_start_token
from support import get_json

REPO = Path(__file__).resolve().parents[2]
SHAPES = REPO / "Tests" / "fixtures" / "decoder-differential" / "EveryShape.swift"
ORDER_ID = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"


@pytest.fixture
def shapes(start_server, tmp_path):
    folder = tmp_path / "kinds" / "shapes"
    folder.mkdir(parents=True)
    (folder / "Attributes.swift").write_text(SHAPES.read_text())
    return start_server("--kinds", str(tmp_path / "kinds"))


def test_every_shape_over_apns_pushes(shapes):
    srv = shapes
    kinds = {k["name"]: k for k in get_json(f"{srv.url}/kinds")["kinds"]}
    assert "shapes" in kinds and "ShapesAttributes" in kinds["shapes"]["swiftNames"], kinds.keys()
    state = {"stage": {"late": {"minutes": 12, "reason": "traffic"}}, "tips": {"ann": 1.5}, "seats": {"1": "window"},
             "counts": ["small", 2], "tiny": -5, "ulong": 7, "count": 3}
    ts = int(time.time())
    start = {"aps": {"timestamp": ts, "event": "start", "attributes-type": "ShapesAttributes",
                     "attributes": {"order_id": ORDER_ID, "price": 12.5, "code": 40, "version": 9},
                     "content-state": state, "alert": {"title": "Order", "body": "placed"}}}
    r = http_push(srv.url, push_to_start_token(srv), start)
    assert r.status == 200 and r.verdict == "applied", (r.headers, r.body)
    assert "version" in r.headers.get("liveactivity-warning", ""), r.headers  # a let with a default: not decoded
    aid = r.headers["liveactivity-activity-id"]
    activity = get_json(f"{srv.url}/api/activities/{aid}")
    assert activity["attributesType"] == "shapes"
    assert activity["attributes"] == {"order_id": ORDER_ID, "price": 12.5, "code": 40}
    assert activity["content"]["state"]["stage"] == {"late": {"minutes": 12, "reason": "traffic"}}
    assert activity["content"]["state"]["seats"] == {"1": "window"} and activity["content"]["state"]["counts"] == ["small", 2]
    token = activity["pushToken"]

    def update(n: int, content_state: dict):
        return http_push(srv.url, token, {"aps": {"timestamp": ts + n, "event": "update", "content-state": content_state}})

    cases = [
        ({**state, "stage": {}}, "typeMismatch Stage at stage"),
        ({**state, "stage": {"moved": {"_0": "Main St"}}}, 'keyNotFound "_1" at stage.moved'),
        ({**state, "seats": {"one": "x"}}, "typeMismatch Int at seats.one"),
        ({**state, "counts": ["small"]}, "dataCorrupted"),
        ({**state, "tiny": 200}, "dataCorrupted"),
        ({**state, "stage": {"placed": None}}, "valueNotFound"),
    ]
    for n, (content_state, words) in enumerate(cases, start=1):
        r = update(n, content_state)
        assert r.status == 200 and r.verdict == "dropped", (content_state, r.headers)
        assert words in r.headers["liveactivity-detail"], (words, r.headers["liveactivity-detail"])
    r = update(20, {**state, "stage": {"handedOver": {"to": {"name": "Bo", "id": ORDER_ID}}}})
    assert r.verdict == "applied", r.headers
    assert get_json(f"{srv.url}/api/activities/{aid}")["content"]["state"]["stage"] == {"handedOver": {"to": {"name": "Bo", "id": ORDER_ID}}}

    schema = get_json(f"{srv.url}/kinds/shapes/schema?form=codable")
    stage = schema["contentState"]["$defs"]["ShapesAttributes.Stage"]
    assert [list(c["properties"]) for c in stage["oneOf"]] == [["placed"], ["late"], ["moved"], ["handedOver"]]
    assert schema["attributes"]["properties"]["order_id"]["format"] == "uuid"


def test_a_64_bit_integer_beyond_2_53_is_kept_exactly_through_the_store(start_server, tmp_path):
    """`Int64` 9007199254740993 and `UInt64` 18446744073709551615 come back digit for digit from the API, after a
    restart on the durable store too (they were kept as the nearest Double, 9007199254740992), and 2^63 in the
    `Int64` is dropped as JSONDecoder drops it. Python reads JSON integers exactly, so these compare the digits."""
    folder = tmp_path / "kinds" / "shapes"
    folder.mkdir(parents=True)
    (folder / "Attributes.swift").write_text(SHAPES.read_text())
    cwd = tmp_path / "srv"
    cwd.mkdir()
    srv = start_server("--kinds", str(tmp_path / "kinds"), cwd=cwd)
    state = {"stage": {"placed": {}}, "tips": {}, "seats": {}, "counts": [], "tiny": 1, "count": 3,
             "large": 9007199254740993, "ulong": 18446744073709551615}
    ts = int(time.time())
    r = http_push(srv.url, push_to_start_token(srv), {"aps": {
        "timestamp": ts, "event": "start", "attributes-type": "ShapesAttributes",
        "attributes": {"order_id": ORDER_ID, "price": 12.5, "code": 40}, "content-state": state,
        "alert": {"title": "Order", "body": "placed"}}})
    assert r.status == 200 and r.verdict == "applied", (r.headers, r.body)
    aid = r.headers["liveactivity-activity-id"]
    kept = get_json(f"{srv.url}/api/activities/{aid}")["content"]["state"]
    assert (kept["large"], kept["ulong"]) == (9007199254740993, 18446744073709551615)
    token = get_json(f"{srv.url}/api/activities/{aid}")["pushToken"]
    r = http_push(srv.url, token, {"aps": {"timestamp": ts + 1, "event": "update", "content-state": {**state, "large": 2**63}}})
    assert r.verdict == "dropped" and "9223372036854775808" in r.headers["liveactivity-detail"], r.headers
    srv.stop()
    again = start_server("--kinds", str(tmp_path / "kinds"), cwd=cwd)
    kept = get_json(f"{again.url}/api/activities/{aid}")["content"]["state"]
    assert (kept["large"], kept["ulong"]) == (9007199254740993, 18446744073709551615)


ACCENTED = """import ActivityKit
import Foundation

struct TrainAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var heureDArrivée: Date
        var 名前: String
    }
    var ligne: String
}
"""


def test_a_verdict_header_names_a_field_in_any_script(start_server, tmp_path):
    """A push refused for a field named in accented or CJK letters names it in `liveactivity-detail`, escaped as
    Swift writes it (`\\u{540D}\\u{524D}`), where those characters were dropped ("typeMismatch String at  (").
    From the second new-user trial."""
    folder = tmp_path / "kinds" / "train"
    folder.mkdir(parents=True)
    (folder / "Attributes.swift").write_text(ACCENTED)
    srv = start_server("--kinds", str(tmp_path / "kinds"))
    ts = int(time.time())
    start = {"aps": {"timestamp": ts, "event": "start", "attributes-type": "TrainAttributes",
                     "attributes": {"ligne": "TGV"}, "content-state": {"heureDArrivée": ts + 600, "名前": 5},
                     "alert": {"title": "Train", "body": "starts"}}}
    r = http_push(srv.url, push_to_start_token(srv), start)
    assert r.status == 200 and r.verdict == "dropped", (r.status, r.headers)  # APNs takes it; the app cannot decode it
    detail = r.headers.get("liveactivity-detail", "")
    assert r"\u{540D}\u{524D}" in detail and "typeMismatch String" in detail, r.headers
