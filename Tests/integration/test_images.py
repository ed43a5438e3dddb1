"""Remote images: thumbnails fetched, fitted and cached by the server (issue 7), and the `emoji` kind.

Fixture images are generated here with Pillow and served from a loopback HTTP server (http.server in a
thread): PNG, JPEG, animated GIF, WebP, a 4000x100 panorama, a corrupt file, a 20 MB file, a redirect loop,
a 404, a slow server, a flaky server (503 once) and two URLs with the same last path component.
The liveactivity server runs with `--allow-private-image-hosts` (the fixtures live on 127.0.0.1), except in
the test that checks that private hosts are refused without it.

Checked: `start` is acknowledged at once whatever the image; an `updated` event then carries
`thumbnail: {"1x": "/images/{sha256(url)}@1x.png", …}`; the files exist in the cache folder at 48/96/144 px
and are served with `cache-control: public, max-age=31536000, immutable`; the crop is centred (pixels of
known test patterns); failures keep the fallback (no thumbnail, a logged warning); private hosts are refused
without the flag. The Chromium test sees the fallback icon first, then the thumbnail with its logo overlay.
"""
from __future__ import annotations

import asyncio
import hashlib
import io
import os
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

from support import http_request  # noqa: E402
from support import iso_ms0 as iso  # noqa: E402
from wsclient import connect, recv_until, request, run, send_json  # noqa: E402

RED, GREEN, BLUE = (255, 0, 0), (0, 200, 0), (0, 0, 255)
YELLOW, CYAN, MAGENTA = (255, 220, 0), (0, 220, 220), (220, 0, 220)
SIDE = 48
IMMUTABLE = "public, max-age=31536000, immutable"
ARTIFACTS_DIR = Path(os.environ.get("LIVEACTIVITY_ARTIFACTS", Path(__file__).resolve().parents[2] / "Tests" / "artifacts"))


# -- fixture images ---------------------------------------------------------------------------------

def _encode(image: Image.Image, fmt: str, **kwargs) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **kwargs)
    return out.getvalue()


def _stripes(width: int, height: int, bands: list[tuple[int, tuple[int, int, int]]]) -> Image.Image:
    """Vertical bands: [(right edge x, colour), …] from left to right."""
    image = Image.new("RGB", (width, height))
    left = 0
    for right, colour in bands:
        image.paste(colour, (left, 0, right, height))
        left = right
    return image


def make_fixtures() -> dict[str, bytes]:
    """Path -> body. The centred square of every striped image is yellow on its left, cyan on its right."""
    # 200x100: the centre square is x 50..150.
    centre_png = _stripes(200, 100, [(50, RED), (100, YELLOW), (150, CYAN), (200, BLUE)])
    # 300x200: the centre square is x 50..250.
    centre_jpeg = _stripes(300, 200, [(50, RED), (150, YELLOW), (250, CYAN), (300, BLUE)])
    # 4000x100: scaled to 48 high the centre square is x 1950..2050 of the original: all green.
    panorama = _stripes(4000, 100, [(1950, RED), (2050, GREEN), (4000, BLUE)])
    # Animated GIF: the thumbnail shows the first frame (green), not the second (magenta).
    frames = [Image.new("RGB", (64, 64), GREEN), Image.new("RGB", (64, 64), MAGENTA)]
    gif = io.BytesIO()
    frames[0].save(gif, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    webp = _stripes(120, 120, [(60, YELLOW), (120, CYAN)])
    corrupt = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + os.urandom(2000)
    huge = b"\x89PNG\r\n\x1a\n" + os.urandom(20 * 1024 * 1024)
    return {
        "/img/photo.png": _encode(centre_png, "PNG"),
        "/img/photo.jpg": _encode(centre_jpeg, "JPEG", quality=95),
        "/img/anim.gif": gif.getvalue(),
        "/img/photo.webp": _encode(webp, "WEBP", lossless=True),
        "/img/panorama.png": _encode(panorama, "PNG"),
        "/img/corrupt.png": corrupt,
        "/img/huge.png": huge,
        "/img/text.png": b"this is not an image at all, whatever the name says\n" * 10,
        "/one/200": _encode(Image.new("RGB", (200, 200), RED), "PNG"),
        "/two/200": _encode(Image.new("RGB", (200, 200), BLUE), "PNG"),
        "/flaky.png": _encode(Image.new("RGB", (60, 60), MAGENTA), "PNG"),
    }


class FixtureServer:
    """A loopback HTTP server for the fixture images, with redirects, a 404, a slow and a flaky path."""

    def __init__(self):
        self.bodies = make_fixtures()
        self.requests: list[str] = []
        self.flaky_failures = 1
        self.lock = threading.Lock()
        fixture = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_GET(self):  # noqa: N802 (http.server's name)
                with fixture.lock:
                    fixture.requests.append(self.path)
                path = self.path.split("?", 1)[0]
                if path in ("/loop/a", "/loop/b"):
                    return self._redirect("/loop/b" if path == "/loop/a" else "/loop/a")
                if path.startswith("/hops/"):  # /hops/3 -> /hops/2 -> /hops/1 -> /hops/0 -> the PNG
                    left = int(path.rsplit("/", 1)[1])
                    return self._redirect(f"/hops/{left - 1}" if left > 0 else "/img/photo.png")
                if path == "/delayed.png":  # for the page: the fallback shows first, then the thumbnail
                    time.sleep(4.0)
                    return self._send(200, fixture.bodies["/img/photo.png"], "image/png")
                if path == "/slow.png":
                    time.sleep(20)
                    return self._send(200, fixture.bodies["/img/photo.png"], "image/png")
                if path == "/flaky.png":
                    with fixture.lock:
                        fail = fixture.flaky_failures > 0
                        fixture.flaky_failures -= 1
                    if fail:
                        return self._send(503, b"try later", "text/plain")
                body = fixture.bodies.get(path)
                if body is None:
                    return self._send(404, b"not found", "text/plain")
                return self._send(200, body, "application/octet-stream")

            def _redirect(self, location: str):
                self.send_response(302)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _send(self, status: int, body: bytes, content_type: str):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the server gave up on a too-large or too-slow body, as it should

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def requested(self, prefix: str) -> list[str]:
        with self.lock:
            return [p for p in self.requests if p.startswith(prefix)]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def images():
    server = FixtureServer()
    try:
        yield server
    finally:
        server.close()


# -- helpers ----------------------------------------------------------------------------------------

def key_of(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def emoji_start(rid: str, image: str | None, name: str = "Run", emoji: str = "🏃") -> dict:
    now = datetime.now(timezone.utc)
    attributes = {"startTime": iso(now), "endTime": iso(now + timedelta(hours=1)), "name": name}
    if image is not None:
        attributes["image"] = image
    return {"type": "start", "requestId": rid, "attributesType": "emoji", "attributes": attributes,
            "content": {"state": {"emoji": emoji}, "staleDate": None, "relevanceScore": 0}}


def http_get(url: str) -> tuple[int, dict[str, str], bytes]:
    r = http_request("GET", url, timeout=5)
    return r.status, r.headers, r.body


async def start_all(ws, urls: dict[str, str | None], seen: list[dict] | None = None) -> dict[str, str]:
    """Starts one emoji activity per name; every ack must come at once. Returns name -> activity id.
    Events that arrive meanwhile are appended to `seen`."""
    ids = {}
    for name, url in urls.items():
        began = time.monotonic()
        message = emoji_start(f"start-{name}", url, name=name[:64])
        await send_json(ws, message)
        reply = await recv_until(ws, lambda m: m.get("requestId") == message["requestId"], skipped=seen)
        assert reply["type"] == "ack", reply
        assert time.monotonic() - began < 1.0, f"start of {name} waited on its image"
        ids[name] = reply["activityId"]
    return ids


async def collect_thumbnails(ws, wanted: set[str], timeout: float, seen: list[dict] = ()) -> dict[str, dict]:
    """`updated` events carrying a thumbnail (in `seen`, then live), by activity id, until all `wanted` came
    or `timeout` passed."""
    found: dict[str, dict] = {m["activity"]["id"]: m for m in seen
                              if m["type"] == "activity" and m["event"] == "updated" and m["activity"].get("thumbnail")}
    deadline = time.monotonic() + timeout
    while wanted - found.keys():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            msg = await recv_until(ws, lambda m: m["type"] == "activity", timeout=left)
        except (AssertionError, asyncio.TimeoutError):
            break
        if msg["event"] == "updated" and msg["activity"].get("thumbnail"):
            found[msg["activity"]["id"]] = msg
    return found


def pixel(png: bytes, x: int, y: int) -> tuple[int, int, int]:
    return Image.open(io.BytesIO(png)).convert("RGB").getpixel((x, y))


def near(actual: tuple[int, ...], expected: tuple[int, int, int], tolerance: int = 40) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual[:3], expected))


def cache_dir(server) -> Path:
    return Path(server.cwd) / "data" / "images"


# -- tests ------------------------------------------------------------------------------------------

GOOD = {
    "png": "/img/photo.png",
    "jpeg": "/img/photo.jpg",
    "gif": "/img/anim.gif",
    "webp": "/img/photo.webp",
    "panorama": "/img/panorama.png",
    "three-redirects": "/hops/2",  # /hops/2 -> 1 -> 0 -> photo.png: three redirects, allowed
}
BAD = {
    "corrupt": "/img/corrupt.png",
    "huge": "/img/huge.png",
    "not-an-image": "/img/text.png",
    "redirect-loop": "/loop/a",
    "too-many-redirects": "/hops/5",
    "missing": "/img/missing.png",
    "slow": "/slow.png",
}


def test_thumbnails_sizes_crop_events_and_fallbacks(start_server, images):
    server = start_server("--allow-private-image-hosts")
    urls = {name: images.url(path) for name, path in {**GOOD, **BAD}.items()}
    # Same last path component ("200") from two hosts: two different keys, two different pictures.
    urls["same-name-a"] = images.url("/one/200", host="127.0.0.1")
    urls["same-name-b"] = images.url("/two/200", host="localhost")

    async def body():
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            seen: list[dict] = []
            ids = await start_all(ws, urls, seen)
            good = {ids[n] for n in list(GOOD) + ["same-name-a", "same-name-b"]}
            found = await collect_thumbnails(ws, good | {ids[n] for n in BAD}, timeout=12, seen=seen)
            return ids, found

    ids, found = run(body())
    by_name = {name: found.get(activity_id) for name, activity_id in ids.items()}
    missing = [n for n in list(GOOD) + ["same-name-a", "same-name-b"] if by_name[n] is None]
    assert not missing, f"no thumbnail event for {missing}\n{server.output()}"
    failed_but_published = [n for n in BAD if by_name[n] is not None]
    assert not failed_but_published, f"thumbnails published for bad images: {failed_but_published}"

    pngs: dict[str, dict[int, bytes]] = {}
    for name in list(GOOD) + ["same-name-a", "same-name-b"]:
        event = by_name[name]
        key = key_of(urls[name])
        thumbnail = event["activity"]["thumbnail"]
        assert thumbnail == {f"{s}x": f"/images/{key}@{s}x.png" for s in (1, 2, 3)}, (name, thumbnail)
        assert event["activity"]["attributes"]["image"] == urls[name]
        pngs[name] = {}
        for scale in (1, 2, 3):
            status, headers, png = http_get(server.url + thumbnail[f"{scale}x"])
            assert status == 200, (name, scale, status)
            assert headers.get("content-type") == "image/png"
            assert headers.get("cache-control") == IMMUTABLE
            with Image.open(io.BytesIO(png)) as image:
                assert image.format == "PNG"
                assert image.size == (SIDE * scale, SIDE * scale), (name, scale, image.size)
            on_disk = cache_dir(server) / f"{key}@{scale}x.png"
            assert on_disk.read_bytes() == png, f"{on_disk} differs from what was served"
            pngs[name][scale] = png

    # Centred crop: yellow left of the centre line, cyan right of it, no red or blue from the edges.
    for name in ("png", "jpeg", "webp", "three-redirects"):
        for scale in (1, 2, 3):
            side = SIDE * scale
            png = pngs[name][scale]
            for x in (2 * scale, side // 4, side // 2 - 3 * scale):
                assert near(pixel(png, x, side // 2), YELLOW), (name, scale, x, pixel(png, x, side // 2))
            for x in (side // 2 + 3 * scale, side * 3 // 4, side - 1 - 2 * scale):
                assert near(pixel(png, x, side // 2), CYAN), (name, scale, x, pixel(png, x, side // 2))
    # The panorama's centred square is its green middle band; the first GIF frame is green.
    for name in ("panorama", "gif"):
        for scale in (1, 2, 3):
            side = SIDE * scale
            for x, y in ((2, 2), (side // 2, side // 2), (side - 3, side - 3), (2, side - 3)):
                assert near(pixel(pngs[name][scale], x, y), GREEN), (name, scale, x, y)
    assert near(pixel(pngs["same-name-a"][1], 24, 24), RED)
    assert near(pixel(pngs["same-name-b"][1], 24, 24), BLUE)
    assert key_of(urls["same-name-a"]) != key_of(urls["same-name-b"])

    # The fallback stays for every failure: no thumbnail in the read API, a warning in the log.
    status, _, _ = http_get(server.url + "/api/activities")
    assert status == 200
    import json
    snapshot = json.loads(http_get(server.url + "/api/activities")[2])
    for activity in snapshot["activities"]:
        name = activity["attributes"]["name"]
        if name in BAD:
            assert "thumbnail" not in activity, (name, activity)
        else:
            assert activity["thumbnail"]["1x"].startswith("/images/"), name
    output = server.output()
    for name in ("corrupt", "huge", "not-an-image", "redirect-loop", "too-many-redirects", "missing"):
        assert "image fetch failed" in output and key_of(urls[name]) in output, f"no log line for {name}\n{output}"
    # The 20 MB body was cut off, not stored; only complete thumbnail sets are in the folder.
    files = sorted(p.name for p in cache_dir(server).iterdir())
    assert all(name.endswith(".png") for name in files), files
    assert len(files) == 3 * len({key_of(urls[n]) for n in list(GOOD) + ["same-name-a", "same-name-b"]}), files

    # Unknown or malformed names under /images are 404, never a file outside the folder.
    for path in ("/images/" + "0" * 64 + "@1x.png", "/images/../Package.swift", "/images/x@1x.png",
                 f"/images/{key_of(urls['png'])}@4x.png"):
        assert http_get(server.url + path)[0] == 404, path


def maps_library(server, soname: str) -> bool:
    """Whether the server process has `soname` (say "libvips.so") mapped."""
    return soname in Path(f"/proc/{server.pid}/maps").read_text()


def test_fetched_once_and_reused(start_server, images):
    """Two activities with the same image: one fetch; after a restart the cache answers without fetching.

    libvips and libcurl (about 28 MB with their dependencies) are opened by the first fetch only: not by an
    idle server with thumbnails on, nor by one that serves cached thumbnails."""
    server = start_server("--allow-private-image-hosts")
    url = images.url("/img/photo.png")
    assert http_get(server.url + "/gallery")[0] == 200
    assert http_get(server.url + f"/images/{key_of(url)}@1x.png")[0] == 404
    assert not maps_library(server, "libvips.so") and not maps_library(server, "libcurl.so")

    async def body(srv):
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            seen: list[dict] = []
            ids = await start_all(ws, {"first": url, "second": url}, seen)
            return ids, await collect_thumbnails(ws, set(ids.values()), timeout=8, seen=seen)

    ids, found = run(body(server))
    assert set(found) == set(ids.values())
    assert len(images.requested("/img/photo.png")) == 1, images.requests
    assert maps_library(server, "libvips.so") and maps_library(server, "libcurl.so")

    # The thumbnail is stored with the activity: after a restart it is still there, served from the cache.
    assert server.stop() == 0
    again = start_server("--allow-private-image-hosts", cwd=Path(server.cwd))
    import json
    snapshot = json.loads(http_get(again.url + "/api/activities")[2])
    restored = {a["id"]: a for a in snapshot["activities"]}
    key = key_of(url)
    for activity_id in ids.values():
        assert restored[activity_id]["thumbnail"]["2x"] == f"/images/{key}@2x.png"
    status, headers, png = http_get(again.url + f"/images/{key}@2x.png")
    assert status == 200 and headers["cache-control"] == IMMUTABLE
    assert Image.open(io.BytesIO(png)).size == (96, 96)
    assert len(images.requested("/img/photo.png")) == 1, images.requests
    assert not maps_library(again, "libvips.so") and not maps_library(again, "libcurl.so")


def test_transient_failure_is_retried_with_backoff(start_server, images):
    server = start_server("--allow-private-image-hosts")
    url = images.url("/flaky.png")

    async def body():
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            began = time.monotonic()
            seen: list[dict] = []
            ids = await start_all(ws, {"flaky": url}, seen)
            found = await collect_thumbnails(ws, set(ids.values()), timeout=8, seen=seen)
            return found, time.monotonic() - began

    found, elapsed = run(body())
    assert len(found) == 1, server.output()
    assert len(images.requested("/flaky.png")) == 2, images.requests
    assert elapsed >= 1.4, f"retried after {elapsed:.2f}s: no back-off"
    assert "will retry" in server.output()


def test_private_hosts_are_refused_without_the_flag(start_server, images):
    server = start_server()
    urls = {"loopback": images.url("/img/photo.png"), "localhost": images.url("/img/photo.jpg", host="localhost")}

    async def body():
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            seen: list[dict] = []
            ids = await start_all(ws, urls, seen)
            return await collect_thumbnails(ws, set(ids.values()), timeout=2, seen=seen)

    assert run(body()) == {}
    assert images.requests == [], f"the server fetched from a private host: {images.requests}"
    assert "refused_host" in server.output(), server.output()
    assert not cache_dir(server).exists() or not any(cache_dir(server).iterdir())


def test_emoji_kind_validation_over_the_wire(start_server):
    server = start_server()

    async def body():
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            bad_scheme = await request(ws, emoji_start("r1", "file:///etc/passwd"))
            long_emoji = await request(ws, emoji_start("r2", None, emoji="x" * 17))
            unknown = await request(ws, {**emoji_start("r3", None), "attributesType": "weather"})
            shortcut = await request(ws, {"type": "start", "requestId": "r4", "attributesType": "emoji",
                                          "attributes": emoji_start("x", None)["attributes"], "durationSeconds": 60})
            ok = await request(ws, emoji_start("r5", None, emoji="👩🏽‍🚀"))
            started = await recv_until(ws, lambda m: m["type"] == "activity" and m["event"] == "started")
            return bad_scheme, long_emoji, unknown, shortcut, ok, started

    bad_scheme, long_emoji, unknown, shortcut, ok, started = run(body())
    assert bad_scheme["type"] == "error" and bad_scheme["field"] == "attributes.image"
    assert long_emoji["type"] == "error" and long_emoji["field"] == "content.state.emoji"
    assert unknown["type"] == "error" and '"workout"' in unknown["message"] and '"emoji"' in unknown["message"]
    assert shortcut["type"] == "error" and shortcut["field"] == "durationSeconds"
    assert ok["type"] == "ack"
    assert started["activity"]["attributesType"] == "emoji"
    assert started["activity"]["content"]["state"] == {"emoji": "👩🏽‍🚀"}
    assert "thumbnail" not in started["activity"]


# -- the page, in Chromium ----------------------------------------------------------------------------

def _browser():
    import shutil
    os.environ.setdefault("SE_OFFLINE", "true")
    for path in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not (Path(path).exists() or shutil.which(path)):
            pytest.skip(f"{path} not installed (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    driver.set_page_load_timeout(15)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 900, "deviceScaleFactor": 2, "mobile": False})
    return driver


def _wait(what: str, probe, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except Exception as error:  # a re-rendered element; try again
            last = error
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.05)
    pytest.fail(f"timed out after {timeout}s waiting for {what} (last: {last!r})", pytrace=False)


GEOMETRY_JS = """
const row = document.querySelector('.lock-screen[data-kind="emoji"]');
if (!row) return null;
const thumb = row.querySelector('.emoji-thumb'), img = row.querySelector('.emoji-image'),
      logo = row.querySelector('.emoji-logo'), state = row.querySelector('.emoji-state');
const r = (el) => { const b = el.getBoundingClientRect(); return {x: b.left, y: b.top, w: b.width, h: b.height}; };
// The template's <img data-image> shows the server's /images/… once it has the thumbnail, the photo icon until then.
const shows = (el) => el && (el.getAttribute('src').startsWith('/images/') ? 'ready' : 'fallback');
return {thumbnail: shows(img), src: img.currentSrc || img.src, loaded: img.complete && img.naturalWidth > 0,
        naturalWidth: img.naturalWidth, radius: getComputedStyle(img).borderTopLeftRadius,
        img: r(img), logo: r(logo), logoFilter: getComputedStyle(logo).filter, logoVisible: getComputedStyle(logo).display,
        emoji: state.textContent, stateBox: r(state),
        workoutHidden: [...row.children].filter((c) => !c.classList.contains('emoji-layout'))
                         .every((c) => getComputedStyle(c).display === 'none'),
        island: document.querySelector('#island')?.dataset.kind ?? null,
        islandThumb: shows(document.querySelector('#island .emoji-expanded .emoji-image')) ?? null};
"""


@pytest.mark.browser
def test_page_shows_fallback_then_thumbnail_with_overlay(start_server, images):
    from selenium.webdriver.common.by import By
    server = start_server("--allow-private-image-hosts")
    url = images.url("/delayed.png")
    driver = _browser()
    try:
        driver.get(server.url + "/")
        _wait("the page to connect", lambda: driver.find_element(By.ID, "status").get_attribute("data-state") == "open", 10)
        kind = driver.find_element(By.CSS_SELECTOR, '.kind-picker button[data-kind="emoji"]')
        kind.click()
        assert kind.get_attribute("aria-pressed") == "true"
        assert driver.find_element(By.ID, "emoji-image").is_displayed()
        assert not driver.find_element(By.CSS_SELECTOR, ".picker").is_displayed()
        name = driver.find_element(By.ID, "emoji-name")
        name.clear()
        name.send_keys("Evening ride")
        driver.find_element(By.ID, "emoji-image").send_keys(url)
        state = driver.find_element(By.ID, "emoji-state")
        state.clear()
        state.send_keys("🚴")
        driver.find_element(By.ID, "start").click()

        first = _wait("the emoji Lock Screen view, its image loaded",
                      lambda: (lambda g: g if g and g["loaded"] else None)(driver.execute_script(GEOMETRY_JS)), 5)
        assert first["thumbnail"] == "fallback", first
        assert first["src"].endswith("/icons/photo.svg"), first
        assert first["loaded"], first
        assert first["emoji"] == "🚴"
        assert first["workoutHidden"], first
        assert first["island"] == "emoji" and first["islandThumb"] == "fallback", first
        with open(ARTIFACTS_DIR / "emoji-fallback.png", "wb") as out:
            out.write(driver.get_screenshot_as_png())

        ready = _wait("the thumbnail to replace the fallback",
                      lambda: (lambda g: g if g and g["thumbnail"] == "ready" and g["loaded"] else None)(
                          driver.execute_script(GEOMETRY_JS)), 10)
        key = key_of(url)
        # deviceScaleFactor 2: the browser picks the 2x file from the srcset.
        assert ready["src"].endswith(f"/images/{key}@2x.png"), ready
        assert ready["naturalWidth"] == 48, ready  # 96 px at density 2x: 48 CSS px
        assert ready["radius"] == "4px", ready
        img, logo = ready["img"], ready["logo"]
        assert img["w"] == pytest.approx(48, abs=0.5) and img["h"] == pytest.approx(48, abs=0.5), img
        # The logo: half the thumbnail's width, at its top-leading corner, pulled out by a quarter of its size.
        assert logo["w"] == pytest.approx(img["w"] / 2, abs=0.5), (logo, img)
        assert logo["x"] == pytest.approx(img["x"] - logo["w"] / 4, abs=0.5), (logo, img)
        assert logo["y"] == pytest.approx(img["y"] - logo["w"] / 4, abs=0.5), (logo, img)
        assert "drop-shadow" in ready["logoFilter"], ready
        # The emoji state sits beside the thumbnail, on the trailing side.
        assert ready["stateBox"]["x"] > img["x"] + img["w"], ready
        assert ready["islandThumb"] == "ready", ready
        with open(ARTIFACTS_DIR / "emoji-thumbnail.png", "wb") as out:
            out.write(driver.get_screenshot_as_png())
        severe = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert not severe, severe
    finally:
        driver.quit()
