# Sourced by the HTTP benchmarks: one nginx worker pinned to CPU 0 serving a small JSON file on
# 127.0.0.1:$port, and an authload profile for it in $work/bench.json (50 users, shared pool of 50
# keep-alive connections, no think time). Expects $duration and $port; sets $work, $wrk_headers and an EXIT
# trap that stops nginx and removes $work.
#
# BENCH_CLOSE=1: a new connection per request on both sides — wrk sends `Connection: close`, authload's users
# (per-user connections, lifetime `iteration`) open one for each flow of one GET.

need=()
command -v nginx >/dev/null || need+=(nginx)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; fi

work=$(mktemp -d)
chmod 755 "$work"  # the nginx worker runs as an unprivileged user
source Benchmarks/nginx-serve.sh
serve_small_json "" "" ""
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

wrk_headers=()
if [ -n "${BENCH_CLOSE:-}" ]; then
    wrk_headers=(-H "Connection: close")
    sed -i 's|"connections": {[^}]*}|"connections": { "policy": "per-user", "lifetime": "iteration" }|' "$work/bench.json"
fi
