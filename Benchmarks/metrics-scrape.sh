#!/usr/bin/env bash
# What a Prometheus scrape of a running authload costs, with about 100 series (four GCCS flows of 26 steps
# and statuses each, plus FCSDK). Release build; bounded: one 60 s run against the embedded server on
# 127.0.0.1, 200 scrapes.
#
# It measures, in one run: the generator's CPU over 10 s with no scrape (the reference), then over the
# time of 200 back-to-back scrapes, and prints CPU per scrape (the difference, per scrape), the client's
# wall time per scrape, the exposition's size, and the series count.
#
#   bash Benchmarks/metrics-scrape.sh [scrapes]
set -euo pipefail
cd "$(dirname "$0")/.."
scrapes=${1:-200}
port=19464
swift build -c release --product authload >/dev/null
work=$(mktemp -d)
cat > "$work/scrape.json" <<JSON
{
  "name": "scrape-cost",
  "target": { "embedded": { "fcsdk": { "latency": { "fixed": "5ms" } }, "gccs": { "nodeDelay": { "fixed": "50ms" } } } },
  "load": { "users": 200, "rampUp": "2s", "duration": "60s", "thinkTime": "200ms", "gracefulStop": "5s" },
  "flows": [
    { "name": "login", "kind": "fcsdk-login", "weight": 4 },
    { "name": "gccs-a", "kind": "gccs-auth" }, { "name": "gccs-b", "kind": "gccs-auth" },
    { "name": "gccs-c", "kind": "gccs-auth" }, { "name": "gccs-d", "kind": "gccs-auth" }
  ],
  "metrics": { "linger": "0s" }
}
JSON
.build/release/authload run "$work/scrape.json" --out "$work/report" --quiet --metrics-listen "$port" > "$work/stdout" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }   # utime + stime, clock ticks
tick=$(getconf CLK_TCK)
sleep 10
curl -sf "http://127.0.0.1:$port/metrics" > "$work/exposition"
series=$(grep -c '^authload_steps_total{\|^authload_flows_total{' "$work/exposition")
samples=$(grep -vc '^#' "$work/exposition")
bytes=$(wc -c < "$work/exposition")

before=$(cpu); sleep 10; after=$(cpu)
idle_ticks=$((after - before))
start=$(date +%s.%N); before=$(cpu)
for _ in $(seq "$scrapes"); do curl -sf -o /dev/null "http://127.0.0.1:$port/metrics"; done
after=$(cpu); end=$(date +%s.%N)
wall=$(echo "$end - $start" | bc -l)
busy_ticks=$((after - before))
echo "series: $series (flows and steps), samples per scrape: $samples, exposition: $bytes bytes"
echo "client wall time per scrape: $(echo "scale=2; 1000 * $wall / $scrapes" | bc -l) ms"
echo "generator CPU: $(echo "scale=1; 100 * $idle_ticks / $tick / 10" | bc -l) % of a core without scrapes, " \
     "$(echo "scale=1; 100 * $busy_ticks / $tick / $wall" | bc -l) % during $scrapes back-to-back scrapes"
echo "CPU per scrape (above the run's own): $(echo "scale=2; 1000 * ($busy_ticks / $tick - $idle_ticks / $tick / 10 * $wall) / $scrapes" | bc -l) ms"
