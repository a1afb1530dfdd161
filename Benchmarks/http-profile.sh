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
source Benchmarks/perf-authload.sh
profile_authload "${TMPDIR:-/tmp}/authload-perf.data" "$binary" 40 30
