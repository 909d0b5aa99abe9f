#!/usr/bin/env bash
# Brings one pinned Node.js release from the npm registry (the node-linux-<arch> package, which
# holds the release's binary and headers) into .node/<version>/ of this checkout, and prints its
# bin folder. Nothing is fetched from anywhere but the npm registry, and nothing twice.
#   scripts/node-from-registry.sh 24.21.0   → /path/to/checkout/.node/24.21.0/bin
set -euo pipefail
version="${1:?usage: scripts/node-from-registry.sh <version>}"
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "node-from-registry: no node-linux package for $(uname -m)" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.node/$version"
if [ ! -x "$dest/bin/node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null)
  mkdir -p "$dest.partial"
  tar xzf "$tmp"/node-linux-"$arch"-*.tgz -C "$dest.partial" --strip-components=1
  rm -rf "$dest"
  mv "$dest.partial" "$dest"   # a folder that exists is whole: an interrupted fetch starts over
fi
echo "$dest/bin"
