//! Bee as its users install it, without a compiler: the npm packages
//! (`contrib/npm/build.sh`, packed with `npm pack`, installed offline into
//! a fresh prefix), the release archive that `contrib/install.sh` fetches
//! from a local HTTP server and checks against its SHA-256, and the release
//! workflow and scripts under their linters (actionlint, ShellCheck).
//!
//! The binaries packed are this build's: the release workflow packs its
//! release builds with the same scripts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The programs an archive or platform package holds; `beed` is `beectl`.
const SHIPPED: [&str; 2] = ["bee-hook", "beectl"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// This build's bee-hook and beectl (which is beed too, started under that
/// name), stripped as the release profile strips them (packing the test
/// build's debug info would only take time), in a folder of `home`.
fn built_binaries(home: &TestHome) -> PathBuf {
    let dir = home.path().join("built");
    std::fs::create_dir_all(&dir).unwrap();
    for binary in SHIPPED {
        let output = Command::new("strip")
            .arg("--strip-debug")
            .arg("-o")
            .arg(dir.join(binary))
            .arg(bin(binary))
            .output()
            .unwrap();
        succeeded("strip", output);
    }
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn succeeded(what: &str, output: Output) -> String {
    assert!(output.status.success(), "{what}: {:?}\n{}\n{}", output.status, text(&output.stdout), text(&output.stderr));
    text(&output.stdout)
}

/// The npm platform package this machine takes (`contrib/npm/README.md`).
fn npm_platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH, cfg!(target_env = "musl")) {
        ("linux", "x86_64", false) => "linux-x64-gnu",
        ("linux", "x86_64", true) => "linux-x64-musl",
        ("linux", "aarch64", false) => "linux-arm64-gnu",
        ("macos", "x86_64", _) => "darwin-x64",
        ("macos", "aarch64", _) => "darwin-arm64",
        other => panic!("no npm platform package is built for {other:?}"),
    }
}

/// The release archive `contrib/install.sh` fetches on this machine.
fn release_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-musl",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        other => panic!("no release archive is built for {other:?}"),
    }
}

/// A Claude Code transcript of two responses a day apart, whose figures the
/// test knows: input 1,200 + 300, output 40 + 60, cache reads 100 each.
fn two_responses(home: &TestHome) {
    let dir = home.path().join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = [
        claude_response_line(SESSION, "msg_01", "req_01", "2026-11-30T10:00:00.000Z", 1_200, 40),
        claude_response_line(SESSION, "msg_02", "req_02", "2026-12-01T09:30:00.000Z", 300, 60),
    ];
    write_quiet(&dir.join(format!("{SESSION}.jsonl")), &lines.concat());
}

fn assert_two_responses(report: &serde_json::Value) {
    let totals = &report["totals"];
    assert_eq!(totals["responses"], 2, "{report}");
    assert_eq!(totals["tokens"]["inputTokens"], 1_500, "{report}");
    assert_eq!(totals["tokens"]["outputTokens"], 100, "{report}");
    assert_eq!(totals["tokens"]["cacheReadInputTokens"], 200, "{report}");
    assert_eq!(report["rows"].as_array().map(Vec::len), Some(2), "one row a day: {report}");
}

/// Claude Code's status-line input (2.1), without rate limits.
fn status_input() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "hook_event_name": "Status", "session_id": SESSION, "cwd": "/home/dev/app", "version": "2.1.332",
        "transcript_path": format!("/home/dev/.claude/projects/-home-dev-app/{SESSION}.jsonl"),
        "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": "/home/dev/app", "project_dir": "/home/dev/app"},
        "cost": {"total_cost_usd": 0.4567, "total_duration_ms": 120_000, "total_api_duration_ms": 30_000,
                 "total_lines_added": 12, "total_lines_removed": 3},
        "context_window": {"total_input_tokens": 84_000, "total_output_tokens": 2_100, "context_window_size": 200_000,
                           "used_percentage": 42.4, "remaining_percentage": 57.6}
    }))
    .unwrap()
}

/// The host's platform package and the wrapper, packed from this build's
/// binaries with `npm pack`, install with `npm install --offline` into a
/// fresh prefix with an empty cache (so nothing can come from the
/// registry), and their `bin` entries run the binaries: `beectl --version`,
/// `beectl usage --json` on a home whose figures the test wrote, and
/// `bee-hook statusline`, each answering as the binary itself does. The
/// hooks `beectl setup` would write name the platform package's bee-hook,
/// never the Node script.
#[test]
fn npm_packages_install_offline_and_run_the_binaries() {
    let home = TestHome::new();
    let built = built_binaries(&home);
    let packed = home.path().join("packed");
    let platform = npm_platform();
    let build = repo().join("contrib/npm/build.sh");
    let platform_tarball = succeeded(
        "build.sh platform",
        home.command(&build).arg("platform").arg(platform).arg(&built).arg(&packed).output().unwrap(),
    );
    let wrapper_tarball =
        succeeded("build.sh wrapper", home.command(&build).arg("wrapper").arg(&packed).output().unwrap());
    let (platform_tarball, wrapper_tarball) = (platform_tarball.trim(), wrapper_tarball.trim());
    assert!(platform_tarball.ends_with(&format!("beectl-{platform}-0.1.0.tgz")), "{platform_tarball}");
    assert!(wrapper_tarball.ends_with("beectl-0.1.0.tgz"), "{wrapper_tarball}");
    let listing = succeeded("tar", Command::new("tar").arg("tzvf").arg(wrapper_tarball).output().unwrap());
    assert!(!listing.contains("package/bin/beectl\n") && listing.contains("package/bin/beectl.js"), "{listing}");

    let prefix = home.path().join("prefix");
    let cache = home.path().join("empty-npm-cache");
    std::fs::create_dir_all(&prefix).unwrap();
    let mut install = home.command("npm");
    install
        .args(["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", "--cache"])
        .arg(&cache)
        .arg("--prefix")
        .arg(&prefix)
        .arg(wrapper_tarball)
        .arg(platform_tarball);
    succeeded("npm install --offline", install.output().unwrap());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(prefix.join("node_modules/beectl/package.json")).unwrap()).unwrap();
    assert!(manifest.get("scripts").is_none(), "no install script: {manifest}");
    assert_eq!(manifest["optionalDependencies"].as_object().map(|deps| deps.len()), Some(5), "{manifest}");
    let installed = prefix.join(format!("node_modules/beectl-{platform}/bin"));
    let mut held: Vec<_> =
        std::fs::read_dir(&installed).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    held.sort();
    assert_eq!(held, SHIPPED, "one program for beectl and beed");
    for binary in SHIPPED {
        let (ours, theirs) =
            (std::fs::read(built.join(binary)).unwrap(), std::fs::read(installed.join(binary)).unwrap());
        assert!(ours == theirs, "{binary} installed whole");
    }

    let bins = prefix.join("node_modules/.bin");
    let version = succeeded("beectl --version", home.command(bins.join("beectl")).arg("--version").output().unwrap());
    assert_eq!(version, succeeded("beectl --version", home.command(bin("beectl")).arg("--version").output().unwrap()));
    assert!(version.contains("0.1.0"), "{version}");
    // The wrapper's beed is beectl started as beed: beed's own answers.
    let beed = succeeded("beed --version", home.command(bins.join("beed")).arg("--version").output().unwrap());
    assert_eq!(beed, succeeded("beed --version", home.command(bin("beed")).arg("--version").output().unwrap()));
    let refused = home.command(bins.join("beed")).arg("--no-such-flag").output().unwrap();
    assert_eq!(refused.status.code(), Some(4), "beed's status for a refused argument");
    assert!(text(&refused.stderr).contains("Usage: beed"), "{}", text(&refused.stderr));

    two_responses(&home);
    let usage = succeeded(
        "beectl usage",
        home.command(bins.join("beectl")).args(["usage", "--json", "--until", "2026-12-07"]).output().unwrap(),
    );
    assert_two_responses(&serde_json::from_str(&usage).unwrap());
    let direct = succeeded(
        "beectl usage",
        home.command(bin("beectl")).args(["usage", "--json", "--until", "2026-12-07"]).output().unwrap(),
    );
    assert_eq!(usage, direct, "{}", diff(&direct, &usage));

    let (line, _) = home.hook_with(home.command(bins.join("bee-hook")), &["statusline"], &status_input());
    let line = succeeded("bee-hook statusline", line);
    assert!(line.contains("Sonnet 4.5"), "{line}");
    let direct = succeeded("bee-hook statusline", home.hook(&["statusline"], &status_input()).0);
    assert_eq!(line, direct);

    // A refused command keeps its status through the wrapper.
    let refused = home.command(bins.join("beectl")).args(["usage", "--by", "nope"]).output().unwrap();
    let direct = home.command(bin("beectl")).args(["usage", "--by", "nope"]).output().unwrap();
    assert_eq!(refused.status.code(), direct.status.code());
    assert_ne!(refused.status.code(), Some(0));

    // A glibc build says which glibc it needs; on an older one the wrapper
    // refuses with words instead of the loader's error.
    let platform_manifest = prefix.join(format!("node_modules/beectl-{platform}/package.json"));
    let recorded = std::fs::read_to_string(&platform_manifest).unwrap();
    let mut manifest: serde_json::Value = serde_json::from_str(&recorded).unwrap();
    if platform.ends_with("-gnu") {
        let glibc = manifest["bee"]["glibc"].as_str().unwrap_or_default().to_owned();
        assert!(glibc.starts_with("2.") && glibc[2..].parse::<u32>().is_ok(), "{manifest}");
        manifest["bee"]["glibc"] = "99.0".into();
        std::fs::write(&platform_manifest, manifest.to_string()).unwrap();
        let refused = home.command(bins.join("beectl")).arg("--version").output().unwrap();
        assert_eq!(refused.status.code(), Some(1));
        let said = text(&refused.stderr);
        assert!(said.contains("needs glibc 99.0 or newer and this system has 2."), "{said}");
        assert!(refused.stdout.is_empty());
        std::fs::write(&platform_manifest, recorded).unwrap();
    }

    let setup = succeeded(
        "beectl setup --dry-run",
        home.command(bins.join("beectl")).args(["setup", "--dry-run"]).output().unwrap(),
    );
    let hook = installed.join("bee-hook");
    assert!(setup.contains(&hook.display().to_string()), "hooks run the platform package's binary: {setup}");
    assert!(!setup.contains("bee-hook.js"), "{setup}");

    // Set up where no service manager can be reached, beed is started
    // directly: the package's beectl, run as beed. The unit systemd would
    // run names the same (`@PROGRAM NAME`), and systemd reads it.
    let _stops = StopsBeed(&home);
    let setup = home
        .command(bins.join("beectl"))
        .args(["setup", "--service", "systemd"])
        .env("XDG_RUNTIME_DIR", home.path().join("no-runtime"))
        .env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", home.path().join("no-bus").display()))
        .env_remove("XDG_CONFIG_HOME")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&succeeded("beectl setup", setup)).unwrap();
    assert_eq!(report["service"]["state"], "beed", "{report}");
    let program = installed.join("beectl");
    let unit_path = home.path().join(".config/systemd/user/beed.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    assert!(unit.contains(&format!("\nExecStart=@{} beed\n", program.display())), "{unit}");
    let verify = Command::new("systemd-analyze").arg("verify").arg(&unit_path).output().unwrap();
    let complaints = text(&verify.stderr);
    assert!(!complaints.contains("beed.service"), "systemd-analyze verify: {complaints}");
    let pid = report["service"]["pid"].as_u64().unwrap();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(exe, program.canonicalize().unwrap(), "beed is the package's beectl");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert_eq!(cmdline.split(|b| *b == 0).next(), Some(&b"beed"[..]), "started under the name beed");
    // It serves the home's socket.
    let status = home.beectl(&["daemon", "status", "--json"]);
    assert_eq!(status.status.code(), Some(0), "{}", text(&status.stdout));
    assert!(text(&status.stdout).contains(&format!("\"pid\":{pid}")), "{}", text(&status.stdout));
    let undone = home.command(bins.join("beectl")).args(["setup", "--undo"]).output().unwrap();
    let undone: serde_json::Value = serde_json::from_str(&succeeded("beectl setup --undo", undone)).unwrap();
    assert_eq!(undone["service"]["state"], "stopped", "{undone}");
}

/// A server of the files in `dir` on loopback, as a release's download URL
/// would serve them (404 for anything else); its address.
fn serve(dir: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = String::new();
            if BufReader::new(&stream).read_line(&mut request).is_err() {
                continue;
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/');
            let file = (!path.contains("..")).then(|| std::fs::read(dir.join(path)).ok()).flatten();
            let _ = match file {
                Some(body) => stream
                    .write_all(
                        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
                            .as_bytes(),
                    )
                    .and_then(|()| stream.write_all(&body)),
                None => stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
            };
        }
    });
    address
}

fn install_script(home: &TestHome, release: &str, dest: &Path) -> Output {
    home.command("sh")
        .arg(repo().join("contrib/install.sh"))
        .env("BEE_RELEASE_URL", release)
        .env("BEE_INSTALL_DIR", dest)
        .env_remove("BEE_INSTALL_FROM")
        .env_remove("BEE_INSTALL_PROFILE")
        .output()
        .unwrap()
}

/// `contrib/install.sh` without a compiler: it fetches this platform's
/// archive (made by `contrib/release/archive.sh`, as the release makes it)
/// and its SHA-256 from a local HTTP server, checks one against the other,
/// and installs the three binaries, which run. A tampered archive, a
/// checksum that is not one and a missing checksum are each refused with
/// words, and nothing is installed (an earlier install stays as it was).
#[test]
fn install_script_installs_a_checked_release_archive_and_refuses_a_wrong_one() {
    let home = TestHome::new();
    let target = release_target();
    let archive_name = format!("bee-{target}.tar.gz");
    let good = home.path().join("release/good");
    let built = built_binaries(&home);
    let archive = succeeded(
        "archive.sh",
        home.command(repo().join("contrib/release/archive.sh")).arg(target).arg(&built).arg(&good).output().unwrap(),
    );
    assert_eq!(archive.trim(), good.join(&archive_name).display().to_string());
    let checksum = std::fs::read_to_string(good.join(format!("{archive_name}.sha256"))).unwrap();
    assert!(checksum.ends_with(&format!("  {archive_name}\n")) && checksum.find(' ') == Some(64), "{checksum}");

    let dest = home.path().join("installed");
    let output = install_script(&home, &serve(good.clone()), &dest);
    let said = succeeded("install.sh", output);
    assert!(said.contains(&format!("({target}, checksum verified)")), "{said}");
    let listing = succeeded("tar", Command::new("tar").arg("tzvf").arg(good.join(&archive_name)).output().unwrap());
    assert!(listing.contains(&format!("bee-{target}/beed -> beectl\n")), "{listing}");
    for binary in SHIPPED {
        assert!(std::fs::read(dest.join(binary)).unwrap() == std::fs::read(built.join(binary)).unwrap(), "{binary}");
    }
    // beed is a link to beectl, as in the archive: one program on disk.
    assert_eq!(std::fs::read_link(dest.join("beed")).unwrap(), Path::new("beectl"));
    for binary in ["beed", "bee-hook", "beectl"] {
        let version = succeeded(binary, Command::new(dest.join(binary)).arg("--version").output().unwrap());
        assert!(version.starts_with(&format!("{binary} 0.1.0")), "{binary}: {version}");
    }

    // A mirror that serves a different archive under the real checksum.
    let tampered = home.path().join("release/tampered");
    std::fs::create_dir_all(&tampered).unwrap();
    let mut bytes = std::fs::read(good.join(&archive_name)).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(tampered.join(&archive_name), &bytes).unwrap();
    std::fs::copy(good.join(format!("{archive_name}.sha256")), tampered.join(format!("{archive_name}.sha256")))
        .unwrap();
    // A checksum file that holds no checksum.
    let garbled = home.path().join("release/garbled");
    std::fs::create_dir_all(&garbled).unwrap();
    std::fs::copy(good.join(&archive_name), garbled.join(&archive_name)).unwrap();
    std::fs::write(garbled.join(format!("{archive_name}.sha256")), "<html>not found</html>\n").unwrap();
    // No checksum at all.
    let unchecked = home.path().join("release/unchecked");
    std::fs::create_dir_all(&unchecked).unwrap();
    std::fs::copy(good.join(&archive_name), unchecked.join(&archive_name)).unwrap();

    let earlier = home.path().join("earlier");
    std::fs::create_dir_all(&earlier).unwrap();
    std::fs::write(earlier.join("beectl"), "an earlier install\n").unwrap();
    for (release, words) in
        [(tampered, "checksum mismatch"), (garbled, "holds no SHA-256"), (unchecked, "never installed unchecked")]
    {
        let fresh = home.path().join(format!("fresh-{}", release.file_name().unwrap().to_string_lossy()));
        for dest in [&fresh, &earlier] {
            let output = install_script(&home, &serve(release.clone()), dest);
            assert_eq!(output.status.code(), Some(1), "{release:?}: {}", text(&output.stderr));
            let stderr = text(&output.stderr);
            assert!(stderr.contains(words) && stderr.contains("nothing installed"), "{stderr}");
        }
        assert!(!fresh.exists(), "{release:?}: nothing installed");
        assert_eq!(std::fs::read_to_string(earlier.join("beectl")).unwrap(), "an earlier install\n");
        assert_eq!(std::fs::read_dir(&earlier).unwrap().count(), 1, "{release:?}: nothing beside the earlier install");
    }
}

/// The release workflow passes actionlint (which runs ShellCheck on its
/// `run:` steps), and the install and packaging scripts pass ShellCheck:
/// both pinned in `tests/python/lint` (`.ci/run` installs them).
#[test]
fn the_release_workflow_and_scripts_pass_their_linters() {
    let tools = repo().join("tests/python/lint/.venv/bin");
    assert!(tools.join("actionlint").is_file(), "actionlint is not installed: run .ci/run (tests/python/lint)");
    let path = format!("{}:{}", tools.display(), std::env::var("PATH").unwrap_or_default());
    let workflows: Vec<PathBuf> = std::fs::read_dir(repo().join(".github/workflows"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yml"))
        .collect();
    assert!(!workflows.is_empty());
    let lint = Command::new(tools.join("actionlint"))
        .args(&workflows)
        .env("PATH", &path)
        .current_dir(repo())
        .output()
        .unwrap();
    succeeded("actionlint", lint);
    let scripts = ["contrib/install.sh", "contrib/npm/build.sh", "contrib/release/archive.sh"];
    let check = Command::new(tools.join("shellcheck")).args(scripts).current_dir(repo()).output().unwrap();
    succeeded("shellcheck", check);
}
