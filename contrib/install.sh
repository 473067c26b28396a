#!/usr/bin/env sh
# Builds the workspace once and installs its three binaries — beed, bee-hook
# and beectl — into ~/.local/bin (or $BEE_INSTALL_DIR). Needs Rust 1.89 or
# newer (rustup.rs); nothing is downloaded at run time.
set -eu
cd "$(dirname "$0")/.."
dest="${BEE_INSTALL_DIR:-$HOME/.local/bin}"
if ! command -v cargo >/dev/null 2>&1; then
  echo "install.sh: cargo not found; install Rust 1.89 or newer (https://rustup.rs) first" >&2
  exit 1
fi
# Where cargo puts what it builds: CARGO_TARGET_DIR, a build.target-dir in
# a cargo config, or target/, as cargo itself decides.
target=$(cargo metadata --format-version 1 --no-deps --locked | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
if [ -z "$target" ]; then
  echo "install.sh: cargo metadata did not say where it builds" >&2
  exit 1
fi
case "${BEE_INSTALL_PROFILE:-release}" in
  release) cargo build --release --locked --bins; built="$target/release" ;;
  dev) cargo build --locked --bins; built="$target/debug" ;;
  *) echo "install.sh: BEE_INSTALL_PROFILE is release or dev" >&2; exit 1 ;;
esac
mkdir -p "$dest"
for binary in beed bee-hook beectl; do
  install -m 0755 "$built/$binary" "$dest/$binary"
done
echo "installed beed, bee-hook and beectl in $dest"
case ":$PATH:" in
  *":$dest:"*) ;;
  *) echo "add $dest to your PATH, e.g. export PATH=\"$dest:\$PATH\"" >&2 ;;
esac
