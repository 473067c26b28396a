//! The end-to-end harness: a temp `BEE_HOME`, the real binaries, a daemon that
//! is always stopped, envelopes as Claude Code sends them, and assertions that
//! print a readable diff.
//!
//! Tests never touch the real home: every process gets `HOME` and `BEE_HOME`
//! pointing into its own temp directory, and `BEE_SOCKET` removed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A realistic, fixed session id.
pub const SESSION: &str = "3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c";
/// A second session.
pub const OTHER_SESSION: &str = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";

/// Path of a workspace binary, built once per test process.
pub fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        // Binaries of other workspace crates are not built for this crate's
        // tests by cargo itself; build them (a no-op when fresh).
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test> -> target/<profile>
        let dir = exe.parent().and_then(Path::parent).expect("target profile dir").to_owned();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "--quiet", "--bins", "-p", "bee-daemon", "-p", "bee-hook", "-p", "beectl"]);
        // Benchmarks run from target/release and measure release binaries.
        if dir.file_name().is_some_and(|name| name == "release") {
            build.arg("--release");
        }
        assert!(build.status().expect("run cargo build").success(), "building the binaries failed");
        dir
    });
    dir.join(name)
}

/// Marks files immutable (chattr +i) so even root cannot write them; undone on drop.
pub struct ImmutableFiles(Vec<std::path::PathBuf>);

impl ImmutableFiles {
    pub fn new(paths: &[std::path::PathBuf]) -> ImmutableFiles {
        for path in paths {
            let status = std::process::Command::new("chattr").arg("+i").arg(path).status().expect("run chattr");
            assert!(
                status.success(),
                "chattr +i {} failed: this test needs e2fsprogs and a filesystem with attributes",
                path.display()
            );
        }
        ImmutableFiles(paths.to_vec())
    }
}

impl Drop for ImmutableFiles {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::process::Command::new("chattr").arg("-i").arg(path).status();
        }
    }
}

/// Starts beed on `home` expecting it to refuse (a damaged store): its exit
/// code and what it said. A beed still running after 20 s is stopped and
/// the test fails.
pub fn refused_start(home: &TestHome) -> (Option<i32>, String) {
    let log = home.path().join("refused-beed.log");
    let mut child = home
        .command(bin("beed"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).expect("beed's log"))
        .spawn()
        .expect("start beed");
    let exited = eventually(Duration::from_secs(20), || matches!(child.try_wait(), Ok(Some(_))));
    if !exited {
        let _ = child.kill();
    }
    let status = child.wait().expect("beed's exit");
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(exited, "beed started on a damaged store:\n{said}");
    (status.code(), said)
}

/// An agent's side of a question: a WebSocket server on loopback waiting
/// for one answer. Its port, and the answer's text when it comes.
pub fn waiting_agent() -> (u16, std::sync::mpsc::Receiver<String>) {
    use tokio_tungstenite::tungstenite::{self, Message};
    let agent = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = agent.local_addr().map(|addr| addr.port()).unwrap_or(0);
    let (answered, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok((tcp, _)) = agent.accept() else { return };
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(20)));
        let Ok(mut socket) = tungstenite::accept(tcp) else { return };
        while let Ok(message) = socket.read() {
            if let Message::Text(text) = message {
                let _ = answered.send(text.to_string());
                return;
            }
        }
    });
    (port, answer)
}

pub mod bench_ledger;
pub mod every_agent;
pub mod providers;

/// A temp directory used as `BEE_HOME` (and `HOME`) for one test.
pub struct TestHome {
    dir: tempfile::TempDir,
}

impl Default for TestHome {
    fn default() -> Self {
        Self::new()
    }
}

/// Every variable that moves an agent's records (or Bee's idea of whose
/// run it is) elsewhere than under `HOME`: a test home clears them all, as
/// the side-by-side script does (a test holds the two lists equal).
pub const AGENT_PLACES: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "BEE_CLAUDE_PROJECTS",
    "BEE_CODEX_SESSIONS",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "QWEN_RUNTIME_DIR",
    "PI_CODING_AGENT_DIR",
    "OPENCODE_DB",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "COPILOT_HOME",
    "COPILOT_OTEL_FILE_EXPORTER_PATH",
    "KIMI_SHARE_DIR",
    "OPENCLAW_STATE_DIR",
    "GOOSE_PATH_ROOT",
    "HERMES_HOME",
    "CRUSH_GLOBAL_DATA",
    "CONTINUE_GLOBAL_DIR",
    "OPENCLAW_HOME",
    "OPENCLAW_CONFIG_PATH",
    "OPENCLAW_PROFILE",
    "OPENCLAW_AGENT_DIR",
    "OPENCLAW_WORKSPACE_DIR",
    "JUNIE_HOME",
    "CLINE_DIR",
    "CLINE_DATA_DIR",
    "CLINE_SESSION_DATA_DIR",
    "AIDER_ANALYTICS_LOG",
    "MUX_ROOT",
    "XUM_ROOT",
    "MEEPT_HOME",
    "REASONIX_STATE_HOME",
    "REASONIX_HOME",
    "LINGTAI_HOME",
    "LINGTAI_TUI_HOME",
    "KIMI_CODE_HOME",
    "MIMOCODE_HOME",
    "MIMOCODE_DB",
    "OPENCLAUDE_CONFIG_DIR",
    "PI_CONFIG_DIR",
    "VIBE_HOME",
    "GEMINI_TELEMETRY_OUTFILE",
    "KILO_DB",
    "KIRO_HOME",
    "XDG_STATE_HOME",
    "BEE_RUN_PROVIDER",
];

/// Stops the beed of a home when dropped, whatever the test's outcome
/// (one it started, or one a command it ran started).
pub struct StopsBeed<'a>(pub &'a TestHome);

impl Drop for StopsBeed<'_> {
    fn drop(&mut self) {
        let _ = self.0.beectl(&["daemon", "stop"]);
    }
}

impl TestHome {
    pub fn new() -> TestHome {
        TestHome { dir: tempfile::Builder::new().prefix("bee-test-").tempdir().expect("temp dir") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn bee_dir(&self) -> PathBuf {
        self.path().join(".bee")
    }

    pub fn socket(&self) -> PathBuf {
        self.bee_dir().join("run").join("beed.sock")
    }

    pub fn store(&self) -> PathBuf {
        self.bee_dir().join("usage").join("delivery-v1")
    }

    pub fn spool_dir(&self) -> PathBuf {
        self.bee_dir().join("spool")
    }

    /// Writes `contents` to `name` under the home and returns its path.
    pub fn file(&self, name: &str, contents: &[u8]) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, contents).expect("write test file");
        path
    }

    /// A command for `program` confined to this home.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env("HOME", self.path())
            .env("BEE_HOME", self.path())
            .env_remove("BEE_SOCKET")
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .env_remove("BEE_HOOK_NESTED")
            .env_remove("BEE_HOOK_DEBUG")
            .env_remove("LISTEN_FDS")
            .env_remove("LISTEN_PID")
            .env_remove("NOTIFY_SOCKET")
            .env("BEE_LOG", "info")
            // Usage days are local days: the tests' zone is fixed.
            .env("TZ", "UTC")
            .env_remove("COLUMNS")
            .env_remove("NO_COLOR");
        for name in AGENT_PLACES {
            command.env_remove(name);
        }
        command
    }

    /// This home's stores, as the exporter reads them.
    pub fn export_stores(&self) -> bee_daemon::export::Stores {
        bee_daemon::export::Stores {
            ledger: self.bee_dir().join("usage/ledger-v1"),
            delivery: self.bee_dir().join("usage/delivery-v1"),
            events: self.bee_dir().join("usage/events-v1"),
            manifests: Vec::new(),
            spool: self.spool_dir(),
            socket: self.socket(),
        }
    }

    /// Runs `beectl args…`.
    pub fn beectl(&self, args: &[&str]) -> Output {
        self.command(bin("beectl")).args(args).stdin(Stdio::null()).output().expect("run beectl")
    }

    /// Runs `bee-hook args…` with `stdin`, returning its output and wall time.
    pub fn hook(&self, args: &[&str], stdin: &[u8]) -> (Output, Duration) {
        self.hook_with(self.command(bin("bee-hook")), args, stdin)
    }

    /// Like [`TestHome::hook`] with a prepared command (extra env and so on).
    ///
    /// As Claude Code does for every hook process, `CLAUDE_CODE_SESSION_ID`
    /// is set to the envelope's session, unless the command sets it itself
    /// (to `""` for a hook run by another harness).
    pub fn hook_with(&self, mut command: Command, args: &[&str], stdin: &[u8]) -> (Output, Duration) {
        let explicit = command.get_envs().any(|(key, value)| key == "CLAUDE_CODE_SESSION_ID" && value.is_some());
        let session = serde_json::from_slice::<serde_json::Value>(stdin)
            .ok()
            .and_then(|envelope| envelope.get("session_id").and_then(|s| s.as_str()).map(str::to_owned));
        if let (false, Some(session)) = (explicit, session) {
            command.env("CLAUDE_CODE_SESSION_ID", session);
        }
        let started = Instant::now();
        let mut child = command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn bee-hook");
        let mut pipe = child.stdin.take().expect("stdin");
        let input = stdin.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
        let output = child.wait_with_output().expect("wait bee-hook");
        let elapsed = started.elapsed();
        feeder.join().expect("stdin feeder");
        (output, elapsed)
    }

    /// `beectl delivery report --store <default store> extra…`, parsed.
    pub fn report(&self, extra: &[&str]) -> (i32, serde_json::Value) {
        let store = self.store();
        let mut args = vec!["delivery", "report", "--store", store.to_str().expect("utf-8 path")];
        args.extend_from_slice(extra);
        let output = self.beectl(&args);
        (output.status.code().unwrap_or(-1), parse_json_line(&output.stdout))
    }

    /// Every regular file below `.bee/`, with its bytes.
    pub fn bee_files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        files_under(&self.bee_dir())
    }
}

/// Every regular file below `root`, with its bytes.
pub fn files_under(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                // A file beed removed between the listing and the read
                // (a spool it claimed and took) is no file any more.
                match std::fs::read(&path) {
                    Ok(bytes) => found.push((path.clone(), bytes)),
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                    Err(err) => panic!("read {}: {err}", path.display()),
                }
            }
        }
    }
    found
}

impl TestHome {
    /// Starts beed on this home and waits until it answers.
    pub fn start_daemon(&self) -> Daemon {
        Daemon::start(self, self.command(bin("beed")))
    }

    /// Starts beed with extra arguments (`--http 127.0.0.1:0`, …).
    pub fn start_daemon_with(&self, args: &[&str]) -> Daemon {
        let mut command = self.command(bin("beed"));
        command.args(args);
        Daemon::start(self, command)
    }

    /// Starts beed as the release archives and npm packages ship it:
    /// beectl started under the name `beed`.
    pub fn start_shipped_daemon_with(&self, args: &[&str]) -> Daemon {
        use std::os::unix::process::CommandExt;
        let mut command = self.command(bin("beectl"));
        command.arg0("beed").args(args);
        Daemon::start(self, command)
    }
}

/// A running beed; stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Daemon {
    child: Option<Child>,
    socket: PathBuf,
    log: PathBuf,
}

impl Daemon {
    /// Spawns `command` (a beed command) and waits for its socket.
    pub fn start(home: &TestHome, mut command: Command) -> Daemon {
        let log = home.path().join(format!("beed-{}.log", uuid::Uuid::new_v4().simple()));
        let log_file = std::fs::File::create(&log).expect("daemon log");
        let child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log_file).spawn().expect("spawn beed");
        let mut daemon = Daemon { child: Some(child), socket: home.socket(), log };
        daemon.wait_ready();
        daemon
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!("beed exited early with {status}:\n{}", self.log());
            }
            if self.socket.exists() && UnixStream::connect(&self.socket).is_ok() && self.log().contains("beed ready") {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("beed did not become ready:\n{}", self.log());
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().map(|c| c.id() as i32).expect("running daemon")
    }

    /// The loopback listener's address, as beed logged it.
    pub fn http_addr(&self) -> String {
        self.logged_addr("dashboard and event API on loopback", "http=")
    }

    /// The OTLP receiver's address, as beed logged it.
    pub fn otlp_addr(&self) -> String {
        self.logged_addr("OTLP/HTTP receiver on loopback", "otlp=")
    }

    fn logged_addr(&self, line: &str, field: &str) -> String {
        let log = self.log();
        let line = log.lines().find(|l| l.contains(line)).unwrap_or_else(|| panic!("beed logged no {field}:\n{log}"));
        line.split(field).nth(1).and_then(|rest| rest.split_whitespace().next()).expect("address").to_owned()
    }

    /// The loopback listener's read secret (none when reads are open).
    pub fn http_secret(&self) -> Option<String> {
        let path = self.socket.parent()?.join(bee_proto::events::HTTP_TOKEN_FILE);
        std::fs::read_to_string(path).ok().map(|text| text.trim().to_owned())
    }

    /// The header a reader of the loopback listener presents (empty when reads are open).
    pub fn read_header(&self) -> String {
        self.http_secret().map(|secret| format!("Authorization: Bearer {secret}\r\n")).unwrap_or_default()
    }

    /// What beed logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn signal(&self, signal: rustix::process::Signal) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.pid()) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }

    /// Freezes beed (SIGSTOP): it accepts nothing until [`Daemon::resume`].
    pub fn freeze(&self) {
        self.signal(rustix::process::Signal::STOP);
    }

    pub fn resume(&self) {
        self.signal(rustix::process::Signal::CONT);
    }

    /// SIGTERM and wait; returns the exit code.
    pub fn stop(mut self) -> Option<i32> {
        self.terminate()
    }

    /// SIGKILL and wait.
    pub fn kill9(mut self) {
        self.signal(rustix::process::Signal::KILL);
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    fn terminate(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        self.signal_child(&child, rustix::process::Signal::CONT);
        self.signal_child(&child, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    fn signal_child(&self, child: &Child, signal: rustix::process::Signal) {
        if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// A `UserPromptSubmit` envelope as Claude Code writes it.
pub fn prompt_envelope(session: &str, prompt: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "session_id": session,
        "transcript_path": format!("/home/dev/.claude/projects/-home-dev-app/{session}.jsonl"),
        "cwd": "/home/dev/app",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }))
    .expect("envelope json")
}

/// One Claude Code response line in `session` at `timestamp` (RFC 3339),
/// as Claude Code writes it: compact JSON, newline included.
pub fn claude_response_line(
    session: &str,
    message: &str,
    request: &str,
    timestamp: &str,
    input: u64,
    output: u64,
) -> String {
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/dev/app",
        "sessionId": session, "version": "2.0.14", "type": "assistant",
        "timestamp": timestamp, "requestId": request,
        "message": {"id": message, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": "Working on it; the usage of this API is fine."}],
                    "usage": {"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 100, "output_tokens": output}}
    })
    .to_string()
        + "\n"
}

/// Parses one JSON document followed by exactly one newline.
pub fn parse_json_line(stdout: &[u8]) -> serde_json::Value {
    let text = std::str::from_utf8(stdout).expect("stdout is UTF-8");
    assert!(text.ends_with('\n') && text.matches('\n').count() == 1, "not one JSON line: {text:?}");
    serde_json::from_str(text.trim_end()).unwrap_or_else(|err| panic!("not JSON ({err}): {text}"))
}

/// Asserts two JSON values are equal, printing a line diff of their pretty forms.
#[track_caller]
pub fn assert_json_eq(actual: &serde_json::Value, expected: &serde_json::Value) {
    if actual != expected {
        let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
        panic!("JSON differs (- expected, + actual):\n{}", diff(&pretty(expected), &pretty(actual)));
    }
}

/// A line diff of two texts (`-` expected, `+` actual).
pub fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual).unified_diff().context_radius(3).to_string()
}

/// Asserts `actual` is the golden file `tests/golden/<name>`, with a diff
/// when it is not; `BEE_BLESS=1` writes it instead (review the change).
#[track_caller]
pub fn assert_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden").join(name);
    if std::env::var_os("BEE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("golden dir")).expect("golden dir");
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        panic!(
            "{name} differs from its golden file (- golden, + actual; BEE_BLESS=1 rewrites it):\n{}",
            diff(&expected, actual)
        );
    }
}

/// Waits until `check` holds, for at most `limit`.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// Whether `haystack` contains `needle`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// A hook receipt: event id and outcome.
pub type Receipt = (String, String);

/// The receipt a hook run with `BEE_HOOK_DEBUG=1` printed: event id and what
/// became of the observation ("accepted by beed", "spooled (…)", …).
pub fn receipt(stderr: &[u8]) -> Option<Receipt> {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().find_map(|line| line.strip_prefix("bee-hook: observation "))?;
    let (id, outcome) = line.split_once(' ')?;
    Some((id.to_owned(), outcome.to_owned()))
}

impl TestHome {
    /// Fires `bee-hook prompt --surface SURFACE --block BLOCK` with receipts on.
    pub fn fire_with_receipt(
        &self,
        surface: &str,
        block: &Path,
        envelope: &[u8],
    ) -> (Output, Option<(String, String)>) {
        let mut command = self.command(bin("bee-hook"));
        command.env("BEE_HOOK_DEBUG", "1");
        let (output, _) = self.hook_with(
            command,
            &["prompt", "--surface", surface, "--block", block.to_str().expect("utf-8")],
            envelope,
        );
        let receipt = receipt(&output.stderr);
        (output, receipt)
    }

    /// `beectl delivery read` of `event` in the default store.
    pub fn read_event(&self, event: &str) -> (i32, serde_json::Value) {
        let store = self.store();
        let output = self.beectl(&["delivery", "read", "--store", store.to_str().expect("utf-8"), "--event", event]);
        (output.status.code().unwrap_or(-1), parse_json_line(&output.stdout))
    }
}

/// Sends one raw HTTP/1.1 request over the socket and returns (status, head, body).
pub fn raw_http(socket: &Path, request: &[u8]) -> (u16, String, Vec<u8>) {
    let stream = UnixStream::connect(socket).expect("connect to beed");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    exchange(stream, request)
}

/// Sends one raw HTTP/1.1 request over TCP to `addr` and returns (status, head, body).
pub fn tcp_http(addr: &str, request: &[u8]) -> (u16, String, Vec<u8>) {
    let stream = std::net::TcpStream::connect(addr).expect("connect to beed's listener");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    exchange(stream, request)
}

/// Writes `request`, reads the answer to the end (`connection: close`);
/// any stream (a TLS one too). A server may answer and close before the
/// whole request is sent (413 for a body declared too large): the send then
/// fails with a broken pipe or a reset, and the answer is still read, as an
/// HTTP client does.
pub fn exchange(mut stream: impl std::io::Read + Write, request: &[u8]) -> (u16, String, Vec<u8>) {
    if let Err(err) = stream.write_all(request) {
        use std::io::ErrorKind::{BrokenPipe, ConnectionReset};
        assert!(matches!(err.kind(), BrokenPipe | ConnectionReset), "send request: {err}");
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").map_or(answer.len(), |p| p + 4);
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head, answer[split..].to_vec())
}

/// A `GET path` request with `connection: close` and extra header lines.
pub fn get_request(path: &str, host: &str, extra_headers: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nhost: {host}\r\n{extra_headers}connection: close\r\n\r\n").into_bytes()
}

/// A WebSocket upgrade of `/stream`, as a browser or the reference client
/// sends it, with extra header lines (a secret, an Origin).
pub fn stream_upgrade_request(host: &str, extra_headers: &str) -> Vec<u8> {
    format!(
        "GET /stream HTTP/1.1\r\nHost: {host}\r\n{extra_headers}Connection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    .into_bytes()
}

/// A `POST path` request with `body`, `connection: close`, and extra header lines.
pub fn post_request(path: &str, extra_headers: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: beed\r\ncontent-type: application/json\r\n{extra_headers}content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

impl TestHome {
    /// Complete lines waiting in the live delivery spool.
    pub fn spool_lines(&self) -> usize {
        let path = self.spool_dir().join("delivery-v1.jsonl");
        std::fs::read(path).map(|b| b.iter().filter(|&&c| c == b'\n').count()).unwrap_or(0)
    }

    /// Waits until a running beed has taken every spooled observation.
    ///
    /// A hook that missed its deadline under load spools its observation;
    /// once the spool is empty, everything the finished hooks observed is in
    /// the store (late appends and spooled copies count once).
    pub fn settle(&self) {
        let drained = eventually(Duration::from_secs(15), || {
            self.spool_lines() == 0
                && std::fs::read_dir(self.spool_dir())
                    .map(|entries| entries.flatten().all(|e| !e.file_name().to_string_lossy().contains(".claimed-")))
                    .unwrap_or(true)
        });
        assert!(drained, "beed did not ingest the spool");
    }
}

/// Whether a receipt outcome means the observation is on its way to the store.
pub fn taken(outcome: &str) -> bool {
    outcome == "accepted by beed" || outcome.starts_with("spooled")
}

/// Median, p99, min and max of a set of durations, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    pub median: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(samples: &[Duration]) -> Spread {
        let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
        Spread { median: at(0.5), p99: at(0.99), min: ms[0], max: ms[ms.len() - 1] }
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "median {:.3} ms, p99 {:.3} ms (min {:.3}, max {:.3})", self.median, self.p99, self.min, self.max)
    }
}

/// Marks a provider log quiet (last written ten minutes ago), as a finished
/// session's is: its last response is final.
pub fn make_quiet(path: &Path) {
    let file = std::fs::File::options().write(true).open(path).expect("open the log");
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(600)).expect("set its time");
}

/// Writes a provider log (and its directories) and makes it quiet.
pub fn write_quiet(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().expect("a log in a directory")).expect("the log's directory");
    std::fs::write(path, body).expect("write the log");
    make_quiet(path);
}

/// Runs `cat` and `hook` one after the other, `runs` times: both see the
/// same machine at the same moment.
pub fn interleave(
    runs: usize,
    cat: &dyn Fn() -> Duration,
    hook: &dyn Fn() -> Duration,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut cats = Vec::with_capacity(runs);
    let mut hooks = Vec::with_capacity(runs);
    for _ in 0..runs {
        cats.push(cat());
        hooks.push(hook());
    }
    (cats, hooks)
}

/// Prints both spreads and what the hook adds over `cat`, as a difference
/// and as a ratio.
#[allow(clippy::print_stdout)]
pub fn report_against_cat(label: &str, cat: &[Duration], hook: &[Duration]) {
    let (c, h) = (Spread::of(cat), Spread::of(hook));
    println!("{label}:");
    println!("  cat      {c}");
    println!("  bee-hook {h}");
    println!(
        "  added over cat: median {:+.3} ms, p99 {:+.3} ms; ratio hook/cat: median {:.2}x, p99 {:.2}x",
        h.median - c.median,
        h.p99 - c.p99,
        h.median / c.median,
        h.p99 / c.p99
    );
}

impl TestHome {
    /// Fires `writers × per_writer` plain block hooks from parallel threads,
    /// runs `during` while they go, and returns each run's stdout and receipt.
    pub fn fire_in_parallel(
        &self,
        block: &Path,
        writers: usize,
        per_writer: usize,
        during: impl FnOnce(),
    ) -> Vec<(Vec<u8>, Option<Receipt>)> {
        let envelope = prompt_envelope(SESSION, "parallel work");
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..writers)
                .map(|_| {
                    scope.spawn(|| {
                        (0..per_writer)
                            .map(|_| {
                                let (output, receipt) = self.fire_with_receipt("plain", block, &envelope);
                                (output.stdout, receipt)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            during();
            workers.into_iter().flat_map(|w| w.join().expect("hook thread")).collect()
        })
    }
}

impl Daemon {
    /// Sends `signal` to beed.
    pub fn send(&self, signal: rustix::process::Signal) {
        self.signal(signal);
    }
}

impl TestHome {
    /// Waits until the running beed's delivery store holds at least `records`.
    pub fn wait_for_records(&self, records: u64) {
        let reached = eventually(Duration::from_secs(30), || {
            let status = parse_json_line(&self.beectl(&["daemon", "status"]).stdout);
            status["stores"][0]["records"].as_u64().is_some_and(|n| n >= records)
        });
        assert!(reached, "the store never reached {records} records");
    }
}

/// Lets this process hold `wanted` descriptors (up to the hard limit), for
/// tests and benchmarks that open many connections themselves.
pub fn allow_open_files(wanted: u64) {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let current = Some(wanted.min(limit.maximum.unwrap_or(wanted)));
    setrlimit(Resource::Nofile, Rlimit { current, maximum: limit.maximum }).expect("raise the open-file limit");
}

/// A deterministic xorshift64 sequence from `seed` (non-zero): generated
/// test data that is the same on every run.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
