//! Plans: steps (`id`, `title`, `dependsOn`, a declared `owner`, a state:
//! `open`, `claimed`, `reported_complete`, `blocked`) in a space, kept as an
//! append-only history in `${BEE_HOME}/.bee/plans-v1/history.jsonl`; the
//! current state is derived from it. A checkout is bound to a space
//! (`plan bind`), and the binding is live while the checkout is still at the
//! same physical path (same device and inode) and the binding was not
//! removed. Every write takes the history's exclusive lock, checks the
//! derived state and appends one line, so two claims of one step cannot
//! both land. Owners are declarations and `reported_complete` is the
//! owner's report, not independent QA: answers label them so.

use bee_proto::mcp::coded as error;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const HISTORY_FILE: &str = "history.jsonl";
/// The most steps a plan may have.
const MAX_STEPS: usize = 1_000;
/// Longest name (plan, space, step id, owner) taken.
const MAX_NAME_CHARS: usize = 200;

/// Why a plan operation failed: a stable code and a sentence.
pub type PlanError = bee_proto::mcp::CodedError;

/// A plan as `plan create` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlanFile {
    pub plan_id: String,
    pub space: String,
    #[serde(default)]
    pub title: String,
    pub steps: Vec<StepFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepFile {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Who is declared to do it.
    pub owner: Option<String>,
}

/// One line of the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Entry {
    Create { at_utc: String, plan: PlanFile },
    Claim { at_utc: String, plan_id: String, step: String, owner: String },
    Report { at_utc: String, plan_id: String, step: String, owner: String, state: State },
    Bind { at_utc: String, space: String, checkout: String, dev: u64, ino: u64 },
    Unbind { at_utc: String, checkout: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Open,
    Claimed,
    ReportedComplete,
    Blocked,
}

/// A step as derived now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub id: String,
    pub title: String,
    pub depends_on: Vec<String>,
    /// Declared, not checked.
    pub owner: Option<String>,
    pub state: State,
    /// Who claimed or reported it (their own word).
    pub by: Option<String>,
}

/// A plan as derived now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub plan_id: String,
    pub space: String,
    pub title: String,
    pub steps: Vec<Step>,
}

/// A plan as `plan show` prints it and `bee_plan_show` answers it, with its labels.
pub fn show_document(plan: &Plan) -> Value {
    json!({"schemaVersion": 1, "plan": plan, "labels": labels()})
}

/// What the labels in a plan's answers mean.
fn labels() -> Value {
    json!({"owner": "declared by the plan, not checked",
           "claimed": "the claimer's word",
           "reported_complete": "the owner's report, not independent QA"})
}

fn dir() -> Result<PathBuf, PlanError> {
    bee_proto::paths::bee_dir().map(|d| d.join("plans-v1")).ok_or_else(|| error("io", bee_proto::paths::NO_HOME))
}

fn name_ok(name: &str) -> bool {
    !name.trim().is_empty() && name.chars().count() <= MAX_NAME_CHARS && !name.chars().any(char::is_control)
}

/// The history, locked for as long as the returned file lives (exclusive
/// for a write, shared for a read), and its entries.
fn open(write: bool) -> Result<(std::fs::File, Vec<Entry>), PlanError> {
    let dir = dir()?;
    let path = dir.join(HISTORY_FILE);
    if !write && !path.exists() {
        return Err(error("plan_not_found", "no plan was created yet"));
    }
    crate::storage::files::ensure_private_dir(&dir).map_err(|err| error("io", format!("{}: {err}", dir.display())))?;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .open(&path)
        .map_err(|err| error("io", format!("{}: {err}", path.display())))?;
    let locked = if write { file.lock() } else { file.lock_shared() };
    locked.map_err(|err| error("io", format!("{}: {err}", path.display())))?;
    file.seek(SeekFrom::Start(0)).map_err(|err| error("io", err.to_string()))?;
    let mut entries = Vec::new();
    for line in BufReader::new(&file).lines() {
        let line = line.map_err(|err| error("io", err.to_string()))?;
        if line.trim().is_empty() {
            continue;
        }
        // A line this version cannot read is damage, never skipped quietly.
        let entry = serde_json::from_str(&line).map_err(|err| {
            error("plans_corrupt", format!("{}: a history line is not readable: {err}", path.display()))
        })?;
        entries.push(entry);
    }
    Ok((file, entries))
}

fn append(file: &mut std::fs::File, entry: &Entry) -> Result<(), PlanError> {
    let mut line = serde_json::to_vec(entry).map_err(|err| error("io", err.to_string()))?;
    line.push(b'\n');
    file.write_all(&line).and_then(|()| file.sync_data()).map_err(|err| error("io", err.to_string()))
}

/// Every plan, derived from the history in order.
fn derive(entries: &[Entry]) -> Vec<Plan> {
    let mut plans: Vec<Plan> = Vec::new();
    for entry in entries {
        match entry {
            Entry::Create { plan, .. } => plans.push(Plan {
                plan_id: plan.plan_id.clone(),
                space: plan.space.clone(),
                title: plan.title.clone(),
                steps: plan
                    .steps
                    .iter()
                    .map(|s| Step {
                        id: s.id.clone(),
                        title: s.title.clone(),
                        depends_on: s.depends_on.clone(),
                        owner: s.owner.clone(),
                        state: State::Open,
                        by: None,
                    })
                    .collect(),
            }),
            Entry::Claim { plan_id, step, owner, .. } | Entry::Report { plan_id, step, owner, .. } => {
                let state = match entry {
                    Entry::Report { state, .. } => *state,
                    _ => State::Claimed,
                };
                if let Some(found) = plans
                    .iter_mut()
                    .find(|p| &p.plan_id == plan_id)
                    .and_then(|p| p.steps.iter_mut().find(|s| &s.id == step))
                {
                    found.state = state;
                    found.by = Some(owner.clone());
                }
            }
            Entry::Bind { .. } | Entry::Unbind { .. } => {}
        }
    }
    plans
}

fn find<'a>(plans: &'a [Plan], plan_id: &str) -> Result<&'a Plan, PlanError> {
    plans.iter().find(|p| p.plan_id == plan_id).ok_or_else(|| error("plan_not_found", format!("no plan {plan_id:?}")))
}

/// Whether every step `step` depends on is reported complete.
fn ready(plan: &Plan, step: &Step) -> bool {
    step.state == State::Open
        && step.depends_on.iter().all(|d| plan.steps.iter().any(|s| &s.id == d && s.state == State::ReportedComplete))
}

/// `plan create`: the plan file checked (unique ids, known and acyclic
/// dependencies) and recorded.
pub fn create(plan: PlanFile) -> Result<Plan, PlanError> {
    if !name_ok(&plan.plan_id) || !name_ok(&plan.space) {
        return Err(error("invalid_usage", "planId and space: 1..200 characters, no control characters"));
    }
    if plan.steps.is_empty() || plan.steps.len() > MAX_STEPS {
        return Err(error("invalid_usage", format!("steps: 1..{MAX_STEPS}")));
    }
    for (n, step) in plan.steps.iter().enumerate() {
        if !name_ok(&step.id) || plan.steps[..n].iter().any(|s| s.id == step.id) {
            return Err(error("invalid_usage", format!("step {}: ids are unique, 1..200 characters", n + 1)));
        }
        if let Some(missing) = step.depends_on.iter().find(|d| !plan.steps.iter().any(|s| &s.id == *d)) {
            return Err(error("invalid_usage", format!("step {:?} depends on {missing:?}, which is no step", step.id)));
        }
    }
    // Acyclic: repeatedly take the steps whose dependencies are taken.
    let mut taken: Vec<&str> = Vec::new();
    while taken.len() < plan.steps.len() {
        let next = plan
            .steps
            .iter()
            .find(|s| !taken.contains(&s.id.as_str()) && s.depends_on.iter().all(|d| taken.contains(&d.as_str())));
        match next {
            Some(step) => taken.push(&step.id),
            None => return Err(error("dependency_cycle", "the steps' dependsOn go round")),
        }
    }
    let (mut file, entries) = open(true)?;
    if derive(&entries).iter().any(|p| p.plan_id == plan.plan_id) {
        return Err(error("plan_exists", format!("a plan {:?} exists already", plan.plan_id)));
    }
    append(&mut file, &Entry::Create { at_utc: bee_proto::time::now_rfc3339(), plan: plan.clone() })?;
    let plans = derive(&[Entry::Create { at_utc: String::new(), plan }]);
    plans.into_iter().next().ok_or_else(|| error("io", "the plan was not derived"))
}

/// Changes one step of one plan under the history's lock: `check` sees
/// the plan and the step as they are now, then `entry` is appended.
fn change_step(
    plan_id: &str,
    step: &str,
    check: impl Fn(&Plan, &Step) -> Result<(), PlanError>,
    entry: Entry,
) -> Result<Plan, PlanError> {
    let (mut file, mut entries) = open(true)?;
    let plans = derive(&entries);
    let plan = find(&plans, plan_id)?;
    let found = plan
        .steps
        .iter()
        .find(|s| s.id == step)
        .ok_or_else(|| error("step_not_found", format!("no step {step:?} in {plan_id:?}")))?;
    check(plan, found)?;
    append(&mut file, &entry)?;
    entries.push(entry);
    find(&derive(&entries), plan_id).cloned()
}

/// `plan claim`: an open, ready step taken by `owner`.
pub fn claim(plan_id: &str, step: &str, owner: &str) -> Result<Plan, PlanError> {
    if !name_ok(owner) {
        return Err(error("invalid_usage", "--owner: 1..200 characters"));
    }
    let entry = Entry::Claim {
        at_utc: bee_proto::time::now_rfc3339(),
        plan_id: plan_id.to_owned(),
        step: step.to_owned(),
        owner: owner.to_owned(),
    };
    let check = |plan: &Plan, found: &Step| {
        if found.state != State::Open {
            return Err(error("step_not_open", format!("step {step:?} is {:?}, not open", found.state)));
        }
        if !ready(plan, found) {
            return Err(error("step_not_ready", format!("step {step:?} waits for {:?}", found.depends_on)));
        }
        Ok(())
    };
    change_step(plan_id, step, check, entry)
}

/// `plan report`: the claimer's report that its step is complete (or blocked).
pub fn report(plan_id: &str, step: &str, owner: &str, blocked: bool) -> Result<Plan, PlanError> {
    let state = if blocked { State::Blocked } else { State::ReportedComplete };
    let entry = Entry::Report {
        at_utc: bee_proto::time::now_rfc3339(),
        plan_id: plan_id.to_owned(),
        step: step.to_owned(),
        owner: owner.to_owned(),
        state,
    };
    let check = |_: &Plan, found: &Step| {
        if found.state != State::Claimed || found.by.as_deref() != Some(owner) {
            return Err(error("step_not_claimed", format!("step {step:?} is not claimed by {owner:?}")));
        }
        Ok(())
    };
    change_step(plan_id, step, check, entry)
}

/// `plan show`.
pub fn show(plan_id: &str) -> Result<Plan, PlanError> {
    let (_file, entries) = open(false)?;
    find(&derive(&entries), plan_id).cloned()
}

fn identity(checkout: &Path) -> Result<(String, u64, u64), PlanError> {
    let physical = std::fs::canonicalize(checkout)
        .map_err(|err| error("invalid_usage", format!("{}: {err}", checkout.display())))?;
    let meta = std::fs::metadata(&physical).map_err(|err| error("io", err.to_string()))?;
    if !meta.is_dir() {
        return Err(error("invalid_usage", format!("{} is not a directory", physical.display())));
    }
    Ok((physical.display().to_string(), meta.dev(), meta.ino()))
}

/// `plan bind`: `checkout` (made physical) bound to `space`.
pub fn bind(checkout: &Path, space: &str) -> Result<Value, PlanError> {
    if !name_ok(space) {
        return Err(error("invalid_usage", "--space: 1..200 characters"));
    }
    let (path, dev, ino) = identity(checkout)?;
    let (mut file, _) = open(true)?;
    append(
        &mut file,
        &Entry::Bind {
            at_utc: bee_proto::time::now_rfc3339(),
            space: space.to_owned(),
            checkout: path.clone(),
            dev,
            ino,
        },
    )?;
    Ok(json!({"checkout": path, "space": space}))
}

/// `plan unbind`: the checkout's binding removed.
pub fn unbind(checkout: &Path) -> Result<Value, PlanError> {
    let (path, _, _) = identity(checkout)?;
    let (mut file, _) = open(true)?;
    append(&mut file, &Entry::Unbind { at_utc: bee_proto::time::now_rfc3339(), checkout: path.clone() })?;
    Ok(json!({"checkout": path, "space": null}))
}

/// The space `checkout` is bound to now: its latest binding not removed,
/// the checkout still at that path with the same device and inode.
fn live_space(entries: &[Entry], checkout: &Path) -> Result<String, PlanError> {
    let unavailable = |why: String| error("binding_unavailable", why);
    let shown = checkout.display().to_string();
    let mut binding: Option<(String, u64, u64)> = None;
    for entry in entries {
        match entry {
            Entry::Bind { checkout, space, dev, ino, .. } if *checkout == shown => {
                binding = Some((space.clone(), *dev, *ino))
            }
            Entry::Unbind { checkout, .. } if *checkout == shown => binding = None,
            _ => {}
        }
    }
    let (space, dev, ino) =
        binding.ok_or_else(|| unavailable(format!("{shown} is bound to no space (beectl plan bind --space NAME)")))?;
    match std::fs::metadata(checkout) {
        Ok(meta) if meta.dev() == dev && meta.ino() == ino => Ok(space),
        _ => Err(unavailable(format!("{shown} is not the checkout that was bound (moved or replaced)"))),
    }
}

/// `bee_plan_show`: the plan, only when it is in the live-bound space of `checkout`.
pub fn show_bound(checkout: &Path, plan_id: &str) -> Result<Plan, PlanError> {
    let (_file, entries) = open(false)?;
    let space = live_space(&entries, checkout)?;
    let plans = derive(&entries);
    let plan = find(&plans, plan_id)?;
    if plan.space != space {
        return Err(error("plan_not_found", format!("no plan {plan_id:?} in this checkout's space {space:?}")));
    }
    Ok(plan.clone())
}

/// `bee_plan_next`: up to `limit` ready steps, whether there are more, and
/// how many steps were skipped, by why.
pub fn next(checkout: &Path, plan_id: &str, limit: usize) -> Result<Value, PlanError> {
    let plan = show_bound(checkout, plan_id)?;
    let ready_steps: Vec<&Step> = plan.steps.iter().filter(|s| ready(&plan, s)).collect();
    let count = |state: State| plan.steps.iter().filter(|s| s.state == state).count();
    let waiting = plan.steps.iter().filter(|s| s.state == State::Open && !ready(&plan, s)).count();
    Ok(json!({
        "planId": plan.plan_id,
        "space": plan.space,
        "ready": ready_steps.iter().take(limit).collect::<Vec<_>>(),
        "hasMore": ready_steps.len() > limit,
        "skipped": {"waiting": waiting, "claimed": count(State::Claimed), "blocked": count(State::Blocked),
                    "reportedComplete": count(State::ReportedComplete)},
        "labels": labels(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> PlanFile {
        let step = |id: &str, depends: &[&str]| StepFile {
            id: id.into(),
            title: id.into(),
            depends_on: depends.iter().map(|d| (*d).to_owned()).collect(),
            owner: Some("ana".into()),
        };
        PlanFile {
            plan_id: "p".into(),
            space: "s".into(),
            title: String::new(),
            steps: vec![step("a", &[]), step("b", &["a"])],
        }
    }

    #[test]
    fn the_state_is_derived_from_the_history_in_order() {
        let at = String::new;
        let entries = vec![
            Entry::Create { at_utc: at(), plan: plan() },
            Entry::Claim { at_utc: at(), plan_id: "p".into(), step: "a".into(), owner: "ana".into() },
            Entry::Report {
                at_utc: at(),
                plan_id: "p".into(),
                step: "a".into(),
                owner: "ana".into(),
                state: State::ReportedComplete,
            },
            // A line about another plan's step changes nothing here.
            Entry::Claim { at_utc: at(), plan_id: "q".into(), step: "b".into(), owner: "bo".into() },
        ];
        let plans = derive(&entries);
        let p = &plans[0];
        assert_eq!((p.steps[0].state, p.steps[0].by.as_deref()), (State::ReportedComplete, Some("ana")));
        assert!(ready(p, &p.steps[1]), "b's dependency is reported complete");
        assert!(!ready(p, &p.steps[0]), "a is no longer open");
        let before = derive(&entries[..1]);
        assert!(!ready(&before[0], &before[0].steps[1]), "b waits for a");
    }

    #[test]
    fn a_history_line_this_version_cannot_read_is_damage() {
        let line = r#"{"kind":"claim","planId":"p"}"#;
        assert!(serde_json::from_str::<Entry>(line).is_err());
        let written = serde_json::to_string(&Entry::Create { at_utc: "t".into(), plan: plan() }).unwrap();
        assert_eq!(
            serde_json::from_str::<Entry>(&written).unwrap(),
            Entry::Create { at_utc: "t".into(), plan: plan() }
        );
    }
}
