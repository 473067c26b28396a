#!/usr/bin/env sh
# Installs Bee's three binaries — beed, bee-hook and beectl — into
# ~/.local/bin (or $BEE_INSTALL_DIR).
#
# Without a compiler (the default): downloads this platform's release
# archive and its SHA-256 from the release, checks the archive against it
# (a mismatch installs nothing), checks the binaries run here, and installs
# them. From source (BEE_INSTALL_FROM=source, or when no archive fits this
# platform): builds this checkout once with cargo (Rust 1.89 or newer).
#
#   BEE_INSTALL_DIR      where the binaries go (default ~/.local/bin)
#   BEE_INSTALL_FROM     release or source (default: release where an archive
#                        fits this platform)
#   BEE_VERSION          the release to install (default: this checkout's
#                        version, or the latest release outside a checkout)
#   BEE_RELEASE_URL      where the release's files are (default: the GitHub
#                        release of BEE_VERSION)
#   BEE_INSTALL_PROFILE  release or dev: the cargo profile of a source build
#                        (naming it asks for one)
set -eu

repository=https://github.com/bee-accounting/bee
dest="${BEE_INSTALL_DIR:-$HOME/.local/bin}"
here=$(cd "$(dirname "$0")/.." 2>/dev/null && pwd || true)

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

# This machine's release target: the archives the release workflow builds.
# Linux x64 takes the static musl build, which runs on any distribution.
release_target() {
  case "$(uname -s) $(uname -m)" in
    "Linux x86_64" | "Linux amd64") echo x86_64-unknown-linux-musl ;;
    "Linux aarch64" | "Linux arm64") echo aarch64-unknown-linux-gnu ;;
    "Darwin x86_64") echo x86_64-apple-darwin ;;
    "Darwin arm64" | "Darwin aarch64") echo aarch64-apple-darwin ;;
    *) echo "" ;;
  esac
}

# Whether this script runs from a checkout of Bee (not from a pipe).
in_checkout() {
  [ -n "$here" ] && [ -f "$here/Cargo.toml" ] && [ -f "$here/daemon/Cargo.toml" ] && [ -f "$here/contrib/install.sh" ]
}

# The version of the checkout this script is in, if it is in one.
checkout_version() {
  in_checkout || return 0
  sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$here/Cargo.toml"
}

fetch() { # url file
  if command -v curl >/dev/null 2>&1; then
    curl --proto '=https,http' --fail --silent --show-error --location --retry 2 --output "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget --quiet --output-document="$2" "$1"
  else
    fail "neither curl nor wget is here to download $1"
  fi
}

sha256_of() { # file
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
  else
    fail "no sha256sum, shasum or openssl to check the download with"
  fi
}

say_path() {
  case ":$PATH:" in
    *":$dest:"*) ;;
    *) echo "add $dest to your PATH, e.g. export PATH=\"$dest:\$PATH\"" >&2 ;;
  esac
}

from_release() { # target
  target=$1
  version="${BEE_VERSION:-$(checkout_version)}"
  archive="bee-$target.tar.gz"
  if [ -n "${BEE_RELEASE_URL:-}" ]; then
    base=${BEE_RELEASE_URL%/}
  elif [ -n "$version" ]; then
    base="$repository/releases/download/v$version"
  else
    base="$repository/releases/latest/download"
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/bee-install.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  fetch "$base/$archive" "$work/$archive" || fail "could not download $base/$archive (BEE_INSTALL_FROM=source builds from a checkout instead)"
  fetch "$base/$archive.sha256" "$work/$archive.sha256" || fail "could not download $base/$archive.sha256: an archive is never installed unchecked; nothing installed"
  expected=$(cut -d ' ' -f 1 <"$work/$archive.sha256" | tr 'A-F' 'a-f')
  actual=$(sha256_of "$work/$archive")
  case "$expected" in
    *[!0-9a-f]* | "") fail "$archive.sha256 holds no SHA-256; nothing installed" ;;
  esac
  [ ${#expected} -eq 64 ] || fail "$archive.sha256 holds no SHA-256; nothing installed"
  if [ "$expected" != "$actual" ]; then
    fail "checksum mismatch for $archive: expected $expected, got $actual; nothing installed"
  fi
  mkdir "$work/unpacked"
  tar -xzf "$work/$archive" -C "$work/unpacked" || fail "could not unpack $archive; nothing installed"
  unpacked="$work/unpacked/bee-$target"
  for binary in beed bee-hook beectl; do
    [ -f "$unpacked/$binary" ] || fail "$archive holds no bee-$target/$binary; nothing installed"
    "$unpacked/$binary" --version >/dev/null 2>&1 || fail "$binary from $archive does not run on this machine; nothing installed"
  done
  mkdir -p "$dest"
  for binary in bee-hook beectl beed; do
    # Beside the old one, then renamed over it: a running hook never meets
    # a half-written binary.
    rm -f "$dest/.$binary.new"
    if [ "$binary" = beed ] && [ -L "$unpacked/beed" ]; then
      # beectl started as beed is the daemon: a link, as in the archive.
      ln -s beectl "$dest/.beed.new"
    else
      install -m 0755 "$unpacked/$binary" "$dest/.$binary.new"
    fi
    mv -f "$dest/.$binary.new" "$dest/$binary"
  done
  echo "installed beed, bee-hook and beectl ${version:+$version }($target, checksum verified) in $dest"
  say_path
}

from_source() {
  in_checkout || fail "building from source needs a checkout of $repository (this script is not in one)"
  cd "$here"
  if ! command -v cargo >/dev/null 2>&1; then
    fail "cargo not found; install Rust 1.89 or newer (https://rustup.rs) first"
  fi
  # Where cargo puts what it builds: CARGO_TARGET_DIR, a build.target-dir in
  # a cargo config, or target/, as cargo itself decides.
  target_dir=$(cargo metadata --format-version 1 --no-deps --locked | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  [ -n "$target_dir" ] || fail "cargo metadata did not say where it builds"
  case "${BEE_INSTALL_PROFILE:-release}" in
    release) cargo build --release --locked --bins; built="$target_dir/release" ;;
    dev) cargo build --locked --bins; built="$target_dir/debug" ;;
    *) fail "BEE_INSTALL_PROFILE is release or dev" ;;
  esac
  mkdir -p "$dest"
  for binary in beed bee-hook beectl; do
    install -m 0755 "$built/$binary" "$dest/$binary"
  done
  echo "installed beed, bee-hook and beectl in $dest"
  say_path
}

target=$(release_target)
case "${BEE_INSTALL_FROM:-}" in
  source) from_source ;;
  release)
    [ -n "$target" ] || fail "no release archive fits $(uname -s) $(uname -m); BEE_INSTALL_FROM=source builds one"
    from_release "$target"
    ;;
  "")
    if [ -n "${BEE_INSTALL_PROFILE:-}" ]; then
      from_source
    elif [ -n "$target" ]; then
      from_release "$target"
    else
      echo "install.sh: no release archive fits $(uname -s) $(uname -m): building from source" >&2
      from_source
    fi
    ;;
  *) fail "BEE_INSTALL_FROM is release or source" ;;
esac
