#!/usr/bin/env python3
"""Where a Frets on Fire chart's notes fall in its own bars: a check of the bars' phase (issue 36 §4).

    python3 bench/chart_bars.py            (needs mido; run with /work/venv-analysis/bin/python)

A chart's tempo map gives beats that bench/make_beat_set.py checks against the audio, but the bar
lines are wherever the charter began counting, which nothing in the game needs to be right. A riff
mostly starts on a bar's first beat, so in a chart whose bars are placed right, beat 1 has a share
of the notes struck on a beat about as large as any other beat's. For each song: the share of its
on-beat notes (all difficulties) on each beat of the chart's bar, and a flag where beat 1 has at
least 4 points fewer than the busiest beat (a share of a few hundred notes varies by about 2 points,
so the flag is a hint to listen, not a proof).
"""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_beat_set  # noqa: E402  (read_chart and the songs' folder)


def shares(path):
    tpb, _, notes, signatures, _ = make_beat_set.read_chart(path)
    counts = collections.Counter()
    for tick in notes:
        start, numerator, denominator = [s for s in signatures if s[0] <= tick][-1]
        step = tpb * 4 // denominator
        if (tick - start) % step == 0:
            counts[(tick - start) % (numerator * step) // step + 1] += 1
    total = sum(counts.values()) or 1
    return {beat: count / total for beat, count in sorted(counts.items())}


def main():
    for package in sorted(os.listdir(make_beat_set.FOF)):
        for song in sorted(os.listdir(os.path.join(make_beat_set.FOF, package))):
            path = os.path.join(make_beat_set.FOF, package, song, 'notes.mid')
            if not os.path.exists(path):
                continue
            s = shares(path)
            doubtful = bool(s) and s.get(1, 0) <= max(s.values()) - 0.04
            print('%-38s %s%s' % ('%s/%s' % (package, song), '  '.join('beat %d: %2.0f %%' % (b, 100 * v)
                                                                       for b, v in s.items()),
                                  '   <- beat 1 well under the busiest: the bars may be a beat off' if doubtful
                                  else ''))


if __name__ == '__main__':
    main()
