//! beed as a user service, for `beectl setup`: the systemd `--user` units
//! (socket activation) on Linux and the launchd agent on macOS, written
//! with this machine's real paths (the beed beside beectl, the socket
//! `BEE_HOME` names), and the service manager's commands that start and
//! stop them. Where the manager cannot be reached (no user session bus, a
//! container), beed is started directly and the answer says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::setup::hooks::Beed;

/// Which service manager setup writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Manager {
    Systemd,
    Launchd,
    /// No unit: beed is started directly.
    None,
}

impl Manager {
    /// This system's own: launchd on macOS, systemd elsewhere.
    pub fn native() -> Manager {
        if cfg!(target_os = "macos") { Manager::Launchd } else { Manager::Systemd }
    }

    pub fn from_name(name: &str) -> Option<Manager> {
        match name {
            "auto" => Some(Manager::native()),
            "systemd" => Some(Manager::Systemd),
            "launchd" => Some(Manager::Launchd),
            "none" => Some(Manager::None),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Manager::Systemd => "systemd",
            Manager::Launchd => "launchd",
            Manager::None => "none",
        }
    }
}

/// launchd's label for beed, and its agent file's name.
const LAUNCHD_LABEL: &str = "dev.bee.beed";

/// The unit files for `manager` and their text: empty for `None`.
pub fn unit_files(manager: Manager) -> Result<Vec<(PathBuf, String)>, String> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).ok_or("HOME is not set")?;
    let socket = bee_proto::paths::socket_path().ok_or(bee_proto::paths::NO_HOME)?;
    let beed = absolute_beed()?;
    let bee_home = std::env::var_os(bee_proto::paths::BEE_HOME_ENV).filter(|h| !h.is_empty()).map(PathBuf::from);
    Ok(match manager {
        Manager::None => Vec::new(),
        Manager::Systemd => {
            let dir = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".config"))
                .join("systemd")
                .join("user");
            vec![
                (dir.join("beed.socket"), systemd_socket(&socket)),
                (dir.join("beed.service"), systemd_service(&beed, bee_home.as_deref())),
            ]
        }
        Manager::Launchd => {
            let log = bee_proto::paths::bee_dir().ok_or("HOME is not set")?.join("beed.log");
            let path = home.join("Library").join("LaunchAgents").join(format!("{LAUNCHD_LABEL}.plist"));
            vec![(path, launchd_plist(&beed, bee_home.as_deref(), &log))]
        }
    })
}

/// beed with an absolute program: a unit cannot search PATH.
fn absolute_beed() -> Result<Beed, String> {
    let beed = Beed::find();
    if beed.program.is_absolute() {
        return Ok(beed);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(&beed.program))
        .find(|candidate| candidate.is_absolute() && candidate.is_file())
        .map(|program| Beed { program, arg0: None })
        .ok_or_else(|| "no beed beside beectl or on PATH: install all three binaries (contrib/install.sh)".to_owned())
}

/// A value systemd reads back as `text`: `%` is a specifier there, and a
/// space or quote needs quoting.
fn systemd_value(text: &str) -> String {
    let escaped = text.replace('%', "%%");
    if escaped.chars().any(|c| c.is_whitespace() || c == '"' || c == '\\' || c == '\'') {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        escaped
    }
}

fn systemd_socket(socket: &Path) -> String {
    format!(
        "# Bee daemon socket, written by `beectl setup` (`beectl setup --undo` removes it).
[Unit]
Description=Bee daemon socket

[Socket]
ListenStream={}
SocketMode=0600
DirectoryMode=0700
RemoveOnStop=yes

[Install]
WantedBy=sockets.target
",
        socket.display().to_string().replace('%', "%%")
    )
}

fn systemd_service(beed: &Beed, bee_home: Option<&Path>) -> String {
    let home_line = bee_home
        .map(|home| format!("Environment={}\n", systemd_value(&format!("BEE_HOME={}", home.display()))))
        .unwrap_or_default();
    format!(
        "# Bee daemon, written by `beectl setup` (`beectl setup --undo` removes it).
# Started on first use by beed.socket; beed takes the socket from LISTEN_FDS
# and reports READY=1 when it serves.
[Unit]
Description=Bee: local accounting for AI coding agents
Requires=beed.socket
After=beed.socket

[Service]
Type=notify
ExecStart={}
Environment=BEE_LOG=info
{home_line}Restart=on-failure
UMask=0077
# beed needs only its unix socket. To serve the dashboard on loopback, add
# Environment=BEE_HTTP=127.0.0.1:4000 and AF_INET AF_INET6 below.
RestrictAddressFamilies=AF_UNIX
NoNewPrivileges=yes

[Install]
WantedBy=default.target
",
        // `@PROGRAM NAME`: systemd runs PROGRAM with argv[0] NAME.
        match beed.arg0 {
            Some(arg0) => format!("@{} {arg0}", systemd_value(&beed.program.display().to_string())),
            None => systemd_value(&beed.program.display().to_string()),
        }
    )
}

/// Text inside an XML element.
fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn launchd_plist(beed: &Beed, bee_home: Option<&Path>, log: &Path) -> String {
    let home_entry = bee_home
        .map(|home| {
            format!("    <key>BEE_HOME</key>\n    <string>{}</string>\n", xml_text(&home.display().to_string()))
        })
        .unwrap_or_default();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Bee daemon as a launchd user agent, written by beectl setup (its undo
     removes it; an XML comment cannot hold the flag's two dashes). beed
     binds its socket itself. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{LAUNCHD_LABEL}</string>
{}  <key>ProgramArguments</key>
  <array>
    <string>{}</string>
  </array>
  <key>EnvironmentVariables</key>
  <dict>
    <key>BEE_LOG</key>
    <string>info</string>
{home_entry}  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>Umask</key>
  <integer>63</integer>
  <key>StandardErrorPath</key>
  <string>{}</string>
</dict>
</plist>
"#,
        // launchd executes Program with ProgramArguments as the whole argv.
        match beed.arg0 {
            Some(_) =>
                format!("  <key>Program</key>\n  <string>{}</string>\n", xml_text(&beed.program.display().to_string())),
            None => String::new(),
        },
        xml_text(&beed.arg0.map_or_else(|| beed.program.display().to_string(), str::to_owned)),
        xml_text(&log.display().to_string())
    )
}

/// The manager commands that start the written units.
pub fn start_commands(manager: Manager, files: &[PathBuf]) -> Vec<Vec<String>> {
    match manager {
        Manager::None => Vec::new(),
        Manager::Systemd => vec![
            words(&["systemctl", "--user", "daemon-reload"]),
            words(&["systemctl", "--user", "enable", "--now", "beed.socket"]),
        ],
        Manager::Launchd => files
            .iter()
            .map(|plist| vec!["launchctl".into(), "bootstrap".into(), gui_domain(), plist.display().to_string()])
            .collect(),
    }
}

/// The manager commands that stop and disable them.
pub fn stop_commands(manager: Manager) -> Vec<Vec<String>> {
    match manager {
        Manager::None => Vec::new(),
        Manager::Systemd => vec![words(&["systemctl", "--user", "disable", "--now", "beed.socket", "beed.service"])],
        Manager::Launchd => {
            vec![vec!["launchctl".into(), "bootout".into(), format!("{}/{LAUNCHD_LABEL}", gui_domain())]]
        }
    }
}

/// The commands systemd needs after its unit files went away.
pub fn after_removal_commands(manager: Manager) -> Vec<Vec<String>> {
    match manager {
        Manager::Systemd => vec![words(&["systemctl", "--user", "daemon-reload"])],
        _ => Vec::new(),
    }
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

fn gui_domain() -> String {
    format!("gui/{}", rustix::process::getuid().as_raw())
}

/// Runs each command in turn; the first failure's account, or none.
pub fn run_all(commands: &[Vec<String>]) -> Result<(), String> {
    for command in commands {
        let Some((program, args)) = command.split_first() else { continue };
        let output = Command::new(program).args(args).stdin(Stdio::null()).output();
        match output {
            Ok(output) if output.status.success() => {}
            Ok(output) => {
                let said = String::from_utf8_lossy(&output.stderr).trim().lines().next().unwrap_or("").to_owned();
                return Err(format!("`{}` failed ({}): {said}", command.join(" "), output.status));
            }
            Err(err) => return Err(format!("cannot run `{}`: {err}", command.join(" "))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where no beed is installed beside beectl (npm's packages), the
    /// units run beectl under the name beed: systemd by `@PROGRAM NAME`,
    /// launchd by `Program` with `beed` as the whole argv.
    #[test]
    fn units_run_beectl_as_beed_where_no_beed_is_beside_it() {
        let beed = Beed { program: PathBuf::from("/opt/my tools/beectl"), arg0: Some("beed") };
        let unit = systemd_service(&beed, None);
        assert!(unit.contains("\nExecStart=@\"/opt/my tools/beectl\" beed\n"), "{unit}");
        let plist = launchd_plist(&beed, None, Path::new("/h/.bee/beed.log"));
        assert!(
            plist.contains(
                "  <key>Program</key>\n  <string>/opt/my tools/beectl</string>\n  <key>ProgramArguments</key>\n  <array>\n    <string>beed</string>\n  </array>"
            ),
            "{plist}"
        );
        let installed = Beed { program: PathBuf::from("/usr/local/bin/beed"), arg0: None };
        assert!(systemd_service(&installed, None).contains("\nExecStart=/usr/local/bin/beed\n"));
        let plist = launchd_plist(&installed, None, Path::new("/h/.bee/beed.log"));
        assert!(!plist.contains("<key>Program</key>") && plist.contains("<string>/usr/local/bin/beed</string>"));
    }
}
