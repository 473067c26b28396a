//! A file's outline: its top-level symbols with their line ranges, from a
//! real parser (tree-sitter) for Rust, Python, TypeScript/JavaScript, Go,
//! C# and Markdown (headings). Which grammar reads a file is its extension;
//! another extension has no outline (never a guess).

use serde::Serialize;
use tree_sitter::{Language, Node, Parser};

use crate::mcp::grammars;

/// One symbol: what it is, its name, its first and last line (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Symbol {
    pub kind: String,
    pub name: String,
    pub start_line: usize,
    pub end_line: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Grammar {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    CSharp,
    Markdown,
}

fn grammar(path: &str) -> Option<Grammar> {
    let extension = path.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase())?;
    Some(match extension.as_str() {
        "rs" => Grammar::Rust,
        "py" | "pyi" => Grammar::Python,
        "ts" | "mts" | "cts" => Grammar::TypeScript,
        "tsx" => Grammar::Tsx,
        "js" | "mjs" | "cjs" | "jsx" => Grammar::JavaScript,
        "go" => Grammar::Go,
        "cs" => Grammar::CSharp,
        "md" | "markdown" => Grammar::Markdown,
        _ => return None,
    })
}

fn language(grammar: Grammar) -> Option<Language> {
    match grammar {
        Grammar::Rust => grammars::rust(),
        Grammar::Python => grammars::python(),
        Grammar::TypeScript => grammars::typescript(),
        Grammar::Tsx => grammars::tsx(),
        Grammar::JavaScript => grammars::javascript(),
        Grammar::Go => grammars::go(),
        Grammar::CSharp => grammars::c_sharp(),
        Grammar::Markdown => grammars::markdown(),
    }
}

/// The top-level symbols of `text` (the file at `path`), in file order;
/// `None` when no grammar reads its extension.
pub fn outline(path: &str, text: &str) -> Option<Vec<Symbol>> {
    let grammar = grammar(path)?;
    let mut parser = Parser::new();
    parser.set_language(&language(grammar)?).ok()?;
    let tree = parser.parse(text, None)?;
    let mut symbols = Vec::new();
    collect(grammar, tree.root_node(), text, &mut symbols);
    Some(symbols)
}

fn text_of<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or("")
}

fn symbol(kind: &str, name: &str, node: Node<'_>) -> Symbol {
    Symbol {
        kind: kind.to_owned(),
        name: name.split_whitespace().collect::<Vec<_>>().join(" "),
        start_line: node.start_position().row + 1,
        // A node ending at column 0 ends on the line before (its newline).
        end_line: node.end_position().row
            + usize::from(node.end_position().column > 0 || node.end_position().row == node.start_position().row),
    }
}

/// The symbols among `node`'s children; containers (namespaces, exports,
/// decorators, Markdown sections) are looked into.
fn collect(grammar: Grammar, node: Node<'_>, source: &str, into: &mut Vec<Symbol>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let named = |field: &str| child.child_by_field_name(field).map(|n| text_of(n, source));
        let kind = child.kind();
        let found: Option<(&str, String)> = match grammar {
            Grammar::Rust => match kind {
                "function_item" => named("name").map(|n| ("function", n.to_owned())),
                "struct_item" => named("name").map(|n| ("struct", n.to_owned())),
                "enum_item" => named("name").map(|n| ("enum", n.to_owned())),
                "union_item" => named("name").map(|n| ("union", n.to_owned())),
                "trait_item" => named("name").map(|n| ("trait", n.to_owned())),
                "mod_item" => named("name").map(|n| ("module", n.to_owned())),
                "const_item" => named("name").map(|n| ("const", n.to_owned())),
                "static_item" => named("name").map(|n| ("static", n.to_owned())),
                "type_item" => named("name").map(|n| ("type", n.to_owned())),
                "macro_definition" => named("name").map(|n| ("macro", n.to_owned())),
                "impl_item" => named("type").map(|ty| match named("trait") {
                    Some(t) => ("impl", format!("{t} for {ty}")),
                    None => ("impl", ty.to_owned()),
                }),
                _ => None,
            },
            Grammar::Python => match kind {
                "function_definition" => named("name").map(|n| ("function", n.to_owned())),
                "class_definition" => named("name").map(|n| ("class", n.to_owned())),
                "decorated_definition" => child
                    .child_by_field_name("definition")
                    .and_then(|d| d.child_by_field_name("name").map(|n| (d.kind(), text_of(n, source))))
                    .map(|(k, n)| (if k == "class_definition" { "class" } else { "function" }, n.to_owned())),
                _ => None,
            },
            Grammar::TypeScript | Grammar::Tsx | Grammar::JavaScript => match kind {
                "function_declaration" | "generator_function_declaration" => {
                    named("name").map(|n| ("function", n.to_owned()))
                }
                "class_declaration" | "abstract_class_declaration" => named("name").map(|n| ("class", n.to_owned())),
                "interface_declaration" => named("name").map(|n| ("interface", n.to_owned())),
                "type_alias_declaration" => named("name").map(|n| ("type", n.to_owned())),
                "enum_declaration" => named("name").map(|n| ("enum", n.to_owned())),
                "lexical_declaration" | "variable_declaration" => {
                    let mut names = Vec::new();
                    let mut inner = child.walk();
                    for declarator in child.named_children(&mut inner) {
                        if let Some(name) = declarator.child_by_field_name("name") {
                            names.push(text_of(name, source).to_owned());
                        }
                    }
                    (!names.is_empty()).then(|| ("variable", names.join(", ")))
                }
                "export_statement" => {
                    collect(grammar, child, source, into);
                    None
                }
                _ => None,
            },
            Grammar::Go => match kind {
                "function_declaration" => named("name").map(|n| ("function", n.to_owned())),
                "method_declaration" => named("name").map(|n| {
                    let receiver = child.child_by_field_name("receiver").map(|r| text_of(r, source)).unwrap_or("");
                    ("method", format!("{receiver} {n}").trim().to_owned())
                }),
                "type_declaration" | "const_declaration" | "var_declaration" => {
                    let mut names = Vec::new();
                    let mut inner = child.walk();
                    for spec in child.named_children(&mut inner) {
                        if let Some(name) = spec.child_by_field_name("name") {
                            names.push(text_of(name, source).to_owned());
                        }
                    }
                    let label = match kind {
                        "type_declaration" => "type",
                        "const_declaration" => "const",
                        _ => "var",
                    };
                    (!names.is_empty()).then(|| (label, names.join(", ")))
                }
                _ => None,
            },
            Grammar::CSharp => match kind {
                "namespace_declaration" | "file_scoped_namespace_declaration" => {
                    if let Some(body) = child.child_by_field_name("body") {
                        collect(grammar, body, source, into);
                    } else {
                        collect(grammar, child, source, into);
                    }
                    None
                }
                "class_declaration" => named("name").map(|n| ("class", n.to_owned())),
                "interface_declaration" => named("name").map(|n| ("interface", n.to_owned())),
                "struct_declaration" => named("name").map(|n| ("struct", n.to_owned())),
                "enum_declaration" => named("name").map(|n| ("enum", n.to_owned())),
                "record_declaration" => named("name").map(|n| ("record", n.to_owned())),
                "delegate_declaration" => named("name").map(|n| ("delegate", n.to_owned())),
                _ => None,
            },
            Grammar::Markdown => match kind {
                "section" => {
                    // The heading names the section; the section's extent is its range.
                    let mut inner = child.walk();
                    let heading = child
                        .named_children(&mut inner)
                        .find(|n| n.kind() == "atx_heading" || n.kind() == "setext_heading");
                    if let Some(heading) = heading {
                        let title = text_of(heading, source)
                            .lines()
                            .next()
                            .unwrap_or("")
                            .trim_start_matches('#')
                            .trim()
                            .to_owned();
                        let level = text_of(heading, source).chars().take_while(|c| *c == '#').count().max(1);
                        into.push(symbol(&format!("heading{level}"), &title, child));
                    }
                    collect(grammar, child, source, into);
                    None
                }
                _ => None,
            },
        };
        if let Some((kind, name)) = found {
            into.push(symbol(kind, &name, child));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(path: &str, text: &str) -> Vec<(String, String, usize, usize)> {
        outline(path, text).unwrap().into_iter().map(|s| (s.kind, s.name, s.start_line, s.end_line)).collect()
    }

    #[test]
    fn each_grammar_gives_its_top_level_symbols() {
        let rust = "use x;\n\npub fn alpha() {\n    1;\n}\n\nstruct Beta;\nimpl Display for Beta {}\n";
        assert_eq!(
            names("a.rs", rust),
            [
                ("function".into(), "alpha".into(), 3, 5),
                ("struct".into(), "Beta".into(), 7, 7),
                ("impl".into(), "Display for Beta".into(), 8, 8)
            ]
        );
        let python = "import os\n\n@cache\ndef f(x):\n    return x\n\nclass C:\n    pass\n";
        assert_eq!(names("a.py", python), [("function".into(), "f".into(), 3, 5), ("class".into(), "C".into(), 7, 8)]);
        let ts = "export function go(): void {}\ninterface I { a: number }\nconst k = 1, j = 2;\n";
        assert_eq!(names("a.ts", ts).into_iter().map(|s| s.1).collect::<Vec<_>>(), ["go", "I", "k, j"]);
        assert_eq!(names("a.js", "class A {}\nfunction b() {}\n").len(), 2);
        let go = "package main\n\nfunc main() {}\n\nfunc (s *Server) Run() {}\n\ntype T struct{}\n";
        assert_eq!(names("a.go", go).into_iter().map(|s| s.1).collect::<Vec<_>>(), ["main", "(s *Server) Run", "T"]);
        let cs = "namespace App {\n  public class Program {\n  }\n  interface IThing {}\n}\n";
        assert_eq!(names("a.cs", cs).into_iter().map(|s| s.1).collect::<Vec<_>>(), ["Program", "IThing"]);
        let md = "# Title\n\nText.\n\n## Part\n\nMore.\n";
        assert_eq!(
            names("a.md", md),
            [("heading1".into(), "Title".into(), 1, 7), ("heading2".into(), "Part".into(), 5, 7)]
        );
        assert!(outline("a.txt", "x").is_none());
    }
}
