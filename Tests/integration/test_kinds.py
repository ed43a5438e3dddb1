"""Activity kinds as folders of data (issue 17, the parts before the declaration reader and Mustache):

- `GET /kinds` lists the built-in kinds from Kinds/ (names, Swift names, countdown, labels and icons,
  presentations); `serve --kinds DIR` adds folders, and a bad folder is skipped with an error naming its
  file and line while the others keep working.
- The emoji kind's static renderings show its name and emoji (not "Workout workout"), its share page is
  titled by its name; the fifth presentation, `small`, renders for both kinds and is in the gallery.
- The page's render context (Public/js/render-context.js) gives the same objects as the server's
  (Tests/fixtures/render-context/cases.json, which the Swift unit tests check too).
- The CLI: `kinds list`, and `start KIND --attributes JSON --state JSON`.
"""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from support import iso_ms0 as iso
from support import http_text, liveactivity_bin
from wsclient import connect, recv_until, request, run

REPO = Path(__file__).resolve().parents[2]
PRESENTATIONS = ["lock-screen", "compact", "minimal", "expanded", "small"]


def get(url: str) -> tuple[int, str]:
    return http_text(url, timeout=5)


def visible_text(document: str) -> str:
    body = re.sub(r"(?is)<(style|script)\b.*?</\1>", " ", document)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"(?s)<[^>]+>", " ", body))).strip()


def start_emoji(server, name: str = "Morning run", emoji: str = "🏃") -> str:
    async def go() -> str:
        now = datetime.now(timezone.utc)
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "e", "attributesType": "emoji",
                                     "attributes": {"startTime": iso(now), "endTime": iso(now + timedelta(hours=1)),
                                                    "name": name},
                                     "content": {"state": {"emoji": emoji}, "relevanceScore": 0}})
            assert ack["type"] == "ack", ack
            return ack["activityId"]
    return run(go())


def test_kinds_route_lists_the_built_in_kinds_from_their_folders(server):
    status, body = get(f"{server.url}/kinds")
    assert status == 200
    kinds = {k["name"]: k for k in json.loads(body)["kinds"]}
    assert list(kinds) == ["workout", "emoji"]
    workout = kinds["workout"]
    assert workout["countdown"] == "workoutTimer" and workout["durationShortcut"] is True
    assert "WorkoutWidgetAttributes" in workout["swiftNames"]
    assert [(e["value"], e["label"], e["icon"]) for e in workout["enums"]["workout"]] == [
        ("jogging", "Jogging", "jogging"), ("aerobics", "Aerobics", "aerobics"), ("yoga", "Yoga", "yoga")]
    assert workout["presentations"] == PRESENTATIONS
    assert kinds["emoji"]["title"] == "{{name}}" and kinds["emoji"]["image"] == "image"
    assert kinds["emoji"]["countdown"] is None and kinds["emoji"]["presentations"] == PRESENTATIONS


def test_emoji_renderings_show_its_name_and_emoji(server):
    activity = start_emoji(server)
    for presentation in PRESENTATIONS:
        status, document = get(f"{server.url}/activities/{activity}/render/{presentation}")
        assert status == 200, presentation
        title = re.search(r"<title>(.*?)</title>", document).group(1)
        assert title.startswith("Morning run · "), title
        assert "Workout" not in title and "workout" not in title
        main = re.search(r"(?s)<main.*?</main>", document).group(0)
        assert "Morning run" in main, presentation  # in the text or the accessible name
        if presentation != "minimal":  # minimal shows the thumbnail alone, as on the page
            text = visible_text(main)
            assert "🏃" in text, (presentation, text)
        assert 'data-kind="emoji"' in main
        assert "<svg" in main  # the fallback icon (no image URL, so no thumbnail), inline
    # the share page is named after the activity too
    async def share() -> str:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            reply = await request(ws, {"type": "share", "requestId": "s", "activityId": activity},
                                  lambda m: m.get("requestId") == "s")
            assert reply["type"] == "shares", reply
            return reply["shares"][0]["url"]
    url = run(share())
    status, document = get(server.url + url)
    assert status == 200 and "<title>Morning run, shared</title>" in document
    assert "🏃" in visible_text(document)


def test_small_presentation_renders_and_is_in_the_gallery(server):
    async def go() -> str:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "y", "attributes": {"workout": "yoga"},
                                     "durationSeconds": 600})
            return ack["activityId"]
    activity = run(go())
    status, document = get(f"{server.url}/activities/{activity}/render/small")
    assert status == 200
    assert "<title>Yoga workout · Small (Watch, CarPlay)</title>" in document
    text = visible_text(re.search(r"(?s)<main.*?</main>", document).group(0))
    assert "Yoga" in text and re.search(r"\b(10:00|9:5\d)\b", text), text
    status, gallery = get(f"{server.url}/gallery")
    assert status == 200 and 'id="yoga-active-small"' in gallery and "Small (Watch, CarPlay)" in gallery


def test_render_context_script_matches_the_shared_cases():
    """The JavaScript builder against the cases the Swift builder is unit-tested with (equal outputs)."""
    node = shutil.which("node")
    assert node, "node is needed to run the page's modules"
    script = (
        "import { readFileSync } from 'node:fs';"
        f"import {{ buildRenderContext }} from '{REPO / 'Public/js/render-context.js'}';"
        f"const cases = JSON.parse(readFileSync('{REPO / 'Tests/fixtures/render-context/cases.json'}', 'utf8'));"
        f"const kind = (n) => typeof n === 'string' ? JSON.parse(readFileSync(`{REPO}/Kinds/${{n}}/kind.json`, 'utf8')) : n;"
        "const bad = cases.filter((c) => JSON.stringify(buildRenderContext(c.activity, kind(c.kind), c.nowMs, c.offsetMinutes))"
        " !== JSON.stringify(c.expected)).map((c) => c.name);"
        "console.log(JSON.stringify({count: cases.length, bad}));"
    )
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["count"] >= 6 and result["bad"] == [], result


def test_extra_kind_folders_load_and_bad_ones_are_skipped(start_server, tmp_path):
    extra = tmp_path / "kinds"
    (extra / "broken").mkdir(parents=True)
    (extra / "broken" / "kind.json").write_text('{\n  "name": "broken",\n  oops\n}\n')
    (extra / "interval").mkdir()
    (extra / "interval" / "kind.json").write_text('{"name": "interval", "countdown": "interval"}')
    (extra / "workout").mkdir()  # a second "workout": the built-in one stays
    (extra / "workout" / "kind.json").write_text('{"name": "workout"}')
    shutil.copy(REPO / "Kinds" / "workout" / "Attributes.swift", extra / "workout")
    srv = start_server("--kinds", str(extra))
    status, body = get(f"{srv.url}/kinds")
    assert status == 200 and [k["name"] for k in json.loads(body)["kinds"]] == ["workout", "emoji"]
    import time
    deadline = time.monotonic() + 5  # standard error is drained on a thread of its own: wait for the lines
    while len(re.findall("kind folder skipped", "\n".join(srv.stderr_lines))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    log = "\n".join(srv.stderr_lines)
    assert re.search(r"kind folder skipped.*broken/kind\.json:3: not valid JSON", log), log
    assert re.search(r"kind folder skipped.*interval.*no Attributes\.swift", log), log
    assert re.search(r"kind folder skipped.*already loaded", log), log
    assert start_emoji(srv)  # the others keep working


def test_cli_lists_kinds_and_starts_any_kind(server):
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(liveactivity_bin()), *args, "--server", server.ws_url], capture_output=True,
                              text=True, timeout=20, stdin=subprocess.DEVNULL)
    listed = cli("kinds", "list")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert rows[0][0] == "NAME" and [r[0] for r in rows[1:]] == ["workout", "emoji"]
    assert rows[1][2] == "workoutTimer" and rows[1][3] == ",".join(PRESENTATIONS)
    as_json = cli("kinds", "list", "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["kinds"][1]["name"] == "emoji"

    now = datetime.now(timezone.utc)
    attributes = json.dumps({"name": "Tea", "startTime": iso(now), "endTime": iso(now + timedelta(minutes=5))})
    started = cli("start", "emoji", "--attributes", attributes, "--state", '{"emoji":"🍵"}')
    assert started.returncode == 0, started.stderr
    activity = started.stdout.strip()
    status, document = get(f"{server.url}/activities/{activity}/render/lock-screen")
    assert status == 200 and "Tea" in visible_text(document) and "🍵" in visible_text(document)
    # Any kind is updated with --state; --duration only where the kind has the shortcut.
    updated = cli("update", activity, "--state", '{"emoji":"🍜"}')
    assert updated.returncode == 0, updated.stderr
    status, document = get(f"{server.url}/activities/{activity}/render/lock-screen")
    assert status == 200 and "🍜" in visible_text(document)
    shortcut = cli("update", activity, "--duration", "30s")
    assert shortcut.returncode == 1 and "emoji activities have no countdown; send content" in shortcut.stderr, shortcut.stderr
    both = cli("update", activity, "--duration", "30s", "--state", "{}")
    assert both.returncode == 2 and "give --state or --duration, not both" in both.stderr, both.stderr
    workout = cli("start", "workout", "--attributes", '{"workout":"yoga"}', "--duration", "60")
    assert workout.returncode == 0, workout.stderr
    refused = cli("start", "emoji", "--attributes", attributes, "--state", '{"emoji":""}')
    assert refused.returncode == 1 and "content.state.emoji" in refused.stderr, refused.stderr
    usage = cli("start", "emoji", "--attributes", "[1]", "--state", "{}")
    assert usage.returncode == 2 and "--attributes" in usage.stderr
    unknown = cli("kinds", "show")
    assert unknown.returncode == 2 and "show" in unknown.stderr


def test_sighup_reloads_the_kind_folders(start_server, tmp_path):
    import signal
    import time
    public = tmp_path / "Public"
    shutil.copytree(REPO / "Public", public)
    shutil.copytree(REPO / "Kinds", tmp_path / "Kinds")  # the built-in kinds beside --public
    srv = start_server(public=public)
    kinds = {k["name"]: k for k in json.loads(get(f"{srv.url}/kinds")[1])["kinds"]}
    assert kinds["emoji"]["label"] == "Emoji" and "small" in kinds["emoji"]["presentations"]
    emoji_json = tmp_path / "Kinds" / "emoji" / "kind.json"
    emoji_json.write_text(emoji_json.read_text().replace('"label": "Emoji"', '"label": "Emoji (reloaded)"'))
    (tmp_path / "Kinds" / "emoji" / "small.html").unlink()
    srv.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while True:
        kinds = {k["name"]: k for k in json.loads(get(f"{srv.url}/kinds")[1])["kinds"]}
        if kinds["emoji"]["label"] == "Emoji (reloaded)" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert kinds["emoji"]["label"] == "Emoji (reloaded)"
    # small.html is gone: the small presentation is the generated layout now, served to the page as well
    status, small = get(f"{srv.url}/kinds/emoji/templates/small")
    assert status == 200 and "Generated from the declaration" in small, small
    assert srv.alive()
    # a broken file on reload: logged, and the kind's last good version stands in until it is mended
    # (its activities and pushes go on working); the server goes on
    emoji_json.write_text("{ nope")
    srv.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while "kind folder skipped" not in "\n".join(srv.stderr_lines) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert re.search(r"kind folder skipped.*emoji/kind\.json:1: not valid JSON", "\n".join(srv.stderr_lines))
    assert start_emoji(srv) and srv.alive()
    kinds = {k["name"]: k for k in json.loads(get(f"{srv.url}/kinds")[1])["kinds"]}
    assert kinds["emoji"]["label"] == "Emoji (reloaded)"


def test_a_kinds_json_schemas_follow_its_declaration_in_both_forms(server):
    from jsonschema import Draft202012Validator
    status, body = get(f"{server.url}/kinds/workout/schema")
    assert status == 200, body
    protocol = json.loads(body)
    assert protocol["attributesType"] == "WorkoutWidgetAttributes"
    attributes = Draft202012Validator(protocol["attributes"])
    state = Draft202012Validator(protocol["contentState"])
    # The protocol's form: a workout by name (kind.json) or raw value, ISO-8601 ranges.
    assert attributes.is_valid({"workout": "yoga"}) and attributes.is_valid({"workout": 2})
    assert not attributes.is_valid({"workout": "sprint"}) and not attributes.is_valid({})
    assert state.is_valid({"workoutTimer": {"start": "2026-12-01T10:00:00Z", "end": "2026-12-01T10:01:10Z"}})
    assert not state.is_valid({"workoutTimer": [0, 70]})
    # Swift's Codable form, as APNs pushes carry it: raw values only, dates as seconds since 2001.
    status, body = get(f"{server.url}/kinds/workout/schema?form=codable")
    codable = json.loads(body)
    assert status == 200
    assert Draft202012Validator(codable["attributes"]).is_valid({"workout": 2})
    assert not Draft202012Validator(codable["attributes"]).is_valid({"workout": "yoga"})
    assert Draft202012Validator(codable["contentState"]).is_valid({"workoutTimer": [786000000, 786000070]})
    # Bad requests name what is wrong.
    # Bad requests name what is wrong, the message starting with the field as every error's does (the new-user
    # trial, s22: "form must be …" and "no kind named …").
    status, body = get(f"{server.url}/kinds/workout/schema?form=yaml")
    assert status == 400 and json.loads(body)["field"] == "form", body
    assert json.loads(body)["message"] == 'form: must be protocol or codable, got "yaml"', body
    status, body = get(f"{server.url}/kinds/nope/schema")
    assert status == 404 and json.loads(body)["field"] == "name", body
    assert json.loads(body)["message"].startswith('name: no kind named "nope"'), body
