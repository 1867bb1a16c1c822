#!/bin/sh
# Prints, for each file in DIR (bench/make_no_pulse_set.sh), av.analyze's tempo, beat count,
# tempoConfidence and beatConfidence, as one JSON line each (issue 36 §3).
# Usage: bench/no_pulse.sh DIR MOONREEL
set -eu
dir=$1; moonreel=$2
here=$(cd "$(dirname "$0")" && pwd)
for f in "$dir"/*; do
  case $f in *.json) continue;; esac
  cache=$(mktemp -d)
  printf '{"file":"%s","result":' "$(basename "$f")"
  XDG_CACHE_HOME=$cache "$moonreel" run "$here/beats.lua" "$f" 2>/dev/null | tr -d '\n' || printf 'null'
  printf '}\n'
  rm -rf "$cache"
done
