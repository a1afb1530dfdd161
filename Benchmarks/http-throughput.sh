#!/usr/bin/env bash
# Requests/s of authload against wrk on the same nginx, same machine, same script.
#
# nginx (1 worker) is pinned to CPU 0 and the generator to CPU 1; 50 keep-alive connections; GET of a
# small JSON file on 127.0.0.1 only; each run bounded to $duration. Prints both rates, their ratio, and
# the generator CPU time per request, as medians of $runs runs.
#
#   bash Benchmarks/http-throughput.sh [duration-seconds] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15}
runs=${2:-3}
port=18080

need=()
command -v nginx >/dev/null || need+=(nginx)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; fi
swift build -c release --product authload >/dev/null

work=$(mktemp -d)
chmod 755 "$work"  # the nginx worker runs as an unprivileged user
printf '{"status":"ok","service":"bench","items":[1,2,3]}' > "$work/small.json"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 10000000;
    server {
        listen 127.0.0.1:$port;
        root $work;
        location / { default_type application/json; }
    }
}
CONF
taskset -c 0 nginx -c "$work/nginx.conf"
trap 'kill $(cat "$work/nginx.pid") 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 0.5
curl -sf "http://127.0.0.1:$port/small.json" >/dev/null

cat > "$work/bench.json" <<JSON
{
  "name": "http-throughput",
  "target": { "baseURL": "http://127.0.0.1:$port" },
  "load": { "users": 50, "duration": "${duration}s", "thinkTime": "0s", "gracefulStop": "2s" },
  "flows": [ { "name": "get", "kind": "http", "path": "/small.json" } ],
  "connections": { "policy": "shared", "poolSize": 50 },
  "timeouts": { "step": "5s" }
}
JSON

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cpu_seconds() { awk -F: '/User time|System time/ { s += $2 } END { print s }' "$1"; }

for i in $(seq "$runs"); do
    /usr/bin/time -v taskset -c 1 wrk -t1 -c50 -d"${duration}s" "http://127.0.0.1:$port/small.json" > "$work/wrk.out" 2> "$work/wrk.time"
    rps=$(awk '/Requests\/sec/ { print $2 }' "$work/wrk.out")
    total=$(awk '/requests in/ { print $1 }' "$work/wrk.out")
    echo "$rps" >> "$work/wrk.rps"
    echo "$(cpu_seconds "$work/wrk.time") $total" | awk '{ printf "%.2f\n", $1 / $2 * 1e6 }' >> "$work/wrk.cpu"

    rm -rf "$work/report"
    /usr/bin/time -v taskset -c 1 .build/release/authload run "$work/bench.json" --out "$work/report" --quiet > /dev/null 2> "$work/authload.time"
    count=$(awk -F, '$1 == "get" && $2 == "request" { print $3 }' "$work/report/summary.csv")
    rps=$(awk -F, '$1 == "get" && $2 == "request" { print $6 }' "$work/report/summary.csv")
    echo "$rps" >> "$work/authload.rps"
    echo "$(cpu_seconds "$work/authload.time") $count" | awk '{ printf "%.2f\n", $1 / $2 * 1e6 }' >> "$work/authload.cpu"
    echo "run $i: wrk $(tail -1 "$work/wrk.rps") req/s, authload $rps req/s"
done

wrk_rps=$(median < "$work/wrk.rps")
authload_rps=$(median < "$work/authload.rps")
echo "median of $runs runs, ${duration}s each, 50 connections, nginx on CPU 0, generator on CPU 1:"
echo "  wrk      $wrk_rps req/s   $(median < "$work/wrk.cpu") µs generator CPU per request"
echo "  authload $authload_rps req/s   $(median < "$work/authload.cpu") µs generator CPU per request"
echo "  ratio authload / wrk: $(awk -v a="$authload_rps" -v w="$wrk_rps" 'BEGIN { printf "%.2f", a / w }')"
