#!/usr/bin/env python3
"""Broadcast to a channel (iOS 18) through a LiveActivityServer's APNs port, as a backend does with APNs.

    examples/broadcast.py [APNS_URL]    APNS_URL: the "APNs (HTTP/2) on …" URL `serve --apns-port` prints
                                        (default: $LIVEACTIVITY_APNS_URL, else http://127.0.0.1:8443)

1. creates a channel  (POST /1/apps/{bundleId}/channels → apns-channel-id),
2. starts two activities subscribed to it (push-to-start with aps.input-push-channel),
3. sends one broadcast (POST /4/broadcasts/apps/{bundleId}) and prints which activities it reached,
4. deletes the channel (DELETE /1/apps/{bundleId}/channels), after which a broadcast is ChannelNotRegistered.

Authorization: a provider token when $APNS_KEY_FILE (AuthKey_<KeyID>.p8), $APNS_KEY_ID and $APNS_TEAM_ID are
set (the server verifies it with `--apns-key`); else $LIVEACTIVITY_CONTROLLER_TOKEN as the bearer; else none
(an open loopback server). $LIVEACTIVITY_CA_FILE: the certificate to trust for https. The push-to-start token
is read from the main port ($LIVEACTIVITY_URL, default http://127.0.0.1:8080, GET /api/push-to-start-token) or
given as $LIVEACTIVITY_PUSH_TO_START_TOKEN. Needs `pip install 'httpx[http2]' pyjwt`.
Exit status: 0 when every step answered as expected, 1 otherwise.
"""
from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
import uuid

import httpx

BUNDLE = os.environ.get("APNS_BUNDLE_ID", "com.example.liveactivity")
TOPIC = BUNDLE + ".push-type.liveactivity"
REFERENCE_EPOCH = 978_307_200  # Swift's Date reference (2001-01-01) in Unix seconds


def authorization() -> dict[str, str]:
    key_file, key_id, team_id = (os.environ.get(k) for k in ("APNS_KEY_FILE", "APNS_KEY_ID", "APNS_TEAM_ID"))
    if key_file and key_id and team_id:
        import jwt  # pyjwt
        token = jwt.encode({"iss": team_id, "iat": int(time.time())}, open(key_file, "rb").read(), algorithm="ES256",
                           headers={"kid": key_id})
        return {"authorization": f"bearer {token}", "apns-topic": TOPIC}
    if os.environ.get("LIVEACTIVITY_CONTROLLER_TOKEN"):
        return {"authorization": f"bearer {os.environ['LIVEACTIVITY_CONTROLLER_TOKEN']}"}
    return {}


def push_to_start_token() -> str:
    if os.environ.get("LIVEACTIVITY_PUSH_TO_START_TOKEN"):
        return os.environ["LIVEACTIVITY_PUSH_TO_START_TOKEN"]
    main = os.environ.get("LIVEACTIVITY_URL", "http://127.0.0.1:8080").rstrip("/")
    request = urllib.request.Request(main + "/api/push-to-start-token", headers=authorization())
    with urllib.request.urlopen(request, timeout=5) as r:
        return json.loads(r.read())["pushToStartToken"]


def main() -> int:
    url = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LIVEACTIVITY_APNS_URL", "http://127.0.0.1:8443")).rstrip("/")
    verify = os.environ.get("LIVEACTIVITY_CA_FILE") or True
    # http2=True with http1=False: ALPN h2 over https, prior knowledge (h2c) over http.
    with httpx.Client(http1=False, http2=True, verify=verify, base_url=url, headers=authorization(), timeout=10) as apns:
        created = apns.post(f"/1/apps/{BUNDLE}/channels", json={"message-storage-policy": 1, "push-type": "LiveActivity"})
        if created.status_code != 201:
            print(f"create channel: HTTP {created.status_code} {created.text}", file=sys.stderr)
            return 1
        channel = created.headers["apns-channel-id"]
        print(f"channel {channel}")

        now = time.time()
        ref = now - REFERENCE_EPOCH
        start_token = push_to_start_token()
        for workout in (0, 2):
            payload = {"aps": {"timestamp": int(now), "event": "start", "attributes-type": "WorkoutWidgetAttributes",
                               "attributes": {"workout": workout}, "content-state": {"workoutTimer": [ref, ref + 1200]},
                               "alert": {"title": "Race day", "body": "Live updates on"}, "input-push-channel": channel}}
            r = apns.post(f"/3/device/{start_token}", json=payload, headers={"apns-push-type": "liveactivity"})
            print(f"start: HTTP {r.status_code} {r.headers.get('liveactivity-verdict')} {r.headers.get('liveactivity-activity-id')}")
            if r.status_code != 200 or r.headers.get("liveactivity-verdict") != "applied":
                return 1

        update = {"aps": {"timestamp": int(now) + 1, "event": "update",
                          "content-state": {"workoutTimer": [ref, ref + 1500]},
                          "alert": {"title": "Delay", "body": "5 more minutes"}}}
        r = apns.post(f"/4/broadcasts/apps/{BUNDLE}", json=update,
                      headers={"apns-push-type": "liveactivity", "apns-channel-id": channel, "apns-request-id": str(uuid.uuid4())})
        reached = [x for x in r.headers.get("liveactivity-activity-ids", "").split(",") if x]
        print(f"broadcast: HTTP {r.status_code} {r.headers.get('liveactivity-verdict')}, reached {len(reached)}: {', '.join(reached)}")
        if r.status_code != 200 or len(reached) < 2:
            return 1

        r = apns.request("DELETE", f"/1/apps/{BUNDLE}/channels", headers={"apns-channel-id": channel})
        print(f"delete channel: HTTP {r.status_code}")
        r = apns.post(f"/4/broadcasts/apps/{BUNDLE}", json=update,
                      headers={"apns-push-type": "liveactivity", "apns-channel-id": channel})
        print(f"broadcast after delete: HTTP {r.status_code} {r.json().get('reason')}")
        return 0 if r.status_code == 404 else 1


if __name__ == "__main__":
    sys.exit(main())
