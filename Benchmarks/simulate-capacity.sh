#!/usr/bin/env bash
# The capacity profile (Profiles/capacity.json: open-model steps of 100/s from 100 to 1,500/s, 10 s each, p99 < 50 ms)
# simulated against a model of the service, then run for real against `authload serve` with the same model (8 workers
# of 10 ms, a queue of 1,000: it saturates at 800 requests/s); prints each run's last stage inside the SLO and its knee,
# and fails when they differ (not in CI). Release build; bounded in time (the profile's 150 s plus its grace) and to
# 127.0.0.1.
#
#   bash Benchmarks/simulate-capacity.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product authload >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo '{"fcsdk": {"latency": {"fixed": "10ms"}}, "capacity": {"workers": 8, "queue": 1000}}' > "$work/serve.json"

start=$(date +%s.%N)
.build/release/authload simulate Profiles/capacity.json --config "$work/serve.json" --out "$work/simulated" --quiet > /dev/null || true
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')

source Benchmarks/serve-target.sh
python3 - "$url" > "$work/real.json" <<'PY'
import json, sys
p = json.load(open("Profiles/capacity.json"))
p["target"] = {"baseURL": sys.argv[1]}
json.dump(p, sys.stdout)
PY
.build/release/authload run "$work/real.json" --out "$work/real" --quiet > /dev/null || true

python3 - "$work/simulated/result.json" "$work/real/result.json" "$wall" <<'PY'
import json, sys
def verdict(path):
    c = json.load(open(path))["capacity"]
    label = lambda key: f'{c["stages"][c[key]]["target"]:g}' if c.get(key) is not None else "none"
    return label("lastPassingStage"), label("kneeStage"), c["stages"][-1]["throughput"]
s, r = verdict(sys.argv[1]), verdict(sys.argv[2])
print(f"simulated ({sys.argv[3]} s): last stage inside the SLO {s[0]}/s, knee {s[1]}/s, top stage {s[2]:.0f}/s")
print(f"real:               last stage inside the SLO {r[0]}/s, knee {r[1]}/s, top stage {r[2]:.0f}/s")
sys.exit(0 if s[:2] == r[:2] else 1)
PY
echo OK
