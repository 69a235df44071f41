#!/usr/bin/env bash
# The dashboard's browser test drives Debian's chromium (github.com/chromedp/chromedp). A fresh machine has
# none: install it with apt-get when missing (as root, or through sudo), else say how.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(chromium --version 2>/dev/null | head -1)"
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "chromium is not installed and this user cannot install it: run apt-get install -y chromium as root" >&2
    exit 1
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is not installed and apt-get is missing: install Chromium so that \`chromium\` is on PATH" >&2
  exit 1
fi
echo "chromium: installing Debian's package (apt-get update; apt-get install -y chromium)"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
echo "chromium: $(chromium --version 2>/dev/null | head -1)"
