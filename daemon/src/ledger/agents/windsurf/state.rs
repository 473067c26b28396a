//! A Windsurf workspace's state database: VS Code's `ItemTable` (`key`,
//! `value`), the editor's state for one workspace. Nothing in it is a
//! provider response or carries a token count: Windsurf's Cascade
//! conversations, the only record of its calls, are kept encrypted in
//! `~/.codeium/windsurf/cascade/<id>.pb`, and their usage is told only by
//! its running language server (see `README.md`). The reader opens the
//! database read-only, to tell it is one, and finds no response: it never
//! estimates one from text or from a count of messages.

use std::path::Path;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::whole::has_table;
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The reader of a Windsurf workspace's state database.
pub(crate) struct WorkspaceState;

impl WholeFileReader for WorkspaceState {
    /// Nothing to count: a database without `ItemTable` is none of
    /// Windsurf's, and one with it holds no usage. A file that is no
    /// database is an error, as for every database reader.
    fn read(&self, path: &Path, _state: &AgentState, _out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        has_table(path, "ItemTable")?;
        Ok((AgentState::default(), 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, noted};

    const SCHEMA: &str = "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);";

    fn read(path: &Path) -> std::io::Result<(usize, u64)> {
        let mut evidence = Vec::new();
        let (_, refused) = WorkspaceState.read(path, &AgentState::default(), &mut evidence)?;
        Ok((evidence.len(), refused))
    }

    /// A workspace's state as Windsurf writes it — its folder, its editor
    /// state, a chat-like value with counts in it — is no response, read
    /// once or again: nothing is counted, nothing estimated.
    #[test]
    fn a_workspace_state_holds_no_response_read_once_or_again() {
        let (_dir, path, db) = database("state.vscdb", SCHEMA);
        let insert = "INSERT INTO ItemTable (key, value) VALUES (?1, ?2)";
        db.execute(insert, ("codeium.windsurf", r#"{"apiServerUrl":"https://server.example"}"#)).unwrap();
        db.execute(insert, ("workbench.panel.aichat.view.aichat.chatdata", r#"{"tabs":[{"bubbles":[{"type":"ai","text":"hello","tokenCount":{"inputTokens":10,"outputTokens":5}}]}]}"#)).unwrap();
        db.execute(insert, ("memento/workbench.parts.editor", "{}")).unwrap();
        assert_eq!(read(&path).unwrap(), (0, 0));
        assert_eq!(read(&path).unwrap(), (0, 0), "read again: still nothing");
    }

    /// A file that is no database is an error, never a panic; a database
    /// without `ItemTable` (an empty store) holds nothing.
    #[test]
    fn malformed_and_empty_stores() {
        let dir = tempfile::tempdir().unwrap();
        let broken = dir.path().join("state.vscdb");
        std::fs::write(&broken, b"\xff\xfe not a database").unwrap();
        assert!(read(&broken).is_err());
        let (_dir, empty, _db) = database("state.vscdb", "CREATE TABLE other (x)");
        assert_eq!(read(&empty).unwrap(), (0, 0));
        let (_dir, blank, _db) = database("state.vscdb", SCHEMA);
        assert_eq!(read(&blank).unwrap(), (0, 0));
    }

    /// Values that are huge, not UTF-8 or of any type are never read:
    /// nothing is counted and nothing is named.
    #[test]
    fn hostile_values_are_never_read() {
        let (_dir, path, db) = database("state.vscdb", SCHEMA);
        let insert = "INSERT INTO ItemTable (key, value) VALUES (?1, ?2)";
        db.execute(insert, ("a", b"\xff\xff\xff".to_vec())).unwrap();
        db.execute(insert, ("b", i64::MAX)).unwrap();
        db.execute("INSERT INTO ItemTable (key, value) VALUES ('c', zeroblob(1 << 20))", []).unwrap();
        let _ = noted();
        assert_eq!(read(&path).unwrap(), (0, 0));
        assert!(noted().is_empty());
    }
}
