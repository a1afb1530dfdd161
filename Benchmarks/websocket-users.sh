#!/usr/bin/env bash
# 15,000 GCCS users holding their STOMP-over-WebSocket status streams open at once against `authload serve` in a
# second process: each status comes 15 s after the last, so a flow holds its WebSocket about a minute. REST goes
# over a shared pool of 64 connections, so the generator holds one socket per user (the open-file limit here is
# 20,000 per process). Prints the peak of open WebSockets, errors and the generator's RSS per user; passes with
# no error and exit 0. Bounded: ramp 30 s, 90 s in all, 127.0.0.1 only.
#
#   bash Benchmarks/websocket-users.sh [users]
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-15000}

swift build -c release --product authload >/dev/null
work=$(mktemp -d)
echo '{ "gccs": { "latency": { "fixed": "5ms" }, "nodeDelay": { "fixed": "15s" }, "authTimeRemaining": "120s" } }' > "$work/serve.json"
source Benchmarks/serve-target.sh

cat > "$work/ws.json" <<JSON
{
  "name": "websocket-users",
  "target": { "baseURL": "$url" },
  "load": { "users": $users, "rampUp": "30s", "duration": "90s", "thinkTime": "1s", "gracefulStop": "70s" },
  "users": { "username": "user{n}@example.com" },
  "flows": [ { "name": "gccs", "kind": "gccs-auth" } ],
  "connections": { "policy": "shared", "poolSize": 64 },
  "timeouts": { "step": "30s", "flow": "120s", "connect": "10s" }
}
JSON

status=0
/usr/bin/time -v .build/release/authload run "$work/ws.json" --out "$work/report" --quiet \
    > "$work/stdout" 2> "$work/time" || status=$?
peak_kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$work/time")
read -r flows errors p50 < <(awk -F, '$1 == "gccs" && $2 == "" { print $3, $4, $9 }' "$work/report/summary.csv")
# Users hold their WebSocket for a flow's length, less its REST steps: at the ramp's end all of them at once.
echo "users: $users  flows: $flows (p50 ${p50} ms each)  errors: $errors  exit: $status" \
    " peak RSS: $((peak_kb / 1024)) MB ($((peak_kb * 1024 / users)) bytes per user)"
grep -E '^(error|warning)' "$work/time" || true
# A crash or a failed run: what the generator said (time's own report is the indented part).
if [ "$status" -ne 0 ]; then grep -v -E '^\s' "$work/time" | tail -20; fi
if [ "$errors" != 0 ]; then cat "$work/report/errors.csv"; fi
[ "$status" -eq 0 ] && [ "$errors" = 0 ] || { echo "FAIL"; exit 1; }
echo "OK"
