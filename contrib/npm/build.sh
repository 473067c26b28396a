#!/usr/bin/env bash
# Builds Bee's npm packages from binaries already built (no compiler here):
#
#   contrib/npm/build.sh platform KEY DIR [OUT]   one platform's package, from
#                                                 DIR's bee-hook and beectl
#   contrib/npm/build.sh wrapper [OUT]            the `beectl` package, whose
#                                                 bins run the platform's
#
# KEY is linux-x64-gnu, linux-x64-musl, linux-arm64-gnu, darwin-x64 or
# darwin-arm64. Each package is packed with `npm pack` into OUT (default
# target/npm) and its tarball's path printed. The version is the
# workspace's (Cargo.toml). Nothing is downloaded and no package has an
# install script: npm picks the platform package by its os, cpu and libc.
# The manifests are written by JavaScript in single quotes: `${...}` there is
# a template literal's, not the shell's.
# shellcheck disable=SC2016
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$root/Cargo.toml")
repository=$(sed -n '/^\[workspace.package\]/,/^\[/s/^repository = "\(.*\)"/\1/p' "$root/Cargo.toml")
[[ -n $version && -n $repository ]] || { echo "build.sh: no version or repository in $root/Cargo.toml" >&2; exit 1; }

# Each platform: KEY os cpu libc (libc "-" for none). npm installs only the
# package whose fields match the machine.
platforms=(
  "linux-x64-gnu linux x64 glibc"
  "linux-x64-musl linux x64 musl"
  "linux-arm64-gnu linux arm64 glibc"
  "darwin-x64 darwin x64 -"
  "darwin-arm64 darwin arm64 -"
)
keys=("${platforms[@]%% *}")
# KEY -> its os cpu libc.
platform_fields() {
  local platform
  for platform in "${platforms[@]}"; do
    if [[ ${platform%% *} == "$1" ]]; then
      echo "${platform#* }"
      return 0
    fi
  done
  return 1
}

# Writes `$1/package.json` from the JSON that node prints of the rest.
manifest() {
  local dir=$1
  shift
  node -e "$@" >"$dir/package.json"
}

pack() { # dir out
  mkdir -p "$2"
  local out
  out=$(cd "$2" && pwd)
  (cd "$1" && npm pack --silent --pack-destination "$out") | tail -n 1 | sed "s|^|$out/|"
}

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

stage=$(mktemp -d "${TMPDIR:-/tmp}/bee-npm.XXXXXX")
trap 'rm -rf "$stage"' EXIT

case ${1:-} in
  platform)
    [[ $# -ge 3 ]] || usage
    key=$2 bins=$3 out=${4:-$root/target/npm}
    read -r os cpu libc < <(platform_fields "$key") || { echo "build.sh: unknown platform $key (one of: ${keys[*]})" >&2; exit 2; }
    dir="$stage/beectl-$key"
    mkdir -p "$dir/bin"
    # No beed: beectl is beed when started under that name (the wrapper's
    # `beed` entry does), and a package keeps no link.
    for binary in bee-hook beectl; do
      [[ -x $bins/$binary ]] || { echo "build.sh: $bins/$binary is not an executable file" >&2; exit 1; }
      install -m 0755 "$bins/$binary" "$dir/bin/$binary"
    done
    cp "$root/LICENSE" "$dir/"
    # The newest glibc symbol version the binaries ask for: the wrapper
    # refuses, with words, to run them on an older glibc (npm's libc field
    # says only "glibc").
    glibc=-
    if [[ $libc == glibc ]]; then
      glibc=$(objdump -T "$dir"/bin/* | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n -u | tail -n 1)
      [[ -n $glibc ]] || { echo "build.sh: found no glibc version in the binaries (objdump -T)" >&2; exit 1; }
    fi
    cat >"$dir/README.md" <<README
# beectl-$key

Bee's binaries (beectl, which is also beed, and bee-hook) for $key.
Install the \`beectl\` package, which runs them: \`npx beectl usage\`.
README
    manifest "$dir" '
      const [name, version, repository, os, cpu, libc, glibc] = process.argv.slice(1);
      const manifest = {
        name, version,
        description: `Bee: prebuilt binaries for ${name.slice("beectl-".length)} (used by the beectl package)`,
        license: "Apache-2.0",
        repository: { type: "git", url: `git+${repository}.git` },
        os: [os], cpu: [cpu],
        ...(libc === "-" ? {} : { libc: [libc] }),
        files: ["bin/", "README.md", "LICENSE"],
        preferUnplugged: true,
        ...(glibc === "-" ? {} : { bee: { glibc } }),
      };
      console.log(JSON.stringify(manifest, null, 2));
    ' "beectl-$key" "$version" "$repository" "$os" "$cpu" "$libc" "$glibc"
    pack "$dir" "$out"
    ;;
  wrapper)
    out=${2:-$root/target/npm}
    dir="$stage/beectl"
    mkdir -p "$dir"
    cp -R "$here/wrapper/bin" "$here/wrapper/lib" "$dir/"
    chmod 0755 "$dir"/bin/*.js
    cp "$here/wrapper/README.md" "$root/LICENSE" "$dir/"
    manifest "$dir" '
      const [version, repository, ...keys] = process.argv.slice(1);
      const manifest = {
        name: "beectl", version,
        description: "Bee: what your AI coding agents consumed, from their own logs: usage, cost, limits and hook delivery, offline",
        license: "Apache-2.0",
        repository: { type: "git", url: `git+${repository}.git` },
        homepage: repository,
        keywords: ["claude-code", "codex", "gemini-cli", "ai-agents", "token-usage", "cost"],
        bin: { beectl: "bin/beectl.js", beed: "bin/beed.js", "bee-hook": "bin/bee-hook.js" },
        files: ["bin/", "lib/", "README.md", "LICENSE"],
        engines: { node: ">=16" },
        optionalDependencies: Object.fromEntries(keys.map((key) => [`beectl-${key}`, version])),
      };
      console.log(JSON.stringify(manifest, null, 2));
    ' "$version" "$repository" "${keys[@]}"
    pack "$dir" "$out"
    ;;
  *) usage ;;
esac
