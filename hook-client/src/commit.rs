//! `bee-hook commit`, for a git `post-commit` hook: credits the new commit
//! as a `work` record to the provider whose run or session made it.
//!
//! The provider comes from the environment the commit ran in, which git
//! passes to its hooks: `BEE_RUN_PROVIDER` (set by `beectl run` for the CLI
//! it wraps), `CLAUDECODE` (set by Claude Code for the commands it runs), or
//! `CODEX_SANDBOX` / `CODEX_SANDBOX_NETWORK_DISABLED` (set by Codex). With
//! none of them the commit is not credited: a commit is the evidence, and a
//! claim without a provider is not one. It prints nothing and exits 0, so a
//! commit never fails because of it.

use bee_proto::ledger::{LedgerRecord, Provider, WorkRecord};
use std::process::{Command, ExitCode, Stdio};

use crate::ledger;

/// Set by `beectl run` for the provider CLI it runs.
pub const RUN_PROVIDER_ENV: &str = "BEE_RUN_PROVIDER";

pub fn run() -> ExitCode {
    let Some(provider) = provider_from(|name| std::env::var(name).ok()) else { return ExitCode::SUCCESS };
    let Some(commit) = head_commit() else { return ExitCode::SUCCESS };
    ledger::record(vec![LedgerRecord::Work(WorkRecord {
        record_id: uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, format!("bee-work\u{1f}{commit}").as_bytes()),
        at_utc: bee_proto::time::now_rfc3339(),
        provider,
        commit_hash: commit,
        run_mode: "thread".to_owned(),
        task_id: String::new(),
    })]);
    ExitCode::SUCCESS
}

/// The provider the environment names, if any.
fn provider_from(env: impl Fn(&str) -> Option<String>) -> Option<Provider> {
    if let Some(named) = env(RUN_PROVIDER_ENV) {
        return Provider::from_name(&named);
    }
    if env("CLAUDECODE").is_some() {
        return Some(Provider::Claude);
    }
    if env("CODEX_SANDBOX").is_some() || env("CODEX_SANDBOX_NETWORK_DISABLED").is_some() {
        return Some(Provider::Codex);
    }
    None
}

fn head_commit() -> Option<String> {
    let output =
        Command::new("git").args(["rev-parse", "HEAD"]).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    let hash = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (output.status.success() && (7..=64).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_provider_comes_from_the_environment_or_not_at_all() {
        let with = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(provider_from(with(&[(RUN_PROVIDER_ENV, "codex"), ("CLAUDECODE", "1")])), Some(Provider::Codex));
        assert_eq!(provider_from(with(&[("CLAUDECODE", "1")])), Some(Provider::Claude));
        assert_eq!(provider_from(with(&[("CODEX_SANDBOX", "seatbelt")])), Some(Provider::Codex));
        assert_eq!(provider_from(with(&[])), None);
        assert_eq!(provider_from(with(&[(RUN_PROVIDER_ENV, "not-an-agent")])), None);
    }
}
