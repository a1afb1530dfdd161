#!/usr/bin/env bash
# 50,000 users logging in and out through FCSDK against nginx on loopback, the way a population of app users
# does: 10 s ramp, think 20–40 s, hold the session 1–5 s. Passes when the generator reports no error, keeps its
# schedule (exit 0), and every HTTP request it counts is a line in nginx's access log.
#
#   bash Benchmarks/many-users-nginx.sh [users] [duration] [lifetime] [source addresses]
#
# lifetime is `iteration` (a new connection per login, the default) or `user`; source addresses, comma
# separated (e.g. 127.0.0.2,127.0.0.3), spread the connections over several local port ranges. nginx runs one
# worker with room for 30,000 connections; everything stays on 127.0.0.1; the run is bounded by its duration.
# AUTHLOAD_BINARY=path runs another build (e.g. a copy of an earlier .build/release/authload) for an A/B.
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-50000}
duration=${2:-2m}
lifetime=${3:-iteration}
sources=${4:-}
port=${BENCH_PORT:-18090}

binary=${AUTHLOAD_BINARY:-.build/release/authload}
if [ -z "${AUTHLOAD_BINARY:-}" ]; then swift build -c release --product authload >/dev/null; fi
nginx_log=1
source Benchmarks/nginx-login.sh

source_list=""
if [ -n "$sources" ]; then source_list=", \"sourceAddresses\": [\"${sources//,/\", \"}\"]"; fi
cat > "$work/many.json" <<JSON
{
  "name": "many-users",
  "target": { "baseURL": "http://127.0.0.1:$port" },
  "load": { "users": $users, "rampUp": "10s", "duration": "$duration",
            "thinkTime": { "min": "20s", "max": "40s" }, "gracefulStop": "10s" },
  "flows": [ { "name": "login", "kind": "fcsdk-login", "hold": { "min": "1s", "max": "5s" } } ],
  "connections": { "lifetime": "$lifetime"$source_list }
}
JSON

status=0
/usr/bin/time -v "$binary" run "$work/many.json" --out "$work/report" ${BENCH_VERBOSE:+--progress-interval 2s} \
    > "$work/stdout" 2> "$work/time" || status=$?
kill -USR1 "$(cat "$work/nginx.pid")"  # reopen logs: flushes the access log's buffer
sleep 0.5
peak_kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$work/time")
read -r flows errors requests < <(awk -F, '$1 == "login" && $2 == "" { print $3, $4, $16 }' "$work/report/summary.csv")
logged=$(wc -l < "$work/access.log")
echo "users: $users  lifetime: $lifetime  flows: $flows  errors: $errors  exit: $status" \
    " HTTP requests: $requests  nginx access log: $logged  peak RSS: $((peak_kb / 1024)) MB ($((peak_kb * 1024 / users)) bytes per user)"
grep -E '^(error|warning)' "$work/time" || true
if [ "$errors" != 0 ]; then cat "$work/report/errors.csv"; fi
[ "$status" -eq 0 ] && [ "$errors" = 0 ] && [ "$requests" = "$logged" ] || { echo "FAIL"; exit 1; }
echo "OK: no generator-side error, schedule kept, every request in nginx's access log"
