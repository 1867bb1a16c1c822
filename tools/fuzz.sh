#!/usr/bin/env bash
# Builds the fuzz targets in Fuzz/ with libFuzzer and AddressSanitizer and runs each for
# SECONDS (default 30) from its seed corpus in Fuzz/corpus/. CI runs it briefly; a longer
# run finds more:   tools/fuzz.sh 3600
# A crash, a leak, a sanitizer report or a timeout (10 s for one input) stops the run with
# exit 1; the input is kept in .build-fuzz/findings/NAME/ to reproduce with
#   FUZZ_TARGET=NAME .build-fuzz/debug/MoonreelFuzz .build-fuzz/findings/NAME/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
scratch="$PWD/.build-fuzz"

# SwiftPM keeps the parent package's manifest in the scratch folder: after Package.swift
# changes (a target added), build from scratch rather than with the stale graph.
if [[ -e "$scratch/build.db" && Package.swift -nt "$scratch/build.db" ]]; then rm -rf "$scratch"; fi
mkdir -p "$scratch"
if ! (cd Fuzz && swift build --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
        -Xcc -fsanitize=address -Xswiftc -use-ld=lld) > "$scratch/build.log" 2>&1; then
    # The errors first: a failed build goes on compiling other files, so its last lines are not
    # where it failed.
    grep -E "error:" "$scratch/build.log" | sort -u | head -20 >&2
    grep -v "Cannot export local symbol" "$scratch/build.log" | tail -20 >&2
    echo "fuzz: the build failed" >&2
    exit 1
fi

run() {
    local name="$1" seeds="$2" max_len="$3"
    local corpus="$scratch/corpus/$name" findings="$scratch/findings/$name"
    mkdir -p "$corpus" "$findings"
    cp -n Fuzz/corpus/"$seeds"/* "$corpus"/
    echo "fuzz: $name for ${seconds}s"
    # libFuzzer reports crashes itself; Swift's backtracer would wait on the dead process.
    SWIFT_BACKTRACE=enable=no LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan-suppressions.txt" FUZZ_TARGET="$name" "$scratch/debug/MoonreelFuzz" "$corpus" -max_total_time="$seconds" -max_len="$max_len" \
        -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$findings/" -print_final_stats=1 2>&1 \
        | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|.*deadly signal|.*Test unit written)" || true
    if compgen -G "$findings/*" > /dev/null; then
        echo "fuzz: $name found a problem: $(ls "$findings")" >&2
        exit 1
    fi
}

run TimedText timed-text 4096
run LuaValues lua-values 2048
run Media media 16384
run Library library 512
run Studio studio 1024
run Timeline timeline 16384
echo "fuzz: no findings"
