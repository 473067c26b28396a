//! `beectl setup`: on a temp HOME whose `settings.json` already has hooks
//! and a status line, the dry run's diff, the result (the user's hooks kept,
//! their status line still running with Bee's line after it, the units and
//! beed started), a second run that changes nothing, and `--undo` giving
//! back the original byte for byte. The systemd units pass
//! `systemd-analyze verify`; the launchd agent is a valid plist.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::{TestHome, bin, parse_json_line};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The user's settings as they wrote them (their own layout, which a
/// JSON round trip would not keep).
const ORIGINAL: &str = r#"{
    "model": "opus",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]
    },
    "statusLine": {"type": "command", "command": "printf 'mine: %s' \"$(cat | head -c 0)ok\"", "padding": 1}
}
"#;

/// Runs beectl in `home` where no service manager can be reached: no user
/// bus, no runtime directory (a real user session is never touched).
fn beectl(home: &TestHome, args: &[&str]) -> Output {
    let mut command = home.command(bin("beectl"));
    command
        .args(args)
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_RUNTIME_DIR", home.path().join("no-runtime"))
        .env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", home.path().join("no-bus").display()))
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null());
    command.output().unwrap()
}

/// Stops whatever beed setup started, whatever the test's outcome.
struct StopsBeed<'a>(&'a TestHome);

impl Drop for StopsBeed<'_> {
    fn drop(&mut self) {
        let _ = beectl(self.0, &["daemon", "stop"]);
    }
}

fn settings_path(home: &TestHome) -> PathBuf {
    home.path().join(".claude").join("settings.json")
}

/// The commands of an event's hooks, in order.
fn commands_of(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|group| group["hooks"].as_array().unwrap().iter())
        .map(|hook| hook["command"].as_str().unwrap().to_owned())
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Runs the status line exactly as Claude Code would: the command through
/// a shell, the status input on stdin.
fn status_line(home: &TestHome, command: &str) -> String {
    let input = json!({"session_id": "s-1", "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"}});
    let mut child = home
        .command("sh")
        .args(["-c", command])
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.to_string().as_bytes()).unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
}

#[test]
fn setup_wires_everything_once_and_undo_restores_the_original_byte_for_byte() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    let settings = settings_path(&home);
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, ORIGINAL).unwrap();
    let block = home.file("steering.md", b"Run the tests before you say done.\n");
    let block = block.to_str().unwrap();
    let units = home.path().join(".config/systemd/user");

    // The dry run shows every change and makes none.
    let dry = beectl(&home, &["setup", "--prompt-block", block, "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));
    let diff = String::from_utf8(dry.stdout).unwrap();
    for expected in [
        "--- ",
        "+++ ",
        "-    \"statusLine\"",
        "statusline --append -- sh -c",
        "event --source-app claude-code",
        "on Stop --turn --event --source-app claude-code\"",
        "on UserPromptSubmit --surface context-json --block",
        "--- /dev/null",
        "+ExecStart=",
        "+ListenStream=",
        "would run: systemctl --user enable --now beed.socket",
        "would start beed",
    ] {
        assert!(diff.contains(expected), "the dry run lacks {expected:?}:\n{diff}");
    }
    assert_eq!(read(&settings), ORIGINAL, "a dry run writes nothing");
    assert!(!units.exists() && !home.socket().exists(), "nor installs or starts anything");

    // The real run.
    let first = beectl(&home, &["setup", "--prompt-block", block]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    let report = parse_json_line(&first.stdout);
    assert_eq!(report["changed"], true, "{report}");
    let wired: Value = serde_json::from_str(&read(&settings)).unwrap();
    let original: Value = serde_json::from_str(ORIGINAL).unwrap();
    assert_eq!(wired["model"], "opus");
    // The file keeps its own layout: its indent, and what Bee did not touch
    // as it was written.
    assert!(
        read(&settings).starts_with("{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \""),
        "{}",
        read(&settings)
    );
    assert_eq!(wired["hooks"]["PreToolUse"][0], original["hooks"]["PreToolUse"][0], "the user's hooks stay first");
    assert_eq!(wired["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
    let commands = |event: &str| commands_of(&wired, event);
    // One Bee entry per event, so one bee-hook process: every role it
    // plays there in one command.
    let bee_hook = bin("bee-hook").display().to_string();
    let ours = |event: &str| -> Vec<String> {
        commands(event).into_iter().filter(|c| c.starts_with(&bee_hook) && !c.contains("statusline")).collect()
    };
    for event in ["SessionStart", "PreToolUse", "PostToolUse"] {
        assert_eq!(ours(event), [format!("{bee_hook} event --source-app claude-code")], "{event}: {wired}");
    }
    assert_eq!(ours("Stop"), [format!("{bee_hook} on Stop --turn --event --source-app claude-code")], "{wired}");
    assert_eq!(
        ours("UserPromptSubmit"),
        [format!("{bee_hook} on UserPromptSubmit --surface context-json --block {block} --turn")],
        "{wired}"
    );
    assert_eq!(wired["statusLine"]["padding"], 1, "the user's status line keeps its settings");
    // Their status line still runs, and Bee's line follows it.
    let line = status_line(&home, wired["statusLine"]["command"].as_str().unwrap());
    assert!(line.starts_with("mine: ok | Sonnet 4.5"), "{line:?}");
    // The service: units with the real paths, beed started (no user bus here,
    // so directly, and the answer says why).
    let socket_unit = read(&units.join("beed.socket"));
    let service_unit = read(&units.join("beed.service"));
    assert!(socket_unit.contains(&format!("ListenStream={}", home.socket().display())), "{socket_unit}");
    assert!(service_unit.contains(&format!("ExecStart={}", bin("beed").display())), "{service_unit}");
    assert!(service_unit.contains(&format!("Environment=BEE_HOME={}", home.path().display())), "{service_unit}");
    assert_eq!(report["service"]["state"], "beed", "{report}");
    assert!(report["service"]["message"].as_str().unwrap().contains("systemctl --user"), "{report}");
    assert_eq!(beectl(&home, &["daemon", "status"]).status.code(), Some(0), "beed answers");
    // Every backup is in ~/.bee/backups, nothing beside the settings.
    let beside: Vec<_> =
        std::fs::read_dir(settings.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, [std::ffi::OsString::from("settings.json")]);
    let backup = report["backups"][0].as_str().unwrap();
    assert_eq!(read(Path::new(backup)), ORIGINAL);

    // systemd reads the units without a complaint.
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(units.join("beed.socket"))
        .arg(units.join("beed.service"))
        .output()
        .expect("systemd-analyze (Debian's systemd package) runs here");
    let complaints = String::from_utf8_lossy(&verify.stderr).into_owned();
    assert!(verify.status.success() && !complaints.contains("beed"), "systemd-analyze verify: {complaints}");

    // A second run changes nothing.
    let wired_text = read(&settings);
    let second = parse_json_line(&beectl(&home, &["setup", "--prompt-block", block]).stdout);
    assert_eq!((second["changed"].clone(), second["changes"].clone()), (json!(false), json!([])), "{second}");
    assert_eq!(second["service"]["state"], "already_running");
    assert_eq!(read(&settings), wired_text);
    let dry_again = String::from_utf8(beectl(&home, &["setup", "--prompt-block", block, "--dry-run"]).stdout).unwrap();
    assert!(dry_again.starts_with("no change to"), "{dry_again}");
    assert!(!dry_again.contains("would run"), "{dry_again}");

    // --undo: exactly what setup added goes, and the file comes back byte for byte.
    let undo_dry = String::from_utf8(beectl(&home, &["setup", "--undo", "--dry-run"]).stdout).unwrap();
    assert!(undo_dry.contains("+    \"statusLine\"") && undo_dry.contains("would stop beed"), "{undo_dry}");
    assert_eq!(read(&settings), wired_text, "the undo's dry run writes nothing");
    let undone = parse_json_line(&beectl(&home, &["setup", "--undo"]).stdout);
    assert_eq!(undone["service"]["state"], "stopped", "{undone}");
    assert_eq!(read(&settings), ORIGINAL, "byte for byte");
    assert!(!home.path().join(".config").exists(), "the unit directories setup made are gone too");
    assert_eq!(beectl(&home, &["daemon", "status"]).status.code(), Some(5), "beed is stopped");
    assert_eq!(std::fs::read_dir(home.bee_dir().join("setup")).unwrap().count(), 0, "no receipt left");
    let again = parse_json_line(&beectl(&home, &["setup", "--undo"]).stdout);
    assert_eq!(again["changed"], false, "{again}");
}

/// Edits made after setup survive its undo: only Bee's entries go.
#[test]
fn undo_after_the_user_edited_the_settings_takes_out_only_bees_entries() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    let project = home.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let project = project.to_str().unwrap();
    let settings = home.path().join("app/.claude/settings.json");
    let first = parse_json_line(&beectl(&home, &["setup", "--project", project, "--service", "none"]).stdout);
    assert_eq!(first["changed"], true, "{first}");
    assert_eq!(first["service"]["files"], json!([]), "--service none writes no unit");
    let mut edited: Value = serde_json::from_str(&read(&settings)).unwrap();
    edited["model"] = json!("sonnet");
    edited["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [{"type": "command", "command": "./mine.sh"}]}));
    std::fs::write(&settings, serde_json::to_string_pretty(&edited).unwrap()).unwrap();

    let undone = parse_json_line(&beectl(&home, &["setup", "--project", project, "--undo"]).stdout);
    let kept = undone["kept"].to_string();
    assert!(kept.contains("edited since setup"), "{undone}");
    let left: Value = serde_json::from_str(&read(&settings)).unwrap();
    assert_eq!(
        left,
        json!({"model": "sonnet", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./mine.sh"}]}]}}),
        "the user's edits stay; Bee's hooks and status line are gone"
    );

    // Settings that are not JSON are never touched; a bad argument says so.
    std::fs::write(&settings, b"{ not json").unwrap();
    let refused = beectl(&home, &["setup", "--project", project, "--service", "none"]);
    assert_eq!(refused.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("not JSON"));
    assert_eq!(std::fs::read(&settings).unwrap(), b"{ not json");
    let missing = beectl(&home, &["setup", "--project", project, "--prompt-block", "/nonexistent/block.md"]);
    assert_eq!(missing.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&missing.stdout).contains("--prompt-block"));
    let clash = beectl(&home, &["setup", "--undo", "--team"]);
    assert_eq!(clash.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&clash.stderr).contains("cannot be used with"));
}

/// The launchd agent setup writes is a valid plist with this machine's paths.
#[test]
fn the_launchd_agent_is_a_valid_plist_with_the_real_paths() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    // A beed started by hand before setup holds the socket the agent is to
    // own: setup stops it first, and says so.
    let by_hand = parse_json_line(&beectl(&home, &["daemon", "start"]).stdout);
    assert_eq!(by_hand["outcome"], "started", "{by_hand}");
    let report = parse_json_line(&beectl(&home, &["setup", "--service", "launchd"]).stdout);
    let stopped = format!("stopped the beed that ran by hand (pid {})", by_hand["pid"]);
    assert!(report["changes"].to_string().contains(&stopped), "{report}");
    assert_eq!(report["service"]["state"], "beed", "started again, directly: no launchctl here: {report}");
    let plist = home.path().join("Library/LaunchAgents/dev.bee.beed.plist");
    assert_eq!(report["service"]["files"], json!([plist.display().to_string()]), "{report}");
    let lint = Command::new("plutil").arg("-lint").arg(&plist).output();
    if let Ok(lint) = lint {
        assert!(lint.status.success(), "plutil -lint: {}", String::from_utf8_lossy(&lint.stdout));
    }
    // A plist parser (Python's plistlib) reads it back.
    let script = "import plistlib,sys,json; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))";
    let parsed = Command::new("python3").args(["-c", script]).arg(&plist).output().expect("python3");
    assert!(parsed.status.success(), "{}", String::from_utf8_lossy(&parsed.stderr));
    let agent = parse_json_line(&parsed.stdout);
    assert_eq!(agent["Label"], "dev.bee.beed");
    assert_eq!(agent["ProgramArguments"], json!([bin("beed").display().to_string()]));
    assert_eq!(agent["EnvironmentVariables"]["BEE_HOME"], home.path().display().to_string());
    assert_eq!(agent["StandardErrorPath"], home.bee_dir().join("beed.log").display().to_string());
    assert_eq!((agent["RunAtLoad"].clone(), agent["Umask"].clone()), (json!(true), json!(63)));

    let undone = parse_json_line(&beectl(&home, &["setup", "--undo"]).stdout);
    assert_eq!(undone["service"]["state"], "stopped", "{undone}");
    assert!(!home.path().join("Library").exists(), "{undone}");
    assert!(!settings_path(&home).exists() && !home.path().join(".claude").exists(), "setup made them; undo took them");
}

/// `--undo` gives back the exact bytes setup found, whatever they were: an
/// empty file stays empty (not `{}`), and a file with a key written twice
/// comes back with both.
#[test]
fn undo_restores_empty_and_duplicate_key_files_byte_for_byte() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    for (name, original) in [("empty", &b""[..]), ("twice", &b"{\"model\": \"a\", \"model\": \"b\"}\n"[..])] {
        let project = home.path().join(name);
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        let settings = project.join(".claude/settings.json");
        std::fs::write(&settings, original).unwrap();
        let project = project.to_str().unwrap();
        let first = parse_json_line(&beectl(&home, &["setup", "--project", project, "--service", "none"]).stdout);
        assert_eq!(first["changed"], true, "{name}: {first}");
        let undone = parse_json_line(&beectl(&home, &["setup", "--project", project, "--undo"]).stdout);
        assert_eq!(std::fs::read(&settings).unwrap(), original, "{name}: {undone}");
    }
}

/// An editor that saves the settings in place (truncate, a moment empty,
/// then the text; no rename) while setup runs never makes setup lose the
/// user's keys: an empty moment is not taken for `{}`, and setup either
/// sees the whole file or finds it changing under it and changes nothing,
/// saying so. Its backup is never the empty moment.
#[test]
fn setup_beside_an_editor_writing_in_place_never_loses_the_users_settings() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    let original = "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]}\n}\n";
    let (mut written, mut refused) = (0, 0);
    for trial in 0..30u64 {
        let project = home.path().join(format!("p{trial}"));
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        let settings = project.join(".claude/settings.json");
        std::fs::write(&settings, original).unwrap();
        // One save at a moment that moves across setup's run, trial by trial.
        let editor = {
            let settings = settings.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(trial * 2));
                let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(&settings).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(3));
                std::io::Write::write_all(&mut file, original.as_bytes()).unwrap();
            })
        };
        let output = beectl(&home, &["setup", "--project", project.to_str().unwrap(), "--service", "none"]);
        editor.join().unwrap();
        let answer = String::from_utf8_lossy(&output.stdout).into_owned();
        let now = read(&settings);
        let value: Value = serde_json::from_str(&now).unwrap_or_else(|err| panic!("trial {trial}: {err}: {now:?}"));
        assert_eq!(value["model"], "opus", "trial {trial}: {now}");
        assert_eq!(value["permissions"]["allow"][0], "Bash(ls:*)", "trial {trial}: {now}");
        if output.status.success() {
            written += 1;
        } else {
            assert!(answer.contains("changed while Bee was changing it"), "trial {trial}: {answer}");
            refused += 1;
        }
        for backup in std::fs::read_dir(home.bee_dir().join("backups")).into_iter().flatten().flatten() {
            assert_ne!(std::fs::metadata(backup.path()).unwrap().len(), 0, "trial {trial}: an empty backup");
        }
    }
    println!("{written} trials wrote Bee's entries, {refused} found the file changing and changed nothing");
}

/// Settings wired the old way — a `bee-hook` process per role — become one
/// entry per event; the entry does every role; the audit reads it as
/// configured; undo gives back the old wiring byte for byte.
#[test]
fn setup_folds_the_old_one_process_per_role_wiring_into_one_entry_per_event() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    let project = home.path().join("app");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let block = home.file("steering.md", b"Run the tests before you say done.\n");
    let bee_hook = bin("bee-hook").display().to_string();
    let old = |command: String| json!({"hooks": [{"type": "command", "command": command, "timeout": 5}]});
    let original = serde_json::to_string_pretty(&json!({"hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "./mine.sh"}]},
            old(format!("{bee_hook} turn")),
            old(format!("{bee_hook} prompt --surface context-json --block {}", block.display())),
        ],
        "Stop": [old(format!("{bee_hook} event --source-app app")), old(format!("{bee_hook} turn"))],
        "SessionStart": [old(format!("{bee_hook} event --source-app app"))],
    }}))
    .unwrap();
    let settings = project.join(".claude/settings.json");
    std::fs::write(&settings, &original).unwrap();
    let project = project.to_str().unwrap();

    let report = parse_json_line(
        &beectl(&home, &["setup", "--project", project, "--service", "none", "--events", "SessionStart,Stop"]).stdout,
    );
    assert_eq!(report["changed"], true, "{report}");
    assert!(report["changes"].to_string().contains("now one entry running"), "{report}");
    let wired: Value = serde_json::from_str(&read(&settings)).unwrap();
    let commands = |event: &str| commands_of(&wired, event);
    let prompt_entry =
        format!("{bee_hook} on UserPromptSubmit --surface context-json --block {} --turn", block.display());
    assert_eq!(commands("UserPromptSubmit"), ["./mine.sh".to_owned(), prompt_entry.clone()], "{wired}");
    assert_eq!(commands("Stop"), [format!("{bee_hook} on Stop --turn --event --source-app app")], "{wired}");
    assert_eq!(commands("SessionStart"), [format!("{bee_hook} event --source-app app")], "{wired}");
    let configured = bee_daemon::events::claude_settings::configured_events(&wired, "app");
    assert_eq!(configured, ["SessionStart", "Stop"].map(String::from).into(), "the audit reads the one entry");
    let second = parse_json_line(
        &beectl(&home, &["setup", "--project", project, "--service", "none", "--events", "SessionStart,Stop"]).stdout,
    );
    assert_eq!(second["changes"], json!([]), "{second}");

    // The entry, run as Claude Code runs it, delivers the block exactly as
    // `bee-hook prompt` did.
    let envelope = serde_json::to_vec(&json!({"session_id": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
        "hook_event_name": "UserPromptSubmit", "prompt": "hi", "cwd": "/tmp"}))
    .unwrap();
    let run = |command: &str| {
        let mut child = home
            .command("sh")
            .args(["-c", command])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), &envelope).unwrap();
        child.wait_with_output().unwrap()
    };
    let before = run(&format!("{bee_hook} prompt --surface context-json --block {}", block.display()));
    let after = run(&prompt_entry);
    assert_eq!((after.stdout, after.status.code()), (before.stdout, before.status.code()));

    let undone = parse_json_line(&beectl(&home, &["setup", "--project", project, "--undo"]).stdout);
    assert_eq!(undone["changed"], true, "{undone}");
    assert_eq!(read(&settings), original, "the old wiring, byte for byte");
}

/// A project's settings wired by `setup --service none` (and any `extra`
/// flags), then undone; the two answers.
fn wire_then_undo(home: &TestHome, project: &Path, extra: &[&str]) -> (Value, Value) {
    let project = project.to_str().unwrap();
    let mut args = vec!["setup", "--project", project, "--service", "none"];
    args.extend_from_slice(extra);
    let wired = parse_json_line(&beectl(home, &args).stdout);
    let undone = parse_json_line(&beectl(home, &["setup", "--project", project, "--undo"]).stdout);
    (wired, undone)
}

/// The issue's case: `{"model":"opus","hooks":{}}`, set up and undone with
/// nothing edited in between, comes back as those bytes, and the undo does
/// not claim the file was edited (taking Bee's last entries out used to
/// take the empty `hooks` with them, so the file no longer read as the
/// original and was written as `{"model":"opus"}`).
#[test]
fn undo_of_an_unedited_file_with_empty_hooks_gives_back_its_bytes() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    let project = home.path().join("app");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let settings = project.join(".claude/settings.json");
    let original = r#"{"model":"opus","hooks":{}}"#;
    std::fs::write(&settings, original).unwrap();

    let (wired, undone) = wire_then_undo(&home, &project, &[]);
    assert_eq!(wired["changed"], true, "{wired}");
    assert_eq!(read(&settings), original, "byte for byte: {undone}");
    assert!(!undone["kept"].to_string().contains("edited since setup"), "nobody edited it: {undone}");
    assert!(undone["changes"].to_string().contains("restored"), "{undone}");
    assert_eq!(std::fs::read_dir(home.bee_dir().join("setup")).unwrap().count(), 0, "no receipt left");
}

/// Whatever an unedited settings file held, `--undo` gives back its exact
/// bytes: no trailing newline or several, tabs and odd spacing, CRLF, its
/// key order, unicode escapes, numbers as written, the user's own hooks and
/// status line, an empty event list; and a file setup made goes again (the
/// directory with it when setup made that too). A second `setup` that
/// changed more in between is undone as well. The receipt that holds the
/// original is the user's alone (0600 in a 0700 directory).
#[test]
fn undo_of_an_unedited_file_restores_any_original_shape_byte_for_byte() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    let shapes: [(&str, &str); 10] = [
        ("newline", "{\"model\":\"opus\",\"hooks\":{}}\n"),
        ("spacing", "{ \"hooks\" :{ } ,\n\t\"model\":\"opus\"   }\n\n"),
        ("crlf", "{\r\n  \"model\": \"opus\",\r\n  \"hooks\": {}\r\n}\r\n"),
        ("escapes", "{\"z\": 1, \"a\": \"caf\\u00e9 \\ud83d\\udc1d \\/\", \"hooks\": {}, \"m\": [1,2]}"),
        ("numbers", "{\"n\": 1.0, \"e\": 1E3, \"hooks\": {}, \"big\": 12345678901234567890}\n"),
        ("no-hooks", "{\n\t\"model\": \"opus\"\n}"),
        (
            "users-hooks",
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"./notify.sh"}]}],"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./guard.sh"}]}]},"env":{"ANTHROPIC_API_KEY":"sk-test"}}"#,
        ),
        ("status-line", "{\"statusLine\": {\"type\": \"command\", \"command\": \"echo hi\"}, \"hooks\": {}}\n"),
        ("empty-event", "{\"hooks\": {\"Stop\": [], \"SessionStart\": []}}\n"),
        ("unicode", "{\"model\": \"opus\", \"note\": \"é 🐝\", \"hooks\": {}}\n"),
    ];
    for (name, original) in shapes {
        let project = home.path().join(name);
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        let settings = project.join(".claude/settings.json");
        std::fs::write(&settings, original).unwrap();
        let (wired, undone) = wire_then_undo(&home, &project, &[]);
        assert_eq!(wired["changed"], true, "{name}: {wired}");
        assert_eq!(read(&settings), original, "{name}: {undone}");
        assert!(!undone["kept"].to_string().contains("edited since setup"), "{name}: {undone}");
    }

    // A second setup that changes more (the team events), nothing edited
    // between: still the original bytes. The receipt in between holds the
    // original, privately.
    let project = home.path().join("twice");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let settings = project.join(".claude/settings.json");
    let original = "{\"model\":\"opus\",\"hooks\":{}}";
    std::fs::write(&settings, original).unwrap();
    let dir = project.to_str().unwrap();
    let first = parse_json_line(&beectl(&home, &["setup", "--project", dir, "--service", "none"]).stdout);
    let second = parse_json_line(&beectl(&home, &["setup", "--project", dir, "--service", "none", "--team"]).stdout);
    assert_eq!((first["changed"].clone(), second["changed"].clone()), (json!(true), json!(true)), "{second}");
    let receipt = Path::new(second["receipt"].as_str().unwrap());
    let mode = |path: &Path| std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(path).unwrap().permissions());
    assert_eq!(mode(receipt) & 0o777, 0o600, "the receipt holds the user's file");
    assert_eq!(mode(receipt.parent().unwrap()) & 0o777, 0o700);
    let undone = parse_json_line(&beectl(&home, &["setup", "--project", dir, "--undo"]).stdout);
    assert_eq!(read(&settings), original, "{undone}");
    assert!(!undone["kept"].to_string().contains("edited since setup"), "{undone}");

    // No file before setup: none after its undo; the directory setup made
    // goes too, one that was there stays.
    for (name, made_dir) in [("no-file", false), ("no-dir", true)] {
        let project = home.path().join(name);
        std::fs::create_dir_all(if made_dir { project.clone() } else { project.join(".claude") }).unwrap();
        let (wired, undone) = wire_then_undo(&home, &project, &[]);
        assert_eq!(wired["changed"], true, "{name}: {wired}");
        assert!(!project.join(".claude/settings.json").exists(), "{name}: {undone}");
        assert_eq!(project.join(".claude").exists(), !made_dir, "{name}: {undone}");
    }
}

/// A file edited after setup keeps the user's edit through `--undo`: only
/// Bee's entries go, the answer says the file was edited, and the user's
/// empty `hooks` stays. An edit made between two setups survives as well:
/// the original bytes would undo it, so they are not put back.
#[test]
fn undo_of_an_edited_file_keeps_the_users_edit() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    let original = r#"{"model":"opus","hooks":{}}"#;
    let edit = |settings: &Path| {
        let mut edited: Value = serde_json::from_str(&read(settings)).unwrap();
        edited["model"] = json!("sonnet");
        edited["env"] = json!({"MY_FLAG": "1"});
        std::fs::write(settings, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    };
    for between in [false, true] {
        let project = home.path().join(if between { "between" } else { "after" });
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        let settings = project.join(".claude/settings.json");
        std::fs::write(&settings, original).unwrap();
        let dir = project.to_str().unwrap();
        let wired = parse_json_line(&beectl(&home, &["setup", "--project", dir, "--service", "none"]).stdout);
        assert_eq!(wired["changed"], true, "{wired}");
        edit(&settings);
        if between {
            let again =
                parse_json_line(&beectl(&home, &["setup", "--project", dir, "--service", "none", "--team"]).stdout);
            assert_eq!(again["changed"], true, "{again}");
        }
        let undone = parse_json_line(&beectl(&home, &["setup", "--project", dir, "--undo"]).stdout);
        assert!(undone["kept"].to_string().contains("edited since setup"), "between {between}: {undone}");
        let text = read(&settings);
        let left: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            left,
            json!({"model": "sonnet", "hooks": {}, "env": {"MY_FLAG": "1"}}),
            "between {between}: the edit stays, Bee's entries and status line go: {text}"
        );
        let keys: Vec<&String> = left.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "hooks", "env"], "the empty hooks where it was: {text}");
    }
}

/// `--agent codex`: the dry run shows both of Codex's files changing (its
/// `hooks.json` and the trust in its `config.toml`) and writes neither; a
/// user's own trusted hook keeps its place and its trust through setup and
/// undo; a project's hooks are refused (Codex trusts them only in a trusted
/// project) with the usage error's exit code.
#[test]
fn codex_hooks_are_wired_with_their_trust_and_the_users_own_keep_theirs() {
    let home = TestHome::new();
    let _stops = StopsBeed(&home);
    let codex = home.path().join("codex-home");
    std::fs::create_dir_all(&codex).unwrap();
    let mine = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./mine.sh"}]}]}});
    let hooks_text = serde_json::to_string_pretty(&mine).unwrap();
    std::fs::write(codex.join("hooks.json"), &hooks_text).unwrap();
    let source = codex.canonicalize().unwrap().join("hooks.json");
    let config_text = format!(
        "model = \"gpt-5\"\n\n[hooks.state.\"{}:stop:0:0\"]\ntrusted_hash = \"sha256:mine\"\n",
        source.display()
    );
    std::fs::write(codex.join("config.toml"), &config_text).unwrap();
    let run = |args: &[&str]| {
        let mut command = home.command(bin("beectl"));
        command.args(args).env("CODEX_HOME", &codex).env("PATH", "/usr/bin:/bin").stdin(Stdio::null());
        command.output().unwrap()
    };
    let dry = String::from_utf8(run(&["setup", "--agent", "codex", "--service", "none", "--dry-run"]).stdout).unwrap();
    assert!(dry.contains("hooks.json (after setup)") && dry.contains("config.toml (after setup)"), "{dry}");
    assert!(dry.contains(&format!("+[hooks.state.\"{}:stop:1:0\"]", source.display())), "{dry}");
    assert_eq!(
        (read(&codex.join("hooks.json")), read(&codex.join("config.toml"))),
        (hooks_text.clone(), config_text.clone())
    );

    let wired = parse_json_line(&run(&["setup", "--agent", "codex", "--service", "none"]).stdout);
    assert_eq!(wired["changed"], true, "{wired}");
    let hooks: Value = serde_json::from_str(&read(&codex.join("hooks.json"))).unwrap();
    assert_eq!(hooks["hooks"]["Stop"][0], mine["hooks"]["Stop"][0], "the user's hook keeps its place: {hooks}");
    let config: toml::Table = read(&codex.join("config.toml")).parse().unwrap();
    let state = config["hooks"]["state"].as_table().unwrap();
    assert_eq!(state[&format!("{}:stop:0:0", source.display())]["trusted_hash"].as_str(), Some("sha256:mine"));
    let bee = &state[&format!("{}:stop:1:0", source.display())]["trusted_hash"];
    assert!(bee.as_str().is_some_and(|hash| hash.starts_with("sha256:") && hash.len() == 71), "{state:?}");
    let again = parse_json_line(&run(&["setup", "--agent", "codex", "--service", "none"]).stdout);
    assert_eq!(again["changed"], false, "{again}");
    // `beectl agents` says the hooks are wired only while Codex trusts them.
    let codex_hooks = || {
        let listing: Value = serde_json::from_slice(&run(&["agents", "--json"]).stdout).unwrap();
        listing["agents"].as_array().unwrap().iter().find(|row| row["agent"] == "codex").unwrap()["turnHooks"].clone()
    };
    assert_eq!(codex_hooks(), true);
    let trusted = read(&codex.join("config.toml"));
    std::fs::write(codex.join("config.toml"), trusted.replace(bee.as_str().unwrap(), "sha256:other")).unwrap();
    assert_eq!(codex_hooks(), false, "a hook Codex does not trust by its hash does not run");
    std::fs::write(codex.join("config.toml"), &trusted).unwrap();

    let undone = parse_json_line(&run(&["setup", "--agent", "codex", "--undo"]).stdout);
    assert_eq!(undone["changed"], true, "{undone}");
    assert_eq!((read(&codex.join("hooks.json")), read(&codex.join("config.toml"))), (hooks_text, config_text));

    let project = home.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let refused = run(&["setup", "--agent", "codex", "--project", project.to_str().unwrap()]);
    let usage = i32::from(bee_proto::exit::Exit::InvalidUsage.code());
    assert_eq!(refused.status.code(), Some(usage), "{}", String::from_utf8_lossy(&refused.stdout));
}
