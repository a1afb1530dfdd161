#!/usr/bin/env bash
# Requests/s and generator CPU per request of authload against wrk over TLS 1.3, on the same nginx.
#
# The script makes a P-256 CA and a server certificate for 127.0.0.1 (openssl CLI); nginx (1 worker, TLS 1.3
# only) is pinned to CPU 0 and the generator to CPU 1; 50 connections; GET of a small JSON file on 127.0.0.1
# only; each run bounded to $duration. Two modes, measured in alternating rounds:
#   keep   50 keep-alive connections
#   close  a new TLS connection per request (wrk sends `Connection: close`; authload's users open one per flow)
# authload verifies the certificate against the CA file the script made (`target.tls.caFile`, as a user would);
# wrk verifies nothing (SSL_VERIFY_NONE). BENCH_NOVERIFY=1 adds authload with `insecureSkipTLSVerify`, to see
# what verification costs.
#
#   bash Benchmarks/tls-throughput.sh [duration-seconds] [runs] [baseline-binary]
#   BENCH_MODES=keep bash Benchmarks/tls-throughput.sh   # one mode only
#
# Prints, per mode, the medians of each side's req/s and CPU µs per request, and the median of the runs' paired
# CPU ratios authload / wrk (each round measures both back to back, which cancels most of a shared machine's drift).
# With a baseline binary (an earlier .build/release/authload), every round measures it too, alternating the order.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
runs=${2:-5}
baseline=${3:-}
port=${BENCH_PORT:-18443}  # override when another benchmark may be running
modes=${BENCH_MODES:-keep close}
if [ -n "$baseline" ] && [ ! -x "$baseline" ]; then echo "not an executable: $baseline" >&2; exit 64; fi

need=()
command -v nginx >/dev/null || need+=(nginx)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; fi
swift build -c release --product authload >/dev/null

work=$(mktemp -d)
chmod 755 "$work"  # the nginx worker runs as an unprivileged user
trap 'rm -rf "$work"' EXIT

# A CA and a server certificate signed by it, both ECDSA P-256, valid for two days.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ca.key" -out "$work/ca.pem" \
    -days 2 -subj "/CN=authload bench CA" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/server.key" -out "$work/server.csr" \
    -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$work/server.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
    -extfile "$work/server.ext" -out "$work/server.pem" 2>/dev/null
chmod 644 "$work"/*.key  # read by nginx's master as root; the worker needs none of it

source Benchmarks/nginx-serve.sh
serve_small_json ssl "ssl_certificate $work/server.pem; ssl_certificate_key $work/server.key; ssl_protocols TLSv1.3;" ""
curl -sf --cacert "$work/ca.pem" "https://127.0.0.1:$port/small.json" >/dev/null

# keep: a shared pool of 50 keep-alive connections; close: per-user connections that live for one flow.
profile() {
    local connections=$1 tls=$2
    cat <<JSON
{
  "name": "tls-throughput",
  "target": { "baseURL": "https://127.0.0.1:$port", $tls },
  "load": { "users": 50, "duration": "${duration}s", "thinkTime": "0s", "gracefulStop": "2s" },
  "flows": [ { "name": "get", "kind": "http", "path": "/small.json" } ],
  "connections": $connections,
  "timeouts": { "step": "5s" }
}
JSON
}
keep='{ "policy": "shared", "poolSize": 50 }'
close='{ "policy": "per-user", "lifetime": "iteration" }'
verified="\"tls\": { \"caFile\": \"$work/ca.pem\" }"
unverified='"insecureSkipTLSVerify": true'
profile "$keep" "$verified" > "$work/keep.json"
profile "$close" "$verified" > "$work/close.json"
profile "$keep" "$unverified" > "$work/keep-noverify.json"
profile "$close" "$unverified" > "$work/close-noverify.json"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cpu_seconds() { awk -F: '/User time|System time/ { s += $2 } END { print s }' "$1"; }
per_request() { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f\n", $1 / $2 * 1e6; else print "nan" }'; }

# Appends the run's req/s and CPU µs/request to $work/$mode.$name.rps and .cpu.
run_wrk() {
    local mode=$1 headers=()
    [ "$mode" = keep ] || headers=(-H "Connection: close")
    /usr/bin/time -v taskset -c 1 wrk -t1 -c50 -d"${duration}s" "${headers[@]+"${headers[@]}"}" \
        "https://127.0.0.1:$port/small.json" > "$work/wrk.out" 2> "$work/wrk.time"
    awk '/Requests\/sec/ { print $2 }' "$work/wrk.out" >> "$work/$mode.wrk.rps"
    per_request "$(cpu_seconds "$work/wrk.time")" "$(awk '/requests in/ { print $1 }' "$work/wrk.out")" >> "$work/$mode.wrk.cpu"
}

run_authload() {
    local mode=$1 name=$2 binary=$3 profile=$4
    rm -rf "$work/report"
    /usr/bin/time -v taskset -c 1 "$binary" run "$profile" --out "$work/report" --quiet > /dev/null 2> "$work/$name.time" || {
        echo "$name ($mode) failed:" >&2; tail -5 "$work/$name.time" >&2; exit 1
    }
    local count rps errors
    count=$(awk -F, '$1 == "get" && $2 == "request" { print $3 }' "$work/report/summary.csv")
    rps=$(awk -F, '$1 == "get" && $2 == "request" { print $6 }' "$work/report/summary.csv")
    errors=$(awk -F, '$1 == "get" && $2 == "request" { print $4 }' "$work/report/summary.csv")
    [ "${errors:-0}" = 0 ] || echo "  $name ($mode): $errors failed requests" >&2
    echo "$rps" >> "$work/$mode.$name.rps"
    per_request "$(cpu_seconds "$work/$name.time")" "$count" >> "$work/$mode.$name.cpu"
}

sides=(authload)
[ -z "$baseline" ] || sides+=(baseline)
[ -z "${BENCH_NOVERIFY:-}" ] || sides+=(noverify)
run_side() {
    local mode=$1 side=$2
    case $side in
        wrk) run_wrk "$mode" ;;
        authload) run_authload "$mode" authload .build/release/authload "$work/$mode.json" ;;
        baseline) run_authload "$mode" baseline "$baseline" "$work/$mode.json" ;;
        noverify) run_authload "$mode" noverify .build/release/authload "$work/$mode-noverify.json" ;;
    esac
}

for i in $(seq "$runs"); do
    for mode in $modes; do
        order=(wrk "${sides[@]}")
        # Odd rounds go forwards, even rounds backwards, so no side always runs on a warmer or cooler machine.
        if [ $((i % 2)) -eq 0 ]; then for ((k = ${#order[@]} - 1; k >= 0; k--)); do run_side "$mode" "${order[k]}"; done
        else for side in "${order[@]}"; do run_side "$mode" "$side"; done; fi
        line="run $i $mode:"
        for side in wrk "${sides[@]}"; do
            line+=" $side $(tail -1 "$work/$mode.$side.rps") req/s $(tail -1 "$work/$mode.$side.cpu") µs;"
        done
        echo "$line"
    done
done

echo "median of $runs runs, ${duration}s each, 50 connections, TLS 1.3, ECDSA P-256, nginx on CPU 0, generator on CPU 1:"
for mode in $modes; do
    wrk_rps=$(median < "$work/$mode.wrk.rps")
    echo "$mode:"
    echo "  wrk       $wrk_rps req/s   $(median < "$work/$mode.wrk.cpu") µs generator CPU per request (no verification)"
    for side in "${sides[@]}"; do
        rps=$(median < "$work/$mode.$side.rps")
        ratio=$(paste -d' ' "$work/$mode.wrk.cpu" "$work/$mode.$side.cpu" | awk '{ printf "%.3f\n", $2 / $1 }' | median)
        printf '  %-9s %s req/s   %s µs generator CPU per request   rate / wrk %s   CPU / wrk %s (median of paired ratios)\n' \
            "$side" "$rps" "$(median < "$work/$mode.$side.cpu")" "$(awk -v a="$rps" -v w="$wrk_rps" 'BEGIN { printf "%.3f", a / w }')" "$ratio"
    done
    if [ -n "$baseline" ]; then
        echo "  authload / baseline CPU per request, median of paired ratios:" \
            "$(paste -d' ' "$work/$mode.baseline.cpu" "$work/$mode.authload.cpu" | awk '{ printf "%.3f\n", $2 / $1 }' | median)"
    fi
done
