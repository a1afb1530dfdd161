# Sourced by the profile benchmarks (http-profile.sh, h2-profile.sh): runs `$work/bench.json` once under
# `perf record -e cpu-clock -g` (hardware counters are often missing on VMs; cpu-clock sampling works), pinned to CPU 1,
# then prints the requests made and the top symbols by self time, by shared object, and the inclusive time of
# authload's own functions.
#
#   profile_authload <perf.data path> <authload binary> <symbol rows> <authload rows>
profile_authload() {
    local data=$1 binary=$2 symbols=$3 own=$4
    perf record -q -e cpu-clock -g -o "$data" -- \
        taskset -c 1 "$binary" run "$work/bench.json" --out "$work/report" --quiet > /dev/null
    local count
    count=$(awk -F, '$1 == "get" && $2 == "request" { print $3 }' "$work/report/summary.csv")
    echo "requests: $count in ${duration}s"
    report() { perf report -i "$data" --stdio -g none "$@" 2>/dev/null | grep -v '^#' | grep -v '^$' | cut -c1-160; }
    echo "== self time by shared object"
    report --no-children --sort dso | head -10
    echo "== self time by symbol"
    report --no-children --sort symbol | head -"$symbols"
    echo "== inclusive time of authload's functions"
    report --children --sort symbol | grep -E 'Authload|authload' | head -"$own"
}
