#!/usr/bin/env bash
# Fetches the native ONNX Runtime and the Python tools the tests use, from PyPI only (the one
# package host these machines reach besides crates.io): ort's own download feature goes elsewhere.
#
#   third_party/py/                      venv with onnxruntime, onnx, numpy (pinned): the
#                                        independent checker used by engine/tests/it/onnx_*.rs
#   third_party/onnxruntime/libonnxruntime.so.1.31.1  + libonnxruntime.so symlink, copied
#                                        out of the onnxruntime wheel; loaded by `ort` at run time
#   third_party/.runtime-ok              stamp: the pins it was made with; rerun is a no-op
#
# Idempotent: when the stamp matches the pins and the files exist it exits at once.
#
# The engine finds the library without any environment (see engine/src/eval/onnx.rs): next to its
# executable, else <exe dir>/../../third_party/onnxruntime/ (target/release in this repo). To ship
# pbrain-fivezero to a Gomocup manager, copy libonnxruntime.so next to the executable (the
# runtime is only needed for network evaluators; the classical evaluator runs without it).
set -euo pipefail
cd "$(dirname "$0")/.."

ORT_VERSION=1.31.1
ONNX_VERSION=1.23.2
NUMPY_VERSION=2.3.5
PY=${PYTHON:-python3}

TP=third_party
STAMP=$TP/.runtime-ok
LIBDIR=$TP/onnxruntime
LIB=$LIBDIR/libonnxruntime.so.$ORT_VERSION
WANT="onnxruntime==$ORT_VERSION onnx==$ONNX_VERSION numpy==$NUMPY_VERSION"

if [[ -f $STAMP && "$(cat "$STAMP")" == "$WANT" && -f $LIB && -L $LIBDIR/libonnxruntime.so \
      && -x $TP/py/bin/python ]]; then
    exit 0
fi

mkdir -p "$TP" "$LIBDIR"
if [[ ! -x $TP/py/bin/python ]]; then
    echo "fetch-runtime: creating venv $TP/py" >&2
    if ! "$PY" -m venv "$TP/py"; then
        rm -rf "$TP/py"
        echo "fetch-runtime: '$PY -m venv' failed; on Debian/Ubuntu install python3-venv" >&2
        exit 1
    fi
fi
echo "fetch-runtime: installing $WANT" >&2
"$TP/py/bin/python" -m pip install --disable-pip-version-check -q $WANT

# The shared library ships inside the wheel's package folder; take it from the installed copy so
# the Python checker and the Rust engine run the very same runtime build.
SRC=$("$TP/py/bin/python" - <<EOF
import os, onnxruntime
print(os.path.join(os.path.dirname(onnxruntime.__file__), "capi", "libonnxruntime.so.$ORT_VERSION"))
EOF
)
if [[ ! -f $SRC ]]; then
    echo "fetch-runtime: $SRC not found in the onnxruntime wheel" >&2
    exit 1
fi
cp -f "$SRC" "$LIB.tmp"
mv -f "$LIB.tmp" "$LIB"
ln -sfn "libonnxruntime.so.$ORT_VERSION" "$LIBDIR/libonnxruntime.so"
echo "$WANT" > "$STAMP"
echo "fetch-runtime: ONNX Runtime $ORT_VERSION ready in $LIBDIR" >&2
