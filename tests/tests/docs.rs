//! The README and the book (`docs/`) as a test: every command they show
//! runs, their sample outputs are what the commands print, their links
//! lead somewhere, the command reference is the CLI's own help, and the
//! book builds.
//!
//! Examples are fenced code blocks. In a `sh` block every line is a
//! command; in a `console` block a line starting `$ ` is one and the lines
//! after it are what it prints on a terminal. A command of `beectl`,
//! `bee-hook` or `beed` (after `NAME=value` words) runs with `sh -c` in a
//! home of its page's own holding every agent's records (blocks of a page
//! run in order in that home), stdin empty, within 30 s, and must end 0 —
//! or N where the line ends `  # exit N`. Other lines (npx, cargo, curl …)
//! are shown, not run. `BEE_BLESS=1` rewrites the sample outputs and the
//! reference from real runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}

fn blessing() -> bool {
    std::env::var_os("BEE_BLESS").is_some()
}

/// The pages: README.md and every page of the book but the generated
/// reference.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![repo().join("README.md")];
    let mut pending = vec![repo().join("docs/src")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md")
                && !path.starts_with(repo().join("docs/src/reference"))
            {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// One fenced block: its info string's first word, its lines (indent
/// removed), and the line number (0-based) of its first body line.
struct Block {
    info: String,
    lines: Vec<String>,
    first: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<(String, usize, usize, String)> = None; // info, indent, first, fence
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match &open {
            None if trimmed.starts_with("```") => {
                let fence_len = trimmed.chars().take_while(|c| *c == '`').count();
                let info = trimmed[fence_len..].split([' ', ',', '{']).next().unwrap_or("").to_owned();
                open = Some((info, indent, number + 1, "`".repeat(fence_len)));
                lines.clear();
            }
            Some((info, indent_of, first, fence)) => {
                if trimmed.starts_with(fence.as_str()) && trimmed.trim_end().chars().all(|c| c == '`') {
                    found.push(Block { info: info.clone(), lines: std::mem::take(&mut lines), first: *first });
                    open = None;
                } else {
                    lines.push(line.get((*indent_of).min(indent)..).unwrap_or("").to_owned());
                }
            }
            None => {}
        }
    }
    found
}

/// A line to run: the command, the status it must end with.
fn runnable(line: &str) -> Option<(String, i32)> {
    let (command, comment) = match line.find("  #") {
        Some(at) => (line[..at].trim(), line[at + 3..].trim()),
        None => (line.trim(), ""),
    };
    let expected = comment.strip_prefix("exit ").and_then(|code| code.trim().parse().ok()).unwrap_or(0);
    let program = command
        .split_whitespace()
        .find(|word| !(word.contains('=') && word.chars().next().is_some_and(|c| c.is_ascii_uppercase())))?;
    ["beectl", "bee-hook", "beed"].contains(&program).then(|| (command.to_owned(), expected))
}

/// A page's home: every agent's records, the built binaries first on
/// PATH, and stand-ins for the service managers `beectl setup` would call
/// (no user session runs here).
struct PageHome {
    home: TestHome,
    path: String,
}

impl PageHome {
    fn new() -> PageHome {
        use std::os::unix::fs::PermissionsExt;
        let home = TestHome::new();
        every_agent::write_every_agent(&home);
        let stand_ins = home.path().join(".stand-ins");
        std::fs::create_dir_all(&stand_ins).unwrap();
        for manager in ["systemctl", "launchctl"] {
            let path = stand_ins.join(manager);
            std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let built = bin("beectl").parent().unwrap().to_owned();
        let path = format!("{}:{}:/usr/local/bin:/usr/bin:/bin", built.display(), stand_ins.display());
        PageHome { home, path }
    }

    /// Runs `command` with `sh -c` (on a 100 × 60 terminal when
    /// `terminal`): its status and what it printed on stdout.
    fn run(&self, command: &str, terminal: bool) -> Result<(i32, String), String> {
        let mut process = if terminal {
            let said = self.home.path().join(".said");
            let line = format!("stty cols 100 rows 60; {command} 2>'{}'", said.display());
            let mut process = self.home.command("script");
            process.args(["-qfec", &line, "/dev/null"]).env("TERM", "xterm-256color");
            process
        } else {
            let mut process = self.home.command("sh");
            process.args(["-c", command]);
            process
        };
        process
            .env("PATH", &self.path)
            .env("NO_COLOR", "1")
            .current_dir(self.home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = process.spawn().map_err(|error| format!("could not start: {error}"))?;
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut { stdout }, &mut bytes).map(|_| bytes)
        });
        let stderr = child.stderr.take().unwrap();
        let said = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut { stderr }, &mut bytes).map(|_| bytes)
        });
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                return Err("still running after 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = reader.join().unwrap().unwrap_or_default();
        let mut stderr = said.join().unwrap().unwrap_or_default();
        let code = status.code().unwrap_or(-1);
        let mut text = String::from_utf8_lossy(&stdout).replace("\r\n", "\n");
        if terminal {
            text = without_escapes(&text);
            // On a terminal the command's stderr went to a file (the pty
            // carries stdout only).
            stderr = std::fs::read(self.home.path().join(".said")).unwrap_or_default();
        }
        if code != 0 {
            text.push_str(&String::from_utf8_lossy(&stderr));
        }
        Ok((code, text))
    }

    /// Stops a beed the page started.
    fn finish(self) {
        let _ = self.run("beectl daemon stop", false);
    }
}

/// `text` without terminal escape sequences (a cursor shown or hidden).
fn without_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

fn trimmed_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(|line| line.trim_end().to_owned()).collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// Every example in README.md and the book runs as the page says, and
/// every sample output is what its command prints on a terminal.
#[test]
fn every_example_in_the_readme_and_the_book_runs() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(repo()).unwrap().display().to_string();
        let examples: Vec<Block> =
            blocks(&text).into_iter().filter(|block| block.info == "sh" || block.info == "console").collect();
        if !examples
            .iter()
            .any(|block| block.lines.iter().any(|line| runnable(line.trim_start_matches("$ ")).is_some()))
        {
            continue;
        }
        let home = PageHome::new();
        let mut rewrites: Vec<(usize, usize, Vec<String>)> = Vec::new(); // first line, lines replaced, new lines
        for block in &examples {
            if block.info == "sh" {
                for (offset, line) in block.lines.iter().enumerate() {
                    let Some((command, expected)) = runnable(line) else { continue };
                    ran += 1;
                    match home.run(&command, false) {
                        Ok((code, _)) if code == expected => {}
                        Ok((code, said)) => failures.push(format!(
                            "{name}:{}: `{command}` ended {code}, not {expected}:\n{said}",
                            block.first + offset + 1
                        )),
                        Err(why) => failures.push(format!("{name}:{}: `{command}`: {why}", block.first + offset + 1)),
                    }
                }
                continue;
            }
            // A console block: `$ command`, then what it prints.
            let mut at = 0;
            while at < block.lines.len() {
                let Some(line) = block.lines[at].strip_prefix("$ ") else {
                    at += 1;
                    continue;
                };
                let end = (at + 1..block.lines.len())
                    .find(|&n| block.lines[n].starts_with("$ "))
                    .unwrap_or(block.lines.len());
                let shown = trimmed_lines(&block.lines[at + 1..end].join("\n"));
                let location = format!("{name}:{}", block.first + at + 1);
                if let Some((command, expected)) = runnable(line) {
                    ran += 1;
                    match home.run(&command, true) {
                        Ok((code, printed)) if code == expected => {
                            let printed = trimmed_lines(&printed);
                            if printed != shown {
                                if blessing() {
                                    rewrites.push((block.first + at + 1, end - at - 1, printed));
                                } else {
                                    failures.push(format!(
                                        "{location}: `{command}` printed otherwise (BEE_BLESS=1 rewrites it):\n{}",
                                        diff(&shown.join("\n"), &printed.join("\n"))
                                    ));
                                }
                            }
                        }
                        Ok((code, printed)) => {
                            failures.push(format!("{location}: `{command}` ended {code}, not {expected}:\n{printed}"))
                        }
                        Err(why) => failures.push(format!("{location}: `{command}`: {why}")),
                    }
                }
                at = end;
            }
        }
        home.finish();
        if !rewrites.is_empty() {
            let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
            for (first, count, printed) in rewrites.into_iter().rev() {
                lines.splice(first..first + count, printed);
            }
            std::fs::write(&page, lines.join("\n") + "\n").unwrap();
        }
    }
    assert!(ran > 0, "no example found");
    assert!(failures.is_empty(), "{} of {ran} examples failed:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// No command is shown as an indented code block, where this test would
/// not see it, and every fenced block says what it holds.
#[test]
fn every_example_is_fenced_and_labelled() {
    let mut found = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(repo()).unwrap().display().to_string();
        let mut in_fence = false;
        let mut previous_blank = true;
        for (number, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") {
                if !in_fence && trimmed.trim_start_matches('`').trim().is_empty() {
                    found.push(format!("{name}:{}: a fenced block without an info string", number + 1));
                }
                in_fence = !in_fence;
            } else if !in_fence && previous_blank && line.starts_with("    ") && runnable(line.trim()).is_some() {
                found.push(format!("{name}:{}: an indented command: {}", number + 1, line.trim()));
            }
            previous_blank = line.trim().is_empty();
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// mdBook's id of a heading: lower case, spaces to `-`, other punctuation
/// but `-` and `_` dropped.
fn heading_id(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

fn heading_ids(text: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let mut ids = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            let base = heading_id(line.trim_start_matches('#').trim());
            let times = seen.entry(base.clone()).or_default();
            ids.push(if *times == 0 { base } else { format!("{base}-{times}") });
            *times += 1;
        }
    }
    ids
}

/// The targets of the Markdown links `[text](target)` in `line`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find([')', ' ', '\t']).unwrap_or(after.len());
        if after[end..].starts_with(')') {
            targets.push(&after[..end]);
        }
        rest = &after[end..];
    }
    targets
}

/// Every relative link in README.md and the book leads to a file that
/// exists, and to a heading of it where it names one.
#[test]
fn every_link_in_the_readme_and_the_book_leads_somewhere() {
    let mut broken = Vec::new();
    let mut checked = 0;
    let mut all = pages();
    all.extend(["beectl", "bee-hook", "beed"].map(|name| repo().join(format!("docs/src/reference/{name}.md"))));
    for page in all {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(repo()).unwrap().display().to_string();
        let mut in_fence = false;
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
            }
            if in_fence {
                continue;
            }
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) =
                    target.split_once('#').map_or((target, None), |(file, anchor)| (file, Some(anchor)));
                let path = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
                if !path.exists() {
                    broken.push(format!("{name}:{}: {target}: no such file", number + 1));
                    continue;
                }
                if let Some(anchor) = anchor
                    && path.extension().is_some_and(|ext| ext == "md")
                    && !heading_ids(&std::fs::read_to_string(&path).unwrap()).iter().any(|id| id == anchor)
                {
                    broken.push(format!("{name}:{}: {target}: no such heading", number + 1));
                }
            }
        }
    }
    assert!(checked > 0);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The help of `binary` and of every subcommand under it, as clap prints
/// it: (the command's words, its help).
fn helps(binary: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut pending = vec![Vec::<String>::new()];
    while let Some(words) = pending.pop() {
        let output = Command::new(bin(binary))
            .args(&words)
            .arg("--help")
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.success(), "{binary} {} --help", words.join(" "));
        let help = String::from_utf8(output.stdout).unwrap();
        let mut subcommands = Vec::new();
        let mut listing = false;
        for line in help.lines() {
            if line == "Commands:" {
                listing = true;
            } else if listing && line.starts_with("  ") && !line.starts_with("   ") {
                let word = line.split_whitespace().next().unwrap_or("");
                if word != "help" {
                    subcommands.push(word.to_owned());
                }
            } else if listing && !line.starts_with(' ') {
                listing = false;
            }
        }
        for sub in subcommands.into_iter().rev() {
            pending.push([words.clone(), vec![sub]].concat());
        }
        found.push((words.join(" "), help));
    }
    found
}

/// The reference page of `binary`: each command's help, in order.
fn reference(binary: &str) -> String {
    let mut page = format!(
        "# {binary}\n\n<!-- generated from the clap definitions: BEE_BLESS=1 cargo test -p bee-tests --test docs -->\n\n\
         Every command's own `--help`, as this build prints it.\n"
    );
    for (words, help) in helps(binary) {
        let title = if words.is_empty() { binary.to_owned() } else { format!("{binary} {words}") };
        let level = if words.is_empty() { "##" } else { &"#".repeat(2 + words.split(' ').count().min(4)) };
        page.push_str(&format!("\n{level} {title}\n\n```text\n{}\n```\n", help.trim_end()));
    }
    page
}

/// The command reference (`docs/src/reference/`) is each binary's own
/// help, every subcommand's included.
#[test]
fn the_command_reference_is_the_clis_own_help() {
    for binary in ["beectl", "bee-hook", "beed"] {
        let path = repo().join(format!("docs/src/reference/{binary}.md"));
        let page = reference(binary);
        if blessing() {
            std::fs::write(&path, &page).unwrap();
            continue;
        }
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(written, page, "{binary} (BEE_BLESS=1 rewrites it):\n{}", diff(&page, &written));
    }
}

/// The book builds with mdBook (pinned in `.ci/run`), without a warning.
#[test]
fn the_book_builds() {
    let mdbook = repo().join("tests/tools/bin/mdbook");
    assert!(mdbook.is_file(), "mdbook is not installed: run .ci/run (cargo install mdbook into tests/tools)");
    let home = TestHome::new();
    let out = home.path().join("book");
    let output =
        Command::new(&mdbook).arg("build").arg(repo().join("docs")).arg("--dest-dir").arg(&out).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{said}");
    assert!(!said.contains("WARN") && !said.contains("ERROR"), "{said}");
    assert!(out.join("index.html").is_file() && out.join("reference/beectl.html").is_file(), "{said}");
}
