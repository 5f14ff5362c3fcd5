#!/usr/bin/env bash
# scripts/apt-install.sh WHO PACKAGE...: installs Debian packages with apt-get (no recommends) when
# running as root; WHO names the caller in what it prints. Exits 3 without installing anything
# when it cannot (not root, or no apt-get), after naming the packages: the caller reports its
# checks as skipped.
set -euo pipefail
who=$1
shift
if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "$who: installing $* (Debian, running as root)" >&2
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2
else
    echo "$who: needs the Debian packages $* (apt-get install as root)" >&2
    exit 3
fi
