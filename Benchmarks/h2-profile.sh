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
source Benchmarks/perf-authload.sh
profile_authload "${TMPDIR:-/tmp}/authload-h2-perf.data" .build/release/authload 45 40
