#!/usr/bin/env python3
"""Builds an evaluation set of music with known beats for bench/analysis.py (issue 36).

Two kinds of track, both from Debian packages (install them first):

    apt-get install -y fretsonfire-songs-muldjord fretsonfire-songs-sectoid \
        hydrogen-data hydrogen-drumkits wesnoth-1.16-music

* ``chart``: recorded songs of the Frets on Fire song packages. Each song's notes.mid has a tempo
  map (set_tempo events, ticks_per_beat, time signatures) that gives the beat grid and the bars.
  The grid is checked against the audio (song.ogg + guitar.ogg [+ rhythm.ogg], mixed): one global
  offset is searched (-300..+300 ms, correlating the chart's note times and beats with the audio's
  onset envelope; the envelope's own lead, measured on drum hits laid at known times over music,
  is taken off), then every 10 s window (5 s hop) is checked: its own best offset (searched
  within +-60 ms of the global one) must stay within 25 ms of the global one, and the onsets on
  the grid's beats must be clearly stronger than those half a beat off (ratio >= 1.25). Only runs
  of good windows are cut into excerpts; librosa's beat tracker (when importable) is run on each
  excerpt as a second check (its beats must land on the grid's beats more often than on its
  half-beats).
* ``kit``: drum samples from Hydrogen's kits laid at known times under (or over) real game music
  from Battle for Wesnoth whose own pulse is weak (measured), with small random timing (sd 4 ms)
  and velocity variation. The truth is the pattern's nominal beat grid.

``--hard`` (issue 36 §3: a set where trackers fail, so a confidence can be measured; build it into its own folder,
/work/beatdata/set-hard) adds to those 22: the guitar stem of each checked song alone (no drums, no bass) over a
stretch whose windows all passed the check on the mix (the stems play in sync, so the grid holds), up to two more
30 s excerpts of the mix from checked stretches not cut before, 23 kits (``HARD_MIXES``: kits 12-20 dB under the
music, shuffle and jazz swing, 6/8 and 12/8, 3/4 plain, sparse and jazz, half-time, a sparse kick and rim, a reggae
one drop, bossa nova, a syncopated breakbeat, tempo jumps, a ritardando, breaks of 17-23 s where only the music plays
while the grid goes on) and three pieces of music alone whose own pulse is weak (``HARD_BEDS``, truth empty: any beat
found there scores F 0).

Output (default /work/beatdata/set): NAME.wav (44.1 kHz mono 16-bit), NAME.beats, NAME.downbeats
(one time a line, seconds) and set.json, a list of
{name, audio, beats, downbeats, meter, tempo, steady, kind, source, licence, ...}.

``--fixtures DIR`` also writes 20 s OGG Vorbis excerpts of a few tracks for CI (with truth files,
SOURCES.md and licence texts).

Needs python3 with numpy and mido (the bench venv: /work/venv-analysis/bin/python), and ffmpeg.
Deterministic: the random timing uses a fixed seed per track.
"""
import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import wave

import numpy as np

SR = 44100
HOP = 256
FOF = '/usr/share/games/fretsonfire/data/songs'
WESNOTH = '/usr/share/games/wesnoth/1.16/data/core/music'
KITS = '/usr/share/hydrogen/data/drumkits'

LIC_SECTOID = 'Expat (MIT): Copyright (c) 2006/2007 Carlos Viola Iborra (Sectoid); /usr/share/doc/fretsonfire-songs-sectoid/copyright'
LIC_MULDJORD = 'CC-BY-SA-3.0: Copyright (c) 2009 El Senator (Muldjord); /usr/share/doc/fretsonfire-songs-muldjord/copyright'
LIC_WESNOTH = 'GPL-2+: Battle for Wesnoth music (wesnoth-1.16-music); /usr/share/doc/wesnoth-1.16-music/copyright'
KIT_LIC = {
    'colombo': 'GPL-2+ with composition exception: (C) 2006 Marcos Guglielmetti, Colombo Acoustic Drumkit (hydrogen-drumkits); /usr/share/hydrogen/data/drumkits/ColomboAcousticDrumkit/README',
    'gmrock': 'GPL-2+: GMRockKit, Glen MacArthur / Sebastian Moors (hydrogen-data); /usr/share/doc/hydrogen-data/copyright',
    'tr808': 'GPL-2+: TR808EmulationKit (hydrogen-data); /usr/share/doc/hydrogen-data/copyright',
}
KIT_FILES = {
    'colombo': {'dir': 'ColomboAcousticDrumkit', 'kick': 'bassdrum-4mics-br-stereo-normal3.flac',
                'snare': 'snare-opaque-2mics_normal-shot1.flac', 'hat': 'hihat-closed-1.flac',
                'ohat': 'hihat-open-1.flac', 'ride': 'crash20i__ride4.flac', 'crash': 'crash16i__crash1.flac',
                'rim': 'stick-rim-9.flac'},
    'gmrock': {'dir': 'GMRockKit', 'kick': 'Kick-Hard.wav', 'snare': 'Snare-Hard.wav', 'hat': 'HatClosed-Med.wav',
               'ohat': 'HatOpen-Med.wav', 'ride': 'Ride-Med.wav', 'crash': 'Crash-Med.wav', 'rim': 'SideStick-Med.wav'},
    'tr808': {'dir': 'TR808EmulationKit', 'kick': '808_Kick_Long.flac', 'snare': '808_Snare_1.flac',
              'clap': '808_Clap.flac', 'hat': '808_Hat_Closed.flac', 'ohat': '808_Hat_Open.flac',
              'rim': '808_Clave.flac', 'crash': '808_Cymbal.flac'},
}


# ---------------------------------------------------------------- audio helpers

def decode(path, sr=SR):
    out = subprocess.run(['ffmpeg', '-v', 'error', '-i', path, '-f', 'f32le', '-ac', '1', '-ar', str(sr), '-'],
                         capture_output=True, check=True).stdout
    return np.frombuffer(out, np.float32).astype(np.float64)


def lufs(x):
    """Integrated loudness (EBU R128) by ffmpeg's ebur128 filter; -70 for silence."""
    p = subprocess.run(['ffmpeg', '-hide_banner', '-nostats', '-f', 'f32le', '-ar', str(SR), '-ac', '1', '-i', '-',
                        '-af', 'ebur128', '-f', 'null', '-'], input=np.asarray(x, np.float32).tobytes(),
                       capture_output=True, check=True)
    m = re.findall(r'I:\s+(-?[\d.]+|-inf) LUFS', p.stderr.decode())
    return float(m[-1]) if m and m[-1] != '-inf' else -70.0


def write_wav(path, x):
    y = np.clip(np.round(np.asarray(x) * 32767), -32768, 32767).astype('<i2')
    with wave.open(path, 'wb') as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(y.tobytes())


def onset_env(x, n=2048, hop=HOP):
    """Log-magnitude spectral flux, local mean removed, unit variance (frame rate SR/HOP)."""
    win = np.hanning(n)
    nfr = 1 + (len(x) - n) // hop
    out = np.zeros(max(nfr, 0))
    prev = None
    for s in range(0, nfr, 2048):
        e = min(nfr, s + 2048)
        idx = (np.arange(s, e) * hop)[:, None] + np.arange(n)[None, :]
        m = np.log1p(100 * np.abs(np.fft.rfft(x[idx] * win, axis=1)))
        d = np.diff(m, axis=0, prepend=(m[:1] if prev is None else prev[None, :]))
        out[s:e] = np.maximum(d, 0).sum(1)
        prev = m[-1]
    k = int(0.5 * SR / hop)
    loc = np.convolve(out, np.ones(k) / k, 'same')
    o = np.maximum(out - loc, 0)
    return o / (o.std() + 1e-9)


def env_score(env, times, off=0.0):
    f = (np.asarray(times, float) + off) * SR / HOP
    f = f[(f >= 0) & (f < len(env) - 1)]
    return float(np.interp(f, np.arange(len(env)), env).mean()) if len(f) else 0.0


def write_truth(path, times):
    with open(path, 'w') as fh:
        for t in times:
            fh.write('%.4f\n' % t)


# ---------------------------------------------------------------- Frets on Fire charts

def read_chart(mid):
    import mido
    m = mido.MidiFile(mid)
    tpb = m.ticks_per_beat
    ev = []
    for tr in m.tracks:
        tick = 0
        for msg in tr:
            tick += msg.time
            ev.append((tick, msg))
    ev.sort(key=lambda p: p[0])
    tempos = [(0, 500000)]
    notes = set()
    ts = [(0, 4, 4)]
    for tick, msg in ev:
        if msg.type == 'set_tempo':
            if tempos[-1][0] == tick:
                tempos[-1] = (tick, msg.tempo)
            else:
                tempos.append((tick, msg.tempo))
        elif msg.type == 'note_on' and msg.velocity > 0:
            notes.add(tick)
        elif msg.type == 'time_signature':
            if ts[-1][0] == tick:
                ts[-1] = (tick, msg.numerator, msg.denominator)
            else:
                ts.append((tick, msg.numerator, msg.denominator))

    def t2s(tick):
        s = 0.0
        for i, (tk, tp) in enumerate(tempos):
            nxt = tempos[i + 1][0] if i + 1 < len(tempos) else None
            if nxt is not None and tick > nxt:
                s += (nxt - tk) * tp / tpb / 1e6
            else:
                return s + (tick - tk) * tp / tpb / 1e6
        return s

    return tpb, tempos, sorted(notes), ts, t2s


def chart_grid(tpb, ts, t2s, end_s):
    """Beat and bar times (seconds) of the chart, to end_s. Beats are the time signature's
    denominator notes (quarter notes in 4/4 and 3/4)."""
    beats, bars, meters = [], [], []
    i = 0
    tick = 0
    while True:
        while i + 1 < len(ts) and ts[i + 1][0] <= tick:
            i += 1
        num, den = ts[i][1], ts[i][2]
        step = tpb * 4 // den
        t = t2s(tick)
        if t > end_s:
            break
        bars.append(t)
        meters.append(num)
        for k in range(num):
            beats.append(t2s(tick + k * step))
        tick += num * step
    return np.array(beats), np.array(bars), meters


_BIAS = []


def envelope_bias():
    """How far onset_env's peaks sit from the hits that cause them (seconds, negative: earlier).
    Measured on a drum pattern laid at known times over music; chart offsets are corrected by it."""
    if not _BIAS:
        y, beats, _ = render_kit('colombo', 'rock', const(100), 30.0, seed=7, t_start=0.5)
        x = mix(y, bed('the_deep_path', 80, 30.0), -3)
        env = onset_env(x)
        offs = np.arange(-0.1, 0.1001, 0.001)
        _BIAS.append(float(offs[int(np.argmax([env_score(env, beats, o) for o in offs]))]))
    return _BIAS[0]


def check_chart(song_dir, log):
    stems = [p for p in ('song.ogg', 'guitar.ogg', 'rhythm.ogg') if os.path.exists(os.path.join(song_dir, p))]
    xs = [decode(os.path.join(song_dir, p)) for p in stems]
    n = max(map(len, xs))
    x = sum(np.pad(a, (0, n - len(a))) for a in xs)
    x /= (np.abs(x).max() + 1e-9)
    dur = n / SR
    tpb, tempos, notes, ts, t2s = read_chart(os.path.join(song_dir, 'notes.mid'))
    beats, bars, meters = chart_grid(tpb, ts, t2s, dur + 5)
    nt = np.array([t2s(k) for k in notes])
    env = onset_env(x)
    offs = np.arange(-0.300, 0.3001, 0.001)
    sc = [env_score(env, nt, o) + env_score(env, beats, o) for o in offs]
    off = float(offs[int(np.argmax(sc))])
    bias = envelope_bias()
    per = float(np.median(np.diff(beats)))
    wins = []
    W, H = 10.0, 5.0
    for s in np.arange(0, dur - W + 1e-9, H):
        bsel = beats[(beats + off >= s) & (beats + off < s + W)]
        nsel = nt[(nt + off >= s) & (nt + off < s + W)]
        if len(nsel) < 4 or len(bsel) < 4:
            wins.append((s, None, 0.0, False))
            continue
        fine = np.arange(off - 0.060, off + 0.0601, 0.005)
        fs = [env_score(env, nsel, o) + env_score(env, bsel, o) for o in fine]
        lo = float(fine[int(np.argmax(fs))])
        ratio = env_score(env, bsel, off) / max(1e-9, env_score(env, bsel + per / 2, off))
        good = abs(lo - off) <= 0.025 and ratio >= 1.25
        wins.append((s, lo - off, ratio, good))
    log.append('%s: %d stems, %.1f s, tempo map %s, time signatures %s, global offset %+.0f ms '
               '(envelope peak %+.0f ms, less the envelope\'s own lead of %+.1f ms measured on drum hits)' % (
                   os.path.basename(song_dir.rstrip('/')), len(stems), dur,
                   ', '.join('%.2f BPM @%d' % (60e6 / tp, tk) for tk, tp in tempos), ts, (off - bias) * 1000,
                   off * 1000, bias * 1000))
    off -= bias  # from here on: the shift from the chart's times to the audio's
    log.append('  windows (10 s, hop 5 s; local offset ms / on-beat:off-beat ratio; * = good): ' + ' '.join(
        ('%+.0f/%.1f%s' % (d * 1000, r, '*' if g else '')) if d is not None else '-' for s, d, r, g in wins))
    return dict(x=x, dur=dur, beats=beats + off, bars=bars + off, meters=meters, off=off, per=per,
                wins=wins, tempos=tempos, W=W, H=H, notes=nt + off)


def good_runs(wins, W, H):
    runs, cur = [], None
    for s, d, r, g in wins:
        if g:
            cur = [s, s + W] if cur is None else [cur[0], s + W]
        else:
            if cur:
                runs.append(cur)
            cur = None
    if cur:
        runs.append(cur)
    # windows overlap: keep out the time any failing window covers
    bad = [(s, s + W) for s, d, r, g in wins if not g]
    out = []
    for a, b in runs:
        for p, q in bad:
            if p < a < q:
                a = q
            if p < b < q:
                b = p
        if b > a:
            out.append([a, b])
    return out


def librosa_check(x, beats, per):
    try:
        import librosa
    except Exception:
        return None
    _, fr = librosa.beat.beat_track(y=x.astype(np.float32), sr=SR, hop_length=512)
    lb = librosa.frames_to_time(fr, sr=SR, hop_length=512)
    if len(lb) == 0 or len(beats) == 0:
        return None
    on = sum(1 for t in lb if np.min(np.abs(beats - t)) <= 0.07)
    half = sum(1 for t in lb if np.min(np.abs(beats + per / 2 - t)) <= 0.07)
    return {'librosa_beats': len(lb), 'on_grid_beats': on, 'on_half_beats': half}


def build_charts(out, log, excerpt=45.0, per_song=2, only=None, hard=False):
    tracks = []
    rejected = []
    for pack, lic in (('sectoid', LIC_SECTOID), ('muldjord', LIC_MULDJORD)):
        for d in sorted(glob.glob(os.path.join(FOF, pack, '*/'))):
            song = os.path.basename(d.rstrip('/'))
            slug = re.sub(r'[^a-z0-9]+', '_', song.lower()).strip('_')
            if only and slug not in only:
                continue
            c = check_chart(d, log)
            runs = [r for r in good_runs(c['wins'], c['W'], c['H']) if r[1] - r[0] >= 30]
            if abs(c['off']) > c['per'] / 4:
                rejected.append('%s: the best global offset (%+.0f ms) is %.2f of a beat: the chart\'s grid sits '
                                'between the audio\'s beats (or the beats cannot be told from the off-beats)' % (
                                    song, c['off'] * 1000, abs(c['off']) / c['per']))
                continue
            if not runs:
                rejected.append('%s: no stretch of 30 s where the grid lines up (on-beat onsets not clearly above the '
                                'half-beats, or the local offset drifts)' % song)
                continue
            cuts = []
            for a, b in sorted(runs, key=lambda r: r[0] - r[1]):
                s = a + 0.5
                while s + excerpt <= b + 1e-9 and len(cuts) < per_song:
                    cuts.append(s)
                    s += excerpt
                if len(cuts) >= per_song:
                    break
                if not cuts and b - a >= 30:
                    cuts.append(a + 0.5)
            for i, s in enumerate(sorted(cuts)):
                e = min(s + excerpt, c['dur'])
                for r in runs:
                    if r[0] <= s < r[1] and e > r[1]:
                        e = r[1]
                name = 'fof_%s_%d' % (slug, i + 1)
                seg = c['x'][int(s * SR):int(e * SR)]
                seg = seg / (np.abs(seg).max() + 1e-9) * 0.89
                bt = c['beats'][(c['beats'] >= s) & (c['beats'] < e)] - s
                db = c['bars'][(c['bars'] >= s) & (c['bars'] < e)] - s
                meter = max(set(c['meters']), key=c['meters'].count)
                chk = librosa_check(seg, bt, c['per'])
                if chk and chk['on_half_beats'] > chk['on_grid_beats']:
                    rejected.append('%s (%.1f-%.1f s): librosa\'s beats land on the half-beats (%s)' % (song, s, e, chk))
                    continue
                write_wav(os.path.join(out, name + '.wav'), seg)
                write_truth(os.path.join(out, name + '.beats'), bt)
                write_truth(os.path.join(out, name + '.downbeats'), db)
                tracks.append(dict(
                    name=name, audio=name + '.wav', beats=name + '.beats', downbeats=name + '.downbeats',
                    meter=meter, tempo=round(60.0 / float(np.median(np.diff(bt))), 3), steady=True, kind='chart',
                    source='Frets on Fire song "%s" by %s (Debian fretsonfire-songs-%s): song.ogg+guitar.ogg mixed, '
                           '%.1f-%.1f s; beats from notes.mid\'s tempo map shifted by %+.0f ms' % (
                               song, 'Sectoid' if pack == 'sectoid' else 'Muldjord', pack, s, e, c['off'] * 1000),
                    licence=lic, offset_ms=round(c['off'] * 1000), excerpt=[round(s, 3), round(e, 3)],
                    check=chk, hard=''))
            c['cuts'] = cuts
            if hard:
                tracks.extend(stem_excerpts(out, d, c, song, slug, pack, lic, log))
            if slug == 'feelings':
                tracks.extend(build_quiet_intro_chart(out, c, song, lic, log))
    return tracks, rejected


def build_quiet_intro_chart(out, c, song, lic, log):
    """A charted song whose first 25 s play at about -20 LUFS and the rest at about -10 LUFS
    (beats known throughout: the music itself has the pulse)."""
    runs = [r for r in good_runs(c['wins'], c['W'], c['H']) if r[1] - r[0] >= 55]
    if not runs:
        log.append('quiet intro from %s: no 55 s good stretch' % song)
        return []
    s = runs[0][0] + 0.5
    e = s + 55
    seg = c['x'][int(s * SR):int(e * SR)].copy()
    n0 = int(25 * SR)
    g0 = 10 ** ((-20 - lufs(seg[:n0])) / 20)
    g1 = 10 ** ((-10 - lufs(seg[n0:])) / 20)
    ramp = np.ones(len(seg)) * g1
    ramp[:n0] = g0
    k = int(0.5 * SR)
    ramp[n0:n0 + k] = np.linspace(g0, g1, k)
    seg = seg * ramp
    pk = np.abs(seg[n0:]).max()
    if pk > 0.99:  # only the loud part is turned down, so the intro stays at -20 LUFS
        seg[n0:] *= 0.99 / pk
    seg = np.clip(seg, -0.99, 0.99)
    name = 'fof_feelings_quiet_intro'
    bt = c['beats'][(c['beats'] >= s) & (c['beats'] < e)] - s
    db = c['bars'][(c['bars'] >= s) & (c['bars'] < e)] - s
    write_wav(os.path.join(out, name + '.wav'), seg)
    write_truth(os.path.join(out, name + '.beats'), bt)
    write_truth(os.path.join(out, name + '.downbeats'), db)
    return [dict(name=name, audio=name + '.wav', beats=name + '.beats', downbeats=name + '.downbeats', meter=4,
                 tempo=round(60.0 / float(np.median(np.diff(bt))), 3), steady=True, kind='chart',
                 source='Frets on Fire song "%s" by Sectoid (fretsonfire-songs-sectoid), %.1f-%.1f s, first 25 s at '
                        '%.1f LUFS, the rest at %.1f LUFS; beats from notes.mid shifted by %+.0f ms' % (
                            song, s, e, lufs(seg[:n0]), lufs(seg[n0 + k:]), c['off'] * 1000),
                 licence=lic, offset_ms=round(c['off'] * 1000), excerpt=[round(s, 3), round(e, 3)],
                 hard='quiet 25 s intro (about -20 LUFS) with the pulse in it')]


# ---------------------------------------------------------------- drum kits under music

_SAMPLES = {}


def sample(kit, inst):
    key = (kit, inst)
    if key not in _SAMPLES:
        spec = KIT_FILES[kit]
        x = decode(os.path.join(KITS, spec['dir'], spec[inst]))
        pk = np.abs(x).max() + 1e-12
        i0 = int(np.argmax(np.abs(x) > 0.05 * pk))
        x = x[max(0, i0 - int(0.001 * SR)):] / pk
        x = x[:int(2.0 * SR)]
        f = np.ones(len(x))
        nf = min(len(x), int(0.05 * SR))
        f[-nf:] = np.linspace(1, 0, nf)
        _SAMPLES[key] = x * f
    return _SAMPLES[key]


def tempo_curve_times(phases, bpm_fn, dur, t0=0.0):
    """Times at which the beat phase (beats since t0) reaches each value, for a tempo curve bpm_fn(t)."""
    t = np.arange(0, dur + 5, 0.0005)
    ph = np.concatenate([[0], np.cumsum(bpm_fn(t[:-1] + t0) / 60 * 0.0005)])
    return np.interp(phases, ph, t) + t0


# pattern: beats per bar, and hits as (instrument, position in beats within the bar, gain dB)
PATTERNS = {
    'rock': (4, [('kick', 0, 0), ('kick', 2, -1), ('snare', 1, -1), ('snare', 3, -1)] +
             [('hat', k / 2, -9 if k % 2 else -7) for k in range(8)]),
    'kick_hats': (4, [('kick', k, 0) for k in range(4)] + [('hat', k / 2, -2 if k % 2 else -4) for k in range(8)]),
    'four808': (4, [('kick', k, 0) for k in range(4)] + [('clap', 1, -5), ('clap', 3, -5)] +
                [('ohat', k + 0.5, -10) for k in range(4)] + [('hat', k / 2, -16) for k in range(8)]),
    'four_rock': (4, [('kick', k, 0) for k in range(4)] + [('hat', k / 2, -12) for k in range(8)] +
                  [('snare', 1, -6), ('snare', 3, -6)]),
    'waltz': (3, [('kick', 0, 0), ('snare', 1, -8), ('snare', 2, -8), ('hat', 1, -12), ('hat', 2, -12),
                  ('hat', 0, -10)]),
    'dnb': (4, [('kick', 0, 0), ('snare', 1, -1), ('kick', 2.5, -2), ('snare', 3, -1)] +
            [('hat', k / 2, -10 if k % 2 else -8) for k in range(8)]),
    'halftime': (4, [('kick', 0, 0), ('kick', 1.75, -4), ('snare', 2, 0)] +
                 [('hat', k / 2, -9 if k % 2 else -7) for k in range(8)]),
    'soft': (4, [('kick', 0, 0), ('kick', 2, -3), ('rim', 1, -6), ('rim', 3, -6)] +
             [('ride', k, -10) for k in range(4)]),
    'ticks': (4, [('hat', k, -6 if k else -3) for k in range(4)]),
    # --hard: swing, compound and odd meters, sparse and syncopated grooves
    'shuffle': (4, [('kick', 0, 0), ('kick', 2, -1), ('snare', 1, -1), ('snare', 3, -1)] +
                [('hat', k + f, -7 if f == 0 else -10) for k in range(4) for f in (0, 2 / 3)]),
    'jazz_ride': (4, [('ride', 0, -4), ('ride', 1, -4), ('ride', 1 + 2 / 3, -8), ('ride', 2, -4), ('ride', 3, -4),
                      ('ride', 3 + 2 / 3, -8), ('hat', 1, -10), ('hat', 3, -10), ('kick', 0, -14), ('kick', 2, -14),
                      ('snare', 2 + 2 / 3, -14)]),
    'six8': (2, [('kick', 0, 0), ('snare', 1, -2)] + [('hat', k / 3, -7 if k % 3 == 0 else -11) for k in range(6)]),
    'twelve8': (4, [('kick', 0, 0), ('kick', 2, -2), ('snare', 1, -2), ('snare', 3, -2)] +
                [('ride', k / 3, -8 if k % 3 == 0 else -12) for k in range(12)]),
    'waltz_sparse': (3, [('kick', 0, 0), ('rim', 1, -10), ('rim', 2, -10)]),
    'jazz_waltz': (3, [('ride', 0, -4), ('ride', 1, -4), ('ride', 1 + 2 / 3, -9), ('ride', 2, -4), ('hat', 1, -11),
                       ('kick', 0, -10)]),
    'sparse': (4, [('kick', 0, 0), ('rim', 2, -4)]),
    'one_drop': (4, [('kick', 2, 0), ('rim', 2, -3)] + [('hat', k + 0.5, -6) for k in range(4)] +
                 [('hat', k, -15) for k in range(4)]),
    'bossa': (4, [('kick', 0, -2), ('kick', 1.5, -6), ('kick', 2, -2), ('kick', 3.5, -6), ('rim', 0, -5),
                  ('rim', 1.5, -5), ('rim', 3, -5)] + [('hat', k / 2, -13) for k in range(8)]),
    'breakbeat': (4, [('kick', 0, 0), ('kick', 1.75, -3), ('kick', 2.5, -2), ('snare', 1, -1), ('snare', 3, -1),
                      ('snare', 2.25, -12), ('snare', 3.75, -12)] + [('hat', k / 4, -10 if k % 2 else -8) for k in range(16)]),
    'halftime808': (4, [('kick', 0, 0), ('kick', 1.75, -3), ('kick', 2.5, -4), ('clap', 2, -2)] +
                    [('hat', k / 4, -12 if k % 2 else -9) for k in range(16)]),
}


def render_kit(kit, pattern, bpm_fn, dur, seed, t_start=0.0, crash_first=True):
    """Renders bars of `pattern` from t_start to dur; returns audio, beat times, downbeat times."""
    rng = np.random.default_rng(seed)
    per_bar, hits = PATTERNS[pattern]
    nbars = int(dur / (60.0 / 260) / per_bar) + 2
    tg = np.arange(0, dur + 5, 0.0005)
    pg = np.concatenate([[0], np.cumsum(bpm_fn(tg[:-1] + t_start) / 60 * 0.0005)])
    at = lambda ph: np.interp(ph, pg, tg) + t_start
    bt = at(np.arange(nbars * per_bar + 1, dtype=float))
    beats = bt[bt < dur - 0.05]
    bars = beats[::per_bar]
    y = np.zeros(int(dur * SR) + SR * 3)
    for b in range(nbars):
        for inst, pos, gdb in hits:
            ph = b * per_bar + pos
            t = float(at(ph))
            if t >= dur - 0.05:
                continue
            t += rng.normal(0, 0.004)
            g = 10 ** ((gdb + rng.normal(0, 1.0)) / 20)
            s = sample(kit, inst)
            i = max(0, int(round(t * SR)))
            y[i:i + len(s)] += g * s[:len(y) - i]
        if crash_first and b == 0:
            s = sample(kit, 'crash')
            i = int(round(bt[0] * SR))
            y[i:i + len(s)] += 0.5 * s[:len(y) - i]
    return y[:int(dur * SR)], beats, bars


def mix(kit_audio, music, music_over_kit_db, target=-14.0):
    lk = lufs(kit_audio)
    lm = lufs(music)
    m = music * 10 ** ((lk + music_over_kit_db - lm) / 20)
    y = kit_audio + m
    y *= 10 ** ((target - lufs(y)) / 20)
    pk = np.abs(y).max()
    if pk > 0.99:
        y *= 0.99 / pk
    return y


def bed(name, start, dur):
    x = decode(os.path.join(WESNOTH, name + '.ogg'))
    seg = x[int(start * SR):int((start + dur) * SR)]
    if len(seg) < int(dur * SR):
        seg = np.pad(seg, (0, int(dur * SR) - len(seg)))
    f = int(0.05 * SR)
    seg[:f] *= np.linspace(0, 1, f)
    seg[-f:] *= np.linspace(1, 0, f)
    return seg


def bed_pulse(name):
    """How periodic a piece is: the highest normalised autocorrelation of its onset envelope (first
    120 s) at lags of 0.25-1.5 s (40-240 BPM). Beds are chosen with a low one."""
    x = decode(os.path.join(WESNOTH, name + '.ogg'))[:SR * 120]
    e = onset_env(x)
    e = e - e.mean()
    ac = np.correlate(e, e, 'full')[len(e) - 1:]
    ac /= ac[0]
    lo, hi = int(0.25 * SR / HOP), int(1.5 * SR / HOP)
    return round(float(ac[lo:hi].max()), 3)


def const(bpm):
    return lambda t: np.full_like(np.asarray(t, float), bpm)


# name, kit, pattern, tempo (fn), nominal tempo, music, music start, music over kit dB, duration, steady, hard
MIXES = [
    ('kit_rock95', 'colombo', 'rock', const(95), 95, 'the_deep_path', 20, -3, 50, True,
     'slow rock (95 BPM, kick 1&3, snare 2&4, eighth hats): metrical level, read as 190 in the issue'),
    ('kit_kickhats120', 'colombo', 'kick_hats', const(120), 120, 'elvish-theme', 15, -2, 50, True,
     '120 BPM kick on every beat with loud eighth-note hats: cutToBeats must not cut on the hats (240)'),
    ('kit_four128_under4', 'tr808', 'four808', const(128), 128, 'heroes_rite', 30, 4, 50, True,
     '128 BPM four-on-the-floor 4 dB under music (read as 64 in the issue)'),
    ('kit_four128_under8', 'gmrock', 'four_rock', const(128), 128, 'the_city_falls', 20, 8, 50, True,
     '128 BPM four-on-the-floor 8 dB under music'),
    ('kit_accel96_120', 'gmrock', 'rock', (lambda t: 96 + 24 * np.clip(np.asarray(t, float) / 50.0, 0, 1)), None,
     'silvan_sanctuary', 10, -2, 50, False, 'accelerando 96 -> 120 BPM over 50 s (read as 216 in the issue)'),
    ('kit_waltz144', 'colombo', 'waltz', const(144), 144, 'knolls', 40, -2, 45, True,
     '3/4 waltz at 144 BPM: meter 3, downbeats every third beat'),
    ('kit_dnb174', 'gmrock', 'dnb', const(174), 174, 'into_the_shadows', 20, -3, 45, True,
     '174 BPM drum and bass (kick 1 and 3-and, snare 2 and 4): not 87'),
    ('kit_halftime70', 'colombo', 'halftime', const(70), 70, 'the_king_is_dead', 10, -3, 55, True,
     '70 BPM half-time groove (snare on 3, eighth hats): not 140'),
    ('kit_rubato100', 'colombo', 'soft', (lambda t: 100 * (1 + 0.15 * np.sin(2 * np.pi * np.asarray(t, float) / 17.0))),
     None, 'journeys_end', 30, -1, 55, False, 'rubato: tempo wanders smoothly 85-115 BPM (period 17 s): steady=false'),
]


def steps(*pairs):
    """A tempo that jumps: steps((0, 100), (25, 132)) is 100 BPM until 25 s, then 132."""
    def fn(t):
        t = np.asarray(t, float)
        v = np.full_like(t, pairs[0][1])
        for at, bpm in pairs[1:]:
            v = np.where(t >= at, bpm, v)
        return v
    return fn


# --hard: where trackers fail. name, kit, pattern, tempo (fn), nominal tempo, music, music start, music over
# kit dB, duration, steady, hard, meter (beats to a bar of the truth), stretches without drums [(from, to) s]
HARD_MIXES = [
    ('hard_rock100_under12', 'colombo', 'rock', const(100), 100, 'the_deep_path', 70, 12, 40, True,
     'rock at 100 BPM, the kit 12 dB under the music', 4, []),
    ('hard_rock88_under16', 'gmrock', 'rock', const(88), 88, 'heroes_rite', 70, 16, 40, True,
     'rock at 88 BPM, the kit 16 dB under the music', 4, []),
    ('hard_four124_under20', 'gmrock', 'four_rock', const(124), 124, 'the_city_falls', 60, 20, 40, True,
     'four-on-the-floor at 124 BPM, the kit 20 dB under the music', 4, []),
    ('hard_four118_under14', 'tr808', 'four808', const(118), 118, 'elvish-theme', 60, 14, 40, True,
     '808 four-on-the-floor at 118 BPM, 14 dB under the music', 4, []),
    ('hard_shuffle96', 'colombo', 'shuffle', const(96), 96, 'journeys_end', 80, 0, 40, True,
     'shuffle at 96 BPM (swung eighths on the hats, triplet feel)', 4, []),
    ('hard_shuffle84_under10', 'gmrock', 'shuffle', const(84), 84, 'knolls', 80, 10, 40, True,
     'shuffle at 84 BPM, 10 dB under the music', 4, []),
    ('hard_jazz140', 'gmrock', 'jazz_ride', const(140), 140, 'silvan_sanctuary', 60, 2, 40, True,
     'swing ride pattern at 140 BPM, feathered kick, hat on 2 and 4', 4, []),
    ('hard_six8_66', 'colombo', 'six8', const(66), 66, 'into_the_shadows', 70, 0, 40, True,
     '6/8 at 66 dotted quarters a minute (eighths at 198): two beats to a bar', 2, []),
    ('hard_twelve8_56', 'gmrock', 'twelve8', const(56), 56, 'the_king_is_dead', 70, 3, 40, True,
     '12/8 slow blues at 56 BPM (triplet ride)', 4, []),
    ('hard_waltz96_under6', 'gmrock', 'waltz', const(96), 96, 'the_dangerous_symphony', 60, 6, 40, True,
     '3/4 at 96 BPM, 6 dB under the music', 3, []),
    ('hard_waltz_sparse120', 'colombo', 'waltz_sparse', const(120), 120, 'the_deep_path', 120, 4, 40, True,
     'sparse 3/4 at 120 BPM: kick on 1, soft rims on 2 and 3', 3, []),
    ('hard_jazzwaltz168', 'gmrock', 'jazz_waltz', const(168), 168, 'heroes_rite', 120, 3, 40, True,
     'jazz waltz at 168 BPM (ride, hat on 2)', 3, []),
    ('hard_halftime75', 'gmrock', 'halftime', const(75), 75, 'the_city_falls', 110, 3, 40, True,
     'half-time groove at 75 BPM (snare on 3, eighth hats)', 4, []),
    ('hard_halftime808_72', 'tr808', 'halftime808', const(72), 72, 'elvish-theme', 100, 3, 40, True,
     '808 half-time at 72 BPM with sixteenth hats (clap on 3)', 4, []),
    ('hard_sparse100', 'colombo', 'sparse', const(100), 100, 'knolls', 120, 3, 40, True,
     'sparse: a kick on 1 and a rim on 3 at 100 BPM, nothing else', 4, []),
    ('hard_onedrop76', 'colombo', 'one_drop', const(76), 76, 'journeys_end', 120, 2, 40, True,
     'reggae one drop at 76 BPM: kick and rim on 3 only, hats off the beat', 4, []),
    ('hard_bossa132', 'colombo', 'bossa', const(132), 132, 'silvan_sanctuary', 100, 3, 40, True,
     'bossa nova at 132 BPM: syncopated kick and clave rims', 4, []),
    ('hard_breakbeat102', 'gmrock', 'breakbeat', const(102), 102, 'into_the_shadows', 110, 2, 40, True,
     'syncopated breakbeat at 102 BPM with sixteenth hats and ghost notes', 4, []),
    ('hard_step100_132', 'gmrock', 'rock', steps((0, 100), (20.3, 132)), None, 'the_king_is_dead', 110, -2, 40, False,
     'tempo jumps from 100 to 132 BPM at 20 s', 4, []),
    ('hard_step140_105', 'colombo', 'four_rock', steps((0, 140), (20.3, 105)), None, 'the_dangerous_symphony', 100, -2,
     40, False, 'tempo jumps from 140 to 105 BPM at 20 s', 4, []),
    ('hard_rit130_90', 'colombo', 'rock', (lambda t: 130 - 40 * np.clip(np.asarray(t, float) / 40.0, 0, 1)), None,
     'the_deep_path', 160, -2, 40, False, 'ritardando 130 -> 90 BPM over 40 s', 4, []),
    ('hard_break110', 'colombo', 'rock', const(110), 110, 'heroes_rite', 160, 0, 45, True,
     'rock at 110 BPM with 17 s of music alone in the middle (12-29 s): the grid goes on through it', 4, [(12, 29)]),
    ('hard_break126', 'tr808', 'four808', const(126), 126, 'the_city_falls', 160, 2, 45, True,
     '808 at 126 BPM: the kit only in the first 10 s and the last 12 s', 4, [(10, 33)]),
]

# --hard: music alone, no drums: pieces whose own pulse is weak (bed_pulse): no beat to find. Their truth is empty
# (beat F is 0 whatever a tracker finds), so they count among the tracks a confidence should put low.
HARD_BEDS = [('bed_journeys_end', 'journeys_end', 150, 30), ('bed_knolls', 'knolls', 150, 30),
             ('bed_the_king_is_dead', 'the_king_is_dead', 150, 30)]


def write_kit_track(out, tracks, name, kit, pat, y, beats, bars, nominal, music, mstart, mdb, dur, steady, hard, meter,
                    kind, silent=''):
    """Mixes a rendered kit `y` with its music bed, writes the audio and the truth, appends the track's entry; returns
    its tempo."""
    x = mix(y, bed(music, mstart, dur), mdb)
    write_wav(os.path.join(out, name + '.wav'), x)
    write_truth(os.path.join(out, name + '.beats'), beats)
    write_truth(os.path.join(out, name + '.downbeats'), bars)
    tempo = nominal if nominal else round(60.0 / float(np.median(np.diff(beats))), 3)
    tracks.append(dict(
        name=name, audio=name + '.wav', beats=name + '.beats', downbeats=name + '.downbeats',
        meter=meter, tempo=tempo, steady=steady, kind=kind,
        source='Hydrogen %s kit (%s pattern, hits jittered sd 4 ms, velocity sd 1 dB)%s mixed with Wesnoth music '
               '"%s.ogg" from %d s, music %+d dB against the kit (integrated loudness), mix at -14 LUFS' % (
                   KIT_FILES[kit]['dir'], pat, silent, music, mstart, mdb),
        licence='%s; %s' % (KIT_LIC[kit], LIC_WESNOTH), hard=hard, music_pulse=bed_pulse(music),
        tempo_range=[round(float(60 / np.max(np.diff(beats))), 2), round(float(60 / np.min(np.diff(beats))), 2)]))
    return tempo


def build_hard(out, log):
    tracks = []
    for i, (name, kit, pat, fn, nominal, music, mstart, mdb, dur, steady, hard, meter, gaps) in enumerate(HARD_MIXES):
        y, beats, bars = render_kit(kit, pat, fn, dur, seed=3000 + i, t_start=0.3)
        for a, b in gaps:  # the drummer lays out (20 ms fades); the grid goes on
            ia, ib, f = int(a * SR), int(b * SR), int(0.02 * SR)
            y[ia:ia + f] *= np.linspace(1, 0, f)
            y[ia + f:ib] = 0
        tempo = write_kit_track(out, tracks, name, kit, pat, y, beats, bars, nominal, music, mstart, mdb, dur, steady, hard,
                                meter=meter, kind='kit-hard', silent=', silent at %s s' % gaps if gaps else '')
        log.append('%s: %d beats, tempo %s, %s' % (name, len(beats), tempo, hard))
    for name, music, start, dur in HARD_BEDS:
        x = bed(music, start, dur)
        x *= 10 ** ((-14 - lufs(x)) / 20)
        write_wav(os.path.join(out, name + '.wav'), np.clip(x, -0.99, 0.99))
        write_truth(os.path.join(out, name + '.beats'), [])
        write_truth(os.path.join(out, name + '.downbeats'), [])
        tracks.append(dict(name=name, audio=name + '.wav', beats=name + '.beats', downbeats=name + '.downbeats',
                           meter=None, tempo=None, steady=None, kind='bed', licence=LIC_WESNOTH,
                           source='Wesnoth music "%s.ogg" from %d s alone, at -14 LUFS' % (music, start),
                           hard='music alone with a weak pulse of its own (%.2f): no beat to find, truth empty' %
                                bed_pulse(music), music_pulse=bed_pulse(music)))
        log.append('%s: music alone, pulse %.2f' % (name, bed_pulse(music)))
    return tracks


def stem_excerpts(out, song_dir, c, song, slug, pack, lic, log, excerpt=30.0):
    """--hard: the guitar stem alone (no drums, no bass) over a stretch where the mix's grid was checked (the stems
    play in sync, so the grid holds for each), and further excerpts of the mix after the ones already cut."""
    tracks = []
    runs = sorted([r for r in good_runs(c['wins'], c['W'], c['H']) if r[1] - r[0] >= excerpt + 1], key=lambda r: r[0] - r[1])
    if not runs:
        return tracks
    g = decode(os.path.join(song_dir, 'guitar.ogg'))
    used = [(s, s + 45.0) for s in c.get('cuts', [])]
    picks = [('fof_%s_guitar' % slug, g, runs[0][0] + 0.5, 'the guitar stem alone')]
    extra = 0
    for a, b in runs:
        s = a + 0.5
        while s + excerpt <= b and extra < 2:
            if all(s + excerpt <= p or s >= q for p, q in used):
                extra += 1
                picks.append(('fof_%s_mix%d' % (slug, extra), c['x'], s, 'song.ogg+guitar.ogg mixed, 30 s'))
                used.append((s, s + excerpt))
            s += 5.0
    for name, x, s, what in picks:
        e = s + excerpt
        seg = x[int(s * SR):int(e * SR)].copy()
        if len(seg) < int(excerpt * SR) * 0.9 or lufs(seg) < -45:
            log.append('%s: left out (too short or silent: %.1f LUFS)' % (name, lufs(seg) if len(seg) else -70))
            continue
        seg *= 10 ** ((-14 - lufs(seg)) / 20)
        pk = np.abs(seg).max()
        if pk > 0.99:
            seg *= 0.99 / pk
        bt = c['beats'][(c['beats'] >= s) & (c['beats'] < e)] - s
        db = c['bars'][(c['bars'] >= s) & (c['bars'] < e)] - s
        write_wav(os.path.join(out, name + '.wav'), seg)
        write_truth(os.path.join(out, name + '.beats'), bt)
        write_truth(os.path.join(out, name + '.downbeats'), db)
        tracks.append(dict(
            name=name, audio=name + '.wav', beats=name + '.beats', downbeats=name + '.downbeats',
            meter=max(set(c['meters']), key=c['meters'].count), tempo=round(60.0 / float(np.median(np.diff(bt))), 3),
            steady=True, kind='chart-hard' if 'guitar' in name else 'chart',
            source='Frets on Fire song "%s" (Debian fretsonfire-songs-%s): %s, %.1f-%.1f s (a stretch whose 10 s '
                   'windows all passed the check on the mix); beats from notes.mid\'s tempo map shifted by %+.0f ms' % (
                       song, pack, what, s, e, c['off'] * 1000),
            licence=lic, offset_ms=round(c['off'] * 1000), excerpt=[round(s, 3), round(e, 3)],
            hard='no drums: the guitar alone' if 'guitar' in name else ''))
        log.append('%s: %.1f-%.1f s, %s' % (name, s, e, what))
    return tracks


def build_mixes(out, log):
    tracks = []
    for i, (name, kit, pat, fn, nominal, music, mstart, mdb, dur, steady, hard) in enumerate(MIXES):
        y, beats, bars = render_kit(kit, pat, fn, dur, seed=1000 + i, t_start=0.3)
        tempo = write_kit_track(out, tracks, name, kit, pat, y, beats, bars, nominal, music, mstart, mdb, dur, steady, hard,
                                meter=PATTERNS[pat][0], kind='kit')
        log.append('%s: %d beats, tempo %s, %s' % (name, len(beats), tempo, hard))
    # a quiet intro: 25 s of music with soft hi-hat ticks on the beat at about -20 LUFS, then the kit
    name = 'kit_quiet_intro110'
    dur = 55.0
    bpm = const(110)
    intro, beats, bars = render_kit('colombo', 'ticks', bpm, 25.0, seed=1999, t_start=0.4, crash_first=False)
    t_kit = float(tempo_curve_times(np.array([len(beats)]), bpm, dur, 0.4)[0])
    main, b2, bars2 = render_kit('colombo', 'rock', bpm, dur, seed=2000, t_start=t_kit)
    m = bed('the_dangerous_symphony', 5, dur)
    n0 = int(t_kit * SR) - int(0.02 * SR)
    a = np.zeros(int(dur * SR))
    a[:len(intro)] += intro
    kitpart = main.copy()
    qa = m[:n0] + 10 ** (-6 / 20) * a[:n0] * 10 ** ((lufs(m[:n0]) - lufs(a[:n0])) / 20)
    qa *= 10 ** ((-20 - lufs(qa)) / 20)
    rest = mix(kitpart[n0:], m[n0:], -3, target=-10)
    x = np.concatenate([qa, rest])
    pk = np.abs(x).max()
    if pk > 0.99:
        x *= 0.99 / pk
    allb = np.concatenate([beats[beats < t_kit - 0.05], b2])
    allbars = np.concatenate([bars[bars < t_kit - 0.05], bars2])
    write_wav(os.path.join(out, name + '.wav'), x)
    write_truth(os.path.join(out, name + '.beats'), allb)
    write_truth(os.path.join(out, name + '.downbeats'), allbars)
    tracks.append(dict(
        name=name, audio=name + '.wav', beats=name + '.beats', downbeats=name + '.downbeats', meter=4, tempo=110,
        steady=True, kind='kit',
        source='Wesnoth music "the_dangerous_symphony.ogg" from 5 s with soft Colombo closed hi-hat ticks on every '
               'beat (6 dB under the music) for the first %.2f s at %.1f LUFS, then the Colombo kit\'s rock pattern at '
               '110 BPM with the music 3 dB under it at -10 LUFS' % (t_kit, lufs(qa)),
        licence='%s; %s' % (KIT_LIC['colombo'], LIC_WESNOTH), music_pulse=bed_pulse('the_dangerous_symphony'),
        hard='quiet %.0f s intro at about -20 LUFS (pulse: soft hi-hat ticks), then the kit' % t_kit))
    log.append('%s: intro %.2f s at %.1f LUFS' % (name, t_kit, lufs(qa)))
    return tracks


# ---------------------------------------------------------------- CI fixtures

# name in the set -> (start of the 20 s excerpt, why it is there)
FIXTURES = [
    ('kit_rock95', 10.0, 'slow rock: the metrical level (95, not 190)'),
    ('kit_kickhats120', 10.0, 'kick on the beat under loud eighth hats (120, not 240)'),
    ('kit_four128_under4', 10.0, 'four-on-the-floor 4 dB under music (128, not 64)'),
    ('kit_waltz144', 10.0, '3/4: meter and downbeats'),
    ('kit_rubato100', 20.0, 'rubato +-15 % (steady = false)'),
    ('fof_feelings_quiet_intro', 13.0, 'a recorded song whose first 12 s are quiet (about -20 LUFS), beats through them'),
]


def build_fixtures(setdir, fixdir, manifest):
    os.makedirs(os.path.join(fixdir, 'licences'), exist_ok=True)
    by = {t['name']: t for t in manifest}
    rows = []
    out = []
    for name, start, why in FIXTURES:
        if name not in by:
            print('fixture %s: not in the set, left out' % name, file=sys.stderr)
            continue
        t = by[name]
        dur = 20.0
        src = os.path.join(setdir, t['audio'])
        dst = os.path.join(fixdir, name + '.ogg')
        subprocess.run(['ffmpeg', '-v', 'error', '-y', '-ss', '%.3f' % start, '-t', '%.3f' % dur, '-i', src,
                        '-c:a', 'libvorbis', '-q:a', '3', '-map_metadata', '-1', '-fflags', '+bitexact',
                        '-flags:a', '+bitexact', dst], check=True)
        for kind in ('beats', 'downbeats'):
            v = np.loadtxt(os.path.join(setdir, t[kind]), ndmin=1)
            v = v[(v >= start) & (v < start + dur)] - start
            write_truth(os.path.join(fixdir, name + '.' + kind), v)
        bt = np.loadtxt(os.path.join(fixdir, name + '.beats'), ndmin=1)
        f = dict(t)
        f.update(audio=name + '.ogg', excerpt_of_set_track=[start, start + dur],
                 tempo=t['tempo'] if t['steady'] else round(60.0 / float(np.median(np.diff(bt))), 3))
        f.pop('check', None)
        out.append(f)
        rows.append('| `%s.ogg` | %s | %.0f-%.0f s of the set\'s track: %s | %s | %s |' % (
            name, why, start, start + dur, t['source'], t['licence'], 'yes' if t['steady'] else 'no'))
    with open(os.path.join(fixdir, 'beats.json'), 'w') as fh:
        json.dump(out, fh, indent=1)
    shutil.copy('/usr/share/common-licenses/GPL-2', os.path.join(fixdir, 'licences', 'GPL-2.txt'))
    with open('/usr/share/doc/fretsonfire-songs-sectoid/copyright') as fh:
        txt = fh.read()
    m = re.search(r'Copyright:\s*\n(.*?)Packaging:', txt, re.S)
    with open(os.path.join(fixdir, 'licences', 'Expat-Sectoid.txt'), 'w') as fh:
        fh.write('Frets on Fire song pack by Sectoid (Debian package fretsonfire-songs-sectoid, '
                 '/usr/share/doc/fretsonfire-songs-sectoid/copyright)\n\n' + (m.group(1).strip() if m else txt) + '\n')
    with open(os.path.join(KITS, 'ColomboAcousticDrumkit', 'README'), encoding='latin-1') as fh:
        readme = fh.read()
    m = re.search(r'=1\) Licence=\s*\n(.*?)\n=2\)', readme, re.S)
    with open(os.path.join(fixdir, 'licences', 'Colombo-Acoustic-Drumkit.txt'), 'w') as fh:
        fh.write('Colombo Hydrogen Drumkit, (C) 2006 Marcos Guglielmetti (Debian package hydrogen-drumkits, '
                 'ColomboAcousticDrumkit/README)\n\n' + (m.group(1).strip() if m else readme) + '\n')
    return rows


def write_sources(fixdir, rows):
    text = """# Music with known beats (issue 36)

Short excerpts (20 s, OGG Vorbis q3, 44.1 kHz mono) of the evaluation set that
`bench/make_beat_set.py` builds, for tests of `av.analyze`'s beats, tempo level, meter,
steadiness and quiet passages. Regenerate them with

    apt-get install -y fretsonfire-songs-sectoid hydrogen-data hydrogen-drumkits wesnoth-1.16-music
    /work/venv-analysis/bin/python bench/make_beat_set.py --out /work/beatdata/set --fixtures Tests/Fixtures/beats

Each `NAME.ogg` has `NAME.beats` and `NAME.downbeats` beside it (one time a line, seconds from
the start of the file) and an entry in `beats.json` (meter, tempo, steady, source, licence).

* `kit_*`: drum samples from Hydrogen's kits (Debian `hydrogen-drumkits`, `hydrogen-data`)
  laid at known times (each hit moved by a random sd 4 ms, velocities varied by sd 1 dB; the truth
  is the pattern's own grid) and mixed with music of Battle for Wesnoth (Debian
  `wesnoth-1.16-music`), pieces chosen because their own pulse is weak (the peak of their onset
  envelope's autocorrelation between 40 and 240 BPM, first 120 s: 0.05-0.21, where most Wesnoth
  pieces have 0.25-0.8; `music_pulse` in beats.json), so the kit's grid is the only one.
  Loudness is set by ffmpeg's `ebur128` (integrated).
* `fof_*`: a recorded song of the Frets on Fire song pack by Sectoid (Debian
  `fretsonfire-songs-sectoid`), its `song.ogg` and `guitar.ogg` mixed; the beats and bars
  are the song's `notes.mid` tempo map (95 BPM, 4/4), shifted by the global offset found by
  correlating the chart's notes and beats with the audio's onsets (-300..+300 ms, 1 ms steps;
  the shift applied is in the table), in a stretch where every 10 s window keeps that offset
  within 25 ms and its on-beat onsets are at least 1.25 times those half a beat off. The bars
  are the chart's (4/4 from its first tick); they were not checked against the audio.

| file | why | what it is | licence | steady |
|---|---|---|---|---|
""" + '\n'.join(rows) + """

Licence texts are in `licences/`: `GPL-2.txt` (Wesnoth music, Hydrogen's GMRockKit and
TR808EmulationKit, and the Colombo kit, which adds the composition exception in
`Colombo-Acoustic-Drumkit.txt`), `Expat-Sectoid.txt` (the Sectoid songs). All are free and
GPL-compatible; each mix is offered under the GPL-2+ of its parts.
"""
    with open(os.path.join(fixdir, 'SOURCES.md'), 'w') as fh:
        fh.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default='/work/beatdata/set')
    ap.add_argument('--fixtures', help='also write the CI excerpts here (e.g. Tests/Fixtures/beats)')
    ap.add_argument('--only-fixtures', action='store_true', help='reuse the set in --out, only write the fixtures')
    ap.add_argument('--skip-charts', action='store_true')
    ap.add_argument('--skip-mixes', action='store_true')
    ap.add_argument('--hard', action='store_true',
                    help='add tracks where trackers fail (issue 36 §3): kits far under music, swing, 6/8, 3/4, sparse and '
                         'syncopated grooves, tempo jumps, breaks without drums, music alone, guitar stems alone, more '
                         'chart excerpts (build into another folder: /work/beatdata/set-hard)')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    mpath = os.path.join(a.out, 'set.json')
    if not a.only_fixtures:
        log = []
        tracks, rejected = [], []
        if not a.skip_charts:
            t, rejected = build_charts(a.out, log, hard=a.hard)
            tracks += t
        if not a.skip_mixes:
            tracks += build_mixes(a.out, log)
            if a.hard:
                tracks += build_hard(a.out, log)
        with open(mpath, 'w') as fh:
            json.dump(tracks, fh, indent=1)
        with open(os.path.join(a.out, 'build.log'), 'w') as fh:
            fh.write('\n'.join(log) + '\n\nrejected:\n' + '\n'.join(rejected) + '\n')
        print('\n'.join(log))
        print('\nrejected:\n' + '\n'.join(rejected))
        print('\n%d tracks in %s' % (len(tracks), mpath))
    if a.fixtures:
        with open(mpath) as fh:
            manifest = json.load(fh)
        rows = build_fixtures(a.out, a.fixtures, manifest)
        write_sources(a.fixtures, rows)
        print('fixtures in %s' % a.fixtures)


if __name__ == '__main__':
    main()
