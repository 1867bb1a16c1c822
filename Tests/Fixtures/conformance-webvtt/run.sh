#!/usr/bin/env bash
# Run the WPT WebVTT file-parsing files through Moonreel's av.readCues and compare with
# expected.json (WPT assertions: cue count, id, startTime, endTime, text).
#   bash Tests/Fixtures/conformance-webvtt/run.sh              # from the project root: WPT table, then extra probes
#   MOONREEL=/path/to/moonreel bash run.sh                     # another binary
# Files run one at a time (each run is ~0.1 s). Last line: "N passed, M failed" (WPT files only).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -z ${MOONREEL:-} ]]; then
  if [[ -x .build/release/moonreel ]]; then MOONREEL=$(pwd)/.build/release/moonreel; else MOONREEL=$(command -v moonreel || echo moonreel); fi
fi
export MOONREEL
export HERE
cd "$HERE"
exec python3 - "$@" <<'PY'
import json, os, subprocess, sys

HERE = os.environ["HERE"]
MOONREEL = os.environ["MOONREEL"]
TOL = 1e-6
CUE = b"\n00:00:00.000 --> 00:00:01.000\nprobe\n"

def run(path):
    """-> ("error", message) or ("cues", [dict, ...])"""
    p = subprocess.run([MOONREEL, "run", os.path.join(HERE, "dump.lua"), path],
                       capture_output=True, cwd=HERE, timeout=60)
    out = p.stdout.decode("utf-8", "replace").splitlines()
    if out and out[0].startswith("ERROR: ") and "cannot open" in out[0]:
        sys.exit("harness problem, file missing: " + out[0])
    if out and out[0].startswith("ERROR: "):
        return "error", out[0][7:]
    if p.returncode != 0:
        return "error", "moonreel exited %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace").strip()[:200])
    return "cues", [json.loads(l) for l in out if l.strip()]

def short(x, n=70):
    s = json.dumps(x, ensure_ascii=True)
    return s if len(s) <= n else s[:n - 3] + "..."

def fmt_actual(c):
    return short([c.get("id"), c.get("start"), c.get("finish"), c.get("text")], 90)

def is_no_cues_error(msg):
    return "no cues found" in msg

def compare(expected, kind, got):
    """-> (ok, [detail lines], note)"""
    if isinstance(expected, dict):
        desc = "error: " + got if kind == "error" else "%d cues" % len(got)
        return None, ["tool gives " + desc], expected["skip"]
    if expected == "error":
        if kind == "error":
            note = "rejected only because it has no cues (header accepted)" if is_no_cues_error(got) else ""
            return True, [], note
        return False, ["expected: rejected (WPT: error event); tool accepts it: %d cues" % len(got)] + \
               ["  got " + fmt_actual(c) for c in got[:3]], ""
    if expected == "no cues":
        if kind == "cues" and not got:
            return True, [], ""
        if kind == "error" and is_no_cues_error(got):
            return True, [], "documented 'no cues found' error instead of an empty list"
        if kind == "error":
            return False, ["expected: loads with 0 cues; tool: error: " + got[:150]], ""
        return False, ["expected: 0 cues; tool gives %d cues" % len(got)] + ["  got " + fmt_actual(c) for c in got[:3]], ""
    # a list of cues
    if kind == "error":
        return False, ["expected %d cues; tool: error: %s" % (len(expected), got[:150])], ""
    lines = []
    if len(got) != len(expected):
        lines.append("cue count: expected %d, got %d" % (len(expected), len(got)))
    for i, (e, a) in enumerate(zip(expected, got)):
        eid, est, een, etx = e
        bad = []
        if eid is not None:
            aid = a.get("id")
            if (aid if aid is not None else "") != eid:
                bad.append("id %s != %s" % (short(aid, 30), short(eid, 30)))
        for name, ev, key in (("start", est, "start"), ("end", een, "finish")):
            if ev is not None:
                av = a.get(key)
                if not isinstance(av, (int, float)) or abs(av - ev) > TOL:
                    bad.append("%s %s != %s" % (name, short(av, 20), ev))
        if etx is not None and a.get("text") != etx:
            bad.append("text %s != %s" % (short(a.get("text"), 40), short(etx, 40)))
        if bad:
            lines.append("cue %d: %s   (got / expected)" % (i, "; ".join(bad)))
    if len(got) > len(expected):
        lines += ["  extra " + fmt_actual(c) for c in got[len(expected):len(expected) + 2]]
    return not lines, lines, ""

def path_for(key, probe=False):
    if probe and "+cue" in key:
        return os.path.join("probes", key)
    if key.startswith("invalid/") or key.startswith("handmade/"):
        return key
    return os.path.join("vtt", key)

def table(expectations, probe=False, max_lines=4):
    passed = failed = skipped = 0
    for key, exp in expectations.items():
        if key.startswith("_"):
            continue
        kind, got = run(path_for(key, probe))
        ok, lines, note = compare(exp, kind, got)
        tag = "SKIP" if ok is None else ("PASS" if ok else "FAIL")
        print("%s  %s%s" % (tag, key, ("   [" + note + "]") if note else ""))
        for l in lines[:max_lines]:
            print("      " + l)
        if len(lines) > max_lines:
            print("      ... %d more" % (len(lines) - max_lines))
        if ok is None: skipped += 1
        elif ok: passed += 1
        else: failed += 1
    return passed, failed, skipped

def make_probes(probes):
    os.makedirs(os.path.join(HERE, "probes", "invalid"), exist_ok=True)
    for key in probes:
        if "+cue" not in key:
            continue
        src = path_for(key.replace("+cue", ""))
        data = open(os.path.join(HERE, src), "rb").read()
        if data and not data.endswith(b"\n"):
            data += b"\n"
        open(os.path.join(HERE, "probes", key), "wb").write(data + CUE)

expected = json.load(open(os.path.join(HERE, "expected.json"), encoding="utf-8"))
probes = json.load(open(os.path.join(HERE, "probes.json"), encoding="utf-8"))
make_probes(probes)

print("== WPT webvtt/parsing/file-parsing (" + expected["_meta"]["source"].split(" (")[0] + ")")
print("   compared: cue count, id, start, end, text; null fields in expected.json are not asserted by WPT")
p, f, s = table(expected)
print()
print("== Extra probes (not WPT; see probes.json)")
pp, pf, ps = table(probes, probe=True)
print("probes: %d passed, %d failed" % (pp, pf))
print()
if s:
    print("WPT: %d skipped (no cue assertions)" % s)
print("%d passed, %d failed" % (p, f))
PY
