#!/usr/bin/env bash
# Where authload's CPU goes in the http-throughput setup: one run under `perf record -e cpu-clock -g`
# (hardware counters are often missing on VMs; cpu-clock sampling works), then the top symbols by
# self time, by shared object, and the inclusive time of authload's own functions.
#
#   bash Benchmarks/http-profile.sh [duration-seconds] [binary]
#
# Same nginx, pinning and profile as Benchmarks/http-throughput.sh; loopback only. Leaves perf.data
# in $TMPDIR/authload-perf.data for `perf report -i …` afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-8}
binary=${2:-.build/release/authload}
port=${BENCH_PORT:-18081}
command -v perf >/dev/null || { echo "perf is not installed (linux-perf or linux-tools)" >&2; exit 1; }

[ "$binary" != .build/release/authload ] || swift build -c release --product authload >/dev/null
source Benchmarks/nginx-target.sh
data=${TMPDIR:-/tmp}/authload-perf.data

perf record -q -e cpu-clock -g -o "$data" -- \
    taskset -c 1 "$binary" run "$work/bench.json" --out "$work/report" --quiet > /dev/null
count=$(awk -F, '$1 == "get" && $2 == "request" { print $3 }' "$work/report/summary.csv")
echo "requests: $count in ${duration}s"

report() { perf report -i "$data" --stdio -g none "$@" 2>/dev/null | grep -v '^#' | grep -v '^$' | cut -c1-160; }
echo "== self time by shared object"
report --no-children --sort dso | head -10
echo "== self time by symbol"
report --no-children --sort symbol | head -40
echo "== inclusive time of authload's functions"
report --children --sort symbol | grep -E 'Authload|authload' | head -30
