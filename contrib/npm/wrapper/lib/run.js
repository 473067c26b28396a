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

/** This Linux's glibc version ("2.36"), or null: Node reports it only under glibc. */
function glibcVersion() {
  const report = typeof process.report?.getReport === "function" ? process.report.getReport() : null;
  return report?.header?.glibcVersionRuntime ?? null;
}

function isMusl() {
  return glibcVersion() === null;
}

/** Whether version `have` ("2.31") is older than `need` ("2.34"). */
function older(have, need) {
  const [a, b] = [have, need].map((v) => v.split(".").map(Number));
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}

/**
 * The path of `name` in the first installed platform package that runs
 * here: `{ binary }`, or `{ why }` when none does.
 */
function binaryPath(name) {
  const keys = platformKeys();
  if (keys.length === 0) return { why: `no prebuilt binaries exist for ${process.platform}-${process.arch}` };
  const refused = [];
  for (const key of keys) {
    let manifest;
    try {
      manifest = require.resolve(`beectl-${key}/package.json`);
    } catch {
      continue;
    }
    // A glibc build needs the glibc it was linked against, or newer.
    const need = require(manifest).bee?.glibc;
    const have = glibcVersion();
    if (need && have && older(have, need)) {
      refused.push(`beectl-${key} needs glibc ${need} or newer and this system has ${have}`);
      continue;
    }
    return { binary: path.join(path.dirname(manifest), "bin", name) };
  }
  if (refused.length) {
    const static_ = process.arch === "x64"
      ? " (the static build runs on any Linux: npm install --force beectl-linux-x64-musl beside beectl, or contrib/install.sh)"
      : "";
    return { why: `${refused.join("; ")}${static_}` };
  }
  const wanted = keys.map((key) => `beectl-${key}`);
  return { why: `none of ${wanted.join(", ")} is installed (were optional dependencies left out, e.g. --omit=optional?)` };
}

// beed is beectl started under that name: one program for both (npm keeps
// no link in a package).
const PROGRAM = { beed: "beectl" };

module.exports = function run(name) {
  const { binary, why } = binaryPath(PROGRAM[name] ?? name);
  if (!binary) {
    process.stderr.write(`beectl (npm): cannot run ${name}: ${why}. From source: cargo install beectl bee-daemon bee-hook\n`);
    process.exit(1);
  }
  // The binary itself does the work; `beectl setup` finds bee-hook beside
  // it and runs itself as beed, so hooks and the service run the binary,
  // never this script.
  const child = spawnSync(binary, process.argv.slice(2), { stdio: "inherit", argv0: name });
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
