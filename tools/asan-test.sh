#!/usr/bin/env bash
# Runs the test suite with AddressSanitizer in the Swift code and the C shims (and in the
# moonreel executable the tests start). Extra arguments go to `swift test` (e.g. --filter X).
# Leak checking is off here: the fuzzers check leaks per input (tools/fuzz.sh), and at exit
# FFmpeg, fontconfig and the Swift runtime keep one-time allocations that are not leaks.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(--scratch-path .build-asan -Xswiftc -sanitize=address -Xcc -fsanitize=address -Xswiftc -use-ld=lld)
swift build --build-tests "${flags[@]}" 2>&1 | grep -v "Cannot export local symbol"
# A small quarantine keeps resident-memory checks (RSS must stay flat) meaningful.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:quarantine_size_mb=16"
swift test --skip-build "${flags[@]}" "$@"
