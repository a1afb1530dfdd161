#!/usr/bin/env bash
# What `authload merge` costs: 16 shards of a run with 20 series, stretched to 1 hour (and to 30 min, 2 h and
# 4 h, to show memory does not follow the run's length). Release build; bounded: 16 shard runs of 3 s against
# the embedded server on 127.0.0.1, then merges of files on disk.
#
# Real shards are recorded first (a p99 threshold with 10 s windows makes one series keep per-interval
# histograms, as a windowed threshold does). Their time series are then stretched to the run length by
# repeating their rows, as a long run's result.json holds them: one row per second up to 2 hours, and past
# that at most 7,200 rows of several intervals each (the cap a run itself keeps). Prints, per length, the
# merge's wall time (median of 3) and peak RSS, and fails when the 1-hour merge takes 5 s or more.
#
#   bash Benchmarks/merge-shards.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product authload >/dev/null
bin=.build/release/authload
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/profile.json" <<JSON
{
  "name": "merge-cost",
  "target": { "embedded": { "fcsdk": { "latency": { "lognormal": { "median": "5ms", "p99": "40ms" } } } } },
  "load": { "users": 32, "duration": "3s", "thinkTime": "20ms", "gracefulStop": "5s" },
  "flows": [
    { "name": "a", "kind": "fcsdk-login" }, { "name": "b", "kind": "fcsdk-login" }, { "name": "c", "kind": "fcsdk-login" },
    { "name": "d", "kind": "fcsdk-login" }, { "name": "e", "kind": "fcsdk-login" }, { "name": "f", "kind": "fcsdk-login" },
    { "name": "g", "kind": "http", "path": "/health" }
  ],
  "thresholds": [
    { "metric": "a.login", "percentile": 99, "max": "500ms", "window": "10s" },
    { "metric": "steps", "maxErrorRate": 0.05 }
  ]
}
JSON
echo "recording 16 shards of 3 s …"
for batch in 0 4 8 12; do
    for i in $(seq "$batch" $((batch + 3))); do
        "$bin" run "$work/profile.json" --shard "$i/16" --out "$work/shards/shard-$i" --quiet >/dev/null 2>&1 || true &
    done
    wait
done
series=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['metrics']))" "$work/shards/shard-0/result.json")
echo "series per shard: $series"

stretch() {   # hours → directory of 16 stretched shards
    python3 - "$work/shards" "$work/h$1" "$1" <<'PY'
import json, os, sys
source, target, hours = sys.argv[1], sys.argv[2], float(sys.argv[3])
intervals = int(hours * 3600)
span = max(1, -(-intervals // 7200))          # past 2 hours, rows of several intervals, as a long run keeps them
for name in sorted(os.listdir(source)):
    result = json.load(open(os.path.join(source, name, "result.json")))
    rows = [r for r in result["timeseries"] if r["metrics"]]
    stretched = []
    for n, index in enumerate(range(0, intervals, span)):
        row = dict(rows[n % len(rows)])
        row["index"], row["startSeconds"] = index, float(index)
        if span > 1:
            row["span"] = span
        stretched.append(row)
    result["timeseries"] = stretched
    result["durationSeconds"] = float(intervals)
    result["plan"]["startedAtEpochSeconds"] = 1_800_000_000.0
    result["plan"]["windowsUntilSeconds"] = float(intervals)
    os.makedirs(os.path.join(target, name))
    json.dump(result, open(os.path.join(target, name, "result.json"), "w"))
PY
}

status=0
printf "%-8s %10s %12s %10s\n" length rows/shard "wall (s)" "RSS (MB)"
for hours in 0.5 1 2 4; do
    stretch "$hours"
    rows=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['timeseries']))" "$work/h$hours/shard-0/result.json")
    walls=()
    for run in 1 2 3; do
        rm -rf "$work/merged"
        /usr/bin/time -f "%e %M" -o "$work/time" "$bin" merge "$work/h$hours" --out "$work/merged" --quiet >/dev/null || true
        walls+=("$(cut -d' ' -f1 "$work/time")")
        rss=$(cut -d' ' -f2 "$work/time")
    done
    median=$(printf "%s\n" "${walls[@]}" | sort -n | sed -n 2p)
    printf "%-8s %10s %12s %10s\n" "${hours}h" "$rows" "$median" "$((rss / 1024))"
    if [ "$hours" = 1 ] && awk "BEGIN { exit !($median >= 5) }"; then status=1; fi
    rm -rf "$work/h$hours"
done
[ "$status" -eq 0 ] && echo "PASS: 16 shards of 1 hour merge in under 5 s" || echo "FAIL: the 1-hour merge took 5 s or more"
exit "$status"
