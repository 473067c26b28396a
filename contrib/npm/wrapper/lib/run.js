// Runs one of Bee's binaries from the platform package npm installed beside
// this one (an optional dependency chosen by npm from its os, cpu and libc).
// No install script and no download: the binary is already on disk, or
// this says which package is missing.
"use strict";

const { spawnSync } = require("node:child_process");
const os = require("node:os");
const path = require("node:path");

/** The platform packages that could serve this machine, best first. */
function platformKeys() {
  const { platform, arch } = process;
  if (platform === "linux" && arch === "x64") {
    // The musl build is static: it runs on glibc systems too.
    return isMusl() ? ["linux-x64-musl"] : ["linux-x64-gnu", "linux-x64-musl"];
  }
  if (platform === "linux" && arch === "arm64") return isMusl() ? [] : ["linux-arm64-gnu"];
  if (platform === "darwin" && (arch === "x64" || arch === "arm64")) return [`darwin-${arch}`];
  return [];
}

/** Whether this Linux runs on musl: Node reports glibc's version only under glibc. */
function isMusl() {
  const report = typeof process.report?.getReport === "function" ? process.report.getReport() : null;
  return !report?.header?.glibcVersionRuntime;
}

/** The path of `name` in the first installed platform package, or null. */
function binaryPath(name) {
  for (const key of platformKeys()) {
    let manifest;
    try {
      manifest = require.resolve(`beectl-${key}/package.json`);
    } catch {
      continue;
    }
    return path.join(path.dirname(manifest), "bin", name);
  }
  return null;
}

module.exports = function run(name) {
  const binary = binaryPath(name);
  if (binary === null) {
    const wanted = platformKeys().map((key) => `beectl-${key}`);
    const why = wanted.length
      ? `none of ${wanted.join(", ")} is installed (were optional dependencies left out, e.g. --omit=optional or --no-optional?)`
      : `no prebuilt binaries exist for ${process.platform}-${process.arch}`;
    process.stderr.write(`beectl (npm): cannot run ${name}: ${why}. From source: cargo install beectl bee-daemon bee-hook\n`);
    process.exit(1);
  }
  // The binary itself does the work; `beectl setup` finds bee-hook and
  // beed beside it, so hooks run the binary, never this script.
  const child = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
  if (child.error) {
    process.stderr.write(`beectl (npm): cannot run ${binary}: ${child.error.message}\n`);
    process.exit(1);
  }
  if (child.signal) {
    // The status a shell gives a process its signal ended (141 for a
    // closed pipe's SIGPIPE, which Node itself ignores).
    process.exit(128 + (os.constants.signals[child.signal] ?? 0));
  }
  process.exit(child.status ?? 1);
};
