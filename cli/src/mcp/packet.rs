//! `beectl context packet` and `bee_context_packet`: sources an agent
//! selected on purpose, packed within a byte budget. Each selection is a
//! file under the root (the same path rules as `token estimate`) as an
//! `index` (path, size, lines), an `outline` (top-level symbols from a real
//! parser) or a `body` (the text, or one `symbol` or line `range` of it),
//! optionally pinned by the file's sha256, emitted dependencies first, each
//! with its exact o200k token count. Required content that does not fit the
//! budget makes the answer `needs_refinement` naming it — nothing of it is
//! reported as read; optional selections that do not fit are listed as
//! omitted.

use bee_daemon::rendered::Rendered;
use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;
use bee_proto::mcp::{BUDGET_BYTES, DEFAULT_BUDGET_BYTES};
use bee_proto::tokens::Encoding;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

use crate::mcp::outline::{self, Symbol};

/// The most selections one manifest may make.
const MAX_SELECTIONS: usize = 512;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    selections: Vec<Selection>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Selection {
    id: String,
    path: String,
    representation: Representation,
    symbol: Option<String>,
    range: Option<String>,
    hash: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    depends_on: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
enum Representation {
    Index,
    Outline,
    Body,
}

fn failed(code: &str, message: impl Into<String>) -> Rendered {
    Rendered::json(Exit::Unavailable, &CommandError::unavailable(code, message))
}

/// One thing wrong with a manifest, named by its selection (`-`: the
/// manifest as a whole).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub id: String,
    pub code: String,
    pub message: String,
}

fn problem(id: &str, code: &str, message: impl Into<String>) -> Problem {
    Problem { id: id.to_owned(), code: code.to_owned(), message: message.into() }
}

impl Problem {
    /// The problem as the command's error document.
    fn rendered(&self) -> Rendered {
        if self.code == "invalid_usage" {
            Rendered::invalid_usage(self.message.clone())
        } else {
            failed(&self.code, self.message.clone())
        }
    }
}

/// The selections in dependency order (ties in manifest order), or the
/// problems with their `dependsOn`.
fn ordered(selections: &[Selection]) -> Result<Vec<usize>, Vec<Problem>> {
    let index_of = |id: &str| selections.iter().position(|s| s.id == id);
    let unknown: Vec<Problem> = selections
        .iter()
        .flat_map(|s| s.depends_on.iter().filter(|d| index_of(d).is_none()).map(move |d| (s, d)))
        .map(|(s, d)| {
            problem(&s.id, "invalid_usage", format!("selection {:?} depends on {d:?}, which no selection is", s.id))
        })
        .collect();
    if !unknown.is_empty() {
        return Err(unknown);
    }
    let mut done: Vec<usize> = Vec::with_capacity(selections.len());
    while done.len() < selections.len() {
        let ready = (0..selections.len()).find(|i| {
            !done.contains(i)
                && selections[*i].depends_on.iter().all(|d| index_of(d).is_some_and(|j| done.contains(&j)))
        });
        match ready {
            Some(i) => done.push(i),
            None => {
                let stuck: Vec<&str> =
                    (0..selections.len()).filter(|i| !done.contains(i)).map(|i| selections[i].id.as_str()).collect();
                return Err(stuck
                    .iter()
                    .map(|id| problem(id, "dependency_cycle", format!("dependsOn goes round among {stuck:?}")))
                    .collect());
            }
        }
    }
    Ok(done)
}

/// `START-END` (1-based, inclusive) within `lines`.
fn line_range(text: &str, lines: usize) -> Option<(usize, usize)> {
    let (start, end) = text.split_once('-')?;
    let (start, end) = (start.trim().parse::<usize>().ok()?, end.trim().parse::<usize>().ok()?);
    (start >= 1 && start <= end && end <= lines).then_some((start, end))
}

fn lines_of(text: &str, start: usize, end: usize) -> String {
    text.split_inclusive('\n').skip(start - 1).take(end + 1 - start).collect()
}

/// What one selection delivers, before the budget.
struct Packed {
    id: String,
    required: bool,
    /// The selection as the answer carries it (its tokens once counted).
    entry: Value,
    /// The text its tokens are counted over.
    content: String,
}

fn code_name(code: impl Serialize) -> String {
    serde_json::to_value(code).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// When the work of a call that starts now must be over: the tool's
/// deadline. Reading, outlining and counting stop there, between files and
/// between counts, so a call the MCP server answered `timeout` leaves
/// nothing running behind it.
fn work_deadline() -> Instant {
    Instant::now() + crate::mcp::transport::tool_timeout()
}

/// Reads and renders every selection of `manifest_text` in dependency
/// order, until `deadline`. With `all`, every problem is gathered (the
/// doctor); otherwise the first one ends it.
fn prepare(manifest_text: &str, root: Option<&str>, all: bool, deadline: Instant) -> Result<Vec<Packed>, Vec<Problem>> {
    let over = || {
        let limit = crate::mcp::transport::tool_timeout().as_millis();
        vec![problem("-", "timeout", format!("the selections took longer than {limit} ms to read and outline"))]
    };
    let manifest: Manifest = serde_json::from_str(manifest_text)
        .map_err(|err| vec![problem("-", "invalid_usage", format!("the manifest: {err}"))])?;
    let selections = manifest.selections;
    if selections.is_empty() || selections.len() > MAX_SELECTIONS {
        return Err(vec![problem("-", "invalid_usage", format!("the manifest: 1..{MAX_SELECTIONS} selections"))]);
    }
    let mut problems = Vec::new();
    for (n, selection) in selections.iter().enumerate() {
        let id = selection.id.as_str();
        if id.is_empty() || selections[..n].iter().any(|s| s.id == id) {
            problems.push(problem(id, "invalid_usage", format!("selection {}: ids are unique and not empty", n + 1)));
        }
        if (selection.symbol.is_some() || selection.range.is_some()) && selection.representation != Representation::Body
        {
            problems.push(problem(id, "invalid_usage", format!("selection {id:?}: symbol and range are for a body")));
        }
        if selection.symbol.is_some() && selection.range.is_some() {
            problems.push(problem(id, "invalid_usage", format!("selection {id:?}: a symbol or a range, not both")));
        }
    }
    if !problems.is_empty() && !all {
        return Err(problems);
    }
    let order = match ordered(&selections) {
        Ok(order) => order,
        Err(found) if all => {
            problems.extend(found);
            (0..selections.len()).collect()
        }
        Err(found) => return Err(found),
    };
    // Every distinct file once, by the token estimate's rules and its total
    // limit; the doctor goes on past an unreadable file to the next.
    let mut reader = crate::input::Files::open(root).map_err(|code| {
        vec![problem("-", &code_name(code), "the root must be an existing, absolute, physical directory")]
    })?;
    let mut total = 0u64;
    let mut files: Vec<(String, Result<String, Problem>)> = Vec::new();
    for selection in &selections {
        if Instant::now() > deadline {
            return Err(over());
        }
        if files.iter().any(|(path, _)| path == &selection.path) {
            continue;
        }
        let read = reader.read(&selection.path).and_then(|bytes| crate::input::counted(&mut total, bytes));
        let read = read.map_err(|code| {
            problem(
                &selection.id,
                &code_name(code),
                format!("selection {:?}: {} cannot be read under the root's path rules", selection.id, selection.path),
            )
        });
        if let (Err(found), false) = (&read, all) {
            return Err(vec![found.clone()]);
        }
        files.push((selection.path.clone(), read));
    }
    let mut packed = Vec::with_capacity(order.len());
    for &i in &order {
        if Instant::now() > deadline {
            return Err(over());
        }
        let selection = &selections[i];
        let text = match files.iter().find(|(p, _)| p == &selection.path).map(|(_, read)| read) {
            Some(Ok(text)) => text.as_str(),
            Some(Err(found)) => {
                if found.id != selection.id {
                    problems.push(Problem { id: selection.id.clone(), ..found.clone() });
                } else {
                    problems.push(found.clone());
                }
                continue;
            }
            None => continue,
        };
        match render(selection, text) {
            Ok(item) => packed.push(item),
            Err(found) if all => problems.push(found),
            Err(found) => return Err(vec![found]),
        }
    }
    if problems.is_empty() { Ok(packed) } else { Err(problems) }
}

/// One selection of `text` (its file) as delivered.
fn render(selection: &Selection, text: &str) -> Result<Packed, Problem> {
    let id = selection.id.as_str();
    let sha = bee_daemon::context::artifacts::sha256(text.as_bytes());
    if let Some(pinned) = &selection.hash {
        let pinned = pinned.strip_prefix("sha256:").unwrap_or(pinned);
        if !pinned.eq_ignore_ascii_case(&sha) {
            return Err(problem(
                id,
                "hash_mismatch",
                format!("selection {id:?}: {} is sha256 {sha}, not the pinned {pinned}", selection.path),
            ));
        }
    }
    let lines = text.lines().count();
    let mut entry = json!({"id": id, "path": selection.path, "representation": selection.representation,
                           "required": selection.required, "sha256": sha, "bytes": text.len(), "lines": lines});
    let content = match selection.representation {
        Representation::Index => format!("{}\t{} bytes\t{lines} lines", selection.path, text.len()),
        Representation::Outline => {
            let Some(symbols) = outline::outline(&selection.path, text) else {
                return Err(problem(
                    id,
                    "outline_unsupported",
                    format!(
                        "selection {id:?}: no outline for {} (Rust, Python, TypeScript/JavaScript, Go, C#, Markdown)",
                        selection.path
                    ),
                ));
            };
            let rendered: String =
                symbols.iter().map(|s| format!("{} {} {}-{}\n", s.kind, s.name, s.start_line, s.end_line)).collect();
            entry["outline"] = json!(symbols);
            rendered
        }
        Representation::Body => {
            let body = match (&selection.symbol, &selection.range) {
                (Some(name), _) => {
                    let symbols: Vec<Symbol> = outline::outline(&selection.path, text).unwrap_or_default();
                    let matching: Vec<&Symbol> = symbols.iter().filter(|s| &s.name == name).collect();
                    match matching.as_slice() {
                        [one] => {
                            entry["symbol"] = json!(name);
                            entry["range"] = json!(format!("{}-{}", one.start_line, one.end_line));
                            lines_of(text, one.start_line, one.end_line)
                        }
                        [] => {
                            return Err(problem(
                                id,
                                "symbol_not_found",
                                format!("selection {id:?}: no top-level symbol {name:?} in {}", selection.path),
                            ));
                        }
                        _ => {
                            return Err(problem(
                                id,
                                "symbol_ambiguous",
                                format!(
                                    "selection {id:?}: {} top-level symbols are named {name:?}; select a range",
                                    matching.len()
                                ),
                            ));
                        }
                    }
                }
                (None, Some(range)) => match line_range(range, lines) {
                    Some((start, end)) => {
                        entry["range"] = json!(format!("{start}-{end}"));
                        lines_of(text, start, end)
                    }
                    None => {
                        return Err(problem(
                            id,
                            "invalid_usage",
                            format!("selection {id:?}: range {range:?} is not START-END within 1-{lines}"),
                        ));
                    }
                },
                (None, None) => text.to_owned(),
            };
            entry["body"] = json!(body);
            body
        }
    };
    if entry.to_string().len() > *BUDGET_BYTES.end() as usize {
        return Err(problem(
            id,
            "selection_too_large",
            format!(
                "selection {id:?} alone is over {} bytes: no budget holds it; select an outline, a symbol or a range",
                BUDGET_BYTES.end()
            ),
        ));
    }
    Ok(Packed { id: id.to_owned(), required: selection.required, entry, content })
}

/// Every selection prepared and counted, or the first problem as the
/// command's error document.
fn counted(manifest_text: &str, root: Option<&str>) -> Result<Vec<Packed>, Rendered> {
    let deadline = work_deadline();
    let mut packed = prepare(manifest_text, root, false, deadline)
        .map_err(|problems| problems.first().map(Problem::rendered).unwrap_or_else(|| failed("io", "no selection")))?;
    count(&mut packed, deadline)?;
    Ok(packed)
}

/// Counts each selection's tokens (o200k) into its entry.
fn count(packed: &mut [Packed], work: Instant) -> Result<(), Rendered> {
    let contents: Vec<String> = packed.iter().map(|p| p.content.clone()).collect();
    let deadline = work.min(Instant::now() + Duration::from_millis(bee_proto::tokens::COMMAND_MILLIS));
    let counts = crate::commands::token::count(Encoding::O200kBase, &contents, deadline)
        .map_err(|failure| failed(&code_name(failure.code), "the selections could not be counted in o200k_base"))?;
    for (item, count) in packed.iter_mut().zip(counts) {
        item.entry["tokens"] = json!(count);
    }
    Ok(())
}

pub fn packet(manifest_text: &str, budget: Option<u64>, root: Option<&str>) -> Rendered {
    let budget = budget.unwrap_or(DEFAULT_BUDGET_BYTES);
    if !BUDGET_BYTES.contains(&budget) {
        return Rendered::invalid_usage(format!("--budget-bytes: {}..{}", BUDGET_BYTES.start(), BUDGET_BYTES.end()));
    }
    match counted(manifest_text, root) {
        Ok(packed) => fit(packed, budget as usize),
        Err(rendered) => rendered,
    }
}

/// `beectl context doctor`: every problem of a manifest before it is used,
/// each with its selection's id (exit 5 when there is any).
pub fn doctor(manifest_text: &str, root: Option<&str>) -> Rendered {
    let selections = serde_json::from_str::<Manifest>(manifest_text).map(|m| m.selections.len()).ok();
    match prepare(manifest_text, root, true, work_deadline()) {
        Ok(packed) => Rendered::json(
            Exit::Success,
            &json!({"schemaVersion": 1, "status": "ok", "selections": packed.len(), "problems": []}),
        ),
        Err(problems) => Rendered::json(
            Exit::Unavailable,
            &json!({"schemaVersion": 1, "status": "problems", "selections": selections, "problems": problems}),
        ),
    }
}

/// `beectl budget --manifest`: what the manifest's selections cost, each
/// (the bytes of its entry in a packet and its exact o200k tokens), per
/// call and for `calls` calls.
pub fn budget(manifest_text: &str, root: Option<&str>, calls: u64) -> Rendered {
    let packed = match counted(manifest_text, root) {
        Ok(packed) => packed,
        Err(rendered) => return rendered,
    };
    let rows: Vec<Value> = packed
        .iter()
        .map(|p| {
            json!({"id": p.id, "path": p.entry["path"], "representation": p.entry["representation"],
                   "required": p.required, "bytes": p.entry.to_string().len(), "tokens": p.entry["tokens"]})
        })
        .collect();
    let bytes: u64 = rows.iter().filter_map(|r| r["bytes"].as_u64()).sum();
    let tokens: u64 = rows.iter().filter_map(|r| r["tokens"].as_u64()).sum();
    let total = |n: u64| n.checked_mul(calls);
    Rendered::json(
        Exit::Success,
        &json!({"schemaVersion": 1, "encoding": "o200k_base", "calls": calls, "selections": rows,
                "perCall": {"bytes": bytes, "tokens": tokens},
                "forCalls": {"bytes": total(bytes), "tokens": total(tokens)},
                "unknown": ["framing_around_the_packet", "what_the_agent_does_with_it"]}),
    )
}

/// The answer carrying `kept` selections (in their order) and listing
/// `omitted` ones.
fn answer(packed: &[Packed], kept: &[bool], omitted: &[(String, usize)], budget: usize) -> Value {
    let selections: Vec<&Value> = packed.iter().zip(kept).filter(|(_, k)| **k).map(|(p, _)| &p.entry).collect();
    json!({"schemaVersion": 1, "status": "complete", "budgetBytes": budget, "encoding": "o200k_base",
           "selections": selections,
           "omitted": omitted.iter().map(|(id, bytes)| json!({"id": id, "bytes": bytes, "reason": "budget"})).collect::<Vec<_>>()})
}

/// Packs what fits `budget` bytes of answer: every required selection, or
/// `needs_refinement` naming the ones that did not fit; then the optional
/// ones in order while they fit, the rest listed as omitted. Sizes are
/// added up (each entry with a separator, so never under the real size).
fn fit(packed: Vec<Packed>, budget: usize) -> Rendered {
    let sizes: Vec<usize> = packed.iter().map(|p| p.entry.to_string().len() + 1).collect();
    let listing = |i: usize| json!({"id": packed[i].id, "bytes": sizes[i], "reason": "budget"}).to_string().len() + 1;
    let empty = answer(&packed, &vec![false; packed.len()], &[], budget).to_string().len();
    let optional: Vec<usize> = (0..packed.len()).filter(|i| !packed[*i].required).collect();
    let required: Vec<usize> = (0..packed.len()).filter(|i| packed[*i].required).collect();
    // At worst every optional selection is listed as omitted.
    let mut used = empty + optional.iter().map(|i| listing(*i)).sum::<usize>();
    let needed = used + required.iter().map(|i| sizes[*i]).sum::<usize>();
    if needed > budget {
        let mut running = used;
        let did_not_fit: Vec<Value> = required
            .iter()
            .filter(|i| {
                running += sizes[**i];
                running > budget
            })
            .map(|i| json!({"id": packed[*i].id, "bytes": sizes[*i]}))
            .collect();
        let refinement = json!({"schemaVersion": 1, "status": "needs_refinement", "budgetBytes": budget,
            "neededBytes": needed, "didNotFit": did_not_fit,
            "message": "required selections do not fit the budget: narrow them (an outline, a symbol, a range) or raise the budget; none of them was read"});
        return Rendered::json(Exit::Unavailable, &refinement);
    }
    used = needed;
    let mut kept: Vec<bool> = packed.iter().map(|p| p.required).collect();
    let mut omitted = Vec::new();
    for i in optional {
        if used - listing(i) + sizes[i] <= budget {
            used = used - listing(i) + sizes[i];
            kept[i] = true;
        } else {
            omitted.push((packed[i].id.clone(), sizes[i]));
        }
    }
    Rendered::json(Exit::Success, &answer(&packed, &kept, &omitted, budget))
}
