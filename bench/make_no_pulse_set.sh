#!/bin/sh
# Sounds with no pulse to find (issue 36 §3): av.analyze should give them no tempo and no beats.
# Synthetic ones made here with ffmpeg's generators, real read speech and spoken digits from
# Debian's pocketsphinx-testdata (LibriVox, public domain; apt-get install pocketsphinx-testdata),
# and the room sound of Tests/Fixtures/real 03. Fixture 09, a podcast's jingle, has a real beat
# (an onset every 0.32 s): it is here as jingle_09, which should keep its beats. Usage: bench/make_no_pulse_set.sh [OUT] (default /work/beatdata/nopulse);
# then bench/no_pulse.sh OUT MOONREEL prints each file's tempoConfidence and beats.
set -eu
out=${1:-/work/beatdata/nopulse}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
g() { name=$1; shift; ffmpeg -v error -y "$@" "$out/$name"; }
g tone440_4s.m4a -f lavfi -i "sine=frequency=440:duration=4:sample_rate=48000" -c:a aac -b:a 128k
g tone440_30s.m4a -f lavfi -i "sine=frequency=440:duration=30:sample_rate=44100" -c:a aac -b:a 128k
g tone1000_10s.wav -f lavfi -i "sine=frequency=1000:duration=10:sample_rate=48000"
g tone60_20s.wav -f lavfi -i "sine=frequency=60:duration=20:sample_rate=44100"
g chord_a_maj_20s.m4a -f lavfi -i "aevalsrc=0.2*sin(2*PI*220*t)+0.2*sin(2*PI*277.18*t)+0.2*sin(2*PI*329.63*t):s=48000:d=20" -c:a aac
g sweep_100_8000_10s.wav -f lavfi -i "aevalsrc=0.5*sin(2*PI*(100*t+7900*t*t/20)):s=48000:d=10"
g sweep_log_50_5000_30s.m4a -f lavfi -i "aevalsrc=0.5*sin(2*PI*50*30/log(100)*(exp(log(100)*t/30)-1)):s=44100:d=30" -c:a aac
g white_noise_10s.wav -f lavfi -i "anoisesrc=color=white:amplitude=0.3:duration=10:sample_rate=48000:seed=1"
g pink_noise_30s.m4a -f lavfi -i "anoisesrc=color=pink:amplitude=0.3:duration=30:sample_rate=44100:seed=2" -c:a aac
g brown_noise_20s.wav -f lavfi -i "anoisesrc=color=brown:amplitude=0.5:duration=20:sample_rate=48000:seed=3"
g hiss_60dB_10s.wav -f lavfi -i "anoisesrc=color=white:amplitude=0.001:duration=10:sample_rate=48000:seed=4"
g hiss_silence_aac_10s.m4a -f lavfi -i "anoisesrc=color=pink:amplitude=0.0003:duration=10:sample_rate=48000:seed=5" -c:a aac
g silence_10s.wav -f lavfi -i "anullsrc=r=48000:cl=mono" -t 10
cp "$here/Tests/Fixtures/real/09_garageband_podcast_aac_cover_chapters.m4a" "$out/jingle_09.m4a"
speech=/usr/share/pocketsphinx/test/data
for f in "$speech"/librivox/*.wav; do echo "file '$f'"; done > "$out/librivox.txt"
g speech_librivox_25s.wav -f concat -safe 0 -i "$out/librivox.txt"
rm "$out/librivox.txt"
g speech_digits_4s.wav -f s16le -ar 16000 -ac 1 -i "$speech/numbers.raw"
cp "$here/Tests/Fixtures/real/03_iphone_trimmed_hevc10_editlist_vfr.mp4" "$out/room_03.mp4"
ls "$out"
