#!/bin/sh
# Installs madmom 0.16.1 (Böck et al.; its RNN + DBN beat and downbeat trackers with their
# trained models) into a venv of its own for bench/analysis.py's `madmom` tool (issue 36 §4).
# 0.16.1 is the last release on PyPI and predates Python 3.10 and NumPy 1.24: its build needs
# Cython and NumPy < 2 present, and its Python needs four one-line fixes (collections.abc; the
# NumPy aliases np.float/np.int/... removed in 1.24; a ragged np.asarray in the downbeat DBN).
# bench/analysis.py also sets np.int/np.float before importing madmom, for its compiled .pyx.
#   usage: bench/install-madmom.sh [VENV]     (default /work/venv-madmom)
set -eu
venv=${1:-/work/venv-madmom}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q "numpy<2" scipy cython mido wheel setuptools
"$venv/bin/pip" install -q --no-build-isolation madmom==0.16.1
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/madmom
sed -i 's/^from collections import MutableSequence/from collections.abc import MutableSequence/' "$site/processors.py"
find "$site" -name '*.py' -exec sed -i -E \
    's/np\.float\b([^_0-9])/np.float64\1/g; s/np\.int\b([^_0-9])/np.int64\1/g; s/np\.bool\b([^_0-9])/np.bool_\1/g; s/np\.complex\b([^_0-9])/np.complex128\1/g' {} +
sed -i 's/best = np.argmax(np.asarray(results)\[:, 1\])/best = int(np.argmax([r[1] for r in results]))/' \
    "$site/features/downbeats.py"
"$venv/bin/python" -c 'import numpy as np; np.int = int; np.float = float; import madmom; print("madmom", madmom.__version__, "in", "'"$venv"'")'
