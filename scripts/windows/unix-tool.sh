#!/bin/sh
# The Linux side of unix-tool.exe (unix-tool.c): runs PROGRAM ARGS with Windows paths (X:\...)
# in the arguments and in the environment turned into Linux paths through the Wine prefix's
# drive links, its output into DIR/stdout and DIR/stderr, then writes its exit status into
# DIR/status for unix-tool.exe to pick up.
# Usage (by unix-tool.exe only): unix-tool.sh DIR PROGRAM [ARGS...]

# One word with a Windows path in it (as in -LZ:\dir or -oZ:\dir\x) made a Linux path, and a
# Linux path that Windows code extended with backslashes (/work/dir\include, -I/work\x) mended.
to_unix() {
  case $1 in
    *[A-Za-z]:\\*)
      before=${1%%[A-Za-z]:\\*}
      path=${1#"$before"}
      drive=$(printf %s "$path" | cut -c1 | tr 'A-Z' 'a-z')
      root=$(readlink -f "${WINEPREFIX:-$HOME/.wine}/dosdevices/$drive:")
      printf '%s%s%s' "$before" "${root%/}" "$(printf %s "${path#?:}" | tr '\\' /)"
      ;;
    /*\\*|-?/*\\*) printf %s "$1" | tr '\\' / ;;
    *) printf %s "$1" ;;
  esac
}

dir=$(to_unix "$1")
program=$2
shift 2
for arg in "$@"; do
  set -- "$@" "$(to_unix "$arg")"
  shift
done
# Variables holding a Windows path (LIBDIR, OUT, ... passed to examples/c/build.sh).
for name in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=\([A-Za-z]:\\\|\/.*\\\).*/\1/p'); do
  eval "value=\$$name"
  # shellcheck disable=SC2154 # set by the eval
  export "$name=$(to_unix "$value")"
done
"$program" "$@" >"$dir/stdout" 2>"$dir/stderr" </dev/null
status=$?
echo "$status" > "$dir/status.tmp"
mv "$dir/status.tmp" "$dir/status"
