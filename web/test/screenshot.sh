#!/usr/bin/env bash
# Regenerates docs/images/browser.png, the README's and docs/browser.md's picture of the page: the page's test run once
# (it trains the words GPT 200 steps in headless Chromium, samples and opens a sample's table), its 1400x1000
# screenshot made small (pngquant's 256 colours where installed, then optipng; both Debian: apt-get install pngquant
# optipng) and moved into place. Needs what the test needs (docs/browser.md#the-page-in-chromium).
#   bash web/test/screenshot.sh [page.test.mjs's options, e.g. --native PATH]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

out=docs/images/browser.png
mkdir -p "$(dirname "$out")"
# Beside the target, so the final move is a rename (.gitignore: *.tmp.*).
tmp=$(mktemp "$out.tmp.XXXXXX")
trap 'rm -f "$tmp" "$tmp.q"' EXIT
node web/test/page.test.mjs --screenshot "$tmp" "$@"
before=$(stat -c %s "$tmp")
if command -v pngquant >/dev/null 2>&1; then
  pngquant --force --skip-if-larger --quality 70-95 --speed 1 --output "$tmp.q" -- "$tmp" && mv "$tmp.q" "$tmp" || true
else
  echo "screenshot: pngquant is not installed (apt-get install pngquant): the colours are kept as Chromium drew them"
fi
if command -v optipng >/dev/null 2>&1; then
  optipng -quiet -o5 "$tmp"
else
  echo "screenshot: optipng is not installed (apt-get install optipng): the PNG is not recompressed"
fi
chmod 644 "$tmp"
mv "$tmp" "$out"
echo "screenshot: $out, $(stat -c %s "$out") bytes (Chromium wrote $before)"
