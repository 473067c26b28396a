//! The skill bridge: Claude Code's skills (`SKILL.md` under a skills
//! directory: YAML front matter with `name`, `description` and optional
//! `dependencies`, then a Markdown body) found in the checkout's
//! `.claude/skills`, the user's `~/.claude/skills` and the roots Bee's
//! `config.toml` names (`[skills] roots = [...]`). Search ranks with BM25
//! over name, description and body and never returns bodies; get gives one
//! whole body; resolve gives a skill's chain, dependencies first. Links are
//! not followed and nothing outside a root is read. A returned body is
//! data: no authority, and no proof an agent read it.

use bee_proto::mcp::coded as error;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::context::rank;
use crate::storage::path_rule;

/// The largest skill body served.
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// The most a `SKILL.md` is read for search (a bigger one is searched by its start).
const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;
const SKILL_FILE: &str = "SKILL.md";

/// Why a skill operation failed: a stable code and a sentence.
pub type SkillError = bee_proto::mcp::CodedError;

/// A skills directory and the label paths under it carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub label: String,
    pub dir: PathBuf,
}

#[derive(Debug, Deserialize)]
struct Config {
    skills: Option<SkillsConfig>,
}

#[derive(Debug, Deserialize)]
struct SkillsConfig {
    #[serde(default)]
    roots: Vec<PathBuf>,
}

/// The roots that exist: `checkout` (`CHECKOUT/.claude/skills`), `user`
/// (`~/.claude/skills`), then `config1`, `config2`… in `config.toml`'s order.
pub fn roots(checkout: &Path) -> Result<Vec<Root>, SkillError> {
    let mut candidates = vec![("checkout".to_owned(), checkout.join(".claude").join("skills"))];
    if let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) {
        candidates.push(("user".to_owned(), PathBuf::from(home).join(".claude").join("skills")));
    }
    let config: Option<Config> =
        crate::storage::files::read_config().map_err(|message| error("config_invalid", message))?;
    for (n, dir) in config.and_then(|c| c.skills).map(|s| s.roots).unwrap_or_default().into_iter().enumerate() {
        candidates.push((format!("config{}", n + 1), dir));
    }
    let found: Vec<Root> = candidates
        .into_iter()
        .filter(|(_, dir)| dir.is_absolute() && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()))
        .map(|(label, dir)| Root { label, dir })
        .collect();
    if found.is_empty() {
        return Err(error(
            "skill_bridge_unavailable",
            "no skills directory: CHECKOUT/.claude/skills, ~/.claude/skills, or [skills] roots in ~/.bee/config.toml",
        ));
    }
    Ok(found)
}

/// Every skill the bridge finds for `checkout` (see [`roots`] and [`all`]),
/// and those it could not read.
pub fn found(checkout: &Path) -> Result<Found, SkillError> {
    roots(checkout).map(|roots| {
        let (skills, invalid) = all(&roots);
        Found { skills, invalid }
    })
}

/// The skills found, and the ones that could not be read: a path among the
/// latter is answered with why (its front matter's parse error, the path
/// rule), never as if no skill were there.
#[derive(Debug, Default)]
pub struct Found {
    pub skills: Vec<Skill>,
    pub invalid: Vec<Invalid>,
}

impl Found {
    /// The skill at `path` (see [`get`]).
    pub fn get(&self, path: &str) -> Result<&Skill, SkillError> {
        self.unreadable(path)?;
        get(&self.skills, path)
    }

    /// `path`'s skill and its dependencies (see [`resolve`]).
    pub fn resolve(&self, path: &str) -> Result<Vec<&Skill>, SkillError> {
        self.unreadable(path)?;
        resolve(&self.skills, path)
    }

    fn unreadable(&self, path: &str) -> Result<(), SkillError> {
        match self.invalid.iter().find(|invalid| invalid.path == path) {
            Some(invalid) => Err(error("skill_invalid", format!("{path} cannot be read: {}", invalid.reason))),
            None => Ok(()),
        }
    }
}

/// A skill as found: where, its front matter, its body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// `LABEL:DIR/SKILL.md`: the root's label and the path inside it.
    pub path: String,
    pub name: String,
    pub description: String,
    pub dependencies: Vec<String>,
    pub body: String,
    /// The whole file's size.
    pub bytes: u64,
}

#[derive(Debug, Deserialize)]
struct FrontMatter {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    dependencies: Vec<String>,
}

/// Splits `SKILL.md` into its front matter and body.
pub fn parse(text: &str) -> Result<(String, String, Vec<String>, String), String> {
    let rest =
        text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")).ok_or("no front matter (--- first)")?;
    let end = rest.find("\n---").ok_or("the front matter does not end (---)")?;
    let yaml = &rest[..end];
    let after = &rest[end + 4..];
    let body = after.strip_prefix("\r\n").or_else(|| after.strip_prefix('\n')).unwrap_or(after);
    let front: FrontMatter = yaml_serde::from_str(yaml).map_err(|err| format!("front matter: {err}"))?;
    if front.name.trim().is_empty() {
        return Err("front matter: an empty name".to_owned());
    }
    Ok((front.name, front.description, front.dependencies, body.to_owned()))
}

/// One skill found unreadable or malformed: named, never skipped silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invalid {
    pub path: String,
    pub reason: String,
}

/// Every skill under `roots` (`ROOT/NAME/SKILL.md`, no links), and the ones
/// that could not be read.
pub fn all(roots: &[Root]) -> (Vec<Skill>, Vec<Invalid>) {
    let (mut skills, mut invalid) = (Vec::new(), Vec::new());
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root.dir) else { continue };
        // The root is configured (the user's own directory): resolved once,
        // and the rule holds below it.
        let physical = std::fs::canonicalize(&root.dir)
            .map_err(|err| err.to_string())
            .and_then(|dir| path_rule::physical_root(&dir).map_err(path_rule::refusal));
        let mut dirs: Vec<(String, PathBuf)> = entries
            .flatten()
            // A linked directory is named among the invalid, by the path rule.
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir() || t.is_symlink()))
            .filter_map(|entry| entry.file_name().to_str().map(|name| (name.to_owned(), entry.path())))
            .collect();
        dirs.sort();
        for (name, dir) in dirs {
            let file = dir.join(SKILL_FILE);
            let path = format!("{}:{name}/{SKILL_FILE}", root.label);
            match std::fs::symlink_metadata(&file) {
                Ok(meta) if meta.is_file() => {}
                Ok(_) => {
                    invalid.push(Invalid { path, reason: "not a regular file (links are not followed)".into() });
                    continue;
                }
                Err(_) => continue,
            }
            match physical.as_ref().map_err(String::clone).and_then(|root| read(root, &name)) {
                Ok((text, bytes)) => match parse(&text) {
                    Ok((name, description, dependencies, body)) => {
                        skills.push(Skill { path, name, description, dependencies, body, bytes })
                    }
                    Err(reason) => invalid.push(Invalid { path, reason }),
                },
                Err(reason) => invalid.push(Invalid { path, reason }),
            }
        }
    }
    (skills, invalid)
}

/// `NAME/SKILL.md` under the physical skill root `root`, by the one path
/// rule (`storage::path_rule`): a file over the bound is refused, never
/// read in part.
fn read(root: &Path, name: &str) -> Result<(String, u64), String> {
    let text =
        path_rule::read_under(root, &format!("{name}/{SKILL_FILE}"), MAX_READ_BYTES).map_err(path_rule::refusal)?;
    let bytes = text.len() as u64;
    String::from_utf8(text).map(|text| (text, bytes)).map_err(|_| "not UTF-8".to_owned())
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// A search hit: never the body.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub path: String,
    pub name: String,
    pub description: String,
    pub score: f64,
}

/// BM25 (k1 1.2, b 0.75) over each skill's name (counted three times),
/// description (twice) and body; the best `limit`, ties by path.
pub fn search(skills: &[Skill], query: &str, limit: usize) -> Vec<Hit> {
    let documents: Vec<rank::Document> = skills
        .iter()
        .map(|skill| {
            let mut document = rank::Document::new();
            for (text, weight) in [(&skill.name, 3.0), (&skill.description, 2.0), (&skill.body, 1.0)] {
                rank::add(&mut document, words(text), weight);
            }
            document
        })
        .collect();
    let terms: Vec<String> = {
        let mut terms: Vec<String> = words(query).collect();
        terms.sort();
        terms.dedup();
        terms
    };
    let mut hits: Vec<Hit> = skills
        .iter()
        .zip(rank::scores(&documents, &terms))
        .map(|(skill, score)| Hit {
            path: skill.path.clone(),
            name: skill.name.clone(),
            description: skill.description.clone(),
            score,
        })
        .filter(|hit| hit.score > 0.0)
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
    hits.truncate(limit);
    hits
}

/// The skill at `path` (as search gives it), its body within the limit.
pub fn get<'a>(skills: &'a [Skill], path: &str) -> Result<&'a Skill, SkillError> {
    let skill = skills
        .iter()
        .find(|skill| skill.path == path)
        .ok_or_else(|| error("skill_not_found", format!("no skill at {path:?}: bee_skill_search gives the paths")))?;
    if skill.bytes as usize > MAX_BODY_BYTES || skill.body.len() > MAX_BODY_BYTES {
        return Err(error(
            "skill_too_large",
            format!("{path} is {} bytes; a skill body is served up to {MAX_BODY_BYTES}", skill.bytes),
        ));
    }
    Ok(skill)
}

/// `path`'s skill and every skill it depends on (by name), dependencies
/// first, each once: a missing or too large one, or a cycle, is an error.
pub fn resolve<'a>(skills: &'a [Skill], path: &str) -> Result<Vec<&'a Skill>, SkillError> {
    fn visit<'a>(
        skills: &'a [Skill],
        skill: &'a Skill,
        trail: &mut Vec<String>,
        chain: &mut Vec<&'a Skill>,
    ) -> Result<(), SkillError> {
        if chain.iter().any(|done| done.path == skill.path) {
            return Ok(());
        }
        if trail.contains(&skill.name) {
            trail.push(skill.name.clone());
            return Err(error("skill_cycle", format!("the dependencies go round: {}", trail.join(" → "))));
        }
        get(skills, &skill.path)?;
        trail.push(skill.name.clone());
        for name in &skill.dependencies {
            let dependency = skills.iter().find(|s| &s.name == name).ok_or_else(|| {
                error("skill_missing", format!("{} depends on {name:?}, which no skill root holds", skill.name))
            })?;
            visit(skills, dependency, trail, chain)?;
        }
        trail.pop();
        chain.push(skill);
        Ok(())
    }
    let start = get(skills, path)?;
    let mut chain = Vec::new();
    visit(skills, start, &mut Vec::new(), &mut chain)?;
    Ok(chain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, description: &str, body: &str, dependencies: &[&str]) -> Skill {
        Skill {
            path: format!("checkout:{name}/SKILL.md"),
            name: name.into(),
            description: description.into(),
            dependencies: dependencies.iter().map(|d| (*d).to_owned()).collect(),
            body: body.into(),
            bytes: body.len() as u64,
        }
    }

    #[test]
    fn front_matter_is_parsed_and_malformed_is_said() {
        let (name, description, dependencies, body) =
            parse("---\nname: deploy\ndescription: Ship it.\ndependencies: [build, test]\n---\n# Deploy\nsteps\n")
                .unwrap();
        assert_eq!((name.as_str(), description.as_str(), body.as_str()), ("deploy", "Ship it.", "# Deploy\nsteps\n"));
        assert_eq!(dependencies, ["build", "test"]);
        for bad in ["# no front matter", "---\nname: x\n", "---\nname: [1, 2\n---\n", "---\ndescription: d\n---\n"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn search_ranks_by_relevance_and_resolve_orders_dependencies() {
        let skills = vec![
            skill("deploy", "Deploy the service to staging", "Run the deploy script.", &["build"]),
            skill("build", "Build the release binaries", "cargo build --release", &[]),
            skill("review", "Review a pull request", "Read the diff; deploy nothing.", &[]),
        ];
        let hits = search(&skills, "deploy staging", 5);
        assert_eq!(hits.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["deploy", "review"]);
        assert!(hits[0].score > hits[1].score);
        assert!(search(&skills, "kubernetes", 5).is_empty(), "no match scores nothing");
        let chain: Vec<&str> =
            resolve(&skills, "checkout:deploy/SKILL.md").unwrap().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(chain, ["build", "deploy"]);
        let cyclic = vec![skill("a", "", "", &["b"]), skill("b", "", "", &["a"])];
        assert_eq!(resolve(&cyclic, "checkout:a/SKILL.md").unwrap_err().code, "skill_cycle");
        let missing = vec![skill("a", "", "", &["nowhere"])];
        assert_eq!(resolve(&missing, "checkout:a/SKILL.md").unwrap_err().code, "skill_missing");
        let big = vec![skill("big", "", &"x".repeat(MAX_BODY_BYTES + 1), &[])];
        assert_eq!(get(&big, "checkout:big/SKILL.md").unwrap_err().code, "skill_too_large");
    }

    /// A skill directory that is a link, or a SKILL.md over the bound (a
    /// sparse 2 GiB file reads as one), is named among the invalid with the
    /// rule it broke, never left out unsaid nor read in part.
    #[test]
    fn linked_and_oversized_skills_are_named_by_the_path_rule() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (root, outside) = (base.join("skills"), base.join("outside"));
        for made in [root.join("ok"), root.join("huge"), outside.join("stolen")] {
            std::fs::create_dir_all(made).unwrap();
        }
        let text = "---\nname: ok\ndescription: Fine.\n---\nbody\n";
        std::fs::write(root.join("ok/SKILL.md"), text).unwrap();
        std::fs::write(outside.join("stolen/SKILL.md"), text.replace("ok", "stolen")).unwrap();
        std::os::unix::fs::symlink(outside.join("stolen"), root.join("linked")).unwrap();
        std::fs::File::create(root.join("huge/SKILL.md")).unwrap().set_len(2 << 30).unwrap();
        std::fs::create_dir_all(root.join("broken")).unwrap();
        std::fs::write(root.join("broken/SKILL.md"), "---\nname: [unclosed\n---\nbody\n").unwrap();
        let (skills, invalid) = all(&[Root { label: "checkout".into(), dir: root }]);
        assert_eq!(skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["ok"]);
        // Asked for, an unreadable skill says why, not that none is there.
        let found = Found { skills: skills.clone(), invalid: invalid.clone() };
        let broken = found.get("checkout:broken/SKILL.md").unwrap_err();
        assert_eq!(broken.code, "skill_invalid");
        assert!(broken.message.contains("front matter:"), "{}", broken.message);
        assert_eq!(found.resolve("checkout:linked/SKILL.md").unwrap_err().code, "skill_invalid");
        assert_eq!(found.get("checkout:nothing/SKILL.md").unwrap_err().code, "skill_not_found");
        let invalid: Vec<Invalid> = invalid.into_iter().filter(|i| !i.path.contains("broken")).collect();
        let reasons: Vec<(&str, &str)> = invalid.iter().map(|i| (i.path.as_str(), i.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [
                ("checkout:huge/SKILL.md", "refused by the path rule (file_byte_limit)"),
                ("checkout:linked/SKILL.md", "refused by the path rule (path_link)"),
            ]
        );
    }
}
