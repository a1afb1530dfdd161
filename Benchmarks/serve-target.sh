# Sourced by the benchmarks that run against `authload serve` in a second process, so that the generator's
# figures are its own: starts the release build's staging server on a free port of 127.0.0.1 with the options
# in $work/serve.json, sets $url, and an EXIT trap that stops it and removes $work. Expects $work.

.build/release/authload serve --port 0 --config "$work/serve.json" > "$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q 'listening on' "$work/serve.log" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1)
[ -n "$url" ] || { cat "$work/serve.log"; echo "FAIL: the staging server did not start"; exit 1; }
