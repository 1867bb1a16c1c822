#!/usr/bin/env bash
# Benchmarks Moonreel against the ffmpeg CLI doing the same job with the same encoder
# settings, in one run, alternating the two, and prints median wall time, the ratio, each
# tool's time as a multiple of the encode floor (libx264 alone on frames decoded beforehand)
# and peak memory as one Markdown table (with the machine and the number of runs).
# Usage: RUNS=N bench/run.sh [JOB...]   (default: cut passthrough dissolve lyrics watermark smartcut)
# jobs: cut passthrough dissolve wipe lyrics watermark smartcut blur lut, and the long lyrics-10min smartcut-10min
# smartrender (RUNS=1 is plenty), analysis. The peer is the ffmpeg CLI (for analysis: aubio and ffmpeg), except for smartcut* and smartrender,
# whose target is a multiple of the same export re-encoded whole by Moonreel's HighestQuality.
# Needs a release build (swift build -c release) and the ffmpeg CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
moonreel=${MOONREEL:-.build/release/moonreel}
runs=${RUNS:-5}
work=${BENCH_DIR:-/tmp/moonreel-bench}
mkdir -p "$work"
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(cut passthrough dissolve lyrics watermark smartcut)

source_clip="$work/source-1080p-20s.mp4"
if [ ! -f "$source_clip" ]; then
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=20 \
    -f lavfi -i sine=frequency=440:sample_rate=48000:duration=20 \
    -c:v libx264 -preset fast -crf 20 -pix_fmt yuv420p -g 60 -c:a aac -b:a 192k "$source_clip"
fi

# 10 minutes of 1080p30 with 2 s GOPs, made once (x264 ultrafast: a few minutes).
ten_minute_source() {
  local clip="$work/source-1080p-10min.mp4"
  [ -f "$clip" ] || ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=600 \
    -f lavfi -i sine=frequency=440:sample_rate=48000:duration=600 -c:v libx264 -preset ultrafast -crf 23 \
    -pix_fmt yuv420p -g 60 -c:a aac -b:a 128k "$clip"
  echo "$clip"
}

# The same lyrics as CSV (for Moonreel) and SRT (for ffmpeg's subtitles filter): a line
# every 2 s for 1.8 s, alternating Japanese and Latin text. $1 = seconds, $2 = file stem,
# $3 = when the first line starts (default 0).
write_lyrics() {
  awk -v seconds="$1" -v stem="$2" -v offset="${3:-0}" 'BEGIN {
    split("きらきら光る お空の星よ|Twinkle, twinkle, little star|まばたきしては みんなを見てる|How I wonder what you are", text, "|")
    print "id,lyric,start_at,end_at" > (stem ".csv")
    for (i = 0; i * 2 < seconds; i++) {
      line = text[i % 4 + 1]; start = offset + i * 2; finish = start + 1.8
      printf "%d,\"%s\",%.1f,%.1f\n", i + 1, line, start, finish >> (stem ".csv")
      printf "%d\n%02d:%02d:%02d,000 --> %02d:%02d:%02d,800\n%s\n\n", i + 1, start / 3600, (start % 3600) / 60, start % 60,
             start / 3600, (start % 3600) / 60, start % 60 + 1, line >> (stem ".srt")
    }
  }'
}

# Runs "$@" once under /usr/bin/time; prints "seconds peak_kib".
measure() {
  local log
  log=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$log" "$@" >/dev/null 2>&1
  cat "$log"
  rm -f "$log"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# The encode floor of a job: libx264 alone, at the job's settings, on the source's frames
# decoded beforehand ($1 = start, $2 = seconds of the 20 s source; up to 1.9 GB of Y4M in
# $work). No decoding, no compositing: what neither tool can go below at equal encoder
# settings. Call it in an assignment (floor=$(floor_command …)) so a failure stops the script.
floor_command() {
  local raw="$work/raw-$1-$2.y4m"
  if [ ! -f "$raw" ]; then   # written aside first: an interrupted run leaves no short file to reuse
    ffmpeg -hide_banner -loglevel error -y -ss "$1" -t "$2" -i "$source_clip" -an -pix_fmt yuv420p -f yuv4mpegpipe "$raw.part" \
      && mv "$raw.part" "$raw" || { echo "cannot decode the floor's frames into $raw" >&2; exit 1; }
  fi
  echo "ffmpeg -hide_banner -loglevel error -y -i $raw -c:v libx264 -crf 18 -preset medium -pix_fmt yuv420p $work/floor.mp4"
}

# Runs ours and theirs (and the floor, when given) in turn, RUNS times; records one table row.
compare() {
  local name=$1 ours=$2 theirs=$3 floor=${4:-}
  local ours_times=() theirs_times=() floor_times=() ratios=() ours_mem=0 theirs_mem=0
  for _ in $(seq "$runs"); do
    read -r t1 m1 < <(measure bash -c "$ours")
    read -r t2 m2 < <(measure bash -c "$theirs")
    if [ -n "$floor" ]; then read -r t3 _ < <(measure bash -c "$floor"); floor_times+=("$t3"); fi
    ours_times+=("$t1"); theirs_times+=("$t2")
    ratios+=("$(awk -v a="$t1" -v b="$t2" 'BEGIN {printf "%.3f", a / b}')")
    [ "$m1" -gt "$ours_mem" ] && ours_mem=$m1
    [ "$m2" -gt "$theirs_mem" ] && theirs_mem=$m2
  done
  local ours_median theirs_median floor_cell="—"
  ours_median=$(printf '%s\n' "${ours_times[@]}" | median)
  theirs_median=$(printf '%s\n' "${theirs_times[@]}" | median)
  if [ -n "$floor" ]; then
    floor_cell=$(printf '%s\n' "${floor_times[@]}" | median | awk -v a="$ours_median" -v b="$theirs_median" \
      '{printf "%.2f s: %.2f× / %.2f×", $1, a / $1, b / $1}')
  fi
  rows+=("$(printf '| %s | %.2f s | %.2f s | **%.3f** (%.3f–%.3f) | %s | %d vs %d MiB |' "$name" \
    "$ours_median" "$theirs_median" \
    "$(printf '%s\n' "${ratios[@]}" | median)" "$(printf '%s\n' "${ratios[@]}" | sort -n | head -1)" \
    "$(printf '%s\n' "${ratios[@]}" | sort -n | tail -1)" "$floor_cell" $((ours_mem / 1024)) $((theirs_mem / 1024)))")
  printf '%s\n' "${rows[-1]}" >&2   # as each job ends
}
rows=()

for job in "${jobs[@]}"; do
  case $job in
    cut) # seconds 2–12 re-encoded: HighestQuality = libx264 CRF 18 preset medium, AAC 192k
      floor=$(floor_command 2 10)
      compare "cut (vs ffmpeg)" \
        "$moonreel run --overwrite --progress none scripts/examples/cut.lua $source_clip $work/cut-moonreel.mov 2 10" \
        "ffmpeg -hide_banner -loglevel error -y -ss 2 -t 10 -i $source_clip -c:v libx264 -crf 18 -preset medium -pix_fmt yuv420p -c:a aac -b:a 192k $work/cut-ffmpeg.mov" \
        "$floor" ;;
    passthrough) # seconds 2–12 copied
      compare "passthrough (vs ffmpeg -c copy)" \
        "$moonreel run --overwrite --progress none scripts/examples/trim.lua $source_clip $work/copy-moonreel.mov 2 10 Passthrough" \
        "ffmpeg -hide_banner -loglevel error -y -ss 2 -t 10 -i $source_clip -c copy $work/copy-ffmpeg.mov" ;;
    dissolve) # two 6 s pieces with a 1 s cross-dissolve, audio faded out over the last 3 s
      floor=$(floor_command 0 11)
      compare "dissolve (vs ffmpeg)" \
        "$moonreel run --overwrite --progress none scripts/examples/concat_fade.lua $work/dissolve-moonreel.mp4 $source_clip $source_clip 6" \
        "ffmpeg -hide_banner -loglevel error -y -t 6 -i $source_clip -t 6 -i $source_clip -filter_complex '[0:v][1:v]xfade=transition=fade:duration=1:offset=5,format=yuv420p[v];[0:a][1:a]acrossfade=d=1,afade=t=out:st=8:d=3[a]' -map '[v]' -map '[a]' -c:v libx264 -crf 18 -preset medium -c:a aac -b:a 192k $work/dissolve-ffmpeg.mp4" \
        "$floor" ;;
    wipe) # two 6 s pieces joined by a 1 s clock wipe and an iris (transition effects, drawn through masks) vs xfade's radial and circleopen
      floor=$(floor_command 0 11)
      for pair in "clockWipe radial" "irisWipe circleopen"; do
        set -- $pair
        compare "$1 (vs ffmpeg xfade $2)" \
          "$moonreel run --overwrite --progress none bench/wipe.lua $work/$1-moonreel.mp4 $source_clip 6 $1" \
          "ffmpeg -hide_banner -loglevel error -y -t 6 -i $source_clip -ss 1 -t 6 -i $source_clip -filter_complex '[0:v][1:v]xfade=transition=$2:duration=1:offset=5,format=yuv420p[v];[0:a][1:a]acrossfade=d=1[a]' -map '[v]' -map '[a]' -c:v libx264 -crf 18 -preset medium -c:a aac -b:a 192k $work/$1-ffmpeg.mp4" \
          "$floor"
      done ;;
    watermark) # a logo (PNG with alpha) and a © line: the watermark effect vs overlay + drawtext
      floor=$(floor_command 0 20)
      logo="$work/logo.png"
      [ -f "$logo" ] || ffmpeg -hide_banner -loglevel error -y -f lavfi -i "color=c=orange@0.8:size=400x200,format=rgba" -frames:v 1 "$logo"
      # The effect's defaults at 1080 lines: margin 32, logo 108 high at 0.9 opacity, text 43 px.
      compare "watermark (vs ffmpeg)" \
        "$moonreel run --overwrite --progress none scripts/examples/watermark.lua $source_clip $logo $work/watermark-moonreel.mp4 '© 2026 Moonreel'" \
        "ffmpeg -hide_banner -loglevel error -y -i $source_clip -i $logo -filter_complex '[1:v]scale=-1:108,format=rgba,colorchannelmixer=aa=0.9[logo];[0:v][logo]overlay=32:32,drawtext=font=Noto Sans CJK JP:text=© 2026 Moonreel:fontsize=43:fontcolor=white:shadowcolor=black@0.7:shadowy=2:x=w-tw-32:y=h-th-32,format=yuv420p' -c:v libx264 -crf 18 -preset medium -c:a aac -b:a 192k $work/watermark-ffmpeg.mp4" \
        "$floor" ;;
    smartrender) # 3 min of 1080p30 (x264 High, 2 s GOPs), lyrics from 30 s to 150 s: the intro and outro copied vs all encoded
      clip="$work/source-1080p-3min-high.mp4"
      [ -f "$clip" ] || ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=180 \
        -f lavfi -i sine=frequency=440:sample_rate=48000:duration=180 -c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p \
        -g 60 -c:a aac -b:a 128k "$clip"
      rm -f "$work/lyrics-30-150.srt"
      write_lyrics 120 "$work/lyrics-30-150" 30
      run="$moonreel run --overwrite --progress none --set video=$clip --set lyrics=$work/lyrics-30-150.csv"
      compare "$job" "$run --set smartRendering=true --set output=$work/smartrender.mp4 scripts/examples/lyrics_template.lua" \
        "$run --set output=$work/smartrender-full.mp4 scripts/examples/lyrics_template.lua" ;;
    analysis) # 3 min of stereo AAC drums analysed (beats, onsets, levels, loudness) vs aubio's beat and
      # onset trackers and ffmpeg's ebur128 meter on the same file, one after the other
      song="$work/drums-3min.m4a"
      [ -f "$song" ] || ffmpeg -hide_banner -loglevel error -y -f lavfi -i "aevalsrc='st(0,t);0.9*sin(2*PI*55*mod(ld(0),1))*exp(-mod(ld(0),1)*18)+0.35*(2*random(1)-1)*exp(-mod(ld(0)+0.5,1)*30)+0.12*(2*random(2)-1)*exp(-mod(ld(0),0.25)*250)':s=44100:c=stereo:d=180" \
        -c:a aac -b:a 192k "$song"
      compare "analysis of 3 min (vs aubio beat + onset, ffmpeg ebur128)" \
        "rm -rf $work/analysis-cache && XDG_CACHE_HOME=$work/analysis-cache $moonreel run bench/analyze.lua $song" \
        "aubio beat $song && aubio onset $song && ffmpeg -hide_banner -nostats -i $song -af ebur128 -f null -" ;;
    smartcut|smartcut-10min) # frame-exact cut of a source with 2 s GOPs: copied GOPs vs all re-encoded
      clip=$source_clip; start=2.5; duration=15
      if [ "$job" = smartcut-10min ]; then clip=$(ten_minute_source); start=60.5; duration=420; fi
      rm -f "$work/smartcut.mp4" "$work/smartcut-reencoded.mp4"
      compare "$job (vs HighestQuality)" \
        "$moonreel run --overwrite --progress none scripts/examples/trim.lua $clip $work/smartcut.mp4 $start $duration SmartCut" \
        "$moonreel run --overwrite --progress none scripts/examples/trim.lua $clip $work/smartcut-reencoded.mp4 $start $duration HighestQuality" ;;
    lyrics|lyrics-10min) # lyrics burned in: our lyrics effect vs ffmpeg's subtitles filter (libass)
      clip=$source_clip; seconds=20
      if [ "$job" = lyrics-10min ]; then clip=$(ten_minute_source); seconds=600; fi
      stem="$work/lyrics-$seconds"
      [ -f "$stem.csv" ] || write_lyrics "$seconds" "$stem"
      floor=""   # 10 minutes of raw frames would not fit in memory
      if [ "$job" = lyrics ]; then floor=$(floor_command 0 20); fi
      compare "$job (vs ffmpeg)" \
        "$moonreel run --overwrite --progress none scripts/examples/lyrics.lua $clip $stem.csv $work/lyrics-moonreel.mp4" \
        "ffmpeg -hide_banner -loglevel error -y -i $clip -vf subtitles=$stem.srt -c:v libx264 -crf 18 -preset medium -pix_fmt yuv420p -c:a aac -b:a 192k $work/lyrics-ffmpeg.mp4" \
        "$floor" ;;
    blur) # seconds 2–12 through a Gaussian blur of σ 8 (gblur, 3 steps), re-encoded as in cut
      floor=$(floor_command 2 10)
      compare "blur (vs ffmpeg gblur)" \
        "$moonreel run --overwrite --progress none bench/filter.lua $source_clip $work/blur-moonreel.mp4 2 10 gaussianBlur radius=8" \
        "ffmpeg -hide_banner -loglevel error -y -ss 2 -t 10 -i $source_clip -vf gblur=sigma=8:steps=3 -c:v libx264 -crf 18 -preset medium -pix_fmt yuv420p -c:a aac -b:a 192k $work/blur-ffmpeg.mp4" \
        "$floor" ;;
    lut) # seconds 2–12 through a 33-point 3D LUT (tetrahedral), re-encoded as in cut
      floor=$(floor_command 2 10)
      cube="$work/look-33.cube"
      [ -f "$cube" ] || awk 'BEGIN { n = 33; print "LUT_3D_SIZE " n
        for (b = 0; b < n; b++) for (g = 0; g < n; g++) for (r = 0; r < n; r++)
          printf "%.6f %.6f %.6f\n", (r / (n - 1)) ^ 0.9, g / (n - 1), (b / (n - 1)) ^ 1.1 }' > "$cube"
      compare "lut (vs ffmpeg lut3d)" \
        "$moonreel run --overwrite --progress none bench/filter.lua $source_clip $work/lut-moonreel.mp4 2 10 colorCube path=$cube" \
        "ffmpeg -hide_banner -loglevel error -y -ss 2 -t 10 -i $source_clip -vf lut3d=file=$cube -c:v libx264 -crf 18 -preset medium -pix_fmt yuv420p -c:a aac -b:a 192k $work/lut-ffmpeg.mp4" \
        "$floor" ;;
    *) echo "unknown job $job" >&2; exit 2 ;;
  esac
done

# One table for every job, with where and how it was measured.
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
memory=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
echo "Machine: $(nproc) CPUs ($cpu), $memory; $(ffmpeg -version | head -1 | cut -d' ' -f1-3); $runs runs per job, alternating; $(date -u +%Y-%m-%d)"
echo
echo "| job | Moonreel (median) | peer (median) | ratio (min–max) | encode floor: Moonreel× / peer× | peak memory |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
