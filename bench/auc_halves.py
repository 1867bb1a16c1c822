"""AUC of Moonreel's beatConfidence and tempoConfidence (beat F >= 0.8 against below) on the two halves of a set
(issue 36 §3): half A is set.json's even positions (0, 2, 4, ...: where measures were chosen), half B the odd ones
(only reported), and the whole. Reads a per-track results file of bench/analysis.py.
Usage: python3 bench/auc_halves.py SET/results-….json"""
import json, sys
d = json.load(open(sys.argv[1]))
def auc(p, n):
    return sum(1.0 if a > b else 0.5 if a == b else 0 for a in p for b in n) / (len(p) * len(n))
for name, sel in (('A (even positions)', 0), ('B (odd positions)', 1), ('all', None)):
    rows = [r['tools']['moonreel'] for i, r in enumerate(d['rows']) if sel is None or i % 2 == sel]
    for k in ('beatConfidence', 'tempoConfidence'):
        pos = [r[k] for r in rows if r['f'] >= 0.8]; neg = [r[k] for r in rows if r['f'] < 0.8]
        print('%s %s: %d >= 0.8, %d below, AUC %.2f' % (name, k, len(pos), len(neg), auc(pos, neg)))
