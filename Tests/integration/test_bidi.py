"""Issue 29 item 8: strings that could spoof the display — bidirectional overrides (U+202E RIGHT-TO-LEFT
OVERRIDE and friends) and NUL — are accepted as iOS accepts them, but rendered isolated, so one activity's text
cannot reorder what follows it: on the dashboard, in static renderings and on share pages each such value is
wrapped in FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE (what `<bdi>` does, usable in attributes too) with
its own isolates balanced, NUL shown as ␀, and each activity's presentation is `unicode-bidi: isolate`. The
push inspector shows the characters escaped (`\\u202e`).

A screenshot of the dashboard goes to Tests/artifacts/bidi-dashboard.png.
"""
from __future__ import annotations

import json
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

from conftest import ARTIFACTS
from test_page import browser, lock_screens, open_dashboard, wait_for  # noqa: F401  (browser is a fixture)
from push_helpers import iso_ms
from wsclient import connect, recv_until, request, run

RLO, PDF, FSI, PDI = "\u202e", "\u202c", "\u2068", "\u2069"
# An override left open and a stray PDI that would close an outer isolate early. (The emoji kind's kind.json
# refuses control characters such as NUL in a name; NUL is checked with bidi.js and BidiIsolation directly.)
SPOOF = f"Invoice {RLO}fdp.exe{PDI} {RLO}end"
ISOLATED = f"{FSI}Invoice {RLO}fdp.exe {RLO}end{PDI}"


def start_spoofing(ws_url: str) -> tuple[str, str]:
    """Starts an emoji activity named SPOOF and shares it; returns (activity id, share token)."""
    async def body():
        now = datetime.now(timezone.utc)
        async with connect(ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributesType": "emoji",
                                     "attributes": {"startTime": iso_ms(now), "endTime": iso_ms(now + timedelta(hours=1)),
                                                    "name": SPOOF},
                                     "content": {"state": {"emoji": "🍵"}}})
            assert ack["type"] == "ack", ack
            made = await request(ws, {"type": "share", "requestId": "sh", "activityId": ack["activityId"], "expiresIn": 600},
                                 lambda m: m.get("requestId") == "sh")
            return ack["activityId"], made["shares"][0]["url"].split("/s/", 1)[1]
    return run(body())


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode("utf-8")


def test_stored_as_sent_but_rendered_isolated_in_static_renderings_and_share_pages(server):
    aid, token = start_spoofing(server.ws_url)
    with urllib.request.urlopen(f"{server.url}/api/activities/{aid}", timeout=5) as r:
        assert json.loads(r.read())["attributes"]["name"] == SPOOF  # accepted and kept as iOS would
    for url in (f"{server.url}/activities/{aid}/render/lock-screen", f"{server.url}/s/{token}"):
        html = get_text(url)
        assert ISOLATED in html, (url, [line for line in html.splitlines() if "Invoice" in line])
        assert SPOOF not in html and "\u0000" not in html, url
        # every override sits inside an isolate of its own
        for index, char in enumerate(html):
            if char == RLO:
                assert html.rfind(FSI, 0, index) > html.rfind(PDI, 0, index), (url, html[max(0, index - 40):index + 40])


def test_the_dashboard_isolates_it_and_the_inspector_shows_it_escaped(server, browser):
    aid, _ = start_spoofing(server.ws_url)
    open_dashboard(browser, server.url)
    wait_for("the activity on the dashboard", lambda: [s.get_attribute("data-activity-id") for s in lock_screens(browser)] == [aid])
    report = browser.execute_script("""
        const found = [];
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          if (!node.data.includes('\\u202e') && !node.data.includes('\\u0000')) continue;
          // every override comes after an isolate initiator not yet closed, and the node closes them all
          let isolated = true, depth = 0;
          for (const c of node.data) {
            if (c === '\\u2068') depth += 1;
            else if (c === '\\u2069') depth -= 1;
            else if (c === '\\u202e' && depth <= 0) isolated = false;
          }
          isolated = isolated && depth === 0;
          const item = node.parentElement.closest('[data-activity-id]');
          found.push({text: node.data, isolated, nul: node.data.includes('\\u0000'),
                      itemBidi: item ? getComputedStyle(item).unicodeBidi : null});
        }
        return found;
    """)
    assert any(entry["itemBidi"] for entry in report), report  # on the lock screen and the island
    for entry in report:
        assert entry["isolated"] and not entry["nul"], entry
        if entry["itemBidi"] is not None:  # inside an activity's presentation (not the Sharing panel's list)
            assert entry["itemBidi"] in ("isolate", "isolate-override", "plaintext"), entry
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "bidi-dashboard.png"))

    browser.get(server.url + "/inspector")
    wait_for("the start recorded", lambda: browser.execute_script(
        "return document.querySelectorAll('#inspections li.inspection').length") >= 1, timeout=10)
    browser.execute_script("""
        for (const li of document.querySelectorAll('#inspections li.inspection')) {
          if (li.textContent.includes('start message')) li.querySelector('button.summary').click();
        }""")
    wait_for("the start's payload shown", lambda: browser.execute_script(
        "return [...document.querySelectorAll('#inspections pre')].some((p) => p.offsetParent !== null)"), timeout=5)
    text = browser.execute_script("return document.body.innerText")
    browser.save_screenshot(str(ARTIFACTS / "bidi-inspector.png"))
    assert RLO not in text and "\u0000" not in text, [line for line in text.splitlines() if "Invoice" in line]
    assert "\\u202e" in text.lower(), [line for line in text.splitlines() if "Invoice" in line]


def test_bidi_js_isolates_and_escapes(server, browser):
    """The browser's rule, word for word the server's (BidiIsolationTests): NUL as ␀, isolates balanced."""
    browser.get(server.url + "/")
    result = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('/js/bidi.js').then((b) => done({
          plain: b.isolated('Tea'), nul: b.isolated('a\\u0000b'), spoof: b.isolated('a\\u202Eb\\u2069c\\u2067d'),
          escaped: b.escapedControls('a\\u202Eb\\u0000')})).catch((e) => done({error: String(e)}));
    """)
    assert result == {"plain": "Tea", "nul": "a\u2400b", "spoof": f"{FSI}a{RLO}bc\u2067d{PDI}{PDI}",
                      "escaped": "a\\u202eb\\u0000"}, result
