#!/usr/bin/env bash
# Archives one target's release binaries as the release publishes them:
#
#   contrib/release/archive.sh TARGET DIR [OUT]
#
# writes OUT/bee-TARGET.tar.gz (a folder bee-TARGET/ holding bee-hook, beectl,
# beed as a link to beectl, README.md and LICENSE) and OUT/bee-TARGET.tar.gz.sha256 (the
# archive's SHA-256 and name, as `sha256sum -c` reads it), and prints the
# archive's path. OUT defaults to target/release-archives. contrib/install.sh
# and cargo-binstall fetch these names.
set -euo pipefail

[[ $# -ge 2 ]] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
target=$1 bins=$2 out=${3:-$root/target/release-archives}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d "${TMPDIR:-/tmp}/bee-archive.XXXXXX")
trap 'rm -rf "$stage"' EXIT

folder="$stage/bee-$target"
mkdir -p "$folder"
for binary in bee-hook beectl; do
  [[ -x $bins/$binary ]] || { echo "archive.sh: $bins/$binary is not an executable file" >&2; exit 1; }
  install -m 0755 "$bins/$binary" "$folder/$binary"
done
# beectl started as beed is the daemon: one program, not two copies of the
# daemon's library.
ln -s beectl "$folder/beed"
cp "$root/README.md" "$root/LICENSE" "$folder/"
archive="bee-$target.tar.gz"
# Owner and order fixed: the same binaries give the same archive.
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$stage" -czf "$out/$archive" "bee-$target" 2>/dev/null \
  || tar -C "$stage" -czf "$out/$archive" "bee-$target"
if command -v sha256sum >/dev/null 2>&1; then
  (cd "$out" && sha256sum "$archive" >"$archive.sha256")
else
  (cd "$out" && shasum -a 256 "$archive" >"$archive.sha256")
fi
echo "$out/$archive"
