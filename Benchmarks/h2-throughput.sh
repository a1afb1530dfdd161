#!/usr/bin/env bash
# Requests/s and CPU per request of authload's HTTP/2 client against h2load's, on the same nginx, in the same run.
#
# nginx (1 worker, TLS with an ECDSA P-256 certificate, HTTP/2) is pinned to CPU 0 and the generator to CPU 1; both
# generators open the same connections with the same streams each (8 × 100 by default: h2load -c8 -m100, authload's
# shared pool of 8 with 800 users and no think time, so each connection carries up to 100 streams) and GET a small
# JSON file on 127.0.0.1 only; each round is bounded to $duration. Rounds alternate h2load and authload; prints both
# rates, their ratio and each one's generator CPU per request, as medians of $runs rounds, and whether authload
# reached the target (≥ 0.9× h2load's requests/s with ≤ 1.2× its CPU per request).
#
#   bash Benchmarks/h2-throughput.sh [duration-seconds] [runs] [connections] [streams]
#   BENCH_PORT=18443 to move nginx
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
runs=${2:-3}
connections=${3:-8}
streams=${4:-100}
port=${BENCH_PORT:-18443}

need=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v h2load >/dev/null || need+=(nghttp2-client)
if [ ${#need[@]} -gt 0 ]; then apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; fi
PATH=$PATH:/usr/sbin

swift build -c release --product authload >/dev/null

source Benchmarks/nginx-h2-target.sh

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cpu_seconds() { awk -F: '/User time|System time/ { s += $2 } END { print s }' "$1"; }

for i in $(seq "$runs"); do
    /usr/bin/time -v taskset -c 1 h2load -t1 -c"$connections" -m"$streams" -D "$duration" \
        "https://127.0.0.1:$port/small.json" > "$work/h2load.out" 2> "$work/h2load.time"
    rps=$(awk '/^finished in/ { print $4 }' "$work/h2load.out")
    total=$(awk '/^requests:/ { print $8 }' "$work/h2load.out")  # succeeded
    echo "$rps" >> "$work/h2load.rps"
    echo "$(cpu_seconds "$work/h2load.time") $total" | awk '{ printf "%.2f\n", $1 / $2 * 1e6 }' >> "$work/h2load.cpu"

    rm -rf "$work/report"
    /usr/bin/time -v taskset -c 1 .build/release/authload run "$work/bench.json" --out "$work/report" --quiet \
        > /dev/null 2> "$work/authload.time"
    count=$(awk -F, '$1 == "get" && $2 == "request" { print $3 }' "$work/report/summary.csv")
    errors=$(awk -F, '$1 == "get" && $2 == "request" { print $4 }' "$work/report/summary.csv")
    echo "$(awk -F, '$1 == "get" && $2 == "request" { print $6 }' "$work/report/summary.csv")" >> "$work/authload.rps"
    echo "$(cpu_seconds "$work/authload.time") $count" | awk '{ printf "%.2f\n", $1 / $2 * 1e6 }' >> "$work/authload.cpu"
    echo "round $i: h2load $(tail -1 "$work/h2load.rps") req/s ($(tail -1 "$work/h2load.cpu") µs), " \
         "authload $(tail -1 "$work/authload.rps") req/s ($(tail -1 "$work/authload.cpu") µs, $errors errors)"
done

h2_rps=$(median < "$work/h2load.rps")
h2_cpu=$(median < "$work/h2load.cpu")
al_rps=$(median < "$work/authload.rps")
al_cpu=$(median < "$work/authload.cpu")
rps_ratio=$(awk -v a="$al_rps" -v b="$h2_rps" 'BEGIN { printf "%.2f", a / b }')
cpu_ratio=$(awk -v a="$al_cpu" -v b="$h2_cpu" 'BEGIN { printf "%.2f", a / b }')
echo "median of $runs rounds, ${duration}s each, $connections connections × $streams streams, TLS HTTP/2, nginx on CPU 0, generator on CPU 1:"
echo "  h2load   $h2_rps req/s   $h2_cpu µs generator CPU per request"
echo "  authload $al_rps req/s   $al_cpu µs generator CPU per request"
echo "  authload / h2load: requests/s $rps_ratio (target ≥ 0.9), CPU per request $cpu_ratio (target ≤ 1.2)"
awk -v r="$rps_ratio" -v c="$cpu_ratio" 'BEGIN { exit !(r >= 0.9 && c <= 1.2) }' && echo "  target met" || echo "  target missed"
