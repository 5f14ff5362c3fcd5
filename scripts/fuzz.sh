#!/usr/bin/env bash
# Fuzzes the protocol parsers for SECONDS (default 60): ./scripts/fuzz.sh [SECONDS]
# Installs cargo-fuzz when missing. Only a stable toolchain is assumed: cargo-fuzz passes
# nightly-only flags (-Zsanitizer=address, sancov passes), which stable accepts with
# RUSTC_BOOTSTRAP=1. New corpus entries go to fuzz/corpus/ (ignored); fuzz/seeds/ is read-only
# input; crashes land in fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

run_seconds="${1:-60}"
if ! [[ "$run_seconds" =~ ^[0-9]+$ ]] || [ "$run_seconds" -lt 1 ]; then
    echo "usage: $0 [SECONDS]   (a positive integer, got '$run_seconds')" >&2
    exit 2
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz not found; installing it" >&2
    cargo install cargo-fuzz --locked
fi

export RUSTC_BOOTSTRAP=1
target=protocol_lines
mkdir -p "fuzz/corpus/$target"
cargo fuzz run "$target" "fuzz/corpus/$target" fuzz/seeds -- \
    -max_total_time="$run_seconds" -dict=fuzz/protocol.dict -max_len=4096 -print_final_stats=1
