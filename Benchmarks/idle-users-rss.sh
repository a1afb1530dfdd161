#!/usr/bin/env bash
# Peak memory of 10,000 concurrent virtual users, mostly in think time, against the embedded server.
# Budget: peak RSS under 200 MB. Release build; bounded: 10,000 users for 40 s on 127.0.0.1 only.
#
#   bash Benchmarks/idle-users-rss.sh [users] [duration]
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-10000}
duration=${2:-40s}
budget_kb=$((200 * 1024))

swift build -c release --product authload >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/idle.json" <<JSON
{
  "name": "idle-users",
  "target": { "embedded": { "fcsdk": { "latency": { "fixed": "5ms" } } } },
  "load": { "users": $users, "rampUp": "10s", "duration": "$duration",
            "thinkTime": { "min": "20s", "max": "40s" }, "gracefulStop": "5s" },
  "flows": [ { "name": "login", "kind": "fcsdk-login", "hold": { "min": "1s", "max": "5s" } } ]
}
JSON

/usr/bin/time -v .build/release/authload run "$work/idle.json" --out "$work/report" --quiet \
    > "$work/stdout" 2> "$work/time"
peak_kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$work/time")
flows=$(awk -F, '$1 == "login" && $2 == "" { print $3 }' "$work/report/summary.csv")
echo "users: $users  flows completed: $flows  peak RSS: $((peak_kb / 1024)) MB ($((peak_kb * 1024 / users)) bytes per user)"
if [ "$peak_kb" -ge "$budget_kb" ]; then
    echo "FAIL: peak RSS over the 200 MB budget"
    exit 1
fi
echo "OK: under the 200 MB budget"
