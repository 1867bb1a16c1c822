#!/usr/bin/env python3
"""Scores av.analyze's beats, tempo, downbeats and onsets beside essentia, aubio, librosa and madmom (issue 36).

    python3 bench/analysis.py [--set /work/beatdata/set] [--moonreel .build/debug/moonreel] [--verbose]

The set is what bench/make_beat_set.py builds: set.json listing tracks with NAME.beats and
NAME.downbeats (one time a line). Each tool runs on each track in a fresh process, one after
another (the wall time includes start-up, imports and decoding, as a script would see it):

* Moonreel: `moonreel run bench/beats.lua FILE` with XDG_CACHE_HOME in a new empty folder;
* essentia: RhythmExtractor2013(method='multifeature') on MonoLoader's 44.1 kHz mono;
* aubio: `aubio.tempo('default', 1024, 512)` for beats and tempo, `aubio.onset('default', 1024, 512)`
  for onsets (aubio's own defaults);
* librosa: `librosa.load` (22.05 kHz), `beat.beat_track`, `onset.onset_detect(units='time')`;
* madmom: `RNNDownBeatProcessor` and `DBNDownBeatTrackingProcessor(beats_per_bar=[3, 4])` (beats,
  downbeats and meter from one model), run in its own venv (bench/install-madmom.sh: it needs NumPy < 2).

Scores (mir_eval): beat F-measure (+-70 ms, no beats trimmed at the start), tempo at the annotated
level (the tool's tempo within 4 % of the median of the annotated beat intervals; double/half
counted apart), median absolute error of matched beats (ms, pooled over all tracks), downbeat F
(+-70 ms) where the tool gives downbeats, onset F of Moonreel's onsets against librosa's and
aubio's (50 ms) with the count ratio, and the mean wall time per 60 s of audio. The AUC of
Moonreel's tempoConfidence (and beatConfidence when the build reports it) for telling tracks
with beat F >= 0.8 from the rest is computed by hand (Mann-Whitney).

It needs a venv (default /work/venv-analysis) with librosa, essentia, aubio, mir_eval, soundfile,
numpy and mido; run with any python3, it creates the venv and installs what is missing (aubio
0.4.9's sdist does not build against FFmpeg >= 5, so it is built without FFmpeg, which it does not
need here: audio is passed as arrays), says what failed, and goes on without it.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = ['numpy', 'soundfile', 'mido', 'mir_eval', 'librosa', 'essentia', 'aubio']
TOOLS = ['moonreel', 'essentia', 'aubio', 'librosa', 'madmom']
MADMOM_VENV = '/work/venv-madmom'  # bench/install-madmom.sh: madmom needs NumPy < 2, the others >= 2


# ---------------------------------------------------------------- venv

def ensure_venv(venv):
    py = os.path.join(venv, 'bin', 'python')
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if not os.path.exists(py):
        print('creating %s' % venv, file=sys.stderr)
        subprocess.run([sys.executable, '-m', 'venv', venv], check=True)
    missing = []
    for p in PACKAGES:
        mod = {'mir_eval': 'mir_eval'}.get(p, p)
        if subprocess.run([py, '-c', 'import %s' % mod], capture_output=True).returncode == 0:
            continue
        print('installing %s' % p, file=sys.stderr)
        env = dict(os.environ)
        if p == 'aubio':
            env['PKG_CONFIG_LIBDIR'] = '/nonexistent'  # build without FFmpeg (its 0.4.9 source predates FFmpeg 5)
        r = subprocess.run([py, '-m', 'pip', 'install', '-q', p], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            missing.append(p)
            print('  %s did not install; going on without it:\n  %s' % (p, r.stderr.strip().splitlines()[-1:]),
                  file=sys.stderr)
    os.execv(py, [py] + sys.argv + (['--missing', ','.join(missing)] if missing else []))


# ---------------------------------------------------------------- workers (one tool, one file, own process)

def worker(tool, path):
    t0 = time.perf_counter()
    out = {}
    if tool == 'essentia':
        import essentia.standard as es
        t1 = time.perf_counter()
        x = es.MonoLoader(filename=path, sampleRate=44100)()
        bpm, ticks, conf, _, _ = es.RhythmExtractor2013(method='multifeature')(x)
        out = dict(tempo=float(bpm), beats=[float(t) for t in ticks], confidence=float(conf),
                   duration=len(x) / 44100.0)
    elif tool == 'aubio':
        import aubio
        import numpy as np
        import soundfile as sf
        t1 = time.perf_counter()
        x, sr = sf.read(path, dtype='float32', always_2d=True)
        x = np.ascontiguousarray(x.mean(axis=1), dtype=np.float32)
        hop = 512
        tp = aubio.tempo('default', 1024, hop, sr)
        on = aubio.onset('default', 1024, hop, sr)
        beats, onsets = [], []
        n = len(x) // hop * hop
        x = np.concatenate([x[:n], np.zeros(hop, np.float32)]) if n < len(x) else x
        for i in range(0, len(x) - hop + 1, hop):
            fr = x[i:i + hop]
            if tp(fr)[0]:
                beats.append(float(tp.get_last_s()))
            if on(fr)[0]:
                onsets.append(float(on.get_last_s()))
        out = dict(tempo=float(tp.get_bpm()) or None, beats=beats, onsets=onsets, duration=len(x) / sr)
    elif tool == 'librosa':
        import librosa
        import numpy as np
        t1 = time.perf_counter()
        y, sr = librosa.load(path)
        tempo, fr = librosa.beat.beat_track(y=y, sr=sr)
        beats = librosa.frames_to_time(fr, sr=sr)
        onsets = librosa.onset.onset_detect(y=y, sr=sr, units='time')
        out = dict(tempo=float(np.atleast_1d(tempo)[0]), beats=[float(t) for t in beats],
                   onsets=[float(t) for t in onsets], duration=len(y) / sr)
    elif tool == 'madmom':
        import numpy as np
        np.int, np.float = int, float  # its compiled modules predate NumPy 1.24 (bench/install-madmom.sh)
        from madmom.features.downbeats import RNNDownBeatProcessor, DBNDownBeatTrackingProcessor
        t1 = time.perf_counter()
        # The joint beat and downbeat model (Böck et al. 2016) with its DBN over 3 and 4 beats a bar:
        # one network gives both, so beats and bars are not two guesses that can disagree.
        activations = RNNDownBeatProcessor()(path)
        found = DBNDownBeatTrackingProcessor(beats_per_bar=[3, 4], fps=100)(activations)
        beats = [float(t) for t, _ in found]
        positions = [int(b) for _, b in found]
        out = dict(tempo=60.0 / float(np.median(np.diff(beats))) if len(beats) > 1 else None, beats=beats,
                   downbeats=[float(t) for t, b in found if int(b) == 1],
                   meter=max(positions) if positions else None, duration=len(activations) / 100.0)
    else:
        raise SystemExit('unknown tool %s' % tool)
    out['compute_s'] = time.perf_counter() - t1
    out['import_s'] = t1 - t0
    print(json.dumps(out))


def children_cpu():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_tool(tool, path, moonreel, cache_dir=None):
    cached = os.path.join(cache_dir, '%s-%s.json' % (tool, os.path.basename(path))) if cache_dir and tool != 'moonreel' \
        else None
    if cached and os.path.exists(cached):
        with open(cached) as fh:
            return json.load(fh)
    d = run_tool_fresh(tool, path, moonreel)
    if cached and 'error' not in d:
        os.makedirs(cache_dir, exist_ok=True)
        with open(cached, 'w') as fh:
            json.dump(d, fh)
    return d


def run_tool_fresh(tool, path, moonreel):
    c0 = children_cpu()
    t0 = time.perf_counter()
    if tool == 'moonreel':
        cache = tempfile.mkdtemp(prefix='moonreel-cache-')
        try:
            r = subprocess.run([moonreel, 'run', os.path.join(HERE, 'beats.lua'), path], capture_output=True,
                               text=True, env=dict(os.environ, XDG_CACHE_HOME=cache))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    else:
        python = os.path.join(MADMOM_VENV, 'bin', 'python') if tool == 'madmom' else sys.executable
        r = subprocess.run([python, os.path.abspath(__file__), '--worker', tool, path], capture_output=True,
                           text=True)
    wall = time.perf_counter() - t0
    cpu = children_cpu() - c0
    if r.returncode != 0:
        return dict(error=(r.stderr or r.stdout).strip()[-500:], wall_s=wall)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith('{')][-1]
    d = json.loads(line)
    if tool == 'moonreel':
        d['onsets_strength'] = [o[1] for o in d.get('onsets', [])]
        d['onsets'] = [o[0] for o in d.get('onsets', [])]
    d['wall_s'] = wall
    d['cpu_s'] = cpu
    return d


# ---------------------------------------------------------------- scoring

def auc(pos, neg):
    if not pos or not neg:
        return None
    s = 0.0
    for p in pos:
        for n in neg:
            s += 1.0 if p > n else 0.5 if p == n else 0.0
    return s / (len(pos) * len(neg))


def level(est, ref):
    if est is None or not est or ref is None:
        return 'none'
    for name, k in (('right', 1), ('double', 2), ('half', 0.5), ('triple', 3), ('third', 1 / 3.),
                    ('3/2', 1.5), ('2/3', 2 / 3.)):
        if abs(est / (ref * k) - 1) <= 0.04:
            return name
    return 'other'


def bar_phase(ref_downbeats, ref_beats, est_downbeats):
    """Which beat of the annotated bar the tool's downbeats fall on most often (1 = the annotated
    downbeat, 2 = a beat later …), or None: tells a bar a beat off from bars not found."""
    import numpy as np
    if len(est_downbeats) == 0 or len(ref_downbeats) == 0 or len(ref_beats) < 2:
        return None
    counts = {}
    for t in est_downbeats:
        i = int(np.argmin(np.abs(ref_beats - t)))
        if abs(ref_beats[i] - t) > 0.07:
            continue
        bar_start = ref_downbeats[ref_downbeats <= ref_beats[i] + 1e-6]
        if len(bar_start) == 0:
            continue
        position = 1 + int(np.sum((ref_beats >= bar_start[-1] - 1e-6) & (ref_beats < ref_beats[i] - 1e-6)))
        counts[position] = counts.get(position, 0) + 1
    return max(counts, key=counts.get) if counts else None


def score_track(t, res, setdir):
    import numpy as np
    import mir_eval
    ref = np.loadtxt(os.path.join(setdir, t['beats']), ndmin=1)
    refd = np.loadtxt(os.path.join(setdir, t['downbeats']), ndmin=1)
    ref_tempo = 60.0 / float(np.median(np.diff(ref)))
    row = dict(name=t['name'], kind=t.get('kind'), steady=t.get('steady'), meter=t.get('meter'),
               ref_tempo=round(ref_tempo, 2), bars_known=len(refd) > 0, tools={})
    for tool, d in res.items():
        if 'error' in d:
            row['tools'][tool] = dict(error=d['error'])
            continue
        est = np.array(sorted(d.get('beats', [])), float)
        f = float(mir_eval.beat.f_measure(ref, est, f_measure_threshold=0.07)) if len(est) else 0.0
        m = mir_eval.util.match_events(ref, est, 0.07) if len(est) else []
        signed = [(est[j] - ref[i]) * 1000 for i, j in m]
        errs = [abs(e) for e in signed]
        r = dict(f=round(f, 4), tempo=d.get('tempo'), level=level(d.get('tempo'), ref_tempo), n_beats=len(est),
                 errors_ms=[round(e, 2) for e in errs],
                 median_err_ms=round(float(np.median(errs)), 2) if errs else None,
                 median_signed_err_ms=round(float(np.median(signed)), 2) if signed else None,
                 wall_s=round(d['wall_s'], 3), compute_s=round(d.get('compute_s', d['wall_s']), 3),
                 per60_s=round(d['wall_s'] / max(1e-9, d.get('duration') or 1) * 60, 3),
                 cpu_per60_s=round(d['cpu_s'] / max(1e-9, d.get('duration') or 1) * 60, 3),
                 duration=d.get('duration'))
        if 'downbeats' in d:
            estd = np.array(sorted(d['downbeats']), float)
            r['downbeat_f'] = round(float(mir_eval.beat.f_measure(refd, estd, f_measure_threshold=0.07)), 4) \
                if len(estd) else 0.0
            r['n_downbeats'] = len(estd)
            r['downbeat_phase'] = bar_phase(refd, ref, estd)
            if d.get('meter') is not None:
                r['meter'] = d['meter']
        if tool == 'moonreel':
            for k in ('tempoConfidence', 'beatConfidence', 'steady', 'meter', 'meterConfidence', 'tempoCandidates'):
                if k in d:
                    r[k] = d[k]
            on = np.array(sorted(d.get('onsets', [])), float)
            r['n_onsets'] = len(on)
            r['onset_gaps_under_30ms'] = int(np.sum(np.diff(on) < 0.030)) if len(on) > 1 else 0
            for other in ('librosa', 'aubio'):
                od = res.get(other)
                if od and 'onsets' in od and 'error' not in od:
                    ro = np.array(sorted(od['onsets']), float)
                    if len(ro) and len(on):
                        of = mir_eval.onset.f_measure(ro, on, window=0.05)[0]
                    else:
                        of = 0.0
                    r['onset_f_vs_' + other] = round(float(of), 4)
                    r['onset_ratio_vs_' + other] = round(len(on) / max(1, len(ro)), 3)
        row['tools'][tool] = r
    return row


def fmt(v, nd=2):
    return '–' if v is None else ('%.*f' % (nd, v))


def summarise(rows, tools):
    import numpy as np
    n = len(rows)
    lines = []
    lines.append('| | ' + ' | '.join(tools) + ' |')
    lines.append('|---' * (len(tools) + 1) + '|')

    def per(tool, key):
        return [r['tools'][tool].get(key) for r in rows if tool in r['tools'] and 'error' not in r['tools'][tool]]

    def line(label, f):
        lines.append('| %s | %s |' % (label, ' | '.join(f(t) for t in tools)))

    line('tracks scored (errors)', lambda t: '%d (%d)' % (len(per(t, 'f')),
                                                          sum(1 for r in rows if 'error' in r['tools'].get(t, {}))))
    line('beat F-measure, mean (±70 ms)', lambda t: fmt(np.mean(per(t, 'f')) if per(t, 'f') else None))
    for kind in sorted(set(r['kind'] for r in rows)):
        sub = [r for r in rows if r['kind'] == kind]
        line('  … %s tracks (%d)' % (kind, len(sub)), lambda t, sub=sub: fmt(np.mean(
            [r['tools'][t]['f'] for r in sub if t in r['tools'] and 'f' in r['tools'][t]] or [float('nan')])))
    line('beat F ≥ 0.8', lambda t: '%d of %d' % (sum(1 for f in per(t, 'f') if f >= 0.8), len(per(t, 'f'))))
    line('tempo at the annotated level (±4 %)', lambda t: '%d of %d' % (per(t, 'level').count('right'),
                                                                         len(per(t, 'level'))))

    def others(t):
        lv = per(t, 'level')
        return ', '.join('%s %d' % (k, lv.count(k)) for k in ('double', 'half', 'triple', 'third', '3/2', '2/3',
                                                               'other', 'none') if lv.count(k)) or '–'

    line('… the others', others)
    line('median abs. error of matched beats (ms, pooled)',
         lambda t: fmt(float(np.median(sum(per(t, 'errors_ms'), []))) if sum(per(t, 'errors_ms'), []) else None, 1))
    def bar_scores(tool):
        # Tracks with known bars only (music alone has none to find), where the tool gives downbeats.
        return [r['tools'][tool]['downbeat_f'] for r in rows if r.get('bars_known', True) and tool in r['tools']
                and r['tools'][tool].get('downbeat_f') is not None]

    line('downbeat F, mean (±70 ms), tracks with known bars',
         lambda t: fmt(np.mean(bar_scores(t))) if bar_scores(t) else 'no downbeats')
    line('downbeat F ≥ 0.8', lambda t: '%d of %d' % (sum(1 for f in bar_scores(t) if f >= 0.8), len(bar_scores(t)))
         if bar_scores(t) else '–')

    def phases(t):
        ph = [p for p in per(t, 'downbeat_phase') if p is not None]
        return ', '.join('beat %d: %d' % (k, ph.count(k)) for k in sorted(set(ph))) or '–'

    line('… where the downbeats fall in the annotated bar (tracks)', phases)
    line('meter as annotated', lambda t: '%d of %d' % (
        sum(1 for r in rows if t in r['tools'] and r['tools'][t].get('meter') is not None
            and int(r['tools'][t]['meter']) == r['meter']),
        sum(1 for r in rows if t in r['tools'] and r['tools'][t].get('meter') is not None))
        if any(r['tools'].get(t, {}).get('meter') is not None for r in rows) else '–')
    line('… tracks with no downbeats', lambda t: ('%d of %d' % (per(t, 'n_downbeats').count(0),
                                                                 len(per(t, 'n_downbeats'))))
         if per(t, 'n_downbeats') and per(t, 'n_downbeats')[0] is not None else '–')
    line('wall time per 60 s, fresh process (mean)', lambda t: fmt(np.mean(per(t, 'per60_s'))) + ' s')
    line('CPU time (user+sys) per 60 s, fresh process (mean)', lambda t: fmt(np.mean(per(t, 'cpu_per60_s'))) + ' s')
    line('… of which analysis in the process (mean per 60 s)', lambda t: fmt(np.mean(
        [r['tools'][t]['compute_s'] / max(1e-9, r['tools'][t]['duration'] or 1) * 60 for r in rows
         if t in r['tools'] and 'compute_s' in r['tools'][t]])) + ' s' if t != 'moonreel' else '–')
    out = '\n'.join(lines)

    # Moonreel's onsets and confidence
    m = [r['tools']['moonreel'] for r in rows if 'moonreel' in r['tools'] and 'error' not in r['tools']['moonreel']]
    extra = []
    if m:
        extra.append('\nMoonreel\'s onsets against the other tools\' (mir_eval.onset.f_measure, 50 ms):\n')
        extra.append('| against | mean F | median count ratio (Moonreel / other) | max ratio | tracks with a gap under 30 ms |')
        extra.append('|---|---|---|---|---|')
        for other in ('librosa', 'aubio'):
            fs = [x['onset_f_vs_' + other] for x in m if 'onset_f_vs_' + other in x]
            rs = [x['onset_ratio_vs_' + other] for x in m if 'onset_ratio_vs_' + other in x]
            if fs:
                extra.append('| %s | %.2f | %.2f | %.2f | %d of %d |' % (
                    other, np.mean(fs), np.median(rs), max(rs), sum(1 for x in m if x['onset_gaps_under_30ms']),
                    len(m)))
        extra.append('')
        for key in ('tempoConfidence', 'beatConfidence'):
            pairs = [(x[key], x['f']) for x in m if x.get(key) is not None]
            if pairs:
                a = auc([c for c, f in pairs if f >= 0.8], [c for c, f in pairs if f < 0.8])
                extra.append('AUC of Moonreel\'s `%s` for beat F ≥ 0.8 (%d tracks) against below (%d): %s' % (
                    key, sum(1 for c, f in pairs if f >= 0.8), sum(1 for c, f in pairs if f < 0.8),
                    'n/a (one class empty)' if a is None else '%.2f' % a))
        st = [(x['steady'], r['steady']) for r, x in zip([r for r in rows if 'moonreel' in r['tools'] and
                                                           'error' not in r['tools']['moonreel']], m) if 'steady' in x]
        if st:
            extra.append('`steady` agrees with the set on %d of %d tracks' % (sum(1 for a, b in st if a == b), len(st)))
        mt = [(x['meter'], r['meter']) for r, x in zip([r for r in rows if 'moonreel' in r['tools'] and
                                                         'error' not in r['tools']['moonreel']], m) if 'meter' in x]
        if mt:
            extra.append('`meter` right on %d of %d tracks' % (sum(1 for a, b in mt if a and int(a) == b), len(mt)))
    return out + '\n' + '\n'.join(extra)


def downbeat_table(rows, tools):
    tools = [t for t in tools if any('downbeat_f' in r['tools'].get(t, {}) for r in rows)]
    lines = ['| track | meter | ' + ' | '.join('%s downbeat F (beat of the bar, meter)' % t for t in tools) + ' |',
             '|---|---|' + '---|' * len(tools)]
    for r in rows:
        cells = []
        for t in tools:
            x = r['tools'].get(t, {})
            cells.append('%s (%s, %s)' % (fmt(x.get('downbeat_f')), x.get('downbeat_phase') or '–',
                                          fmt(x.get('meter'), 0)) if 'downbeat_f' in x else '–')
        lines.append('| %s | %s | %s |' % (r['name'], r['meter'], ' | '.join(cells)))
    return '\n'.join(lines)


def per_track_table(rows, tools):
    head = '| track | kind | steady | ref BPM | ' + ' | '.join('%s BPM / F' % t for t in tools) + \
           ' | Moonreel conf | Moonreel downbeat F | Moonreel onsets / librosa\'s (F) |'
    lines = [head, '|' + '---|' * (head.count('|') - 1)]
    for r in rows:
        cells = []
        for t in tools:
            x = r['tools'].get(t, {})
            if 'error' in x:
                cells.append('error')
            elif x:
                cells.append('%s / %.2f%s' % (fmt(x['tempo'], 1), x['f'], '' if x['level'] == 'right'
                                              else ' (%s)' % x['level']))
            else:
                cells.append('–')
        m = r['tools'].get('moonreel', {})
        conf = fmt(m.get('tempoConfidence')) + ('' if m.get('beatConfidence') is None else
                                                 ' / beat %s' % fmt(m.get('beatConfidence')))
        lines.append('| %s | %s | %s | %.1f | %s | %s | %s | %s |' % (
            r['name'], r['kind'], 'yes' if r['steady'] else 'no', r['ref_tempo'], ' | '.join(cells), conf,
            fmt(m.get('downbeat_f')), '%s (%s)' % (fmt(m.get('onset_ratio_vs_librosa'), 2),
                                                   fmt(m.get('onset_f_vs_librosa')))))
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--set', default='/work/beatdata/set',
                    help='folder with set.json (bench/make_beat_set.py), or with beats.json (Tests/Fixtures/beats)')
    ap.add_argument('--moonreel', default='/work/main/.build/debug/moonreel', help='the moonreel binary to score')
    ap.add_argument('--venv', default='/work/venv-analysis')
    ap.add_argument('--tools', default=','.join(TOOLS))
    ap.add_argument('--tracks', help='comma-separated names (default: all)')
    ap.add_argument('--json', help='write per-track results here (default: SET/results-<time>.json)')
    ap.add_argument('--reuse', metavar='DIR', help='keep the other tools\' outputs (not Moonreel\'s) in DIR and read '
                    'them from there on later runs (their times are then those of the first run)')
    ap.add_argument('--verbose', '-v', action='store_true', help='also print the per-track table')
    ap.add_argument('--worker', nargs=2, metavar=('TOOL', 'FILE'), help=argparse.SUPPRESS)
    ap.add_argument('--missing', default='', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(*a.worker)
        return
    ensure_venv(a.venv)
    missing = set(filter(None, a.missing.split(',')))
    tools = [t for t in a.tools.split(',') if t]
    for t in list(tools):
        if t != 'moonreel' and t in missing:
            print('%s is not installed: left out' % t, file=sys.stderr)
            tools.remove(t)
    if 'madmom' in tools and not os.access(os.path.join(MADMOM_VENV, 'bin', 'python'), os.X_OK):
        print('madmom is not installed (bench/install-madmom.sh): left out', file=sys.stderr)
        tools.remove('madmom')
    if 'moonreel' in tools and not os.access(a.moonreel, os.X_OK):
        raise SystemExit('no moonreel binary at %s' % a.moonreel)
    manifest = os.path.join(a.set, 'set.json')
    if not os.path.exists(manifest) and os.path.exists(os.path.join(a.set, 'beats.json')):
        manifest = os.path.join(a.set, 'beats.json')  # the CI excerpts in Tests/Fixtures/beats
    with open(manifest) as fh:
        tracks = json.load(fh)
    load0 = os.getloadavg()[0]
    if a.tracks:
        keep = set(a.tracks.split(','))
        tracks = [t for t in tracks if t['name'] in keep]
    needs = set(tools) | ({'librosa', 'aubio'} - missing if 'moonreel' in tools else set())
    rows = []
    for t in tracks:
        path = os.path.join(a.set, t['audio'])
        res = {}
        for tool in [x for x in TOOLS if x in needs]:
            res[tool] = run_tool(tool, path, a.moonreel, a.reuse)
        row = score_track(t, res, a.set)
        row['tools'] = {k: v for k, v in row['tools'].items() if k in tools}
        rows.append(row)
        print('%-30s %s' % (t['name'], '  '.join(
            '%s %s/%s' % (k, fmt(v.get('tempo'), 1), fmt(v.get('f'))) if 'error' not in v else '%s ERROR' % k
            for k, v in row['tools'].items())), file=sys.stderr)
    load1 = os.getloadavg()[0]
    print('\n## %d tracks, %s (moonreel: %s)\n' % (len(rows), a.set, a.moonreel))
    print('%d cores; load average (1 min) %.2f before, %.2f after: the wall times count only when both are '
          'near 1 (this run alone)\n' % (os.cpu_count(), load0, load1))
    print(summarise(rows, tools))
    if a.verbose:
        print('\n' + per_track_table(rows, tools))
        print('\n' + downbeat_table(rows, tools))
    jpath = a.json or os.path.join(a.set, 'results-%s.json' % time.strftime('%Y%m%d-%H%M%S'))
    with open(jpath, 'w') as fh:
        json.dump(dict(set=a.set, moonreel=a.moonreel, tools=tools, missing=sorted(missing), cores=os.cpu_count(),
                       load=[load0, load1], rows=rows), fh, indent=1)
    print('\nper-track results: %s' % jpath)


if __name__ == '__main__':
    main()
