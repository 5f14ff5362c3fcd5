#!/usr/bin/env bash
# The release packages tested as their users get them (make test-packages; make test runs it):
#   - dist/fivezero-<version>-linux-x64.tar.gz, unpacked into target/packages/linux/;
#   - dist/fivezero-<version>-windows-x64.zip, unpacked into target/packages/windows/, its
#     pbrain-fivezero.exe run under Wine through the protocol tests that drive the Linux engine
#     (tests/tests/it/engine_protocol.rs) and the package tests (tests/tests/it/release_packages.rs:
#     files, a tournament of the .exe against the Linux engine, memory, Windows paths, faults).
# The tests reach the .exe through target/packages/wine-bin/pbrain-fivezero, a launcher that runs it
# under wine64; the other programs there are the Linux ones. Wine 8.0 lacks ProcessPrng, so the
# test-only shim bcryptprimitives.dll (scripts/fetch-windows.sh) is put next to the unpacked .exe;
# the zip never holds it. Without Debian's packages for the Windows build (not root, not Debian)
# the Windows checks are reported as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
SKIP_LOG=${SKIP_LOG:-target/test-skips.log}
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
OUT=$PWD/target/packages
PY=third_party/py/bin/python
rm -rf "$OUT"
mkdir -p "$OUT/linux" "$OUT/windows" "$OUT/wine-bin"

./scripts/package.sh linux
TARBALL=$PWD/dist/fivezero-$VERSION-linux-x64.tar.gz
tar -C "$OUT/linux" --strip-components=1 -xzf "$TARBALL"
export FIVEZERO_LINUX_TARBALL=$TARBALL FIVEZERO_LINUX_PACKAGE=$OUT/linux
filters=(release_packages::linux_)

rc=0
./scripts/fetch-windows.sh || rc=$?
if ((rc == 3)); then
    echo "windows package: needs Debian's rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 wine64 (installed by scripts/fetch-windows.sh when run as root)" >> "$SKIP_LOG"
elif ((rc != 0)); then
    exit $rc
else
    start=$(date +%s)
    ./scripts/package.sh windows
    echo "test-packages: Windows package built in $(( $(date +%s) - start )) s"
    ZIP=$PWD/dist/fivezero-$VERSION-windows-x64.zip
    "$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$ZIP" "$OUT/windows"
    cp third_party/windows/shim/bcryptprimitives.dll "$OUT/windows/"

    export WINEPREFIX=$PWD/target/wineprefix WINEDEBUG=-all
    WINE=$(dpkg -L wine64 | grep '/wine64$' | head -1)
    cat > "$OUT/wine-bin/pbrain-fivezero" <<EOF
#!/bin/sh
# pbrain-fivezero.exe of the unpacked package, under Wine (scripts/test-packages.sh), without the
# Linux runtime's path that cargo sets for the tests (.cargo/config.toml): Wine would pass it on.
exec env -u ORT_DYLIB_PATH WINEPREFIX='$WINEPREFIX' WINEDEBUG=-all '$WINE' '$OUT/windows/pbrain-fivezero.exe' "\$@"
EOF
    chmod +x "$OUT/wine-bin/pbrain-fivezero"
    for b in fivezero-tools pbrain-faulty; do ln -sf "$PWD/target/release/$b" "$OUT/wine-bin/$b"; done

    # A prefix made once, and one wineserver kept for the whole run: the timed protocol tests must
    # not pay Wine's first start (seconds) or a server start per engine.
    wineserver=$(dirname "$WINE")/wineserver
    "$wineserver" -p || true # a server of this prefix already running is kept
    "$WINE" wineboot -i >/dev/null 2>&1 || true
    trap '"$wineserver" -k >/dev/null 2>&1 || true' EXIT
    export FIVEZERO_BIN_DIR=$OUT/wine-bin FIVEZERO_WINDOWS_ZIP=$ZIP \
        FIVEZERO_WINDOWS_ONNXRUNTIME_ZIP=${ZIP%.zip}-onnxruntime.zip \
        FIVEZERO_WINDOWS_PACKAGE=$OUT/windows FIVEZERO_WINE=$WINE
    filters+=(engine_protocol:: release_packages::windows_)
fi

# TEST_FILTER narrows the run (e.g. TEST_FILTER="windows_paths --nocapture").
cargo test --release -p fivezero-tests --test it -- --include-ignored ${TEST_FILTER:-${filters[@]}}
