#!/usr/bin/env bash
# Requests/s of authload against wrk on the same nginx, same machine, same script.
#
# nginx (1 worker) is pinned to CPU 0 and the generator to CPU 1; 50 keep-alive connections; GET of a
# small JSON file on 127.0.0.1 only; each run bounded to $duration. Prints both rates, their ratio, and
# the generator CPU time per request, as medians of $runs runs.
#
#   bash Benchmarks/http-throughput.sh [duration-seconds] [runs] [baseline-binary]
#   BENCH_CLOSE=1 bash Benchmarks/http-throughput.sh   # a new connection per request
#
# With a baseline binary (e.g. a copy of an earlier .build/release/authload), every run measures wrk,
# the baseline and this build back to back against the same nginx, alternating which authload goes
# first, so an A/B comparison on a shared, noisy machine sees the same conditions on both sides; the median of
# the runs' paired ratios is printed too, as medians of each side alone can swing 10 % between rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15}
runs=${2:-3}
baseline=${3:-}
port=${BENCH_PORT:-18080}  # override when another benchmark may be running
if [ -n "$baseline" ] && [ ! -x "$baseline" ]; then echo "not an executable: $baseline" >&2; exit 64; fi

swift build -c release --product authload >/dev/null
source Benchmarks/nginx-target.sh

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cpu_seconds() { awk -F: '/User time|System time/ { s += $2 } END { print s }' "$1"; }

# Runs one authload binary; appends its req/s and CPU µs/request to $work/$2.rps and $work/$2.cpu.
run_authload() {
    local binary=$1 name=$2
    rm -rf "$work/report"
    /usr/bin/time -v taskset -c 1 "$binary" run "$work/bench.json" --out "$work/report" --quiet > /dev/null 2> "$work/$name.time"
    local count rps
    count=$(awk -F, '$1 == "get" && $2 == "request" { print $3 }' "$work/report/summary.csv")
    rps=$(awk -F, '$1 == "get" && $2 == "request" { print $6 }' "$work/report/summary.csv")
    echo "$rps" >> "$work/$name.rps"
    echo "$(cpu_seconds "$work/$name.time") $count" | awk '{ printf "%.2f\n", $1 / $2 * 1e6 }' >> "$work/$name.cpu"
}

summary() {
    local name=$1 label=$2
    local rps
    rps=$(median < "$work/$name.rps")
    echo "  $label $rps req/s   $(median < "$work/$name.cpu") µs generator CPU per request   ratio to wrk $(awk -v a="$rps" -v w="$wrk_rps" 'BEGIN { printf "%.2f", a / w }')"
}

for i in $(seq "$runs"); do
    /usr/bin/time -v taskset -c 1 wrk -t1 -c50 -d"${duration}s" ${wrk_headers[@]+"${wrk_headers[@]}"} "http://127.0.0.1:$port/small.json" > "$work/wrk.out" 2> "$work/wrk.time"
    rps=$(awk '/Requests\/sec/ { print $2 }' "$work/wrk.out")
    total=$(awk '/requests in/ { print $1 }' "$work/wrk.out")
    echo "$rps" >> "$work/wrk.rps"
    echo "$(cpu_seconds "$work/wrk.time") $total" | awk '{ printf "%.2f\n", $1 / $2 * 1e6 }' >> "$work/wrk.cpu"

    if [ -z "$baseline" ]; then
        run_authload .build/release/authload authload
        echo "run $i: wrk $(tail -1 "$work/wrk.rps") req/s, authload $(tail -1 "$work/authload.rps") req/s"
    else
        if [ $((i % 2)) -eq 1 ]; then
            run_authload "$baseline" baseline
            run_authload .build/release/authload authload
        else
            run_authload .build/release/authload authload
            run_authload "$baseline" baseline
        fi
        echo "run $i: wrk $(tail -1 "$work/wrk.rps") req/s, baseline $(tail -1 "$work/baseline.rps") req/s" \
             "($(tail -1 "$work/baseline.cpu") µs), authload $(tail -1 "$work/authload.rps") req/s ($(tail -1 "$work/authload.cpu") µs)"
    fi
done

wrk_rps=$(median < "$work/wrk.rps")
echo "median of $runs runs, ${duration}s each, 50 connections, nginx on CPU 0, generator on CPU 1:"
echo "  wrk      $wrk_rps req/s   $(median < "$work/wrk.cpu") µs generator CPU per request"
[ -z "$baseline" ] || summary baseline "baseline"
summary authload "authload"
if [ -n "$baseline" ]; then
    # Each run measures both builds back to back, so the ratio within a run cancels most of the machine's drift.
    echo "  authload / baseline CPU per request, median of the runs' paired ratios:" \
         "$(paste -d' ' "$work/baseline.cpu" "$work/authload.cpu" | awk '{ printf "%.3f\n", $2 / $1 }' | median)"
fi
