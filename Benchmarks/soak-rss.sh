#!/usr/bin/env bash
# Memory over a soak: 2,000 users against the embedded server for 30 minutes (not in CI).
#
# Reads the process's RSS every 5 s and reports each minute's peak, then the growth between minute 5
# (after ramp-up and warm-up) and the last minute; it must stay under 5 %, or something grows with run
# length. The peak of a minute rather than one reading: a single reading lands anywhere between two of the
# run's heap trims and swung by 30 % from one minute to the next. Release build; bounded in time (the
# run's own duration plus its grace) and to 127.0.0.1.
#
#   bash Benchmarks/soak-rss.sh [minutes] [users]
#   AUTHLOAD_BINARY=path bash Benchmarks/soak-rss.sh …   # another build (e.g. a copy of an earlier release build)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
users=${2:-2000}
limit_percent=5

binary=${AUTHLOAD_BINARY:-.build/release/authload}
[ -n "${AUTHLOAD_BINARY:-}" ] || swift build -c release --product authload >/dev/null
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/soak.json" <<JSON
{
  "name": "soak",
  "target": { "embedded": {
      "fcsdk": { "latency": { "lognormal": { "median": "8ms", "p99": "60ms" } }, "setCookie": "JSESSIONID" },
      "gccs": { "nodeDelay": { "lognormal": { "median": "200ms", "p99": "1s" } } },
      "streem": { "tokenLifetime": "30s" } } },
  "load": { "users": $users, "rampUp": "1m", "duration": "${minutes}m",
            "thinkTime": { "min": "1s", "max": "3s" }, "gracefulStop": "2m" },
  "users": { "username": "user{n}@example.com", "fields": { "invitationCode": "1{n:8}" } },
  "flows": [
    { "name": "login", "kind": "fcsdk-login", "weight": 60, "hold": { "min": "500ms", "max": "2s" } },
    { "name": "gccs", "kind": "gccs-auth", "weight": 30, "cancelRatio": 0.05 },
    { "name": "streem", "kind": "streem-session", "weight": 10, "hold": "1m", "callInterval": "5s", "refreshJitter": "5s" }
  ],
  "timeouts": { "step": "10s", "flow": "2m" }
}
JSON

"$binary" run "$work/soak.json" --out "$work/report" --quiet > "$work/stdout" 2> "$work/stderr" &
pid=$!
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0; }
: > "$work/rss"
for minute in $(seq 1 "$minutes"); do
    peak=0
    for _ in $(seq 1 12); do
        sleep 5
        kill -0 "$pid" 2>/dev/null || break 2
        kb=$(rss_kb)
        [ "$kb" -gt "$peak" ] && peak=$kb
    done
    echo "$minute $peak" >> "$work/rss"
    echo "minute $minute: peak RSS $((peak / 1024)) MB"
done
wait "$pid" || true
tail -3 "$work/stdout"

at5=$(awk '$1 == 5 { print $2 }' "$work/rss")
last=$(tail -1 "$work/rss" | awk '{ print $2 }')
last_minute=$(tail -1 "$work/rss" | awk '{ print $1 }')
if [ -z "$at5" ] || [ "$last_minute" -le 5 ]; then
    echo "too short to judge: need samples past minute 5"
    exit 1
fi
growth=$(awk -v a="$at5" -v b="$last" 'BEGIN { printf "%.2f", (b - a) * 100 / a }')
echo "RSS minute 5: $((at5 / 1024)) MB, minute $last_minute: $((last / 1024)) MB, growth $growth % (limit $limit_percent %)"
awk -v g="$growth" -v l="$limit_percent" 'BEGIN { exit !(g < l) }' && echo "OK" || { echo "FAIL: memory grows with run length"; exit 1; }
