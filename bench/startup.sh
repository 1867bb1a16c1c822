#!/usr/bin/env bash
# Start-up time: `moonreel run empty.lua` against `ffmpeg -version`, measured in one run,
# alternating the two so both see the same machine load. Prints each median (and the
# quartiles) in milliseconds and the ratio; the goal is a ratio of at most 1.
# Usage: bench/startup.sh   (RUNS=50 by default; MOONREEL=path to the binary, default the
# release build: swift build -c release)
set -euo pipefail
cd "$(dirname "$0")/.."
moonreel=${MOONREEL:-.build/release/moonreel}
runs=${RUNS:-50}
[ -x "$moonreel" ] || { echo "no $moonreel: build it with swift build -c release" >&2; exit 2; }
command -v ffmpeg >/dev/null || { echo "ffmpeg is not installed" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$work/empty.lua"

# Wall time of one run in microseconds (bash's EPOCHREALTIME: no extra process to time).
elapsed_us() {
  local start=$EPOCHREALTIME
  "$@" >/dev/null 2>&1
  local end=$EPOCHREALTIME
  echo $(( ${end/./} - ${start/./} ))
}

# One warm-up each, so neither pays for a cold page cache.
elapsed_us "$moonreel" run "$work/empty.lua" >/dev/null
elapsed_us ffmpeg -version >/dev/null
for ((i = 0; i < runs; i++)); do
  elapsed_us "$moonreel" run "$work/empty.lua" >> "$work/moonreel.us"
  elapsed_us ffmpeg -version >> "$work/ffmpeg.us"
done

# "median q1 q3" in milliseconds of a file of microsecond counts.
summary() {
  sort -n "$1" | awk '{ v[NR] = $1 } END {
    printf "%.2f %.2f %.2f", v[int((NR + 1) / 2)] / 1000, v[int((NR + 3) / 4)] / 1000, v[int((3 * NR + 3) / 4)] / 1000 }'
}
read -r m_median m_q1 m_q3 <<< "$(summary "$work/moonreel.us")"
read -r f_median f_q1 f_q3 <<< "$(summary "$work/ffmpeg.us")"
printf '%-28s median %7.2f ms  (quartiles %.2f … %.2f)\n' "moonreel run empty.lua" "$m_median" "$m_q1" "$m_q3"
printf '%-28s median %7.2f ms  (quartiles %.2f … %.2f)\n' "ffmpeg -version" "$f_median" "$f_q1" "$f_q3"
awk -v m="$m_median" -v f="$f_median" -v n="$runs" 'BEGIN {
  printf "ratio moonreel / ffmpeg: %.2f  (%d runs each, alternating)\n", m / f, n }'
