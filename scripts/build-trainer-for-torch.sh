#!/usr/bin/env bash
# Builds the trainer for a GPU machine whose torch is not the 2.13 that tch 0.26 is made for
# (the lent H100/H200 machines have torch 2.11.0+cu130 and no cargo, so the binary is built here
# and carried there). Everything comes from PyPI and crates.io:
#
#   scripts/build-trainer-for-torch.sh 2.11.0 [OUT_DIR]
#
#   1. the torch==VERSION wheel's headers and CPU libraries, to build and link against;
#   2. a copy of torch-sys whose generated C++ wrapper has every operator that VERSION lacks
#      replaced by a throw (fivezero calls none of them: the first compile names them);
#   3. `cargo build --release -p trainer` in a scratch copy of the workspace that patches
#      torch-sys to that copy, with LIBTORCH_BYPASS_VERSION_CHECK=1; the stripped binary goes to
#      OUT_DIR (default target/trainer-torch-VERSION). It builds the committed tree (HEAD).
#
# On the GPU machine: LD_LIBRARY_PATH=<torch>/lib:<site-packages>/nvidia/*/lib:$LD_LIBRARY_PATH
# OUT_DIR/trainer --device cuda ... (the trainer opens libtorch_cuda.so itself at start).
# The binary needs libcudart/libcupti (the nvidia-cuda-* wheels) even on a CPU, as torch's does.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=${1:?usage: $0 TORCH_VERSION [OUT_DIR]}
OUT=${2:-$ROOT/target/trainer-torch-$VERSION}
PY=${PYTHON:-python3}
WORK=${WORK_DIR:-$ROOT/target/torch-$VERSION-build}
mkdir -p "$WORK" "$OUT"

LT=$WORK/libtorch
if [[ ! -f $LT/lib/libtorch_cpu.so ]]; then
    "$PY" -m pip download --no-deps "torch==$VERSION" --python-version 3.11 \
        --platform manylinux_2_28_x86_64 --only-binary=:all: -d "$WORK/wheel" >&2
    "$PY" - "$WORK/wheel" "$LT" <<'EOF'
import glob, os, shutil, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "torch-*.whl"))[0]
dest = sys.argv[2]
tmp = dest + ".part"
shutil.rmtree(tmp, ignore_errors=True)
with zipfile.ZipFile(wheel) as z:
    for n in z.namelist():
        if n.startswith(("torch/include/", "torch/lib/", "torch/share/")):
            z.extract(n, tmp)
os.replace(os.path.join(tmp, "torch"), dest)
shutil.rmtree(tmp)
EOF
fi

# torch-sys's version, as the workspace locks it, and a private copy of its sources.
TS_VERSION=$(awk '/^name = "torch-sys"/{getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
TS_SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/torch-sys-"$TS_VERSION" 2>/dev/null | head -1 || true)
if [[ -z $TS_SRC ]]; then
    cargo fetch >&2
    TS_SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/torch-sys-"$TS_VERSION" | head -1)
fi
TS=$WORK/torch-sys
WS=$WORK/workspace
if [[ ! -d $TS ]]; then cp -r "$TS_SRC" "$TS"; fi
rm -rf "$WS" && mkdir -p "$WS" && git archive HEAD | tar -x -C "$WS"
printf '\n[patch.crates-io]\ntorch-sys = { path = "%s" }\n' "$TS" >> "$WS/Cargo.toml"

build() {
    (cd "$WS" && LIBTORCH=$LT LIBTORCH_BYPASS_VERSION_CHECK=1 CARGO_TARGET_DIR=$WORK/target \
        cargo build --release -p trainer --bin trainer) >"$WORK/build.log" 2>&1
}
for attempt in 1 2 3; do
    if build; then
        strip -o "$OUT/trainer" "$WORK/target/release/trainer"
        echo "built $OUT/trainer against torch $VERSION (log: $WORK/build.log)"
        exit 0
    fi
    # Stub each operator the compiler says this torch lacks: the body of the PROTECT( ... ) block
    # from the failing line on becomes a throw.
    n=$("$PY" - "$WORK/build.log" "$TS/libtch/torch_api_generated.cpp" <<'EOF'
import re, sys
log = open(sys.argv[1]).read()
bad = sorted({int(m) for m in re.findall(r"torch_api_generated\.cpp:(\d+):\d+: error", log)})
src = open(sys.argv[2]).read().split("\n")
for n in reversed(bad):
    i = j = n - 1
    while src[j].strip() != ")":
        j += 1
    src[i:j] = ['    throw std::runtime_error("not in this libtorch");']
open(sys.argv[2], "w").write("\n".join(src))
print(len(bad))
EOF
)
    if [[ $n == 0 ]]; then
        tail -n 30 "$WORK/build.log" >&2
        echo "build-trainer-for-torch: the build failed for another reason (log: $WORK/build.log)" >&2
        exit 1
    fi
    echo "build-trainer-for-torch: stubbed $n operators torch $VERSION lacks; building again" >&2
done
echo "build-trainer-for-torch: still failing after 3 attempts (log: $WORK/build.log)" >&2
exit 1
