#!/usr/bin/env bash
# The Windows package tested as the Windows program it is (make test-windows; make test runs it):
# builds dist/fivezero-<version>-windows-x64.zip, unpacks it as a user would into
# target/windows/package/, and runs pbrain-fivezero.exe under Wine through
#   - the protocol tests that drive the Linux engine (tests/tests/it/engine_protocol.rs), and
#   - the package's own tests (tests/tests/it/windows_package.rs): its files, a tournament of the
#     .exe against the Linux engine, Windows paths, faults.
# The tests find the .exe through target/windows/bin/pbrain-fivezero, a launcher that runs it under
# wine64; the other programs there are the Linux ones. Wine 8.0 lacks ProcessPrng, so the test-only
# shim bcryptprimitives.dll (scripts/fetch-windows.sh) is put next to the unpacked .exe; the zip
# never holds it.
# Without Debian's packages (not root, not Debian) the checks are reported as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
SKIP_LOG=${SKIP_LOG:-target/test-skips.log}

rc=0
./scripts/fetch-windows.sh || rc=$?
if ((rc == 3)); then
    echo "windows-package: needs Debian's rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 wine64 (root: installed by scripts/fetch-windows.sh)" >> "$SKIP_LOG"
    exit 0
elif ((rc != 0)); then
    exit $rc
fi

start=$(date +%s)
./scripts/package.sh windows
echo "test-windows: package built in $(( $(date +%s) - start )) s"
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
ZIP=$PWD/dist/fivezero-$VERSION-windows-x64.zip
PKG=$PWD/target/windows/package
BIN=$PWD/target/windows/bin
rm -rf "$PKG" "$BIN"
mkdir -p "$PKG" "$BIN"
third_party/py/bin/python -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$ZIP" "$PKG"
cp third_party/windows/shim/bcryptprimitives.dll "$PKG/"

export WINEPREFIX=$PWD/target/windows/wineprefix WINEDEBUG=-all
WINE=$(dpkg -L wine64 | grep '/wine64$' | head -1)
cat > "$BIN/pbrain-fivezero" <<EOF
#!/bin/sh
# pbrain-fivezero.exe of the unpacked package, under Wine (scripts/test-windows.sh), without the
# Linux runtime's path that cargo sets for the tests (.cargo/config.toml): Wine would pass it on.
exec env -u ORT_DYLIB_PATH WINEPREFIX='$WINEPREFIX' WINEDEBUG=-all '$WINE' '$PKG/pbrain-fivezero.exe' "\$@"
EOF
chmod +x "$BIN/pbrain-fivezero"
for b in fivezero-tools pbrain-faulty; do ln -sf "$PWD/target/release/$b" "$BIN/$b"; done

# A prefix made once, and one wineserver kept for the whole run: the timed protocol tests must not
# pay Wine's first start (seconds) or a server start per engine.
wineserver=$(dirname "$WINE")/wineserver
"$wineserver" -p || true # a server of this prefix already running is kept
"$WINE" wineboot -i >/dev/null 2>&1 || true
trap '"$wineserver" -k >/dev/null 2>&1 || true' EXIT

FIVEZERO_BIN_DIR=$BIN FIVEZERO_WINDOWS_ZIP=$ZIP FIVEZERO_WINDOWS_PACKAGE=$PKG FIVEZERO_WINE=$WINE \
    cargo test --release -p fivezero-tests --test it -- --include-ignored ${TEST_FILTER:-engine_protocol:: windows_package::}
