#!/bin/sh
# The edit loop's suite, about a minute: the engine's and the script host's own tests (240),
# which run no `moonreel` process and no browser, cluster or capture. The whole suite is
# `swift test`. Extra arguments go to `swift test` (e.g. --filter BeatMontage).
set -e
cd "$(dirname "$0")/.."
swift build --build-tests
exec swift test --skip-build --filter '^(EngineTests|ScriptHostTests)\.' "$@"
