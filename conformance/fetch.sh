#!/usr/bin/env bash
# Fetch the pinned OpenClaw release and install its dependency tree into a cache directory
# outside the repository (idempotent: a stamp file is written only after a complete install).
# Usage: conformance/fetch.sh  -> prints the package directory.
set -euo pipefail
VERSION="${OPENCLAW_VERSION:-2026.3.2}"
CACHE="${TOOLC_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolc}/openclaw-$VERSION"
STAMP="$CACHE/.installed"
if [[ -f "$STAMP" ]]; then
  echo "$CACHE/node_modules/openclaw"
  exit 0
fi
command -v node >/dev/null || { echo "conformance: node is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "conformance: npm is required" >&2; exit 1; }
mkdir -p "$CACHE"
cd "$CACHE"
if [[ ! -f "openclaw-$VERSION.tgz" ]]; then
  npm pack "openclaw@$VERSION" --silent >/dev/null
fi
# libsignal (pulled in by the WhatsApp library) is fetched from a git host that is not
# reachable here; nothing on the tool-policy path uses it, so an inert local stub stands in.
mkdir -p stubs/libsignal
cat > stubs/libsignal/package.json <<'JSON'
{"name": "libsignal", "version": "0.0.0-stub", "main": "index.js"}
JSON
echo "module.exports = {};" > stubs/libsignal/index.js
cat > package.json <<JSON
{
  "name": "toolc-conformance-oracle",
  "private": true,
  "dependencies": {"openclaw": "file:./openclaw-$VERSION.tgz"},
  "overrides": {"libsignal": "file:./stubs/libsignal"}
}
JSON
echo "conformance: installing openclaw@$VERSION into $CACHE (about 2 minutes, 1 GB)" >&2
npm install --ignore-scripts --no-audit --no-fund --loglevel=error >&2
touch "$STAMP"
echo "$CACHE/node_modules/openclaw"
