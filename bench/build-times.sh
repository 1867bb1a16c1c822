#!/usr/bin/env bash
# Times debug builds of a checkout the way a developer meets them: the engine from clean,
# the whole command from clean, and the command again after an edit — a private function
# added at the bottom of the engine (Asset.swift: no layer above can see it), a package one
# (the layers above see it), and a private one at the top (ExportSession.swift). Each edit is
# undone afterwards. Prints one Markdown row per figure: the median of RUNS runs (min–max).
# Usage: RUNS=3 bench/build-times.sh [CHECKOUT]   (default: this one; its .build is untouched)
set -euo pipefail
checkout=$(cd "${1:-$(dirname "$0")/..}" && pwd)
runs=${RUNS:-3}
scratch=/tmp/moonreel-build-times-$$
# The edited files' first contents, put back however the script ends (Ctrl-C too).
backup=$scratch.backup
mkdir -p "$backup"
restore() {
  for kept in "$backup"/*.swift; do [ -f "$kept" ] && cp "$kept" "$(cat "$kept.path")"; done
  rm -rf "$scratch" "$scratch.time" "$backup"
}
trap restore EXIT
trap 'exit 130' INT TERM
cd "$checkout"

# Times a command into $scratch.time (not in a subshell: an edit must be seen by `restore`).
seconds() { /usr/bin/time -f %e -o "$scratch.time" "$@" >/dev/null 2>&1; }
row() {
  local name=$1
  shift
  local times=()
  for _ in $(seq "$runs"); do "$@"; times+=("$(cat "$scratch.time")"); done
  printf '%s\n' "${times[@]}" | sort -n | awk -v name="$name" '{a[NR]=$1} END {printf "| %s | %.1f s (%.1f–%.1f) |\n", name, a[int((NR + 1) / 2)], a[1], a[NR]}'
}
# From clean: the build products go, the fetched packages stay (fetching is not building).
clean() { rm -rf "$scratch"/x86_64-* "$scratch"/debug* "$scratch"/build.db*; seconds swift build --scratch-path "$scratch" "$@"; }
# Makes the edit $2 to the file named $1, then times the command's rebuild.
edited() {
  local file
  file=$(find "$checkout/Sources" -name "$1" | head -1)
  local kept=$backup/$1
  if [ -f "$kept" ]; then cp "$kept" "$file"; else cp "$file" "$kept"; echo "$file" >"$kept.path"; fi
  swift build --scratch-path "$scratch" --product moonreel >/dev/null 2>&1
  case $2 in
    body) printf '\nprivate func buildTimesProbe() -> Int { %s }\n' "$RANDOM" >>"$file" ;;
    declaration) printf '\npackage func buildTimesProbe%s() {}\n' "$RANDOM" >>"$file" ;;
  esac
  seconds swift build --scratch-path "$scratch" --product moonreel
}

swift package --scratch-path "$scratch" resolve >/dev/null 2>&1
echo "| debug build of $(git rev-parse --short HEAD) | median of $runs (min–max) |"
echo "|---|---|"
row "engine, clean (swift build --target MoonreelEngine)" clean --target MoonreelEngine
row "moonreel, clean (swift build --product moonreel)" clean --product moonreel
row "moonreel after a private function added to Asset.swift" edited Asset.swift body
row "moonreel after a package function added to Asset.swift" edited Asset.swift declaration
row "moonreel after a private function added to ExportSession.swift" edited ExportSession.swift body
