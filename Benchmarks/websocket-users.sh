#!/usr/bin/env bash
# 15,000 GCCS users holding their STOMP-over-WebSocket status streams open at once against `authload serve` in a
# second process: each status comes 15 s after the last, so a flow holds its WebSocket about a minute. REST goes
# over a shared pool of 64 connections, so the generator holds one socket per user (the open-file limit here is
# 20,000 per process). Passes with no error and exit 0. Bounded: each run ramps 30 s and lasts 90 s in all (plus
# at most 70 s of graceful stop), 127.0.0.1 only.
#
#   bash Benchmarks/websocket-users.sh [users]
#
# Prints the peak of open WebSockets, errors and the generator's peak RSS, and two figures per user:
# - marginal: (peak RSS at [users] − peak RSS of the same run at $BASE_USERS users, 500 by default) / the difference
#   in users, what one more held WebSocket costs (issue 31 wants ≤ 4 KB);
# - total / users: the whole RSS shared out, which counts the ~50 MB any run holds before its first user (32 MB of
#   it shared libraries), so it cannot come near the marginal figure at 15,000 users.
# BASE_USERS=0 skips the small run (and the marginal figure).
# AUTHLOAD_BINARY=path runs another build as the generator (a copy of an earlier .build/release/authload) for an
# A/B; the staging server is this tree's release build either way.
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-15000}
base_users=${BASE_USERS:-500}
binary=${AUTHLOAD_BINARY:-.build/release/authload}

swift build -c release --product authload >/dev/null
work=$(mktemp -d)
echo '{ "gccs": { "latency": { "fixed": "5ms" }, "nodeDelay": { "fixed": "15s" }, "authTimeRemaining": "120s" } }' > "$work/serve.json"
source Benchmarks/serve-target.sh

# One run of $1 users into $work/$1: sets peak_kb, flows, errors, p50 and status, and prints a line.
run_users() {
    local n=$1 dir="$work/$1"
    mkdir -p "$dir"
    cat > "$dir/ws.json" <<JSON
{
  "name": "websocket-users",
  "target": { "baseURL": "$url" },
  "load": { "users": $n, "rampUp": "30s", "duration": "90s", "thinkTime": "1s", "gracefulStop": "70s" },
  "users": { "username": "user{n}@example.com" },
  "flows": [ { "name": "gccs", "kind": "gccs-auth" } ],
  "connections": { "policy": "shared", "poolSize": 64 },
  "timeouts": { "step": "30s", "flow": "120s", "connect": "10s" }
}
JSON
    status=0
    /usr/bin/time -v "$binary" run "$dir/ws.json" --out "$dir/report" --quiet > "$dir/stdout" 2> "$dir/time" || status=$?
    peak_kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$dir/time")
    flows='' errors='' p50=''
    read -r flows errors p50 < <(awk -F, '$1 == "gccs" && $2 == "" { print $3, $4, $9 }' "$dir/report/summary.csv" 2>/dev/null) || true
    # Users hold their WebSocket for a flow's length, less its REST steps: at the ramp's end all of them at once.
    echo "users: $n  flows: $flows (p50 ${p50} ms each)  errors: $errors  exit: $status  peak RSS: $((peak_kb / 1024)) MB"
    grep -E '^(error|warning)' "$dir/time" || true
    # A crash or a failed run: what the generator said (time's own report is the indented part).
    if [ "$status" -ne 0 ]; then grep -v -E '^\s' "$dir/time" | tail -20; fi
    if [ "$errors" != 0 ] && [ -f "$dir/report/errors.csv" ]; then cat "$dir/report/errors.csv"; fi
    [ "$status" -eq 0 ] && [ "$errors" = 0 ]
}

failed=0
base_kb=''
if [ "$base_users" -gt 0 ]; then
    if run_users "$base_users"; then base_kb=$peak_kb; else failed=1; fi
fi
run_users "$users" || failed=1
echo "total / users: $((peak_kb * 1024 / users)) bytes per user (counting what the run holds before its first user)"
if [ -n "$base_kb" ]; then
    echo "marginal: $(((peak_kb - base_kb) * 1024 / (users - base_users))) bytes per held user" \
        "(peak $((peak_kb / 1024)) MB at $users − $((base_kb / 1024)) MB at $base_users users)"
fi
[ "$failed" -eq 0 ] || { echo "FAIL"; exit 1; }
echo "OK"
