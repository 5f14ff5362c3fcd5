#!/usr/bin/env bash
# scripts/build-rapfi.sh SRC_GIT_DIR NETWORKS_GIT_DIR: builds Rapfi, the classical Gomoku/Renju
# engine used as an independent judge of the threat search, in its CLASSICAL configuration
# (the hand-tuned pattern evaluator with classical/model220723.bin; no NNUE weights needed) into
# third_party/judges/rapfi/: pbrain-rapfi, config.toml, model220723.bin and VERSION (the two
# source commits and the build options, for the labels' headers).
#
# The sources are the git repositories github.com/dhbloo/rapfi and github.com/dhbloo/rapfi-networks
# (GPL-3.0). Rapfi is run only as an external program over the Gomocup protocol; nothing of it
# is linked into or copied into this repository. CI machines cannot fetch GitHub, so the judge
# is a developer tool: the positions it labels are committed as data
# (engine/tests/fixtures/tactics-judged/) and the tests never need Rapfi.
#
# Talking to it (what `fivezero-tools judge` does): `INFO thread_num 1`, `INFO max_node N`,
# `INFO timeout_turn 0` and `INFO timeout_match 0` (no time limit) and `YXHASHCLEAR` before each
# position make a search reproducible; `INFO show_detail 2` makes it print, per finished
# iteration, `INFO DEPTH`, `INFO TOTALNODES`, `INFO TOTALTIME` (ms), `INFO EVAL` and
# `INFO BESTLINE`. An EVAL of `+Mn` is a mate in n plies for the side to move, `-Mn` being mated
# in n (core/iohelper.cpp), anything else a score. Commands sent while it thinks stop the search.
#
# Both arguments are git directories (bare or a checkout's .git) read at HEAD. Needs cmake and
# a C++17 compiler; JOBS (default 1) sets the build's parallelism.
set -euo pipefail
if [[ $# != 2 ]]; then
    echo "usage: $0 SRC_GIT_DIR NETWORKS_GIT_DIR" >&2
    exit 2
fi
src_git=$1
net_git=$2
jobs=${JOBS:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/third_party/judges/rapfi
build=$out/build

for tool in cmake c++ git; do
    command -v $tool >/dev/null || { echo "build-rapfi: needs $tool" >&2; exit 3; }
done
git --git-dir="$src_git" cat-file -e HEAD:Rapfi/CMakeLists.txt 2>/dev/null ||
    { echo "build-rapfi: $src_git is not a Rapfi git directory (no Rapfi/CMakeLists.txt at HEAD)" >&2; exit 2; }
git --git-dir="$net_git" cat-file -e HEAD:classical/model220723.bin 2>/dev/null ||
    { echo "build-rapfi: $net_git has no classical/model220723.bin at HEAD" >&2; exit 2; }

mkdir -p "$out"
rm -rf "$out/src"
mkdir -p "$out/src"
git --git-dir="$src_git" archive HEAD Rapfi | tar -x -C "$out/src"

# AVX2 + BMI2 is what the classical evaluator can use; AVX-512 is left off so that the binary
# also runs on machines without it (the labels must not depend on the build host). The command
# modules (training, dataset tools) are not needed by a judge and are left out.
options=(-DCMAKE_BUILD_TYPE=Release -DUSE_SSE=ON -DUSE_AVX2=ON -DUSE_BMI2=ON
    -DUSE_AVX512=OFF -DUSE_VNNI=OFF -DNO_COMMAND_MODULES=ON)
cmake -S "$out/src/Rapfi" -B "$build" "${options[@]}" >"$out/cmake.log" 2>&1
cmake --build "$build" -j"$jobs" >>"$out/cmake.log" 2>&1 ||
    { echo "build-rapfi: the build failed; see $out/cmake.log" >&2; exit 1; }
cp "$build/pbrain-rapfi" "$out/pbrain-rapfi"

# Rapfi reads config.toml from its executable's folder (and the model file relative to it).
# The example gomocalc config converts coordinates for the Gomocalc GUI; the Gomocup protocol
# needs them unconverted, hence the one edit.
git --git-dir="$net_git" show HEAD:classical/model220723.bin >"$out/model220723.bin"
git --git-dir="$net_git" show HEAD:config-example/gomocalc-classical220723.toml |
    sed 's/^coord_conversion_mode = .*/coord_conversion_mode = "none"/' >"$out/config.toml"
grep -q '^coord_conversion_mode = "none"' "$out/config.toml" ||
    { echo "build-rapfi: could not set coord_conversion_mode in config.toml" >&2; exit 1; }

{
    echo "rapfi $(git --git-dir="$src_git" rev-parse HEAD)"
    echo "rapfi-networks $(git --git-dir="$net_git" rev-parse HEAD)"
    echo "config classical model220723.bin (gomocalc-classical220723.toml, coord_conversion_mode none)"
    echo "cmake ${options[*]}"
} >"$out/VERSION"

# The check: a Gomocup game on 15x15 with a fixed node budget must answer a move. END waits:
# Rapfi stops searching at any command that arrives while it thinks.
answer=$({ printf 'START 15\nINFO max_node 100000\nINFO thread_num 1\nINFO timeout_turn 0\n'
    printf 'INFO timeout_match 0\nBOARD\n7,7,1\n8,7,2\n7,8,1\n8,8,2\n7,9,1\n8,9,2\nDONE\n'
    sleep 5; echo END; } | (cd "$out" && timeout 60 ./pbrain-rapfi) | grep -E '^[0-9]+,[0-9]+$' | head -1 || true)
if [[ -z $answer ]]; then
    echo "build-rapfi: pbrain-rapfi did not answer a move to a Gomocup BOARD" >&2
    exit 1
fi
echo "build-rapfi: $out/pbrain-rapfi answers $answer (its three in a row made an open four)"
cat "$out/VERSION"
