"""Validate protocol messages against docs/schemas/*.json (JSON Schema draft 2020-12).

    from schema_check import validate_server, validate_client, validate_apns, checked

    validate_server(msg)           # a server → client message (picks server-<type>.json); AssertionError if not
    validate_client(msg)           # a client → server message (picks client-<type>.json; "stop" uses client-end)
    validate_apns(payload)         # an APNs Live Activity payload (apns-payload.json)
    validate(msg, "server-ack")    # against one named schema
    client_errors(msg)             # list of schema errors for a client message ([] = valid); for bad-input tests

`checked(ws)` wraps a `websockets` connection so that every frame sent is validated as a client message and
every frame received as a server message (ticks included). It works with every helper of wsclient.py, which
only call `ws.send` / `ws.recv`:

    async with connect(server.ws_url) as raw:
        ws = checked(raw)
        snap = await recv_json(ws)                     # validated
        await ws.send_invalid('{"type":"start"}')      # asserts the schema rejects it too, then sends it
        ws.sent_types, ws.received_types               # what went over the wire, for coverage checks
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = REPO_ROOT / "docs" / "schemas"

CLIENT_TYPES = {"start": "client-start", "update": "client-update", "end": "client-end", "stop": "client-end",
                "pause": "client-pause", "resume": "client-resume", "extend": "client-extend", "push": "client-push",
                "hello": "client-hello", "list": "client-list", "catchUp": "client-catchUp",
                "history": "client-history", "share": "client-share", "unshare": "client-unshare",
                "shares": "client-shares", "inspect": "client-inspect"}
SERVER_TYPES = {"snapshot": "server-snapshot", "activity": "server-activity", "tick": "server-tick", "heartbeat": "server-heartbeat", "ack": "server-ack",
                "error": "server-error", "hello": "server-hello", "caughtUp": "server-caughtUp",
                "history": "server-history", "pushResult": "server-pushResult", "shares": "server-shares",
                "pushToStartToken": "server-pushToStartToken", "inspection": "server-inspection"}


def schema_names() -> list[str]:
    """Every schema file's name without `.json`."""
    return sorted(p.stem for p in SCHEMA_DIR.glob("*.json"))


@lru_cache(maxsize=None)
def _load(name: str) -> dict:
    return json.loads((SCHEMA_DIR / f"{name}.json").read_text())


def _retrieve(uri: str) -> Resource:
    # Schemas refer to each other by relative file name ("common.json#/$defs/activity").
    name = uri.rsplit("/", 1)[-1]
    if not name.endswith(".json") or not (SCHEMA_DIR / name).is_file():
        raise LookupError(f"no schema {uri!r} in {SCHEMA_DIR}")
    return Resource.from_contents(_load(name[:-5]), default_specification=DRAFT202012)


@lru_cache(maxsize=None)
def validator(name: str) -> Draft202012Validator:
    """A validator for docs/schemas/<name>.json, with cross-file $refs resolved from that folder."""
    schema = _load(name)
    return Draft202012Validator(schema, registry=Registry(retrieve=_retrieve), format_checker=FormatChecker())


def errors(instance: Any, name: str) -> list[str]:
    """Every schema error, as 'path: message' lines; [] when valid."""
    out = []
    for e in sorted(validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path)):
        path = "/".join(str(p) for p in e.absolute_path) or "(root)"
        out.append(f"{path}: {e.message}")
    return out


def validate(instance: Any, name: str) -> Any:
    """Assert `instance` is valid against schema `name`; returns it."""
    found = list(validator(name).iter_errors(instance))
    if found:
        best = best_match(found)
        text = json.dumps(instance, sort_keys=True)
        raise AssertionError(f"{name}.json rejects {text[:1500]}\n  best match: "
                             f"{'/'.join(map(str, best.absolute_path)) or '(root)'}: {best.message}\n  all: "
                             + "\n       ".join(errors(instance, name)))
    return instance


def _schema_for(msg: Any, table: dict[str, str], direction: str) -> str:
    assert isinstance(msg, dict), f"{direction} message is not a JSON object: {msg!r}"
    kind = msg.get("type")
    assert kind in table, f"{direction} message type {kind!r} has no schema (known: {sorted(table)}): {msg}"
    return table[kind]


def validate_server(msg: Any) -> Any:
    """Assert a server → client message matches its schema; returns it."""
    return validate(msg, _schema_for(msg, SERVER_TYPES, "server"))


def validate_client(msg: Any) -> Any:
    """Assert a client → server message matches its schema; returns it."""
    return validate(msg, _schema_for(msg, CLIENT_TYPES, "client"))


def client_errors(msg: Any) -> list[str]:
    """Schema errors for a would-be client message ([] = valid). Non-objects and unknown types are errors too."""
    if not isinstance(msg, dict):
        return [f"(root): not an object: {msg!r}"]
    if msg.get("type") not in CLIENT_TYPES:
        return [f"type: {msg.get('type')!r} is not a client message type"]
    return errors(msg, CLIENT_TYPES[msg["type"]])


def validate_apns(payload: Any) -> Any:
    """Assert an APNs Live Activity payload matches apns-payload.json; returns it."""
    return validate(payload, "apns-payload")


class CheckedConnection:
    """A `websockets` connection whose traffic is validated: sent text as client messages, received text as
    server messages. Everything else is passed through to the wrapped connection."""

    def __init__(self, ws):
        self._ws = ws
        self.sent_types: list[str] = []
        self.received_types: list[str] = []
        self.received: list[dict] = []

    def __getattr__(self, name):
        return getattr(self._ws, name)

    async def send(self, message, *args, **kwargs):
        if isinstance(message, str):
            msg = validate_client(json.loads(message))
            self.sent_types.append(msg["type"])
        await self._ws.send(message, *args, **kwargs)

    async def send_invalid(self, message: str | bytes) -> None:
        """Send a deliberately bad frame, asserting first that the schemas reject it as well."""
        if isinstance(message, str):
            try:
                msg = json.loads(message)
            except ValueError:
                msg = None
            if msg is not None:
                assert client_errors(msg), f"the client schemas accept {message[:300]}, the server should not"
        await self._ws.send(message)

    async def recv(self, *args, **kwargs):
        raw = await self._ws.recv(*args, **kwargs)
        if isinstance(raw, str):
            msg = validate_server(json.loads(raw))
            self.received_types.append(msg["type"] + (f"/{msg['event']}" if msg["type"] == "activity" else ""))
            self.received.append(msg)
        return raw


def checked(ws) -> CheckedConnection:
    """Wrap a connection so every message in and out is validated (see CheckedConnection)."""
    return ws if isinstance(ws, CheckedConnection) else CheckedConnection(ws)
