#!/usr/bin/env bash
# Builds the release packages users take as they are (make windows, make dist):
#   scripts/package.sh windows  ->  dist/fivezero-<version>-windows-x64.zip, and
#                                   dist/fivezero-<version>-windows-x64-onnxruntime.zip (ONNX
#                                   Runtime's DLLs, for ONNX models other than fivezero's own)
#   scripts/package.sh linux    ->  dist/fivezero-<version>-linux-x64.tar.gz (engine + board)
# Each holds pbrain-fivezero (the Gomocup brain, its networks embedded), what it needs to play
# them, and README.txt (packaging/README-<platform>.txt with the version filled in). The version
# is the workspace's (root Cargo.toml, [workspace.package]), the one the binary reports.
#
# The Windows engine is cross-built from Linux with Debian's Rust and the standard library built
# from source (-Zbuild-std) for x86_64-pc-windows-gnu, linked by MinGW-w64: scripts/fetch-windows.sh
# provides both. Its target folder is target/windows (the Linux build's target/release is left
# alone). The build is for baseline x86-64: vector code chooses AVX2 or AVX-512 at run time.
set -euo pipefail
cd "$(dirname "$0")/.."

platform=${1:?usage: scripts/package.sh windows|linux}
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
[[ -n $VERSION ]] || { echo "package: no version in Cargo.toml [workspace.package]" >&2; exit 1; }
DIST=dist

# stage NAME TEMPLATE FILE...: dist/NAME/ afresh, with the files and README.txt (the template with
# the version filled in).
stage() {
    local name=$1 template=$2
    shift 2
    rm -rf "${DIST:?}/$name"
    mkdir -p "$DIST/$name"
    cp "$@" "$DIST/$name/"
    sed "s/@VERSION@/$VERSION/g" "$template" > "$DIST/$name/README.txt"
}

# zip_folder NAME: dist/NAME.zip of dist/NAME/, deterministic (fixed timestamps, sorted names),
# deflate level 9, the files at the top level as GomocupJudge and Piskvork users expect.
zip_folder() {
    rm -f "$DIST/$1.zip"
    third_party/py/bin/python - "$DIST/$1" "$DIST/$1.zip" <<'EOF'
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out + ".tmp", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for f in sorted(os.listdir(src)):
        info = zipfile.ZipInfo(f, date_time=(2026, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        with open(os.path.join(src, f), "rb") as fh:
            z.writestr(info, fh.read(), compresslevel=9)
os.replace(out + ".tmp", out)
EOF
}

case $platform in
windows)
    TRIPLE=x86_64-pc-windows-gnu
    EXE=target/windows/$TRIPLE/release/pbrain-fivezero.exe
    # Debian's cargo and rustc first on PATH (rustup's have no Windows target). panic=unwind as on
    # Linux: the brain turns a panic in one command into an ERROR line and plays on.
    PATH=/usr/bin:$PATH RUSTC_BOOTSTRAP=1 \
        CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
        CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols \
        /usr/bin/cargo build --release -q -Zbuild-std=std,panic_unwind --target $TRIPLE \
        --target-dir target/windows -p engine --bin pbrain-fivezero
    name=fivezero-$VERSION-windows-x64
    # ONNX Runtime for Windows and the MSVC runtime DLLs it imports (scripts/fetch-windows.sh).
    ORT_FILES=(third_party/windows/onnxruntime/*)
    # The engine alone: it runs its own networks without ONNX Runtime, whose DLLs (26 MB, 7 MB
    # zipped) would take the zip over Gomocup's 8 MB. They come apart, for other ONNX models.
    stage "$name" packaging/README-windows.txt "$EXE"
    stage "$name-onnxruntime" packaging/README-windows-onnxruntime.txt "${ORT_FILES[@]}"
    # README.txt with Windows line endings: Notepad on older Windows shows LF files as one line.
    sed -i 's/$/\r/' "$DIST/$name/README.txt" "$DIST/$name-onnxruntime/README.txt"
    zip_folder "$name-onnxruntime"
    echo "package: $DIST/$name-onnxruntime.zip ($(stat -c %s "$DIST/$name-onnxruntime.zip") bytes)"
    zip_folder "$name"
    out=$DIST/$name.zip
    ;;
linux)
    cargo build --release -q -p engine --bin pbrain-fivezero
    cargo build --release -q -p board --bin fivezero-board
    name=fivezero-$VERSION-linux-x64
    lib=$(ls third_party/onnxruntime/libonnxruntime.so.*)
    # The engine, and the board in a browser for those without a Windows manager.
    stage "$name" packaging/README-linux.txt target/release/pbrain-fivezero target/release/fivezero-board
    strip "$DIST/$name/pbrain-fivezero" "$DIST/$name/fivezero-board"
    # Under the name the engine looks for next to itself (no symlink to lose on the way).
    cp "$lib" "$DIST/$name/libonnxruntime.so"
    out=$DIST/$name.tar.gz
    tar -C "$DIST" --owner=0 --group=0 --mtime=2026-01-01 --sort=name -czf "$out.tmp" "$name"
    mv -f "$out.tmp" "$out"
    ;;
*)
    echo "package: unknown platform $platform (windows or linux)" >&2
    exit 2
    ;;
esac
echo "package: $out ($(stat -c %s "$out") bytes)"
