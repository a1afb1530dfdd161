# Sourced by the HTTP/2 benchmarks (h2-throughput.sh, h2-profile.sh): one nginx worker pinned to CPU 0 serving a
# small JSON file over TLS (a P-256 certificate made here) and HTTP/2 on 127.0.0.1:$port, at most $streams streams
# a connection; and an authload profile for it in $work/bench.json: $connections × $streams users over a shared pool
# of $connections HTTP/2 connections, no think time, for $duration seconds. Expects $duration, $port, $connections
# and $streams; sets $work and an EXIT trap that stops nginx and removes $work.

work=$(mktemp -d)
chmod 755 "$work"  # the nginx worker runs as an unprivileged user
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
    -days 1 -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
source Benchmarks/nginx-serve.sh
serve_small_json "ssl http2" "ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;" \
    "http2_max_concurrent_streams $streams;"
curl -sfk --http2 "https://127.0.0.1:$port/small.json" >/dev/null

cat > "$work/bench.json" <<JSON
{
  "name": "h2-bench",
  "target": { "baseURL": "https://127.0.0.1:$port", "insecureSkipTLSVerify": true, "http": "2" },
  "load": { "users": $((connections * streams)), "duration": "${duration}s", "thinkTime": "0s", "gracefulStop": "2s" },
  "flows": [ { "name": "get", "kind": "http", "path": "/small.json" } ],
  "connections": { "policy": "shared", "poolSize": $connections },
  "timeouts": { "step": "5s" }
}
JSON

