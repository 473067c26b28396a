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
use bee_proto::tokens::Encoding;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

use crate::outline::{self, Symbol};

/// The smallest and largest `--budget-bytes`.
pub const BUDGET_BYTES: std::ops::RangeInclusive<u64> = 512..=262_144;
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

/// The selections in dependency order (ties in manifest order), or why not.
fn ordered(selections: &[Selection]) -> Result<Vec<usize>, Rendered> {
    let index_of = |id: &str| selections.iter().position(|s| s.id == id);
    for selection in selections {
        for dependency in &selection.depends_on {
            if index_of(dependency).is_none() {
                return Err(Rendered::invalid_usage(format!(
                    "selection {:?} depends on {dependency:?}, which no selection is",
                    selection.id
                )));
            }
        }
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
                return Err(failed("dependency_cycle", format!("dependsOn goes round among {stuck:?}")));
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
    /// The selection as the answer carries it.
    entry: Value,
}

pub fn packet(manifest_text: &str, budget: Option<u64>, root: Option<&str>) -> Rendered {
    let budget = budget.unwrap_or(65_536);
    if !BUDGET_BYTES.contains(&budget) {
        return Rendered::invalid_usage(format!("--budget-bytes: {}..{}", BUDGET_BYTES.start(), BUDGET_BYTES.end()));
    }
    let manifest: Manifest = match serde_json::from_str(manifest_text) {
        Ok(manifest) => manifest,
        Err(err) => return Rendered::invalid_usage(format!("the manifest: {err}")),
    };
    let selections = manifest.selections;
    if selections.is_empty() || selections.len() > MAX_SELECTIONS {
        return Rendered::invalid_usage(format!("the manifest: 1..{MAX_SELECTIONS} selections"));
    }
    for (n, selection) in selections.iter().enumerate() {
        if selection.id.is_empty() || selections[..n].iter().any(|s| s.id == selection.id) {
            return Rendered::invalid_usage(format!("selection {}: ids are unique and not empty", n + 1));
        }
        if (selection.symbol.is_some() || selection.range.is_some()) && selection.representation != Representation::Body
        {
            return Rendered::invalid_usage(format!("selection {:?}: symbol and range are for a body", selection.id));
        }
        if selection.symbol.is_some() && selection.range.is_some() {
            return Rendered::invalid_usage(format!("selection {:?}: a symbol or a range, not both", selection.id));
        }
    }
    let order = match ordered(&selections) {
        Ok(order) => order,
        Err(rendered) => return rendered,
    };
    let paths: Vec<&str> = selections.iter().map(|s| s.path.as_str()).collect();
    let files = match crate::token_input::read_files(root, &paths) {
        Ok(files) => files,
        Err((code, ordinal)) => {
            let which = ordinal.and_then(|o| selections.get(o as usize - 1)).map(|s| s.id.as_str()).unwrap_or("-");
            return failed(
                &serde_json::to_value(code).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
                format!("selection {which:?}: its file cannot be read under the root's path rules"),
            );
        }
    };
    let text_of = |path: &str| files.iter().find(|(p, _)| p == path).map(|(_, text)| text.as_str()).unwrap_or("");

    // Each selection's content, then its tokens (counted together).
    let mut packed: Vec<Packed> = Vec::with_capacity(order.len());
    let mut contents: Vec<String> = Vec::with_capacity(order.len());
    for &i in &order {
        let selection = &selections[i];
        let text = text_of(&selection.path);
        let sha = bee_daemon::artifacts::sha256(text.as_bytes());
        if let Some(pinned) = &selection.hash {
            let pinned = pinned.strip_prefix("sha256:").unwrap_or(pinned);
            if !pinned.eq_ignore_ascii_case(&sha) {
                return failed(
                    "hash_mismatch",
                    format!(
                        "selection {:?}: {} is sha256 {sha}, not the pinned {pinned}",
                        selection.id, selection.path
                    ),
                );
            }
        }
        let lines = text.lines().count();
        let mut entry = json!({"id": selection.id, "path": selection.path, "representation": selection.representation,
                               "required": selection.required, "sha256": sha, "bytes": text.len(), "lines": lines});
        let content = match selection.representation {
            Representation::Index => format!("{}\t{} bytes\t{lines} lines", selection.path, text.len()),
            Representation::Outline => {
                let Some(symbols) = outline::outline(&selection.path, text) else {
                    return failed(
                        "outline_unsupported",
                        format!(
                            "selection {:?}: no outline for {} (Rust, Python, TypeScript/JavaScript, Go, C#, Markdown)",
                            selection.id, selection.path
                        ),
                    );
                };
                let rendered: String = symbols
                    .iter()
                    .map(|s| format!("{} {} {}-{}\n", s.kind, s.name, s.start_line, s.end_line))
                    .collect();
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
                                return failed(
                                    "symbol_not_found",
                                    format!(
                                        "selection {:?}: no top-level symbol {name:?} in {}",
                                        selection.id, selection.path
                                    ),
                                );
                            }
                            _ => {
                                return failed(
                                    "symbol_ambiguous",
                                    format!(
                                        "selection {:?}: {} top-level symbols are named {name:?}; select a range",
                                        selection.id,
                                        matching.len()
                                    ),
                                );
                            }
                        }
                    }
                    (None, Some(range)) => match line_range(range, lines) {
                        Some((start, end)) => {
                            entry["range"] = json!(format!("{start}-{end}"));
                            lines_of(text, start, end)
                        }
                        None => {
                            return Rendered::invalid_usage(format!(
                                "selection {:?}: range {range:?} is not START-END within 1-{lines}",
                                selection.id
                            ));
                        }
                    },
                    (None, None) => text.to_owned(),
                };
                entry["body"] = json!(body);
                body
            }
        };
        contents.push(content);
        packed.push(Packed { id: selection.id.clone(), required: selection.required, entry });
    }
    let deadline = Instant::now() + Duration::from_millis(bee_proto::tokens::COMMAND_MILLIS);
    let counts = match crate::token::count(Encoding::O200kBase, &contents, deadline) {
        Ok(counts) => counts,
        Err(failure) => {
            let code =
                serde_json::to_value(failure.code).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            return failed(&code, "the selections could not be counted in o200k_base");
        }
    };
    for (item, count) in packed.iter_mut().zip(counts) {
        item.entry["tokens"] = json!(count);
    }
    fit(packed, budget as usize)
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
