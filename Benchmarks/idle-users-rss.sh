#!/usr/bin/env bash
# Peak memory of concurrent virtual users, mostly in think time: FCSDK login (5 ms), hold 1–5 s, long think times,
# against `authload serve` in a second process, so the figure is the generator's alone. Release build; bounded:
# users × one run of ramp + 30 s on 127.0.0.1 only.
#
#   bash Benchmarks/idle-users-rss.sh [users] [duration]
#
# Budget: 200 MB up to 40,000 users, then 5 KB a user (100,000 users: 500 MB). The ramp starts at most 2,500
# users a second (10 s for 10,000, 40 s for 100,000) and nobody thinks for less than the ramp + 10 s (20–40 s for
# 10,000 users, 50–70 s for 100,000), so flows never start faster than 2,500 a second: the users in a flow at once
# (each holding a connection) stay within the open-file limit, and two cores can serve them while the rest think.
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-10000}
ramp=$(( users / 2500 > 10 ? users / 2500 : 10 ))
duration=${2:-$((ramp + 30))s}
think_min=$((ramp + 10))
think_max=$((ramp + 30))
budget_kb=$(( users > 40000 ? users * 5 : 200 * 1024 ))

# AUTHLOAD_BINARY=path measures another build (a copy of an earlier .build/release/authload) as the generator.
binary=${AUTHLOAD_BINARY:-.build/release/authload}
[ -n "${AUTHLOAD_BINARY:-}" ] || swift build -c release --product authload >/dev/null
work=$(mktemp -d)
echo '{ "fcsdk": { "latency": { "fixed": "5ms" } } }' > "$work/serve.json"
source Benchmarks/serve-target.sh

cat > "$work/idle.json" <<JSON
{
  "name": "idle-users",
  "target": { "baseURL": "$url" },
  "load": { "users": $users, "rampUp": "${ramp}s", "duration": "$duration",
            "thinkTime": { "min": "${think_min}s", "max": "${think_max}s" }, "gracefulStop": "10s" },
  "flows": [ { "name": "login", "kind": "fcsdk-login", "hold": { "min": "1s", "max": "5s" } } ]
}
JSON

status=0
/usr/bin/time -v "$binary" run "$work/idle.json" --out "$work/report" --quiet \
    > "$work/stdout" 2> "$work/time" || status=$?
peak_kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$work/time")
flows=$(awk -F, '$1 == "login" && $2 == "" { print $3 }' "$work/report/summary.csv")
errors=$(awk -F, '$1 == "login" && $2 == "" { print $4 }' "$work/report/summary.csv")
echo "users: $users  ramp: ${ramp}s  flows: $flows  errors: $errors  exit: $status" \
    " peak RSS: $((peak_kb / 1024)) MB ($((peak_kb * 1024 / users)) bytes per user)"
if [ "$status" -ne 0 ] || [ "$errors" != 0 ]; then
    grep -E '^(error|warning)' "$work/time" || true
    cat "$work/report/errors.csv" || true
    echo "FAIL: the run did not end clean"
    exit 1
fi
if [ "$peak_kb" -ge "$budget_kb" ]; then
    echo "FAIL: peak RSS over the $((budget_kb / 1024)) MB budget"
    exit 1
fi
echo "OK: under the $((budget_kb / 1024)) MB budget"
