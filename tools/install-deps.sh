#!/usr/bin/env bash
# Installs what Moonreel needs on Debian 12: Lua 5.4, FFmpeg 5.1 libraries (and the ffmpeg
# CLI, which the tests use as an independent oracle), Pango/Cairo, libedit, fonts, and Xvfb
# (a screen for the x11grab recording test), PulseAudio (a null sink to record from), python3 (the REPL tests' pty driver and the
# public API check), Chromium (the studio's page is tested in a real headless browser), and
# Slurm with munge (batches are tested on a real single-node cluster the tests start), and
# the aubio CLI (a second beat tracker the analysis tests compare with; nothing links it),
# and tesseract (OCR: the tests read rendered text back from the frames; nothing links it),
# and python3-venv (the timeline tests judge .otio/.fcpxml/.edl files with OpenTimelineIO
# from PyPI, in a virtual environment they make under ~/.cache; nothing links it), and git
# (`moonreel effects install git+URL@TAG` clones with it; the package tests make repositories).
set -euo pipefail
packages=(
  pkg-config liblua5.4-dev
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libavfilter-dev libavdevice-dev
  libpango1.0-dev libcairo2-dev libedit-dev
  fonts-noto-cjk fonts-dejavu-core
  ffmpeg git xvfb pulseaudio python3 python3-venv chromium slurmctld slurmd slurm-client munge aubio-tools tesseract-ocr tesseract-ocr-eng
)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
pkg-config --exists lua5.4 libavformat libavfilter libavdevice pangocairo libedit
