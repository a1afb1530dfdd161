#!/usr/bin/env bash
# Where authload's CPU goes in the h2-throughput setup: one run under `perf record -e cpu-clock -g`, then the top
# symbols by self time, by shared object, and the inclusive time of authload's own functions.
#
#   bash Benchmarks/h2-profile.sh [duration-seconds] [connections] [streams]
#
# Same nginx (1 worker, TLS P-256, HTTP/2), pinning and load as Benchmarks/h2-throughput.sh; loopback only. Leaves
# perf.data in $TMPDIR/authload-h2-perf.data for `perf report -i …` afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-8}
connections=${2:-8}
streams=${3:-100}
port=${BENCH_PORT:-18444}
command -v perf >/dev/null || { echo "perf is not installed (linux-perf or linux-tools)" >&2; exit 1; }
PATH=$PATH:/usr/sbin
swift build -c release --product authload >/dev/null

source Benchmarks/nginx-h2-target.sh
data=${TMPDIR:-/tmp}/authload-h2-perf.data
perf record -q -e cpu-clock -g -o "$data" -- \
    taskset -c 1 .build/release/authload run "$work/bench.json" --out "$work/report" --quiet > /dev/null
count=$(awk -F, '$1 == "get" && $2 == "request" { print $3 }' "$work/report/summary.csv")
echo "requests: $count in ${duration}s"

report() { perf report -i "$data" --stdio -g none "$@" 2>/dev/null | grep -v '^#' | grep -v '^$' | cut -c1-160; }
echo "== self time by shared object"
report --no-children --sort dso | head -10
echo "== self time by symbol"
report --no-children --sort symbol | head -45
echo "== inclusive time of authload's functions"
report --children --sort symbol | grep -E 'Authload|authload' | head -40
