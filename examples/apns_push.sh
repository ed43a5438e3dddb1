#!/usr/bin/env bash
# Send APNs-shaped Live Activity pushes (start, update with an alert, end) to a LiveActivityServer over
# HTTP, exactly as a backend sends them to APNs: POST /3/device/{token} with apns-push-type: liveactivity.
#
#   examples/apns_push.sh [URL]            URL default: $LIVEACTIVITY_URL, else http://127.0.0.1:8080
#
# $LIVEACTIVITY_CONTROLLER_TOKEN is sent as `authorization: bearer …` when set (needed when the server has
# one). Needs bash, curl and sed. Payloads follow Apple's "Starting and updating Live Activities with
# ActivityKit push notifications": Unix-second timestamp/stale-date/dismissal-date, and a content-state in
# Swift's default Codable form (Date = seconds since 2001-01-01, ClosedRange<Date> = [lower, upper]).
# Exit status: 0 when APNs would accept every push (200) and the device applied it, 1 otherwise.
set -euo pipefail

URL="${1:-${LIVEACTIVITY_URL:-http://127.0.0.1:8080}}"
URL="${URL%/}"
AUTH=()
if [ -n "${LIVEACTIVITY_CONTROLLER_TOKEN:-}" ]; then
    AUTH=(-H "authorization: bearer ${LIVEACTIVITY_CONTROLLER_TOKEN}")
fi
REFERENCE_EPOCH=978307200   # 2001-01-01T00:00:00Z, Swift's Date reference
HEADERS="$(mktemp)"
trap 'rm -f "$HEADERS"' EXIT

header() { sed -n "s/^$1: *//Ip" "$HEADERS" | tr -d '\r' | tail -n 1; }

# push TOKEN JSON: prints "status verdict activity-id", fails unless 200 + applied.
push() {
    local token="$1" payload="$2" status
    status="$(curl -sS -o /dev/null -D "$HEADERS" -w '%{http_code}' -X POST "${AUTH[@]}" \
        -H 'apns-push-type: liveactivity' -H 'apns-priority: 10' -H 'content-type: application/json' \
        -H "apns-id: $(cat /proc/sys/kernel/random/uuid 2>/dev/null || echo 00000000-0000-4000-8000-000000000000)" \
        --data-binary "$payload" "$URL/3/device/$token")"
    echo "  HTTP $status  verdict=$(header liveactivity-verdict)  apns-id=$(header apns-id)" >&2
    if [ "$status" != 200 ] || [ "$(header liveactivity-verdict)" != applied ]; then
        echo "  refused or not applied: $(header liveactivity-detail)" >&2
        return 1
    fi
}

now=$(date +%s)
ref_now=$((now - REFERENCE_EPOCH))

start_token="$(curl -sS "${AUTH[@]}" "$URL/api/push-to-start-token" | sed -n 's/.*"pushToStartToken":"\([0-9a-f]*\)".*/\1/p')"
[ -n "$start_token" ] || { echo "no push-to-start token from $URL/api/push-to-start-token" >&2; exit 1; }

echo "start -> push-to-start token ${start_token:0:8}…" >&2
push "$start_token" '{"aps":{"timestamp":'"$now"',"event":"start",
  "attributes-type":"WorkoutWidgetAttributes","attributes":{"workout":0},
  "content-state":{"workoutTimer":['"$ref_now"','"$((ref_now + 600))"']},
  "stale-date":'"$((now + 600))"',"relevance-score":50,
  "alert":{"title":"Workout started","body":"Jogging, 10 minutes"}}}'
activity_id="$(header liveactivity-activity-id)"
activity_token="$(curl -sS "${AUTH[@]}" "$URL/api/activities/$activity_id" | sed -n 's/.*"pushToken":"\([0-9a-f]*\)".*/\1/p')"
[ -n "$activity_token" ] || { echo "activity $activity_id has no pushToken" >&2; exit 1; }
echo "activity $activity_id, push token ${activity_token:0:8}…" >&2

echo "update with an alert" >&2
push "$activity_token" '{"aps":{"timestamp":'"$((now + 1))"',"event":"update",
  "content-state":{"workoutTimer":['"$ref_now"','"$((ref_now + 900))"']},
  "stale-date":'"$((now + 900))"',"relevance-score":75,
  "alert":{"title":"Halfway","body":"Keep going","sound":"default"}}}'

echo "end, dismissed in 10 minutes" >&2
push "$activity_token" '{"aps":{"timestamp":'"$((now + 2))"',"event":"end",
  "content-state":{"workoutTimer":['"$ref_now"','"$((ref_now + 300))"']},
  "dismissal-date":'"$((now + 600))"'}}'

echo "$activity_id"
