#!/bin/sh
# The edit loop's suite, under 90 s here: every module's own tests (the engine's, the
# script host's, the bindings' readers, the batch library's and the studio's routes, which start no moonreel, browser, cluster or
# capture) and one end-to-end run of the real `moonreel` binary for each of its main
# paths: a lyric video read back by OCR, a timeline judged by OpenTimelineIO, a batch's
# pre-check, the studio's page behind its token, an export's dry run. The whole suite (what
# CI runs) is `swift test`. Extra arguments go to `swift test` (e.g. --filter BeatMontage
# to narrow it further).
set -e
cd "$(dirname "$0")/.."
swift build --build-tests
end_to_end='DoneMeansRightTests/aLongLyricOnPortraitVideoKeepsEveryWord|InterchangeTests/threeClipsWithTwoDissolves|BatchTests/rowsAreCheckedManyToAProcess|StudioTests/servesOnlyItsPageUnderItsTokenAndHost|EverydayUseTests/dryRunChecksAndDescribesWithoutEncoding'
exec swift test --skip-build --filter "^(EngineTests|ScriptHostTests|FarmTests|StudioRoutesTests|BindingsTests)\.|$end_to_end" "$@"
