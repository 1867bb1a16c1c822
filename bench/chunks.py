#!/usr/bin/env python3
"""Chunked renders (issue 23 §4): what splitting one export into N pieces costs.

Renders a lyric-video-like export (a 1280x720 clip under a text layer, its sound, CRF 18
medium) once whole and once as N pieces + the sound + the join, each task run alone, one
after another, under /usr/bin/time, so every task's wall and CPU time are its own. Prints:
  - CPU: the pieces, the sound and the join together against the single export (≤ 1.05),
  - the join's wall time against the single export's (≤ 2 %),
  - the largest piece's wall time against (single wall / N) (≤ 1.1),
and the wall time of `moonreel run --chunks N` on this machine, tasks --jobs at a time.

Usage: bench/chunks.py [MOONREEL] [--seconds S] [--pieces N] [--runs R] [--set NAME=VALUE ...]
"""
import argparse, os, statistics, subprocess, sys, tempfile

TEMPLATE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "MoonreelTests", "Fixtures", "pieces.lua"))


def timed(command, cwd):
    """(wall, cpu) seconds of one command, from GNU time."""
    result = subprocess.run(["/usr/bin/time", "-f", "%e %U %S"] + command, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{result.stderr}")
    wall, user, system = map(float, result.stderr.strip().split("\n")[-1].split())
    return wall, user + system


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("moonreel", nargs="?", default=".build/release/moonreel")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--pieces", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a template parameter for every run, e.g. --set keyframes=2 --set deterministic=true")
    options = parser.parse_args()
    moonreel = os.path.abspath(options.moonreel)
    folder = tempfile.mkdtemp(prefix="moonreel-chunks-bench-")
    clip = os.path.join(folder, "clip.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size=1280x720:rate=30:duration={options.seconds}",
                    "-f", "lavfi", "-i", f"sine=frequency=440:duration={options.seconds}", "-c:v", "libx264", "-preset", "fast",
                    "-g", "60", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", clip], check=True)
    template = TEMPLATE
    values = ["--set", f"clip={clip}", "--set", f"output={folder}/out.mp4"] + [part for value in options.set for part in ("--set", value)]
    chunk = ["--chunks", str(options.pieces), "--chunk-folder", f"{folder}/pieces"]
    tasks = [f"piece:{i}" for i in range(1, options.pieces + 1)] + ["sound", "join"]
    rows = []
    for run in range(options.runs):
        single = timed([moonreel, "run", "--progress", "none", "--overwrite"] + values + [template], folder)
        parts = {task: timed([moonreel, "run", "--progress", "none", "--overwrite"] + chunk + ["--chunk-task", task] + values + [template], folder)
                 for task in tasks}
        together = timed([moonreel, "run", "--quiet", "--overwrite"] + chunk + values + [template], folder)
        cpu = sum(cpu for _, cpu in parts.values()) / single[1]
        join = parts["join"][0] / single[0]
        largest = max(parts[t][0] for t in tasks if t.startswith("piece")) / (single[0] / options.pieces)
        rows.append((single, parts, together, cpu, join, largest))
        print(f"run {run + 1}: single {single[0]:.2f} s wall, {single[1]:.2f} s CPU; "
              + ", ".join(f"{t} {w:.2f}/{c:.2f}" for t, (w, c) in parts.items())
              + f"; --chunks {options.pieces} here {together[0]:.2f} s; CPU ×{cpu:.3f}, join {join * 100:.2f} %, largest piece ×{largest:.3f}")
    median = lambda values: statistics.median(values)
    print(f"median of {options.runs}: single {median([r[0][0] for r in rows]):.2f} s wall / {median([r[0][1] for r in rows]):.2f} s CPU; "
          f"pieces+sound+join CPU ×{median([r[3] for r in rows]):.3f} (min {min(r[3] for r in rows):.3f}, max {max(r[3] for r in rows):.3f}); "
          f"join {median([r[4] for r in rows]) * 100:.2f} % of the single wall; largest piece ×{median([r[5] for r in rows]):.3f} of single/N; "
          f"--chunks {options.pieces} on this machine {median([r[2][0] for r in rows]):.2f} s")


if __name__ == "__main__":
    main()
