#!/usr/bin/env bash
# Proves a refactor changed no output: runs the benchmark jobs (bench/run.sh, once each) with
# two builds of moonreel, one after the other on the same inputs, and compares what each
# wrote — the files byte for byte, and when they differ, every decoded frame and audio
# packet (ffmpeg's framemd5), so a difference in the container alone is told apart.
# Usage: bench/same-output.sh OLD_MOONREEL NEW_MOONREEL [JOB...]   (default: every short job)
# Exit 0 when every output is the same, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2
shift 2
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(cut passthrough dissolve wipe lyrics watermark smartcut blur lut)
work=${BENCH_DIR:-/tmp/moonreel-same-output}
mkdir -p "$work/old" "$work/new"

# What the jobs' Moonreel side writes (the ffmpeg side and the floor write other names).
outputs() { find "$work" -maxdepth 1 -type f \( -name '*-moonreel.*' -o -name 'smartcut*.mp4' -o -name 'smartrender*.mp4' \); }

for side in old new; do
  binary=$old
  [ "$side" = new ] && binary=$new
  outputs | xargs -r rm -f
  MOONREEL=$binary RUNS=1 BENCH_DIR=$work bench/run.sh "${jobs[@]}" >"$work/$side/run.log"
  outputs | xargs -r -I{} mv {} "$work/$side/"
done

same=0 different=0
for file in "$work"/old/*.m*; do
  name=$(basename "$file")
  if [ ! -f "$work/new/$name" ]; then
    echo "$name: only the old build wrote it"; different=$((different + 1)); continue
  fi
  if cmp -s "$file" "$work/new/$name"; then
    echo "$name: byte-identical ($(stat -c %s "$file") bytes)"; same=$((same + 1)); continue
  fi
  frames() { ffmpeg -hide_banner -loglevel error -i "$1" -map 0 -c copy -f framemd5 - | grep -v '^#'; }
  if [ "$(frames "$file")" = "$(frames "$work/new/$name")" ]; then
    echo "$name: the same packets in another container layout"; same=$((same + 1))
  else
    echo "$name: DIFFERENT"; different=$((different + 1))
  fi
done
for file in "$work"/new/*.m*; do
  [ -f "$work/old/$(basename "$file")" ] || { echo "$(basename "$file"): only the new build wrote it"; different=$((different + 1)); }
done
echo "$same the same, $different different"
[ "$different" -eq 0 ]
