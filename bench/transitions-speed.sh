#!/bin/bash
# Scene analysis time of one file by two builds, in turn, each with an empty analysis cache:
# prints "BINARY SECONDS" a run (bench/RESULTS.md, issue 36 §6).
# usage: bench/transitions-speed.sh OLD_MOONREEL NEW_MOONREEL FILE [PAIRS]
set -euo pipefail
old=$1 new=$2 file=$3 pairs=${4:-5}
script="$(cd "$(dirname "$0")" && pwd)/transitions.lua"
for _ in $(seq "$pairs"); do
  for binary in "$old" "$new"; do
    cache=$(mktemp -d)
    start=$(date +%s.%N)
    XDG_CACHE_HOME=$cache "$binary" run --quiet "$script" "$file" > /dev/null
    end=$(date +%s.%N)
    rm -rf "$cache"
    echo "$binary $(echo "$end - $start" | bc)"
  done
done
