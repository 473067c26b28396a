//! The dashboard in a real headless Chromium (Debian's chromium and
//! chromium-driver, which `.ci/run` installs), driven over WebDriver: it
//! opens the page beed serves, sees a posted event appear, filters, shows a
//! lane per session with its audit verdict, loses its connection when beed
//! restarts and shows the replay after it reconnects. A page of another
//! origin in the same browser can neither read the stream nor post.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// A WebDriver session on a chromedriver we started; both end on drop.
struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Option<Value> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    // chromedriver keeps the connection open: read the head, then exactly its body.
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    let split = loop {
        if let Some(at) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut buffer).ok()?;
        if n == 0 {
            return None;
        }
        answer.extend_from_slice(&buffer[..n]);
    };
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    let length: usize =
        head.lines().find_map(|line| line.strip_prefix("content-length:")).and_then(|n| n.trim().parse().ok())?;
    while answer.len() < split + length {
        let n = stream.read(&mut buffer).ok()?;
        if n == 0 {
            return None;
        }
        answer.extend_from_slice(&buffer[..n]);
    }
    let body = answer[split..split + length].to_vec();
    serde_json::from_slice(&body).ok()
}

impl Browser {
    fn start(home: &TestHome) -> Browser {
        assert!(
            std::path::Path::new(CHROMEDRIVER).exists() && std::path::Path::new(CHROMIUM).exists(),
            "the dashboard test needs Debian's chromium and chromium-driver (.ci/run installs them)"
        );
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .env("HOME", home.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let mut browser = Browser { driver, port, session: String::new() };
        assert!(
            eventually(Duration::from_secs(20), || http(port, "GET", "/status", None)
                .is_some_and(|s| s["value"]["ready"] == true)),
            "chromedriver did not become ready"
        );
        let profile = home.path().join("chromium-profile");
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-quic",
                // A "foreign" site that is served from this machine.
                "--host-resolver-rules=MAP evil.example 127.0.0.1",
                format!("--user-data-dir={}", profile.display())]}
        }}});
        let created = http(port, "POST", "/session", Some(&capabilities)).expect("new session");
        browser.session = created["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();
        browser
    }

    fn command(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let full = format!("/session/{}{path}", self.session);
        http(self.port, method, &full, body).unwrap_or_else(|| panic!("webdriver {method} {path} failed"))
    }

    fn open(&self, url: &str) {
        self.command("POST", "/url", Some(&json!({"url": url})));
    }

    fn eval(&self, script: &str) -> Value {
        self.command("POST", "/execute/sync", Some(&json!({"script": script, "args": []})))["value"].clone()
    }

    /// Waits until `script` returns true; panics with the page state otherwise.
    fn wait_for(&self, what: &str, script: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.eval(script) == Value::Bool(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let page = self.eval("return document.body.innerText");
        panic!("{what}: not seen in time; the page shows:\n{page}");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http(self.port, "DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn post(addr: &str, event: &Value) -> i64 {
    let body = event.to_string();
    let request = format!(
        "POST /events HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, _, answer) = tcp_http(addr, request.as_bytes());
    assert_eq!(status, 200);
    serde_json::from_slice::<Value>(&answer).unwrap()["id"].as_i64().unwrap()
}

fn event(session: &str, kind: &str, tool: &str) -> Value {
    json!({"source_app": "web", "session_id": session, "hook_event_type": kind,
           "payload": {"tool_name": tool}, "tool_name": tool})
}

fn shown(id: i64) -> String {
    format!("return document.querySelector('#timeline li[data-id=\"{id}\"]') !== null")
}

#[test]
fn the_dashboard_shows_live_events_filters_and_replays_after_a_reconnect() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let browser = Browser::start(&home);
    let url = String::from_utf8(home.beectl(&["dashboard"]).stdout).unwrap();
    assert!(url.starts_with(&format!("http://{addr}/?token=")), "{url}");
    browser.open(url.trim());
    browser.wait_for("the live status", "return document.getElementById('status').textContent === 'live'");

    let first = post(&addr, &event("session-a", "PreToolUse", "Bash"));
    browser.wait_for("the posted event", &shown(first));
    let row = browser.eval(&format!("return document.querySelector('#timeline li[data-id=\"{first}\"]').innerText"));
    assert!(row.as_str().unwrap().contains("PreToolUse") && row.as_str().unwrap().contains("web"), "{row}");
    // Hostile fields are text, and a timestamp no clock can show breaks nothing.
    let hostile = post(
        &addr,
        &json!({"source_app": "<img src=x onerror=\"window.owned=1\">", "session_id": "session-x",
                "hook_event_type": "Notification", "payload": {}, "timestamp": i64::MAX}),
    );
    browser.wait_for("the hostile event, as text", &shown(hostile));
    assert_eq!(browser.eval("return document.querySelectorAll('#timeline img').length"), json!(0));
    assert_eq!(browser.eval("return window.owned === undefined"), json!(true));
    let second = post(&addr, &event("session-b", "Stop", ""));
    browser.wait_for("the second session's lane", "return document.querySelectorAll('#lanes .lane').length === 3");
    browser.wait_for(
        "each lane's audit verdict",
        "return [...document.querySelectorAll('#lanes .verdict')].every(v => v.textContent !== 'unaudited')",
    );
    // Filters by event type, then by session.
    browser.eval(
        "const s = document.getElementById('filter-type'); s.value = 'Stop'; s.dispatchEvent(new Event('change')); return true",
    );
    browser.wait_for(
        "the type filter",
        &format!(
            "return document.querySelectorAll('#timeline li').length === 1 && {}",
            shown(second).trim_start_matches("return ")
        ),
    );
    browser.eval(
        "const t = document.getElementById('filter-type'); t.value = ''; t.dispatchEvent(new Event('change'));
         const s = document.getElementById('filter-session'); s.value = 'session-a'; s.dispatchEvent(new Event('change')); return true",
    );
    browser.wait_for(
        "the session filter",
        &format!(
            "return document.querySelectorAll('#timeline li').length === 1 && {}",
            shown(first).trim_start_matches("return ")
        ),
    );
    browser.eval("const s = document.getElementById('filter-session'); s.value = ''; s.dispatchEvent(new Event('change')); return true");

    // A burst of events asks for verdicts about once a second, not per event.
    let fetches_before = browser.eval("return window.bee.verdictFetches").as_u64().unwrap();
    let mut last = 0;
    for _ in 0..40 {
        last = post(&addr, &event("session-a", "PostToolUse", "Read"));
    }
    browser.wait_for("the burst", &shown(last));
    std::thread::sleep(Duration::from_millis(1_200));
    let fetched = browser.eval("return window.bee.verdictFetches").as_u64().unwrap() - fetches_before;
    assert!((1..=4).contains(&fetched), "{fetched} verdict requests for a burst of 40 events");

    // The connection drops: beed stops. An event sent meanwhile is spooled by bee-hook.
    drop(daemon);
    browser.wait_for("the lost connection", "return document.getElementById('status').textContent === 'reconnecting'");
    let mut hook = home.command(bin("bee-hook"));
    hook.args(["event", "--source-app", "web"]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = hook.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            json!({"session_id": "session-c", "hook_event_name": "SessionStart", "source": "startup"})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));

    // beed comes back on the same address; the page reconnects and replays.
    let daemon = home.start_daemon_with(&["--http", &addr, "--ingest-every", "0"]);
    browser.wait_for(
        "the reconnect",
        "return window.bee.connects >= 2 && document.getElementById('status').textContent === 'live'",
    );
    browser.wait_for(
        "the replayed spooled event",
        "return [...document.querySelectorAll('#timeline li')].some(li => li.dataset.session === 'session-c')",
    );
    browser.wait_for("the events from before", &shown(first));
    let third = post(&addr, &event("session-a", "PostToolUse", "Bash"));
    browser.wait_for("a live event after the reconnect", &shown(third));
    drop(browser);
    drop(daemon);
}

/// Serves `page` to every request on a loopback port until dropped.
struct Site {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Site {
    fn serve(page: String) -> Site {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        Site { port, stop, thread: Some(thread) }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Opened without its secret, the page says what to run instead of
/// "reconnecting" forever; a tool call's Pre and Post events are one call
/// in its lane's badge; at 800 px the timeline keeps its columns inside
/// the window.
#[test]
fn a_locked_page_says_what_to_run_badges_count_calls_and_narrow_windows_keep_columns() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let browser = Browser::start(&home);
    browser.open(&format!("http://{addr}/"));
    browser.wait_for("the locked status", "return document.getElementById('status').textContent === 'locked'");
    let said = browser.eval("return document.getElementById('locked').innerText");
    assert!(said.as_str().unwrap().contains("beectl dashboard"), "{said}");

    let url = String::from_utf8(home.beectl(&["dashboard"]).stdout).unwrap();
    browser.open(url.trim());
    browser.wait_for("the live status", "return document.getElementById('status').textContent === 'live'");
    assert_eq!(browser.eval("return document.getElementById('locked').hidden"), json!(true));
    let call = |kind: &str| {
        json!({"source_app": "web", "session_id": "session-call", "hook_event_type": kind,
               "payload": {"tool_name": "Bash", "tool_use_id": "toolu_one"}, "tool_name": "Bash", "tool_use_id": "toolu_one"})
    };
    post(&addr, &call("PreToolUse"));
    let last = post(&addr, &call("PostToolUse"));
    browser.wait_for("both events", &shown(last));
    browser.wait_for(
        "one call in the badge",
        "return [...document.querySelectorAll('#lanes .badge.tool')].map(b => b.textContent).join() === 'Bash ×1'",
    );
    browser.command("POST", "/window/rect", Some(&json!({"width": 800, "height": 900})));
    let fits = browser.eval(
        "const li = document.querySelector('#timeline li');
         const right = Math.max(...[...li.children].map(c => c.getBoundingClientRect().right));
         return li.scrollWidth <= li.clientWidth + 1 && right <= document.documentElement.clientWidth;",
    );
    assert_eq!(fits, json!(true), "at 800 px the timeline's columns stay inside its row and the window");
    drop(browser);
    drop(daemon);
}

#[test]
fn a_page_of_another_origin_can_neither_read_the_stream_nor_post() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let planted = post(&addr, &event("session-real", "PreToolUse", "Bash"));
    let browser = Browser::start(&home);
    // The user has the dashboard open: the browser holds its cookie.
    let url = String::from_utf8(home.beectl(&["dashboard"]).stdout).unwrap();
    browser.open(url.trim());
    browser.wait_for("the dashboard", &shown(planted));

    let forged = json!({"source_app": "web", "session_id": "session-forged", "hook_event_type": "Stop", "payload": {}});
    let page = format!(
        r#"<!doctype html><title>evil</title><script>
        window.results = {{ws: 'pending', messages: 0, simplePost: 'pending', jsonPost: 'pending'}};
        const ws = new WebSocket('ws://{addr}/stream');
        ws.onopen = () => results.ws = 'open';
        ws.onmessage = () => results.messages++;
        ws.onclose = () => {{ if (results.ws !== 'open') results.ws = 'refused'; }};
        const body = JSON.stringify({forged});
        fetch('http://{addr}/events', {{method: 'POST', mode: 'no-cors', headers: {{'Content-Type': 'text/plain'}}, body}})
            .then(() => results.simplePost = 'sent', () => results.simplePost = 'failed');
        fetch('http://{addr}/events', {{method: 'POST', headers: {{'Content-Type': 'application/json'}}, body}})
            .then(r => results.jsonPost = 'status ' + r.status, () => results.jsonPost = 'blocked');
        fetch('http://{addr}/events/recent', {{credentials: 'include'}})
            .then(r => r.text()).then(t => results.read = t, () => results.read = 'blocked');
        </script>"#
    );
    let site = Site::serve(page);
    browser.open(&format!("http://evil.example:{}/", site.port));
    browser.wait_for(
        "the foreign page's attempts to finish",
        "return window.results && results.ws !== 'pending' && results.simplePost !== 'pending' && results.jsonPost !== 'pending' && results.read !== undefined",
    );
    let results = browser.eval("return window.results");
    assert_eq!(results["ws"], "refused", "{results}");
    assert_eq!(results["messages"], 0, "{results}");
    assert_eq!(results["jsonPost"], "blocked", "the preflight is not granted: {results}");
    assert_eq!(results["read"], "blocked", "{results}");
    // The simple POST left the browser; beed refused it and stored nothing.
    let (status, _, recent) = raw_http(&home.socket(), &get_request("/events/recent?limit=100", "localhost", ""));
    assert_eq!(status, 200);
    let recent: Value = serde_json::from_slice(&recent).unwrap();
    assert_eq!(recent.as_array().unwrap().len(), 1, "only the real event is stored: {recent}");
    assert_eq!(recent[0]["session_id"], "session-real");
    drop(site);
    drop(browser);
    drop(daemon);
}

/// The parts that put the dashboard on par with the reference client: an
/// event's detail (its payload when captured, a note when not), an activity
/// chart and a colour per session, tool badges, a legend of every verdict,
/// a tooltip naming each session's missing evidence and the command that
/// supplies it, and a `waiting` session with its owner and deadline — a
/// real verdict: the pinned manifest (checked against the installed Claude
/// Code), the page's own stream as the presentation receipt, an owned wait.
#[test]
fn the_dashboard_explains_verdicts_and_shows_detail_activity_and_a_waiting_session() {
    let home = TestHome::new();
    let claude = bee_tests::providers::claude_cli();
    let path = format!("{}:{}", claude.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    // The project's settings and manifest, pinned against the real Claude Code.
    let project = home.path().join("shop");
    std::fs::create_dir_all(&project).unwrap();
    let mut install = home.command(bin("beectl"));
    install.args(["hooks", "install", "--project", project.to_str().unwrap(), "--source-app", "shop"]);
    install.args(["--events", "SessionStart,PreToolUse,PermissionRequest"]).env("PATH", &path);
    let installed: Value = serde_json::from_slice(&install.output().unwrap().stdout).unwrap();
    let manifest =
        installed["manifest"].as_str().unwrap_or_else(|| panic!("no manifest pinned: {installed}")).to_owned();
    let mut command = home.command(bin("beed"));
    command.args(["--http", "127.0.0.1:0", "--ingest-every", "0", "--capture-payload", "lab", "--manifest", &manifest]);
    command.env("PATH", &path);
    let daemon = Daemon::start(&home, command);
    let addr = daemon.http_addr();
    let browser = Browser::start(&home);
    let url = String::from_utf8(home.beectl(&["dashboard"]).stdout).unwrap();
    browser.open(url.trim());
    browser.wait_for("the live status", "return document.getElementById('status').textContent === 'live'");

    let deadline = bee_proto_now_ms() + 30 * 60_000;
    let shop = |kind: &str, extra: Value| {
        let mut event = json!({"source_app": "shop", "session_id": "session-wait", "hook_event_type": kind,
                               "payload": {"hook_event_name": kind}});
        for (key, value) in extra.as_object().unwrap() {
            event[key] = value.clone();
        }
        post(&addr, &event)
    };
    shop("SessionStart", json!({"payload": {"hook_event_name": "SessionStart", "source": "startup"}}));
    let bash = shop(
        "PreToolUse",
        json!({"tool_name": "Bash", "payload": {"hook_event_name": "PreToolUse", "tool_name": "Bash"}}),
    );
    shop("PermissionRequest", json!({"tool_name": "Bash", "owner": "ops@example.com", "deadline": deadline}));
    let captured = post(
        &addr,
        &json!({"source_app": "lab", "session_id": "session-lab", "hook_event_type": "PreToolUse", "tool_name": "Read",
                "payload": {"tool_name": "Read", "tool_input": {"file_path": "notes.md"}}}),
    );

    // A waiting session: its verdict, its owner and deadline.
    browser.wait_for(
        "the waiting verdict",
        "return document.querySelector('.lane[data-session=\"session-wait\"] .verdict')?.textContent === 'waiting'",
    );
    let wait = browser.eval("return document.querySelector('.lane[data-session=\"session-wait\"] .wait').textContent");
    let wait = wait.as_str().unwrap();
    assert!(wait.contains("ops@example.com") && wait.contains("until 20") && wait.contains("min left"), "{wait}");

    // The legend names every verdict, with what supplies the evidence.
    let legend = browser.eval("return [...document.querySelectorAll('#legend-list dt')].map(d => d.dataset.class)");
    assert_eq!(
        legend,
        json!([
            "delivery_failed_hidden",
            "persistence_unverified",
            "dashboard_stale",
            "manifest_drift",
            "coverage_gap",
            "stale",
            "waiting",
            "false_complete",
            "healthy",
            "unaudited"
        ])
    );
    let legend_text = browser.eval("return document.getElementById('legend').innerText");
    assert!(legend_text.as_str().unwrap().contains("No outcome check: add one to a manifest"), "{legend_text}");
    // A session without a manifest: an unproven boundary, explained, not a bare red badge.
    browser.wait_for(
        "the lab session's verdict",
        "return document.querySelector('.lane[data-session=\"session-lab\"] .verdict')?.textContent === 'manifest_drift'",
    );
    let lab = browser.eval(
        "const v = document.querySelector('.lane[data-session=\"session-lab\"] .verdict'); return [v.className, v.title]",
    );
    assert_eq!(lab[0], "verdict unverified", "{lab}");
    let tip = lab[1].as_str().unwrap();
    assert!(tip.contains("configuration (unknown): no pinned manifest") && tip.contains("beectl setup"), "{tip}");
    assert!(tip.contains("outcome (unknown)") && tip.contains("add one to a manifest"), "{tip}");

    // A colour per session, the same on its rows and its lane; tool badges; activity.
    let colours = browser.eval(
        "const c = (s) => getComputedStyle(document.querySelector(s)).borderLeftColor;
         return [c('.lane[data-session=\"session-wait\"]'), c('#timeline li[data-session=\"session-wait\"]'),
                 c('.lane[data-session=\"session-lab\"]')]",
    );
    assert_eq!(colours[0], colours[1], "{colours}");
    assert_ne!(colours[0], colours[2], "{colours}");
    let tools = browser.eval(
        "return [...document.querySelectorAll('.lane[data-session=\"session-wait\"] .tools .badge')].map(b => b.textContent)",
    );
    assert_eq!(tools, json!(["Bash ×2"]));
    let activity = browser.eval(
        "return [...document.querySelectorAll('.lane[data-session=\"session-wait\"] .chart rect')]
                .reduce((sum, r) => sum + Number(r.dataset.count), 0)",
    );
    assert_eq!(activity, json!(3), "the chart counts the session's three events of the last minutes");
    let bars =
        browser.eval("return document.querySelectorAll('.lane[data-session=\"session-wait\"] .chart rect').length");
    assert_eq!(bars, json!(30));

    // The detail panel: metadata, and the payload when captured.
    browser.eval(&format!("document.querySelector('#timeline li[data-id=\"{captured}\"]').click(); return true"));
    browser.wait_for("the detail panel", "return !document.getElementById('detail').hidden");
    let detail = browser.eval("return document.getElementById('detail').innerText");
    let detail = detail.as_str().unwrap();
    assert!(detail.contains(&format!("#{captured} PreToolUse")) && detail.contains("session-lab"), "{detail}");
    assert!(detail.contains("Payload (captured") && detail.contains("notes.md"), "{detail}");
    browser.eval(&format!("document.querySelector('#timeline li[data-id=\"{bash}\"]').click(); return true"));
    browser.wait_for(
        "the detail of an uncaptured event",
        "return document.getElementById('detail').innerText.includes('Payload capture is off')",
    );
    let detail = browser.eval("return document.getElementById('detail').innerText");
    assert!(detail.as_str().unwrap().contains("beed --capture-payload shop"), "{detail}");
    browser.eval("document.getElementById('detail-close').click(); return true");
    browser.wait_for("the closed panel", "return document.getElementById('detail').hidden");
    drop(browser);
    drop(daemon);
}

fn bee_proto_now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// A page doing what the reference client (disler's
/// claude-code-hooks-multi-agent-observability, apps/client) does for a
/// choice question: it reads the stream at the address after `#` (its
/// API_BASE_URL), shows a button per choice of a pending question, and on a
/// click runs EventRow.vue's submitChoice — `fetch` POST of
/// `{choice, hookEvent, respondedAt}` as `application/json` to
/// `/events/ID/respond`, no secret (it has none). Its `alert` on failure is
/// recorded instead (an open alert would stop WebDriver).
const REFERENCE_CLIENT_PAGE: &str = r#"<!doctype html><title>reference client</title><body><div id="events"></div><script>
const API_BASE_URL = 'http://' + location.hash.slice(1);
const WS_URL = 'ws://' + location.hash.slice(1) + '/stream';
window.results = {stream: 'pending', submitted: [], alerts: []};
const submitChoice = async (event, choice) => {
  const response = {choice, hookEvent: event, respondedAt: Date.now()};
  try {
    const res = await fetch(`${API_BASE_URL}/events/${event.id}/respond`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(response)
    });
    if (!res.ok) throw new Error('Failed to submit choice: ' + res.status);
    results.submitted.push(event.id);
  } catch (error) {
    results.alerts.push('Failed to submit choice. Please try again. (' + error.message + ')');
  }
};
const render = (event) => {
  if (!event.humanInTheLoop || event.humanInTheLoopStatus?.status !== 'pending') return;
  if (document.querySelector(`[data-event="${event.id}"]`)) return;
  const card = document.createElement('div');
  card.dataset.event = event.id;
  card.append(event.humanInTheLoop.question);
  for (const choice of event.humanInTheLoop.choices) {
    const button = document.createElement('button');
    button.textContent = choice;
    button.dataset.choice = choice;
    button.onclick = () => submitChoice(event, choice);
    card.append(button);
  }
  document.getElementById('events').append(card);
};
const ws = new WebSocket(WS_URL);
ws.onopen = () => results.stream = 'open';
ws.onmessage = (message) => {
  const data = JSON.parse(message.data);
  if (data.type === 'initial') data.data.forEach(render);
  else if (data.type === 'event') render(data.data);
};
</script>"#;

/// Clicks the element `css` finds, as a user would (WebDriver's click).
fn click(browser: &Browser, css: &str) {
    let found = browser.command("POST", "/element", Some(&json!({"using": "css selector", "value": css})));
    let element = found["value"]["element-6066-11e4-a52e-4f735466cecf"]
        .as_str()
        .unwrap_or_else(|| panic!("{css}: {found}"))
        .to_owned();
    browser.command("POST", &format!("/element/{element}/click"), Some(&json!({})));
}

/// The reference client in Chromium, without the secret: its page on the
/// origin `--http-allow-origin` names answers a question with a click and
/// the agent gets the answer; the same page on another loopback origin, in
/// the same browser of the same user, is refused (403, so the client's
/// "Failed to submit" alert) and the question stays open.
#[test]
fn the_reference_clients_answer_from_an_allowed_origin_reaches_the_agent_and_another_origins_does_not() {
    let home = TestHome::new();
    let allowed = Site::serve(REFERENCE_CLIENT_PAGE.to_owned());
    let other = Site::serve(REFERENCE_CLIENT_PAGE.to_owned());
    let allowed_origin = format!("http://localhost:{}", allowed.port);
    // The reference client reads without the secret: open reads.
    let daemon = home.start_daemon_with(&[
        "--http",
        "127.0.0.1:0",
        "--http-open-reads",
        "--http-allow-origin",
        &allowed_origin,
        "--ingest-every",
        "0",
    ]);
    let addr = daemon.http_addr();
    let (agent_port, agent) = waiting_agent();
    let question = json!({"source_app": "cc-hook-multi-agent-obvs", "session_id": "session-hitl",
        "hook_event_type": "PreToolUse", "payload": {"tool_name": "Bash"},
        "humanInTheLoop": {"question": "Deploy to staging?", "responseWebSocketUrl": format!("ws://localhost:{agent_port}"),
                           "type": "choice", "choices": ["yes", "no"], "timeout": 300, "requiresResponse": true}});
    let id = post(&addr, &question);
    let status = || {
        let (_, _, body) = raw_http(&home.socket(), &get_request("/events/recent?limit=100", "localhost", ""));
        let recent: Value = serde_json::from_slice(&body).unwrap();
        let event = recent.as_array().unwrap().iter().find(|e| e["id"] == id).cloned().unwrap();
        event["humanInTheLoopStatus"]["status"].as_str().unwrap().to_owned()
    };
    let button = format!("[data-event=\"{id}\"] button[data-choice=\"yes\"]");
    let browser = Browser::start(&home);

    // Another origin's page: it sees the question (reads are open) but its answer is refused.
    browser.open(&format!("http://localhost:{}/#{addr}", other.port));
    browser.wait_for(
        "the question on the other origin's page",
        &format!("return document.querySelector('{button}') !== null"),
    );
    click(&browser, &button);
    browser.wait_for("the refusal", "return results.alerts.length === 1");
    let results = browser.eval("return window.results");
    // beed's 403 (events.rs checks it and its message) grants no CORS, so
    // the page sees a failed fetch: the client's alert, as in the issue.
    assert!(results["alerts"][0].as_str().unwrap().starts_with("Failed to submit choice."), "{results}");
    assert_eq!(results["submitted"], json!([]), "{results}");
    assert_eq!(status(), "pending");
    assert!(agent.recv_timeout(Duration::from_millis(300)).is_err(), "nothing reached the agent");

    // The reference client's own origin: Submit, and the agent has the answer.
    browser.open(&format!("{allowed_origin}/#{addr}"));
    browser
        .wait_for("the question on the client's page", &format!("return document.querySelector('{button}') !== null"));
    click(&browser, &button);
    browser.wait_for("the submitted answer", &format!("return results.submitted.includes({id})"));
    let results = browser.eval("return window.results");
    assert_eq!(results["alerts"], json!([]), "{results}");
    let delivered: Value = serde_json::from_str(&agent.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    assert_eq!((delivered["choice"].clone(), delivered["hookEvent"]["id"].clone()), (json!("yes"), json!(id)));
    assert_eq!(status(), "responded");
    drop(browser);
    drop(daemon);
    drop((allowed, other));
}

/// Dollars as the usage page writes them: `-` unknown, two places from a
/// dollar, three from a cent, five below, `≥` a lower bound.
fn page_usd(usd: Option<f64>, bound: bool) -> String {
    let Some(usd) = usd else { return "-".to_owned() };
    let places = if usd >= 1.0 {
        2
    } else if usd >= 0.01 {
        3
    } else {
        5
    };
    format!("{}${usd:.places$}", if bound { "≥" } else { "" })
}

/// A count as the usage page writes it: `-` unknown, `≥1,234` a lower bound.
fn page_count(n: Option<u64>, bound: bool) -> String {
    let Some(n) = n else { return "-".to_owned() };
    let digits = n.to_string();
    let mut out = String::from(if bound { "≥" } else { "" });
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The usage page over a home holding every agent's records, in Chromium:
/// opened without the secret it says what to run; with it, every day's
/// and every agent's figures it shows (read from the page, not from its
/// data route) equal `beectl usage --json`'s for the same range and zone,
/// each session is a row with its total, and a day whose tokens no part
/// knows is drawn hatched, never as an empty bar.
#[test]
fn the_usage_page_shows_what_beectl_usage_says() {
    let home = TestHome::new();
    bee_tests::every_agent::write_every_agent(&home);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let browser = Browser::start(&home);
    browser.open(&format!("http://{addr}/usage"));
    browser.wait_for("the locked status", "return document.getElementById('status').textContent === 'locked'");
    let said = browser.eval("return document.getElementById('locked').innerText");
    assert!(said.as_str().unwrap().contains("beectl dashboard"), "{said}");

    // A five-hour window as Claude Code's status line brings it.
    let now = bee_proto::time::now_unix_ms() / 1000;
    let status = json!({"hook_event_name": "Status", "session_id": "5eed0000-0000-4000-8000-000000000001",
        "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
        "rate_limits": {"five_hour": {"used_percentage": 12.0, "resets_at": now + 7_200}}});
    let (output, _) = home.hook(&["statusline", "--", "true"], &serde_json::to_vec(&status).unwrap());
    assert_eq!(output.status.code(), Some(0));
    home.settle();

    let url = String::from_utf8(home.beectl(&["dashboard"]).stdout).unwrap();
    browser.open(url.trim());
    browser.open(&format!("http://{addr}/usage"));
    browser.eval("document.querySelector('[data-range=\"all\"]').click(); return true");
    browser.wait_for(
        "every day, live",
        "return document.getElementById('status').textContent === 'live' \
         && document.querySelector('[data-range=\"all\"]').getAttribute('aria-pressed') === 'true' \
         && document.querySelectorAll('#days tr.day').length > 3",
    );
    let zone = browser.eval("return document.getElementById('zone').textContent");
    let zone = zone.as_str().unwrap();
    let report = parse_json_line(
        &home.beectl(&["usage", "--json", "--no-import", "--by", "day,agent", "--timezone", zone]).stdout,
    );
    let cells = |selector: &str| -> Vec<String> {
        let script = format!(
            "const tr = document.querySelector('{selector}'); return tr ? [...tr.cells].map(c => c.textContent.trim()) : null"
        );
        serde_json::from_value(browser.eval(&script)).unwrap_or_else(|_| panic!("{selector}: no row"))
    };
    let expected = |row: &Value| -> Vec<String> {
        let bound = row["partialParts"].as_u64() > Some(0)
            || row["partialColumns"].as_object().is_some_and(|columns| !columns.is_empty());
        let tokens = &row["tokens"];
        [
            page_count(row["responses"].as_u64(), false),
            page_count(tokens["inputTokens"].as_u64(), bound),
            page_count(tokens["outputTokens"].as_u64(), bound),
            page_count(tokens["cacheCreationInputTokens"].as_u64(), bound),
            page_count(tokens["cacheReadInputTokens"].as_u64(), bound),
            page_count(tokens["totalTokens"].as_u64(), bound),
        ]
        .to_vec()
    };
    let days = report["subtotals"].as_array().unwrap();
    assert_eq!(browser.eval("return document.querySelectorAll('#days tr.day').length"), json!(days.len()));
    for day in days {
        let key = day["key"].as_str().unwrap();
        let shown = cells(&format!("#days tr.day[data-day=\"{key}\"]"));
        assert_eq!(shown[0], key);
        assert_eq!(shown[1..7], expected(day), "day {key}");
        let hatched = browser
            .eval(&format!("return document.querySelector('#bars g[data-day=\"{key}\"] rect.unknown') !== null"));
        assert_eq!(hatched, json!(day["tokens"]["totalTokens"].is_null()), "day {key}: hatched exactly when unknown");
    }
    for row in report["rows"].as_array().unwrap() {
        let (key, agent) = (row["key"].as_str().unwrap(), row["subkey"].as_str().unwrap());
        let shown = cells(&format!("#days tr[data-day=\"{key}\"][data-agent=\"{agent}\"]"));
        assert_eq!(shown[1..7], expected(row), "day {key}, agent {agent}");
    }
    // Past the ninth colour the legend names the eight largest agents and
    // one entry for all the others (each named in it), and the bars draw
    // those others as one part.
    let agents: std::collections::BTreeSet<&str> =
        report["rows"].as_array().unwrap().iter().map(|row| row["subkey"].as_str().unwrap()).collect();
    assert!(agents.len() > 9, "the fixture has more agents than colours: {agents:?}");
    let legend: Vec<String> = serde_json::from_value(
        browser.eval("return [...document.querySelectorAll('#legend > span')].map(s => s.textContent)"),
    )
    .unwrap();
    assert_eq!(legend.len(), 9, "{legend:?}");
    assert_eq!(legend[8], format!("{} other agents", agents.len() - 8));
    let others = browser.eval("return document.querySelector('#legend > span[data-others]').dataset.others");
    let mut named: std::collections::BTreeSet<&str> = legend[..8].iter().map(String::as_str).collect();
    named.extend(others.as_str().unwrap().split(", "));
    assert_eq!(named, agents, "every agent in the legend once");
    let parts: Vec<String> = serde_json::from_value(
        browser.eval("return [...document.querySelectorAll('#bars rect[data-part]')].map(r => r.dataset.part)"),
    )
    .unwrap();
    assert!(parts.iter().all(|part| part == "others" || legend[..8].contains(part)), "{parts:?}");
    assert!(parts.iter().any(|part| part == "others"), "{parts:?}");
    let sessions = parse_json_line(
        &home.beectl(&["usage", "--json", "--no-import", "--by", "session", "--timezone", zone]).stdout,
    );
    let sessions = sessions["rows"].as_array().unwrap();
    assert_eq!(browser.eval("return document.querySelectorAll('#sessions tbody tr').length"), json!(sessions.len()));
    for session in sessions {
        let key = session["key"].as_str().unwrap_or("");
        let agent = session["agent"].as_str().unwrap_or_default();
        let shown =
            cells(&format!("#sessions tr[data-session=\"{}\"][data-agent=\"{agent}\"]", key.replace('"', "\\\"")));
        assert_eq!(shown[6], expected(session)[5], "session {key}");
        assert_eq!(shown[1], agent, "session {key}");
    }
    // Filtered by agent, sorted by total, a session opened for its
    // responses by model: each as the command line says.
    let rows_shown = "return [...document.querySelectorAll('#sessions > tbody > tr')].map(tr => [...tr.cells].map(c => c.textContent.trim()))";
    browser.eval(
        "const s = document.getElementById('filter-agent'); s.value = 'copilot'; \
         s.dispatchEvent(new Event('change')); return true",
    );
    let copilot: Vec<&Value> = sessions.iter().filter(|session| session["agent"] == "copilot").collect();
    assert!(copilot.len() > 1, "{sessions:?}");
    browser.wait_for(
        "the agent filter",
        &format!("return document.querySelectorAll('#sessions > tbody > tr').length === {}", copilot.len()),
    );
    browser.eval("document.querySelector('#sessions th[data-sort=\"totalTokens\"]').click(); return true");
    let shown: Vec<Vec<String>> = serde_json::from_value(browser.eval(rows_shown)).unwrap();
    assert!(shown.iter().all(|cells| cells[1] == "copilot"), "{shown:?}");
    let mut totals: Vec<Option<u64>> =
        copilot.iter().map(|session| session["tokens"]["totalTokens"].as_u64()).collect();
    totals.sort_by(|a, b| match (a, b) {
        (Some(a), Some(b)) => b.cmp(a),
        (None, None) => std::cmp::Ordering::Equal,
        (None, _) => std::cmp::Ordering::Greater,
        (_, None) => std::cmp::Ordering::Less,
    });
    let shown_totals: Vec<String> = shown.iter().map(|cells| cells[6].trim_start_matches('≥').to_owned()).collect();
    let expected_totals: Vec<String> = totals.iter().map(|total| page_count(*total, false)).collect();
    assert_eq!(shown_totals, expected_totals, "sorted by total, largest first");
    let first = shown[0][0].clone();
    browser.eval("document.querySelector('#sessions > tbody > tr').click(); return true");
    browser.wait_for("the session's models", "return document.querySelector('#sessions tr.models') !== null");
    let models: Vec<Vec<String>> = serde_json::from_value(browser.eval(
        "return [...document.querySelectorAll('#sessions tr.models tr')].map(tr => [...tr.cells].map(c => c.textContent.trim()))",
    ))
    .unwrap();
    let by_model = parse_json_line(
        &home
            .beectl(&[
                "usage",
                "--json",
                "--no-import",
                "--by",
                "session,model",
                "--agent",
                "copilot",
                "--timezone",
                zone,
            ])
            .stdout,
    );
    let expected_models: Vec<Vec<String>> = by_model["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["key"] == first.as_str())
        .map(|row| {
            vec![
                row["subkey"].as_str().unwrap_or("(unknown)").to_owned(),
                page_count(row["responses"].as_u64(), false),
                expected(row)[5].clone(),
            ]
        })
        .collect();
    let models: Vec<Vec<String>> = models.into_iter().map(|cells| cells[..3].to_vec()).collect();
    assert!(!models.is_empty());
    assert_eq!(models, expected_models, "session {first}'s responses by model");

    // The window as beectl top sees it, in top's words where there is no
    // projection.
    let top = parse_json_line(&home.beectl(&["top", "--json", "--timezone", zone]).stdout);
    let windows = top["windows"].as_array().unwrap();
    assert_eq!(browser.eval("return document.querySelectorAll('#windows .gauge').length"), json!(windows.len()));
    let gauge = browser.eval(
        "const g = document.querySelector('#windows .gauge[data-provider=\"claude\"][data-window=\"five_hour\"]'); \
         return g ? g.innerText : null",
    );
    let gauge = gauge.as_str().unwrap_or_else(|| panic!("no claude five-hour gauge: {top}"));
    assert!(gauge.contains("claude five_hour window: 12% used"), "{gauge}");
    assert!(windows[0]["projectedPercentAtReset"].is_null(), "{top}");
    assert!(gauge.contains("no projection: fewer than two snapshots in the last 30 minutes"), "{gauge}");
    // The heatmap: a cell for each hour of the last year with a response.
    let hours = parse_json_line(
        &home.beectl(&["usage", "--json", "--no-import", "--by", "hour", "--since", "365d", "--timezone", zone]).stdout,
    );
    let busy = hours["rows"].as_array().unwrap().iter().filter(|row| row["responses"].as_u64() > Some(0)).count();
    assert!(busy > 5, "{hours}");
    assert_eq!(browser.eval("return document.getElementById('heatmap').dataset.cells"), json!(busy.to_string()));

    // A new record redraws the page, without a reload: a Claude Code
    // response on a day the page did not show.
    browser.eval("window.stillThisPage = true; return true");
    let line = json!({"type": "assistant", "sessionId": "live1111", "timestamp": "2026-12-02T09:00:00.000Z",
        "requestId": "req_live_1", "message": {"id": "msg_live_1", "model": "claude-sonnet-4-5-20250929",
        "stop_reason": "end_turn", "usage": {"input_tokens": 11, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0, "output_tokens": 22}}});
    write_quiet(&home.path().join(".claude/projects/-home-dev-live/live1111.jsonl"), &format!("{line}\n"));
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    browser.wait_for(
        "the new day, drawn without a reload",
        "return window.stillThisPage === true && window.beeUsage.redraws >= 1 \
         && document.querySelector('#days tr.day[data-day=\"2026-12-02\"]') !== null",
    );
    let shown = cells("#days tr[data-day=\"2026-12-02\"][data-agent=\"claude\"]");
    assert_eq!(shown[1..7], ["1", "11", "22", "0", "0", "33"].map(str::to_owned), "{shown:?}");
    // The bars by model, as estimated cost: each day's the command line's
    // estimate, a lower bound marked as the table marks it.
    browser.eval("document.querySelector('[data-stack=\"model\"]').click(); return true");
    browser.eval("document.querySelector('[data-metric=\"estimatedCostUsd\"]').click(); return true");
    browser.wait_for(
        "the estimate by model",
        "return document.getElementById('bars-title').textContent === 'Estimated cost a day, by model' \
         && document.querySelector('#days tr[data-model]') !== null",
    );
    let by_model = parse_json_line(
        &home.beectl(&["usage", "--json", "--no-import", "--by", "day,model", "--timezone", zone]).stdout,
    );
    for day in by_model["subtotals"].as_array().unwrap() {
        let key = day["key"].as_str().unwrap();
        let bound = day["partialParts"].as_u64() > Some(0)
            || day["partialColumns"].as_object().is_some_and(|columns| !columns.is_empty())
            || day["unpricedParts"].as_u64() > Some(0);
        let shown =
            browser.eval(&format!("return document.querySelector('#bars g[data-day=\"{key}\"]').dataset.value"));
        assert_eq!(shown, json!(page_usd(day["estimatedCostUsd"].as_f64(), bound)), "day {key}");
    }
    // At 1400 and 800 px nothing runs past the window; a screenshot of each
    // is kept with the test's output.
    let shots = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("usage-page");
    std::fs::create_dir_all(&shots).unwrap();
    for width in [1400, 800] {
        browser.command("POST", "/window/rect", Some(&json!({"width": width, "height": 1000})));
        browser.eval("window.dispatchEvent(new Event('resize')); return true");
        let overflow =
            browser.eval("return document.documentElement.scrollWidth - document.documentElement.clientWidth");
        assert_eq!(overflow, json!(0), "at {width} px the page runs past the window");
        // Every column of the days' table in sight: none scrolled away.
        let hidden = browser.eval(
            "const box = document.querySelector('#days').parentElement; return box.scrollWidth - box.clientWidth",
        );
        assert_eq!(hidden, json!(0), "at {width} px the days' table is cut");
        let png = browser.command("GET", "/screenshot", None)["value"].as_str().unwrap().to_owned();
        use base64::Engine as _;
        let path = shots.join(format!("usage-{width}.png"));
        std::fs::write(&path, base64::engine::general_purpose::STANDARD.decode(png).unwrap()).unwrap();
        println!("screenshot at {width} px: {}", path.display());
    }
    drop(daemon);
}
