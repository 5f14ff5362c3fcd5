#!/usr/bin/env bash
# Provides what the Windows build and its tests need, from Debian's packages and PyPI only:
#   - Debian's Rust (rustc-web, cargo-web: /usr/bin/cargo, Rust 1.96) with the standard library's
#     source for that very compiler (rust-web-src): the rustup toolchain here has no Windows target
#     and cannot fetch one, so std is built for x86_64-pc-windows-gnu from source (-Zbuild-std);
#   - the MinGW-w64 linker (gcc-mingw-w64-x86-64);
#   - Wine (wine64) to run the .exe in the tests, and the test-only shim third_party/windows/shim/
#     bcryptprimitives.dll: Wine 8.0 lacks `ProcessPrng`, which Rust's std calls on Windows 10 and
#     later (where the real DLL is always present). The shim is never packaged.
#   - ONNX Runtime for Windows (onnxruntime.dll, from the win_amd64 onnxruntime wheel, the version
#     scripts/fetch-runtime.sh pins) and the MSVC runtime DLLs it imports (msvcp140*.dll,
#     vcruntime140*.dll, from the msvc-runtime wheel), under third_party/windows/onnxruntime/.
# Debian packages are installed with apt-get when running as root; otherwise the missing ones are
# named and the script exits 3 (the caller reports the Windows checks as skipped).
# Idempotent: exits at once when the stamp third_party/.windows-ok matches.
set -euo pipefail
cd "$(dirname "$0")/.."

ORT_VERSION=$(sed -n 's/^ORT_VERSION=//p' scripts/fetch-runtime.sh)
MSVC_RUNTIME_VERSION=14.51.36231
TP=third_party
DIR=$TP/windows
STAMP=$TP/.windows-ok
PY=${PYTHON:-$TP/py/bin/python}
WANT="onnxruntime==$ORT_VERSION msvc-runtime==$MSVC_RUNTIME_VERSION shim-v1"
RUNTIME_DLLS=(msvcp140.dll msvcp140_1.dll vcruntime140.dll vcruntime140_1.dll)
PACKAGES=(rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 wine64)

have_packages() {
    dpkg-query -W -f='${Status}\n' "${PACKAGES[@]}" 2>/dev/null | grep -c 'install ok installed' \
        | grep -qx "${#PACKAGES[@]}"
}

if [[ -f $STAMP && "$(cat "$STAMP")" == "$WANT" ]] && have_packages \
    && [[ -f $DIR/onnxruntime/onnxruntime.dll && -f $DIR/shim/bcryptprimitives.dll ]]; then
    exit 0
fi

if ! have_packages; then
    scripts/apt-install.sh fetch-windows "${PACKAGES[@]}"
fi

mkdir -p "$DIR/onnxruntime" "$DIR/shim" "$DIR/wheels"
if [[ ! -x $PY ]]; then
    echo "fetch-windows: $PY missing: run scripts/fetch-runtime.sh first (make does)" >&2
    exit 1
fi
echo "fetch-windows: downloading the win_amd64 wheels of onnxruntime $ORT_VERSION and msvc-runtime" >&2
"$PY" -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: \
    --platform win_amd64 --python-version 3.12 -d "$DIR/wheels" \
    "onnxruntime==$ORT_VERSION" "msvc-runtime==$MSVC_RUNTIME_VERSION"
"$PY" - "$DIR" "${RUNTIME_DLLS[@]}" <<'EOF'
import glob, os, sys, zipfile
out, wanted = sys.argv[1], sys.argv[2:]
dest = os.path.join(out, "onnxruntime")
def take(wheel, member, name):
    with zipfile.ZipFile(wheel) as z, open(os.path.join(dest, name + ".tmp"), "wb") as f:
        f.write(z.read(member))
    os.replace(os.path.join(dest, name + ".tmp"), os.path.join(dest, name))
ort = glob.glob(os.path.join(out, "wheels", "onnxruntime-*-win_amd64.whl"))[0]
take(ort, "onnxruntime/capi/onnxruntime.dll", "onnxruntime.dll")
take(ort, "onnxruntime/LICENSE", "LICENSE-onnxruntime.txt")
take(ort, "onnxruntime/ThirdPartyNotices.txt", "ThirdPartyNotices-onnxruntime.txt")
msvc = glob.glob(os.path.join(out, "wheels", "msvc_runtime-*-win_amd64.whl"))[0]
with zipfile.ZipFile(msvc) as z:
    names = z.namelist()
for dll in wanted:
    member = next(n for n in names if n.endswith("/data/Scripts/" + dll) or n.endswith("/data/" + dll))
    take(msvc, member, dll)
EOF
rm -rf "$DIR/wheels"

# The test-only shim: ProcessPrng on top of RtlGenRandom (advapi32's SystemFunction036).
cat > "$DIR/shim/bcryptprimitives.c" <<'EOF'
#include <windows.h>
#include <ntsecapi.h>
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) { return RtlGenRandom(data, (ULONG)len); }
EOF
printf 'LIBRARY bcryptprimitives\nEXPORTS\nProcessPrng\n' > "$DIR/shim/bcryptprimitives.def"
x86_64-w64-mingw32-gcc -O2 -shared -o "$DIR/shim/bcryptprimitives.dll" \
    "$DIR/shim/bcryptprimitives.c" "$DIR/shim/bcryptprimitives.def" -ladvapi32

echo "$WANT" > "$STAMP"
echo "fetch-windows: ready ($DIR)" >&2
