#!/usr/bin/env bash
# scripts/build-opponents.sh AIWINE_GIT_DIR PENTAZEN_GIT_DIR: builds two classical Gomocup
# engines whose games go into the Rapfi-judged tactics suite (engine/tests/fixtures/
# tactics-judged/): AIWine (github.com/jinjiebang/AIWine, freestyle) into
# third_party/judges/aiwine/pbrain-aiwine and PentaZen 0.4.18 (github.com/sun-yuliang/PentaZen,
# freestyle, standard and renju on 15x15) into third_party/judges/pentazen/pbrain-pentazen, each
# with a VERSION file naming its source commit and build options.
#
# Both are external programs spoken to over the Gomocup protocol; nothing of them is linked into
# or copied into this repository. CI machines cannot fetch GitHub, so like the judge
# (scripts/build-rapfi.sh) they are developer tools, and the games they play are committed as
# records.
#
# Both arguments are git directories (bare or a checkout's .git) read at HEAD. Needs a C++17
# compiler (g++).
set -euo pipefail
if [[ $# != 2 ]]; then
    echo "usage: $0 AIWINE_GIT_DIR PENTAZEN_GIT_DIR" >&2
    exit 2
fi
aiwine_git=$1
pentazen_git=$2
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/third_party/judges

for tool in g++ git; do
    command -v $tool >/dev/null || { echo "build-opponents: needs $tool" >&2; exit 3; }
done
git --git-dir="$aiwine_git" cat-file -e HEAD:src/AIWine.cpp 2>/dev/null ||
    { echo "build-opponents: $aiwine_git is not an AIWine git directory (no src/AIWine.cpp)" >&2; exit 2; }
git --git-dir="$pentazen_git" cat-file -e HEAD:src/pattern/type.h 2>/dev/null ||
    { echo "build-opponents: $pentazen_git is not a PentaZen git directory (no src/pattern/type.h)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# AIWine: its own CMakeLists' flags (SSE4.2, no AVX: the games must not depend on the host).
flags="-std=c++17 -O3 -finline-functions -fno-rtti -msse4.2 -pthread -m64 -DIS_64BIT -DNDEBUG"
mkdir -p "$work/aiwine" "$out/aiwine"
git --git-dir="$aiwine_git" archive HEAD src | tar -x -C "$work/aiwine"
# shellcheck disable=SC2086
g++ $flags -o "$out/aiwine/pbrain-aiwine" "$work"/aiwine/src/*.cpp -lm
printf 'AIWine %s\ng++ %s\n' "$(git --git-dir="$aiwine_git" rev-parse HEAD)" "$flags" \
    >"$out/aiwine/VERSION"

# PentaZen: its pattern tables are generated first, one per rule of five (freestyle: five or
# more; standard: exactly five, also renju's black), then the engine for 15x15 boards.
mkdir -p "$work/pentazen" "$out/pentazen"
git --git-dir="$pentazen_git" archive HEAD src | tar -x -C "$work/pentazen"
src=$work/pentazen/src
for rule in FREESTYLE:f STANDARD:s; do
    sed -i "s/constexpr Rule TARGET_RULE *= [A-Z]*;/constexpr Rule TARGET_RULE = ${rule%%:*};/" \
        "$src/pattern/type.h"
    g++ -std=c++17 -O2 -o "$work/pattern" "$src/pattern/line.cpp" "$src/pattern/main.cpp"
    "$work/pattern" >"$src/pattern_15${rule##*:}.h"
done
# Its search messages print the depth as a character, so depth 10 breaks the line ("MESSAGE dep"
# then "- ev ..."), which a manager rightly reads as a garbled reply: they are turned off.
sed -i 's/constexpr bool OUTPUT_MESSAGE = 1;/constexpr bool OUTPUT_MESSAGE = 0;/' "$src/type.h"
grep -q 'constexpr bool OUTPUT_MESSAGE = 0;' "$src/type.h" ||
    { echo "build-opponents: PentaZen's OUTPUT_MESSAGE switch not found" >&2; exit 2; }
flags="-std=c++17 -O3 -fno-rtti -fno-exceptions -DNDEBUG -pthread"
# shellcheck disable=SC2086
g++ $flags -I"$src" -o "$out/pentazen/pbrain-pentazen" "$src"/*.cpp
printf 'PentaZen %s\ng++ %s\n' "$(git --git-dir="$pentazen_git" rev-parse HEAD)" "$flags" \
    >"$out/pentazen/VERSION"
echo "build-opponents: $out/aiwine/pbrain-aiwine, $out/pentazen/pbrain-pentazen"
