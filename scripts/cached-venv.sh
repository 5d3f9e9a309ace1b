# Sourced by the setup scripts: a Python environment in the per-user cache
# (GIPF_CACHE, else ~/.cache/gipf), made once and marked complete.
#
#   cached_venv NAME NOTE PACKAGE...   # sets VENV to $CACHE/NAME
CACHE="${GIPF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gipf}"

cached_venv() {
    local name="$1" note="$2"
    shift 2
    VENV="$CACHE/$name"
    if [ ! -f "$VENV/.complete" ]; then
        echo "$(basename "$0"): installing $* into $VENV (once$note)" >&2
        rm -rf "$VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
        "$VENV/bin/python" -m pip install --quiet "$@" >&2
        touch "$VENV/.complete"
    fi
}
