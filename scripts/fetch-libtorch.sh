#!/usr/bin/env bash
# Fetches libtorch for the trainer (tch 0.26 / torch-sys) from PyPI only: tch's own
# `download-libtorch` feature goes to download.pytorch.org, which these machines do not reach.
#
#   third_party/libtorch/{include,lib}   CPU-only trimmed layout of the torch==2.13.0 wheel:
#                                        libtorch_cpu.so, libtorch.so, libc10.so, libgomp.so.1,
#                                        plus libcudart.so.13 and libcupti.so.13 from the nvidia cu13
#                                        wheels (libtorch_cpu.so declares them as needed even on CPU)
#   third_party/.libtorch-ok             stamp: the pins it was made with; rerun is a no-op
#
# For CUDA, install the full wheel (`pip install torch==2.13.0`) and point LIBTORCH at its
# site-packages/torch folder instead; the trainer opens libtorch_cuda.so at start when present.
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH_VERSION=2.13.0
CUDART_VERSION="13.0.96.*"
CUPTI_VERSION="13.0.85.*"
PY=${PYTHON:-python3}

TP=third_party
STAMP=$TP/.libtorch-ok
DEST=$TP/libtorch
WANT="torch==$TORCH_VERSION nvidia-cuda-runtime==$CUDART_VERSION nvidia-cuda-cupti==$CUPTI_VERSION"

if [[ -f $STAMP && "$(cat "$STAMP")" == "$WANT" && -f $DEST/lib/libtorch_cpu.so \
      && -d $DEST/include ]]; then
    exit 0
fi

mkdir -p "$TP"
# pip: the system one when there is one, else a small venv (Debian's python3 ships without pip,
# but python3-venv brings ensurepip; .ci/run installs it).
if ! "$PY" -m pip --version >/dev/null 2>&1; then
    if [[ ! -x $TP/pipvenv/bin/python ]]; then
        echo "fetch-libtorch: no pip for $PY; creating venv $TP/pipvenv" >&2
        "$PY" -m venv "$TP/pipvenv" || {
            echo "fetch-libtorch: '$PY -m venv' failed; on Debian/Ubuntu install python3-venv" >&2
            exit 1
        }
    fi
    PY=$TP/pipvenv/bin/python
fi
DL=$TP/.libtorch-dl
mkdir -p "$DL"
echo "fetch-libtorch: downloading $WANT (~530 MB, once)" >&2
"$PY" -m pip download --disable-pip-version-check -q --no-deps -d "$DL" \
    "torch==$TORCH_VERSION" "nvidia-cuda-runtime==$CUDART_VERSION" "nvidia-cuda-cupti==$CUPTI_VERSION"

# Unpack into a scratch folder and move into place only when complete, so an interrupted run
# never leaves a half layout that the stamp check would accept.
WORK=$TP/.libtorch-unpack
rm -rf "$WORK" && mkdir -p "$WORK/x" "$WORK/out/lib"
for whl in "$DL"/torch-"$TORCH_VERSION"-*.whl; do
    "$PY" - "$whl" "$WORK/x" <<'PYEOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
keep = ("torch/include/", "torch/lib/libtorch_cpu.so", "torch/lib/libc10.so",
        "torch/lib/libtorch.so", "torch/lib/libgomp.so.1")
for n in z.namelist():
    if n.startswith(keep):
        z.extract(n, sys.argv[2])
PYEOF
done
for whl in "$DL"/nvidia_cuda_runtime-*.whl "$DL"/nvidia_cuda_cupti-*.whl; do
    "$PY" - "$whl" "$WORK/x" <<'PYEOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    base = n.rsplit("/", 1)[-1]
    if base in ("libcudart.so.13", "libcupti.so.13"):
        z.extract(n, sys.argv[2])
PYEOF
done
mv "$WORK/x/torch/include" "$WORK/out/include"
cp "$WORK"/x/torch/lib/* "$WORK/out/lib/"
find "$WORK/x" -name 'libcudart.so.13' -exec cp {} "$WORK/out/lib/" \;
find "$WORK/x" -name 'libcupti.so.13' -exec cp {} "$WORK/out/lib/" \;
for f in libtorch_cpu.so libc10.so libtorch.so libgomp.so.1 libcudart.so.13 libcupti.so.13; do
    if [[ ! -f $WORK/out/lib/$f ]]; then
        echo "fetch-libtorch: $f missing from the wheels" >&2
        exit 1
    fi
done
rm -rf "$DEST"
mv "$WORK/out" "$DEST"
rm -rf "$WORK" "$DL"
echo "$WANT" > "$STAMP"
echo "fetch-libtorch: libtorch $TORCH_VERSION (CPU layout) ready in $DEST" >&2
