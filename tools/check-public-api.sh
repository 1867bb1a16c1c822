#!/usr/bin/env bash
# Checks the public interface of the libraries an app imports (MoonreelEngine with the engine
# targets it re-exports, MoonreelInterchange, MoonreelScriptHost, MoonreelBindings, MoonreelFarm)
# from SwiftPM's symbol graphs: every public declaration has a documentation comment, and none
# mentions a C type or a raw pointer.
set -euo pipefail
cd "$(dirname "$0")/.."
# The symbol graphs cover every module, the test targets' too: build them first.
if ! built=$(swift build --build-tests 2>&1); then
    echo "$built" >&2
    exit 1
fi
dump=$(swift package dump-symbol-graph --skip-synthesized-members --minimum-access-level public 2>&1) || {
    echo "$dump" >&2
    exit 1
}
folder=$(echo "$dump" | sed -n 's/^Files written to //p' | tail -1)
[ -n "$folder" ] || { echo "$dump" >&2; echo "check-public-api: no symbol graph folder in the output above" >&2; exit 1; }
exec python3 tools/public_api.py "$folder" MoonreelMedia MoonreelComposition MoonreelRender MoonreelAnalysis MoonreelEngine MoonreelInterchange MoonreelScriptHost MoonreelBindings MoonreelFarm
