#!/usr/bin/env bash
# Serves a folder written by scripts/web-export.sh on 127.0.0.1 for a local
# look (default port 8000).
#
#   scripts/serve-web.sh DIR [PORT]
set -euo pipefail
if [ $# -lt 1 ]; then
    echo "usage: scripts/serve-web.sh DIR [PORT]" >&2
    exit 2
fi
echo "http://127.0.0.1:${2:-8000}/" >&2
exec python3 -m http.server --bind 127.0.0.1 --directory "$1" "${2:-8000}"
