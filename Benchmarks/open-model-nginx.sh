#!/usr/bin/env bash
# The open model on one core: FCSDK login (no hold) at a fixed arrival rate over a 64-connection shared pool,
# against nginx pinned to the other core. Prints completed flows/s, the schedule lag, dropped arrivals and the
# generator's health; passes when the run ends with exit 0 (health green, no error).
#
#   bash Benchmarks/open-model-nginx.sh [arrivals per second] [seconds]
#   bash Benchmarks/open-model-nginx.sh closed [seconds]   # the reference: 64 users, no think time, same pool
#
# Past saturation (e.g. 40000), compare the completed flows/s with the best rate a lower run reached. Prints the
# generator's CPU time per HTTP request too. AUTHLOAD_BINARY=path runs another build (e.g. a copy of an earlier
# .build/release/authload) for an A/B comparison on the same machine. BENCH_COUNT=1 counts, per HTTP request, context
# switches and the Swift runtime's task switches, enqueues, continuation resumes, task creations and status-record
# locks, through uprobes set up once with (as root; the two internal functions by their offset in the library):
#   L=/opt/swift/usr/lib/swift/linux/libswift_Concurrency.so
#   for f in swift_task_switch swift_task_enqueue swift_continuation_resume swift_continuation_throwingResume \
#       swift_task_create swift_job_run_on_serial_and_task_executor; do perf probe -x $L -a $f; done
#   perf probe -x $L -a "statuslock=0x$(nm $L | awk '/withStatusRecordLock/ { print $1; exit }')"
# Uprobes slow every call they count: read the counts, not the rates, of such a run. BENCH_WAKES=1 counts instead, per
# HTTP request, what the kernel does for the generator beyond reading and writing: its context switches, the threads it
# wakes (nginx's worker among them), its epoll_wait calls, futex calls (a wake of Swift's pool) and eventfd writes (a
# wake of a loop by another thread); tracepoints, cheap enough to leave the rates near those of a plain run.
# BENCH_EVENTS=list counts any other perf events per HTTP request, e.g. allocations through uprobes set up with
#   perf probe -x /lib/x86_64-linux-gnu/libc.so.6 -a malloc; perf probe -x \$(dirname \$L)/libswiftCore.so -a swift_allocObject
# and BENCH_EVENTS=context-switches,probe_libc:malloc,probe_libswiftCore:swift_allocObject.
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-20000}
seconds=${2:-30}
port=${BENCH_PORT:-18091}

binary=${AUTHLOAD_BINARY:-.build/release/authload}
[ -n "${AUTHLOAD_BINARY:-}" ] || swift build -c release --product authload >/dev/null
nginx_cpu=0
source Benchmarks/nginx-login.sh

if [ "$rate" = closed ]; then
    load="{ \"users\": 64, \"duration\": \"${seconds}s\", \"gracefulStop\": \"5s\" }"
else
    load="{ \"model\": \"open\", \"arrivalRate\": \"$rate/s\", \"duration\": \"${seconds}s\", \"gracefulStop\": \"5s\" }"
fi
cat > "$work/open.json" <<JSON
{
  "name": "open-model",
  "target": { "baseURL": "http://127.0.0.1:$port" },
  "load": $load,
  "flows": [ { "name": "login", "kind": "fcsdk-login" } ],
  "connections": { "policy": "shared", "poolSize": 64 }
}
JSON

status=0
/usr/bin/time -v -o "$work/time" ${BENCH_PERF:+perf record -g ${BENCH_PERF_EVENT:+-e $BENCH_PERF_EVENT} -F 999 -o /tmp/open.perf} ${BENCH_COUNT:+perf stat -x, -o $work/counts -e context-switches,probe_libswift_Concurrency:*} ${BENCH_WAKES:+perf stat -x, -o $work/counts -e context-switches,sched:sched_waking,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_futex,syscalls:sys_enter_write} ${BENCH_EVENTS:+perf stat -x, -o $work/counts -e $BENCH_EVENTS} taskset -c 1 "$binary" run "$work/open.json" --out "$work/report" --quiet > "$work/stdout" 2> "$work/stderr" || status=$?
read -r flows errors requests < <(awk -F, '$1 == "login" && $2 == "" { print $3, $4, $16 }' "$work/report/summary.csv")
cpu=$(awk -F: '/User time|System time/ { s += $2 } END { print s }' "$work/time")
user=$(awk -F: '/User time/ { print $2 }' "$work/time")
label="$rate arrivals/s"
[ "$rate" != closed ] || label="closed, 64 users"
echo "$label for ${seconds}s  flows: $flows ($((flows / seconds))/s)  errors: $errors  exit: $status" \
    " CPU per HTTP request: $(awk -v c="$cpu" -v r="$requests" 'BEGIN { printf "%.1f", c / r * 1e6 }') µs" \
    "($(awk -v u="$user" -v r="$requests" 'BEGIN { printf "%.1f", u / r * 1e6 }') in user space)"
python3 - "$work/report/result.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["generator"]
print("started %s  dropped at the cap %s, late %s, while saturated %s"
      % (g.get("started"), g.get("droppedAtCap"), g.get("droppedLate"), g.get("droppedSaturated")))
PY
[ "$errors" = 0 ] || { echo "errors by kind:"; head -6 "$work/report/errors.csv"; }
if [ -n "${BENCH_COUNT:-}${BENCH_WAKES:-}${BENCH_EVENTS:-}" ]; then
    # Per HTTP request: context switches, and the Swift runtime's entry points or the kernel's (see the note at the top).
    awk -F, -v r="$requests" '$1 ~ /^[0-9]+$/ { n = $3; sub(/.*:/, "", n); printf "  %-45s %8.3f per request\n", n, $1 / r }' "$work/counts"
fi
grep -E '^(error|warning|note)' "$work/stderr" || true
[ "$status" -eq 0 ] || { echo "FAIL"; exit 1; }
echo "OK"
