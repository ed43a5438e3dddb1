"""examples/feed_workout.py and examples/apns_push.sh, run as a user would, against a real server.

Both run with the server URL as an argument or in $LIVEACTIVITY_URL and the controller token in
$LIVEACTIVITY_CONTROLLER_TOKEN; an observer connection (schema-checked) sees what they did.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from schema_check import checked
from support import get_json as support_get_json
from wsclient import connect, recv_json, run

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "examples"
TOKEN = "example-controller-token"


def get_json(url: str) -> dict:
    return support_get_json(url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)


async def observe_while(server, command: list[str], env: dict[str, str], timeout: float = 60) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """Run `command` while an observer connection collects the activity events it causes."""
    events: list[dict] = []
    async with connect(server.ws_url, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as raw:
        ws = checked(raw)
        await recv_json(ws)
        proc = await asyncio.create_subprocess_exec(*command, env=env, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE)

        async def collect():
            while True:
                m = await recv_json(ws, timeout)
                if m["type"] == "activity":
                    events.append(m)

        collector = asyncio.create_task(collect())
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
        await asyncio.sleep(0.3)
        collector.cancel()
        try:
            await collector
        except (asyncio.CancelledError, AssertionError, asyncio.TimeoutError):
            pass
    return subprocess.CompletedProcess(command, proc.returncode, out.decode(), err.decode()), events


def example_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEACTIVITY_")}
    env.update(LIVEACTIVITY_CONTROLLER_TOKEN=TOKEN, **extra)
    return env


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_feed_workout_example(start_server, how):
    srv = start_server("--controller-token", TOKEN)
    if how == "argument":
        command = [sys.executable, str(EXAMPLES / "feed_workout.py"), srv.url, "--workout", "yoga", "--step", "0.3"]
        env = example_env()
    else:
        command = [sys.executable, str(EXAMPLES / "feed_workout.py"), "--workout", "yoga", "--step", "0.3"]
        env = example_env(LIVEACTIVITY_URL=srv.ws_url)
    result, events = run(observe_while(srv, command, env))
    assert result.returncode == 0, result
    activity_id = result.stdout.strip().splitlines()[-1].removeprefix("done: ")
    kinds = [e["event"] for e in events if e["activity"]["id"] == activity_id]
    assert kinds == ["started", "updated", "paused", "resumed", "extended", "updated", "ended"], kinds
    alerts = [e["alert"]["title"] for e in events if "alert" in e]
    assert alerts == ["Warmed up", "Halfway"], alerts
    assert events[-1]["activity"]["attributes"] == {"workout": "yoga"}
    history = get_json(srv.url + "/api/history")["workouts"]
    assert [h["id"] for h in history] == [activity_id] and history[0]["outcome"] == "stopped", history


def test_feed_workout_example_without_the_token_is_refused(start_server):
    srv = start_server("--controller-token", TOKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEACTIVITY_")}
    result = subprocess.run([sys.executable, str(EXAMPLES / "feed_workout.py"), srv.url, "--step", "0.1"],
                            env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1, result
    assert "controller token" in result.stderr, result.stderr
    assert get_json(srv.url + "/api/activities")["activities"] == []


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize("how", ["argument", "environment"])
def test_apns_push_example(start_server, how):
    srv = start_server("--controller-token", TOKEN)
    script = str(EXAMPLES / "apns_push.sh")
    command, env = ((["bash", script, srv.url], example_env()) if how == "argument"
                    else (["bash", script], example_env(LIVEACTIVITY_URL=srv.url + "/")))
    before = datetime.now(timezone.utc)
    result, events = run(observe_while(srv, command, env))
    assert result.returncode == 0, result
    activity_id = result.stdout.strip()
    assert [e["event"] for e in events] == ["started", "updated", "ended"], [e["event"] for e in events]
    assert all(e["activity"]["id"] == activity_id for e in events)
    assert events[1]["alert"] == {"title": "Halfway", "body": "Keep going", "sound": "default"}
    ended = get_json(srv.url + f"/api/activities/{activity_id}")
    assert ended["activityState"] == "ended" and ended["attributes"] == {"workout": "jogging"}
    dismissal = datetime.strptime(ended["dismissalDate"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    assert timedelta(minutes=9) < dismissal - before < timedelta(minutes=11), ended
    assert result.stderr.count("HTTP 200  verdict=applied") == 3, result.stderr


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_apns_push_example_fails_without_the_token(start_server):
    srv = start_server("--controller-token", TOKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEACTIVITY_")}
    result = subprocess.run(["bash", str(EXAMPLES / "apns_push.sh"), srv.url], env=env, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode != 0, result
    assert get_json(srv.url + "/api/activities")["activities"] == []
