//! Cline's hook files as Bee writes them (`beectl setup --agent cline`,
//! in `cline.rs` beside this file): where Cline looks for them, their text,
//! and whether they are in place — what `beectl agents` reads, with no
//! part of setup's machinery.

use bee_proto::ledger::{Provider, TurnEdge};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::file_change::FileChange;

/// The line that marks a hook file as Bee's.
pub(crate) const MARK: &str = "# Bee's turn mark for Cline: `beectl setup --agent cline --undo` removes this file.";

/// The command every Bee hook file of Cline's ends with.
pub(crate) const COMMAND_TAIL: &str = " turn --agent cline";

/// Cline's user hooks folder: `$CLINE_DIR/hooks`, else `~/.cline/hooks`.
pub(crate) fn hooks_dir(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    let home =
        set("CLINE_DIR").map(PathBuf::from).or_else(|| set("HOME").map(|home| Path::new(&home).join(".cline")))?;
    Some(home.join("hooks"))
}

/// The hook file Bee writes for one of Cline's turn events.
pub(crate) fn script(bee_hook: &str) -> String {
    format!("#!/bin/sh\n{MARK}\nexec {bee_hook}{COMMAND_TAIL}\n")
}

/// Whether `text` is a hook file Bee wrote (whichever `bee-hook` it runs).
pub(crate) fn is_bees(text: &str) -> bool {
    text.lines().nth(1) == Some(MARK) && text.trim_end().ends_with(COMMAND_TAIL)
}

/// Whether Cline runs Bee's turn marks now: both files are Bee's and
/// executable (`beectl agents`).
pub(crate) fn wired() -> bool {
    let Some(dir) = hooks_dir(&|name| std::env::var_os(name)) else { return false };
    turn_events().iter().all(|event| {
        let path = dir.join(event);
        let executable =
            std::fs::metadata(&path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o100 != 0);
        executable && FileChange::read(&path).ok().flatten().is_some_and(|text| is_bees(&text))
    })
}

pub(crate) fn turn_events() -> [&'static str; 2] {
    TurnEdge::events(Provider::Cline).unwrap_or(["TaskStart", "TaskComplete"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_hooks_folder_by_its_own_variable_else_under_home() {
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            _ => None,
        };
        assert_eq!(hooks_dir(&env), Some(PathBuf::from("/h/.cline/hooks")));
        let moved = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "CLINE_DIR" => Some(OsString::from("/c")),
            _ => None,
        };
        assert_eq!(hooks_dir(&moved), Some(PathBuf::from("/c/hooks")));
        assert_eq!(hooks_dir(&|_| None), None);
    }

    /// Bee's file is known by its mark and its command, whatever
    /// `bee-hook` it runs; a user's own hook is not Bee's.
    #[test]
    fn bees_hook_file_and_the_users_own() {
        let ours = script("'/opt/bee bin/bee-hook'");
        assert!(ours.starts_with("#!/bin/sh\n") && is_bees(&ours), "{ours}");
        assert!(is_bees(&script("/usr/local/bin/bee-hook")));
        assert!(!is_bees("#!/bin/sh\necho mine\n"));
        assert!(!is_bees(&format!("#!/bin/sh\necho mine\nexec bee-hook{COMMAND_TAIL}\n")), "no mark, not Bee's");
        assert!(!is_bees(""));
    }
}
