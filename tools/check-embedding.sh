#!/usr/bin/env bash
# What an app embedding Moonreel relies on (docs/embedding.md): the public API of the
# libraries is documented and free of C types, and the example app builds against this
# checkout and runs its jobs (a lyric video, a cancelled job, a typed error).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/check-public-api.sh
swift build --package-path Examples/embedding
swift run --package-path Examples/embedding --skip-build LyricJobs
