#!/usr/bin/env bash
# A night in a minute: a mixed soak of 2,000 users (all four flows, Streem sessions refreshing) simulated for 24 h
# of virtual time (`authload simulate`), then the same profile run for real against `authload serve` of the same
# models for 10 minutes (not in CI).
#
# Prints the simulation's wall time (the budget is 60 s for 24 h), its peak RSS per tenth of the run, and flows per
# hour in both runs over the same minutes of the schedule; they must agree within 2 %. Release build;
# bounded in time (the simulation by `timeout`, the real run by its duration plus its grace) and to 127.0.0.1.
#
# The simulation runs as `--threads` shards (default 2: both cores), merged into one report as `authload merge` does.
#
#   bash Benchmarks/simulate.sh [virtual hours] [real minutes, 0: none] [users] [simulation threads]
set -euo pipefail
cd "$(dirname "$0")/.."
hours=${1:-24}
minutes=${2:-10}
users=${3:-2000}
threads=${4:-2}
budget_seconds=60

swift build -c release --product authload >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/serve.json" <<JSON
{ "fcsdk": { "latency": { "lognormal": { "median": "8ms", "p99": "60ms" } }, "setCookie": "JSESSIONID" },
  "gccs": { "nodeDelay": { "lognormal": { "median": "200ms", "p99": "1s" } } },
  "okta": { "latency": { "lognormal": { "median": "5ms", "p99": "40ms" } }, "dispatchLatency": { "fixed": "150ms" } },
  "streem": { "tokenLifetime": "2m" } }
JSON
# Users of a nightly soak: a flow, then 20–40 s of think time.
profile() { # $1: target, $2: duration
    cat <<JSON
{ "name": "soak", "target": $1,
  "load": { "users": $users, "rampUp": "1m", "duration": "$2", "thinkTime": { "min": "20s", "max": "40s" }, "gracefulStop": "3m" },
  "users": { "username": "user{n}@example.com", "password": "demo-password", "fields": { "invitationCode": "1{n:8}" } },
  "flows": [
    { "name": "login", "kind": "fcsdk-login", "weight": 50, "hold": { "min": "500ms", "max": "2s" } },
    { "name": "mfa", "kind": "okta-idx-mfa", "weight": 20, "factor": "email" },
    { "name": "gccs", "kind": "gccs-auth", "weight": 20, "cancelRatio": 0.05 },
    { "name": "streem", "kind": "streem-session", "weight": 10, "hold": "5m", "callInterval": "30s", "refreshJitter": "10s" }
  ],
  "metrics": { "interval": "10s", "checkpoint": "10m" },
  "timeouts": { "step": "10s", "flow": "10m" }
}
JSON
}
profile "{ \"embedded\": $(cat "$work/serve.json") }" "${hours}h" > "$work/simulated.json"

start=$(date +%s.%N)
timeout $((budget_seconds * 20)) .build/release/authload simulate "$work/simulated.json" --threads "$threads" --out "$work/simulated" --quiet \
    > "$work/sim.out" 2>&1 &
pid=$!
: > "$work/rss"
# The poll shares the two cores with the simulation, so it forks as little as it can: the simulation's pid is looked
# up once, and its RSS is read with bash's own `read` once a second (a `pgrep` and an `awk` every half second cost
# the simulation several seconds of a day).
child=
while kill -0 "$pid" 2>/dev/null; do
    [ -z "$child" ] && child=$(pgrep -P "$pid" -n authload || true)
    if [ -n "$child" ] && [ -r "/proc/$child/status" ]; then
        while read -r key value _; do
            [ "$key" = VmRSS: ] && { echo "$value" >> "$work/rss"; break; }
        done < "/proc/$child/status" 2>/dev/null || true
    fi
    sleep 1
done
wait "$pid" || true
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
peak_kb=$(sort -n "$work/rss" | tail -1)
echo "simulated ${hours}h of $users users on $threads threads in ${wall}s (budget ${budget_seconds}s for 24h); peak RSS $((${peak_kb:-0} / 1024)) MB"
tail -3 "$work/sim.out"
awk '{ r[NR] = $1 } END { n = NR; if (n < 10) exit; printf "RSS peak per tenth of the run (MB):"; for (t = 0; t < 10; t++) { p = 0; for (i = int(t * n / 10) + 1; i <= int((t + 1) * n / 10); i++) if (r[i] > p) p = r[i]; printf " %d", p / 1024 }; print "" }' "$work/rss"

awk -v w="$wall" -v h="$hours" -v b="$budget_seconds" 'BEGIN { exit !(w * 24 / h <= b) }' && within=1 || within=0
[ "$minutes" = 0 ] && { [ "$within" = 1 ] && echo "OK (no real run)" || echo "FAIL: over the time budget"; [ "$within" = 1 ]; exit; }

# The same profile for real against the same models in a second process.
source Benchmarks/serve-target.sh
profile "{ \"baseURL\": \"$url\" }" "${minutes}m" > "$work/real.json"
.build/release/authload run "$work/real.json" --out "$work/real" --quiet > "$work/real.out" 2>&1 || true

# Flows per hour, counted by each flow's first step (which starts it), over the same part of the schedule in both
# runs: from minute 2 to a minute before the real run's end. A user in a 5-minute Streem session starts no other
# flow, and it takes several sessions' length for the share of users in one to settle: the first minutes of any run
# start more flows an hour than its steady state, so the simulated day's rate is printed beside, not compared.
rate() { # $1: result.json, $2 and $3: the window, seconds from the start
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); lo, hi = float(sys.argv[2]), float(sys.argv[3])
first, seen = set(), set()
for m in r["metrics"]:
    i = m["id"]
    if i.get("step") is not None and i["flow"] not in seen:
        seen.add(i["flow"]); first.add((i["flow"], i["step"]))
count = sum(m["count"] for row in r["timeseries"] if lo <= row["startSeconds"] < hi
            for m in row["metrics"] if (m["id"]["flow"], m["id"].get("step")) in first)
print(count * 3600.0 / (hi - lo))
PY
}
window_end=$((minutes * 60 - 60))
simulated=$(rate "$work/simulated/result.json" 120 "$window_end")
real=$(rate "$work/real/result.json" 120 "$window_end")
day=$(rate "$work/simulated/result.json" 120 $((hours * 3600 - 60)))
tail -1 "$work/real.out"
python3 - "$simulated" "$real" "$day" <<'PY' || flows_differ=1
import sys
s, r, day = (float(v) for v in sys.argv[1:4])
d = (s - r) * 100 / r
print(f"flows/hour in the real run's steady minutes: simulated {s:,.0f}, real {r:,.0f}, difference {d:+.2f} % (limit ±2 %)")
print(f"flows/hour over the simulated day: {day:,.0f}")
sys.exit(0 if abs(d) <= 2 else 1)
PY
[ "$within" = 1 ] || echo "FAIL: over the time budget"
[ -n "${flows_differ:-}" ] && echo "FAIL: flows per hour differ by more than 2 %"
[ "$within" = 1 ] && [ -z "${flows_differ:-}" ] && echo "OK"
