"""One small interface over three browser engines, for Tests/integration/test_engines.py.

- Chromium: Debian's chromium + chromedriver through Selenium (as test_page.py).
- WebKit (the Safari engine): Debian's webkit2gtk-driver (`WebKitWebDriver`) through Selenium's WebKitGTK
  driver, on an Xvfb display started here.
- Firefox: Debian's firefox-esr driven over WebDriver BiDi, which Firefox serves itself with
  `--remote-debugging-port` (no geckodriver), through a small synchronous `websockets` client.

Every engine offers the same few calls: `open(url)`, `js(body, *args)` (a function body, `return` gives the
value), `click(selector)` (real pointer input), `press(key)` (real keyboard input), `wait(what, body)`
(polls `js` until it returns something truthy) and `screenshot(path)`. See
/work/shared/research/platform-notes.md section 7 for how each was checked on this machine.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("SE_OFFLINE", "true")  # before selenium is imported: Selenium Manager must not go online

from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
FIREFOX = "/usr/bin/firefox-esr"
XVFB = "/usr/bin/Xvfb"
VIEWPORT = (1280, 900)
KEYS = {"Enter": "\ue007", "Tab": "\ue004", "Space": " ", "Escape": "\ue00c", "End": "\ue010", "Home": "\ue011"}

# What each engine needs installed (Deploy/setup-debian.sh installs them all).
REQUIRES = {"chromium": [CHROMIUM, CHROMEDRIVER], "webkit": [WEBKIT_DRIVER, XVFB], "firefox": [FIREFOX]}


def missing(engine: str) -> list[str]:
    """The executables `engine` needs that are not installed."""
    return [p for p in REQUIRES[engine] if not (Path(p).exists() or shutil.which(p))]


class Timeout(AssertionError):
    """A wait ran out of time."""


class Engine:
    """The common calls; subclasses implement `open`, `js`, `click`, `press`, `screenshot` and `quit`."""

    name = "engine"

    def wait(self, what: str, body: str, *args: Any, timeout: float = 8.0) -> Any:
        """Polls `js(body, *args)` until it returns something truthy; that value is returned."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            last = self.js(body, *args)
            if last:
                return last
            if time.monotonic() > deadline:
                raise Timeout(f"{self.name}: timed out after {timeout}s waiting for {what} (last value: {last!r})")
            time.sleep(0.05)

    def text(self, selector: str) -> str | None:
        """The `textContent` of the first element matching `selector`, or None."""
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", selector)


# -- Selenium: Chromium and WebKit -------------------------------------------------------------------

class SeleniumEngine(Engine):
    """Chromium or WebKitGTK through Selenium."""

    def __init__(self, name: str, driver: webdriver.Remote, cleanup=None):
        self.name = name
        self.driver = driver
        self._cleanup = cleanup

    def open(self, url: str) -> None:
        self.driver.get(url)

    def js(self, body: str, *args: Any) -> Any:
        return self.driver.execute_script(body, *args)

    def click(self, selector: str) -> None:
        element = self.driver.find_element(By.CSS_SELECTOR, selector)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def press(self, key: str) -> None:
        ActionChains(self.driver).send_keys(KEYS.get(key, key)).perform()

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))

    def quit(self) -> None:
        try:
            self.driver.quit()
        finally:
            if self._cleanup:
                self._cleanup()


def chromium() -> SeleniumEngine:
    """Headless Chromium with a 1280x900 viewport."""
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-extensions",
                "--no-first-run", "--password-store=basic"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(15)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False})
    return SeleniumEngine("chromium", driver)


def start_xvfb() -> tuple[subprocess.Popen, str]:
    """An Xvfb server on a free display; returns it and its DISPLAY value (":N")."""
    read, write = os.pipe()
    proc = subprocess.Popen([XVFB, "-displayfd", str(write), "-screen", "0", f"{VIEWPORT[0]}x{VIEWPORT[1] + 200}x24",
                             "-nolisten", "tcp"], pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    if not number:
        proc.kill()
        raise RuntimeError("Xvfb did not report a display")
    return proc, f":{number}"


def webkit() -> SeleniumEngine:
    """WebKitGTK (MiniBrowser in automation mode, started by WebKitWebDriver) on a private Xvfb display."""
    xvfb, display = start_xvfb()
    try:
        service = webdriver.WebKitGTKService(executable_path=WEBKIT_DRIVER, env={**os.environ, "DISPLAY": display})
        driver = webdriver.WebKitGTK(service=service)
    except Exception:
        xvfb.kill()
        xvfb.wait(5)
        raise
    driver.set_page_load_timeout(15)
    driver.set_window_size(*VIEWPORT)

    def stop_xvfb() -> None:
        xvfb.terminate()
        try:
            xvfb.wait(5)
        except subprocess.TimeoutExpired:
            xvfb.kill()

    return SeleniumEngine("webkit", driver, cleanup=stop_xvfb)


# -- Firefox over WebDriver BiDi -----------------------------------------------------------------------

def _python(value: dict) -> Any:
    """A BiDi RemoteValue as a Python value (a node becomes {"sharedId": …})."""
    kind = value.get("type")
    if kind in ("string", "boolean"):
        return value["value"]
    if kind == "number":
        v = value["value"]
        return float(v) if isinstance(v, str) else v  # "NaN", "Infinity", "-0"
    if kind in ("null", "undefined"):
        return None
    if kind in ("array", "set", "nodelist", "htmlcollection"):
        return [_python(v) for v in value.get("value", [])]
    if kind in ("object", "map"):
        return {(k if isinstance(k, str) else _python(k)): _python(v) for k, v in value.get("value", [])}
    if kind == "node":
        return {"sharedId": value.get("sharedId")}
    return value.get("value", value)


def _remote(value: Any) -> dict:
    """A Python value as a BiDi LocalValue (strings, numbers, booleans, None, lists, dicts)."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, (int, float)):
        return {"type": "number", "value": value}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, (list, tuple)):
        return {"type": "array", "value": [_remote(v) for v in value]}
    if isinstance(value, dict):
        return {"type": "object", "value": [[k, _remote(v)] for k, v in value.items()]}
    raise TypeError(f"cannot pass {value!r} to the page")


class FirefoxBiDi(Engine):
    """Headless firefox-esr with its own WebDriver BiDi server; one browsing context (tab)."""

    name = "firefox"

    def __init__(self):
        self._profile = tempfile.mkdtemp(prefix="liveactivity-firefox-")
        Path(self._profile, "user.js").write_text("\n".join(f'user_pref("{k}", {json.dumps(v)});' for k, v in {
            "browser.shell.checkDefaultBrowser": False, "app.update.enabled": False,
            "datareporting.policy.dataSubmissionEnabled": False, "toolkit.telemetry.reportingpolicy.firstRun": False,
            "browser.startup.homepage_override.mstone": "ignore", "browser.aboutwelcome.enabled": False,
            "network.captive-portal-service.enabled": False, "network.connectivity-service.enabled": False,
        }.items()) + "\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self._proc = subprocess.Popen([FIREFOX, "--headless", "--no-remote", "--profile", self._profile,
                                       "--remote-debugging-port", str(port)],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self._output: list[str] = []
        ready = threading.Event()

        def drain() -> None:
            for line in self._proc.stdout:
                self._output.append(line.rstrip())
                if "WebDriver BiDi listening" in line:
                    ready.set()
        threading.Thread(target=drain, daemon=True).start()
        if not ready.wait(30):
            self._proc.kill()
            raise RuntimeError("firefox-esr did not start WebDriver BiDi within 30 s:\n" + "\n".join(self._output))
        self._ws = ws_connect(f"ws://127.0.0.1:{port}/session", max_size=None, open_timeout=10).__enter__()
        self._next_id = 0
        self.log: list[dict] = []  # log.entryAdded events (console messages, uncaught errors)
        self.command("session.new", {"capabilities": {}})
        self.command("session.subscribe", {"events": ["log.entryAdded"]})
        self.context = self.command("browsingContext.getTree", {})["contexts"][0]["context"]
        self.command("browsingContext.setViewport", {"context": self.context,
                                                     "viewport": {"width": VIEWPORT[0], "height": VIEWPORT[1]}})

    def command(self, method: str, params: dict, timeout: float = 20) -> dict:
        """Sends one BiDi command and returns its result; events that arrive meanwhile are kept in `log`."""
        self._next_id += 1
        self._ws.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message.get("type") == "event":
                if message.get("method") == "log.entryAdded":
                    self.log.append(message["params"])
                continue
            if message.get("id") != self._next_id:
                continue
            if message.get("type") == "error":
                raise RuntimeError(f"BiDi {method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def open(self, url: str) -> None:
        self.command("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def js(self, body: str, *args: Any) -> Any:
        result = self.command("script.callFunction", {
            "functionDeclaration": f"function() {{ {body} }}", "arguments": [_remote(a) for a in args],
            "target": {"context": self.context}, "awaitPromise": True})
        if result.get("type") == "exception":
            raise RuntimeError(f"firefox: script threw: {result['exceptionDetails'].get('text')}")
        return _python(result["result"])

    def click(self, selector: str) -> None:
        result = self.command("script.callFunction", {
            "functionDeclaration": "function(s) { const e = document.querySelector(s); "
                                   "if (e) e.scrollIntoView({block: 'center'}); return e; }",
            "arguments": [_remote(selector)], "target": {"context": self.context}, "awaitPromise": False})
        node = result.get("result", {})
        if node.get("type") != "node":
            raise AssertionError(f"firefox: no element matches {selector!r}")
        origin = {"type": "element", "element": {"sharedId": node["sharedId"]}}
        self.command("input.performActions", {"context": self.context, "actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
                {"type": "pointerMove", "x": 0, "y": 0, "origin": origin},
                {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})

    def press(self, key: str) -> None:
        value = KEYS.get(key, key)
        self.command("input.performActions", {"context": self.context, "actions": [{
            "type": "key", "id": "keyboard", "actions": [{"type": "keyDown", "value": value},
                                                         {"type": "keyUp", "value": value}]}]})

    def screenshot(self, path: Path) -> None:
        data = self.command("browsingContext.captureScreenshot", {"context": self.context})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions seen so far."""
        return [entry.get("text", "") for entry in self.log if entry.get("level") == "error"]

    def quit(self) -> None:
        try:
            self.command("session.end", {}, timeout=5)
        except Exception:  # noqa: BLE001 (the browser may already be gone)
            pass
        try:
            self._ws.close()
        finally:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            shutil.rmtree(self._profile, ignore_errors=True)


def launch(engine: str) -> Engine:
    """Starts one engine by name: "chromium", "webkit" or "firefox"."""
    return {"chromium": chromium, "webkit": webkit, "firefox": FirefoxBiDi}[engine]()
