#!/usr/bin/env bash
# Instructions per Okta ION body read by the flow (`IDXResponse(body:)`), parsed into a tree (`JSONValue.parse`) and
# serialized from one (`serialized()`), for each commit named (default: HEAD), counted by `valgrind --tool=callgrind`:
# a count, not a time, so two commits compare on a busy machine. The bodies (Benchmarks/json/*.json) are the staging
# service's answers along an email login.
#
# Builds a harness (Benchmarks/json/Harness.swift) against the JSON and IDX sources of each commit (and `Locked`, which
# holds the parser's spare stacks; without it the script stopped building at 66ae0b8) with `swiftc -O
# -wmo`, in two modules as the package has them; needs valgrind. Bounded: 2,000 rounds of five bodies a mode; a
# run of no rounds, counted the same way, is taken off (start-up, and the serialize mode's parse of its trees).
#
#   bash Benchmarks/json-instructions.sh [commit …]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
rounds=2000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() { # $1: harness, $2: rounds, $3: mode
    valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$1" Benchmarks/json "$2" "$3" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for commit in "${@:-HEAD}"; do
    src="$work/$commit"
    mkdir -p "$src"
    git archive "$commit" Sources | tar -x -C "$src"
    idx="$src/Sources/AuthloadWire/OktaIDX"
    (
        cd "$src"
        swiftc -O -wmo -parse-as-library -emit-module -emit-library -static -module-name AuthloadCore \
            Sources/AuthloadCore/JSON/*.swift Sources/AuthloadCore/Engine/Locked.swift -o libAuthloadCore.a
        swiftc -O -wmo -parse-as-library -emit-module -emit-library -static -module-name AuthloadWire -I . \
            "$idx/IDX.swift" "$idx/IDXAuthenticator.swift" "$idx/IDX+JSON.swift" $(ls "$idx/IDX+Reading.swift" 2>/dev/null) \
            -o libAuthloadWire.a
    )
    swiftc -O -wmo -I "$src" -L "$src" -lAuthloadWire -lAuthloadCore -lm Benchmarks/json/Harness.swift -o "$src/harness"
    bodies=$(ls Benchmarks/json/*.json | wc -l)
    for mode in idx tree serialize; do
        base=$(count "$src/harness" 0 "$mode")
        total=$(count "$src/harness" "$rounds" "$mode")
        echo "$commit $mode: $(( (total - base) / (rounds * bodies) )) instructions a body"
    done
done
