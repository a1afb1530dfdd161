#!/usr/bin/env bash
# Builds and runs the libFuzzer harnesses under Fuzz/Harnesses, one target at a time.
#
#   Fuzz/run.sh [http|request|websocket|stomp|profile|hpack|http2|all] [seconds]     (defaults: all, 60)
#   Fuzz/run.sh build [target|all]                               (build only)
#   Fuzz/run.sh repro TARGET FILE...                             (run the harness once on each input)
#
# The modules under test are compiled straight from Sources/ with swiftc and
# `-sanitize=fuzzer,address` into .build-fuzz/, so Package.swift, `swift build` and `swift test` never
# see libFuzzer. The toolchain must ship libFuzzer (Swift on Linux does). Each run starts from
# Fuzz/seeds/TARGET (committed) plus Fuzz/corpus-TARGET (generated, git-ignored), uses the tokens in
# Fuzz/dicts/TARGET.dict, writes a crashing input to Fuzz/crash-TARGET-* (git-ignored: a crash becomes
# a regression test), and prints the executions and whether it crashed.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=.build-fuzz
# libFuzzer reports a trap itself and saves the input; the Swift runtime's backtracer would get there first.
export SWIFT_BACKTRACE=enable=no
MODULES=$OUT/modules
FLAGS=(-O -g -swift-version 6 -enable-upcoming-feature ExistentialAny -sanitize=fuzzer,address -parse-as-library)
TARGETS=(http request websocket stomp profile hpack http2)

harness_of() {
    case "$1" in
        http) echo HTTPResponseFuzz ;;
        request) echo HTTPRequestFuzz ;;
        websocket) echo WebSocketFrameFuzz ;;
        stomp) echo StompFuzz ;;
        profile) echo ProfileFuzz ;;
        hpack) echo HPACKFuzz ;;
        http2) echo HTTP2FrameFuzz ;;
        *) echo "unknown target '$1' (expected one of: ${TARGETS[*]}, all)" >&2; exit 64 ;;
    esac
}

# rm -rf .build-fuzz after changing FLAGS.
build_module() {
    local name=$1; shift
    local archive=$OUT/lib$name.a
    local sources
    sources=$(find "Sources/$name" -name '*.swift' | sort)
    # A module is rebuilt when its sources, or an archive it imports (given as arguments), changed.
    if [ -f "$archive" ] && [ -z "$(find "Sources/$name" "$@" -newer "$archive" -print -quit)" ]; then return; fi
    echo "building $name (instrumented)" >&2
    # shellcheck disable=SC2086
    swiftc "${FLAGS[@]}" -module-name "$name" -I "$MODULES" -I Sources/COpenSSL \
        -emit-module -emit-module-path "$MODULES/$name.swiftmodule" \
        -emit-library -static -o "$archive" $sources
}

build_harness() {
    local target=$1 harness
    harness=$(harness_of "$target")
    mkdir -p "$MODULES"
    build_module AuthloadCore
    build_module AuthloadWire "$OUT/libAuthloadCore.a"
    local binary=$OUT/$harness
    if [ -f "$binary" ] && [ -z "$(find "Fuzz/Harnesses/$harness.swift" Fuzz/Harnesses/FuzzSupport.swift "$OUT/libAuthloadWire.a" "$OUT/libAuthloadCore.a" -newer "$binary" -print -quit)" ]; then return; fi
    echo "building $harness" >&2
    swiftc "${FLAGS[@]}" -I "$MODULES" -I Sources/COpenSSL \
        "Fuzz/Harnesses/$harness.swift" Fuzz/Harnesses/FuzzSupport.swift \
        -use-ld=lld -L "$OUT" -lAuthloadWire -lAuthloadCore -lssl -lcrypto -o "$binary"
}

run_target() {
    local target=$1 seconds=$2 harness
    harness=$(harness_of "$target")
    build_harness "$target"
    local corpus=Fuzz/corpus-$target log=$OUT/$target.log
    mkdir -p "$corpus"
    echo "fuzzing $target for ${seconds}s (log: $log)" >&2
    local status=0 dict=()
    [ -f "Fuzz/dicts/$target.dict" ] && dict=(-dict="Fuzz/dicts/$target.dict")
    # One worker and one job: the machine is shared. The RSS limit turns runaway allocation into a finding.
    local started=$SECONDS
    "$OUT/$harness" "$corpus" "Fuzz/seeds/$target" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=8192 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="Fuzz/crash-$target-" "${dict[@]}" >"$log" 2>&1 || status=$?
    local execs elapsed=$((SECONDS - started))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ "$status" -eq 0 ]; then
        echo "$target: ${execs:-?} executions in ${elapsed}s, no crash, corpus $(find "$corpus" -type f | wc -l) inputs"
    else
        echo "$target: CRASH (exit $status) after ${execs:-?} executions in ${elapsed}s; input: $(ls -t Fuzz/crash-"$target"-* 2>/dev/null | head -1)"
        grep -m1 -A12 -E '^==[0-9]+==ERROR|Fatal error|fuzz invariant' "$log" || tail -20 "$log"
        return 1
    fi
}

command=${1:-all}
case "$command" in
    build)
        for target in $([ "${2:-all}" = all ] && echo "${TARGETS[@]}" || echo "$2"); do build_harness "$target"; done ;;
    repro)
        target=${2:?repro needs a target}; shift 2
        build_harness "$target"
        "$OUT/$(harness_of "$target")" "$@" ;;
    all)
        failed=0
        for target in "${TARGETS[@]}"; do run_target "$target" "${2:-60}" || failed=1; done
        exit $failed ;;
    *)
        run_target "$command" "${2:-60}" ;;
esac
