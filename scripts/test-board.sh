#!/usr/bin/env bash
# The board in a real browser (make test-board; make test runs it): Debian's chromium and
# chromium-driver (installed with apt-get when running as root) drive the page of a real
# fivezero-board through WebDriver (tests/tests/it/board_browser.rs), print the page's first load
# and the delay from a click to the engine's move, and leave screenshots in
# target/board-screenshots/. Without the packages (not root, not Debian) the browser tests are
# reported as skipped; the board's WebSocket tests (board_server) run in the plain suite anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
SKIP_LOG=${SKIP_LOG:-target/test-skips.log}
PACKAGES=(chromium chromium-driver fonts-liberation)

if ! command -v chromedriver >/dev/null; then
    rc=0
    scripts/apt-install.sh test-board "${PACKAGES[@]}" || rc=$?
    if ((rc == 3)); then
        echo "board_browser: needs Debian's ${PACKAGES[*]} (installed by scripts/test-board.sh when run as root)" >> "$SKIP_LOG"
        exit 0
    fi
    ((rc == 0)) || exit $rc
fi

rm -rf target/board-screenshots
# One test at a time: the timings printed must not measure two browsers on the same cores.
cargo test --release -p fivezero-tests --test it -- --ignored board_browser \
    --test-threads=1 --nocapture 2>&1 | tee target/board-browser.log | grep -E '^board:|^test |test result'
test "${PIPESTATUS[0]}" -eq 0
echo "test-board: screenshots in target/board-screenshots/: $(ls target/board-screenshots | tr '\n' ' ')"
