//! The outline's tree-sitter grammars as this crate builds them (build.rs):
//! each grammar's parse tables are kept deflated in the binary and inflated
//! into the grammar's own (zeroed, writable) tables on its first use, once
//! per process. One of the two modules of the workspace allowed `unsafe`
//! (with `allocator`): it calls the grammar's C to fill its tables and
//! hands tree-sitter the language.

#![allow(unsafe_code)]

use std::io::Read;
use std::os::raw::c_int;
use std::sync::OnceLock;

use tree_sitter::Language;
use tree_sitter_language::LanguageFn;

/// One grammar as built: its language function, the function that fills
/// its tables, and their total size (u32 LE) followed by them deflated.
struct Built {
    language: unsafe extern "C" fn() -> *const (),
    fill: unsafe extern "C" fn(data: *const u8, len: usize) -> c_int,
    tables: &'static [u8],
    loaded: &'static OnceLock<Option<Language>>,
}

macro_rules! grammars {
    ($($name:ident: $language:ident, $fill:ident, $key:literal;)*) => {
        unsafe extern "C" {
            $(
                fn $language() -> *const ();
                fn $fill(data: *const u8, len: usize) -> c_int;
            )*
        }
        $(
            /// The grammar, ready to parse; `None` only if its tables did
            /// not inflate to exactly their size (a broken build).
            pub fn $name() -> Option<Language> {
                static LOADED: OnceLock<Option<Language>> = OnceLock::new();
                load(&Built {
                    language: $language,
                    fill: $fill,
                    tables: include_bytes!(concat!(env!("OUT_DIR"), "/", $key, ".tables")),
                    loaded: &LOADED,
                })
            }
        )*
    };
}

grammars! {
    rust: bee_tree_sitter_rust, bee_grammar_fill_rust, "rust";
    python: bee_tree_sitter_python, bee_grammar_fill_python, "python";
    typescript: bee_tree_sitter_typescript, bee_grammar_fill_typescript, "typescript";
    tsx: bee_tree_sitter_tsx, bee_grammar_fill_tsx, "tsx";
    javascript: bee_tree_sitter_javascript, bee_grammar_fill_javascript, "javascript";
    go: bee_tree_sitter_go, bee_grammar_fill_go, "go";
    c_sharp: bee_tree_sitter_c_sharp, bee_grammar_fill_c_sharp, "c_sharp";
    markdown: bee_tree_sitter_markdown, bee_grammar_fill_markdown, "markdown";
}

fn load(built: &Built) -> Option<Language> {
    built
        .loaded
        .get_or_init(|| {
            // Inflated into a buffer of their known size, from the slice
            // itself (no copy through a reader's buffer).
            let (total, deflated) = built.tables.split_first_chunk::<4>()?;
            let mut tables = Vec::with_capacity(usize::try_from(u32::from_le_bytes(*total)).ok()?);
            flate2::bufread::DeflateDecoder::new(deflated).read_to_end(&mut tables).ok()?;
            // SAFETY: the fill function copies into the grammar's own tables
            // exactly their total size and refuses any other length; it runs
            // here once, inside the OnceLock, before any parser is handed
            // the language, and nothing writes the tables again.
            if unsafe { (built.fill)(tables.as_ptr(), tables.len()) } != 0 {
                return None;
            }
            // SAFETY: the generated language function returns a pointer to
            // the grammar's static TSLanguage, whose tables are now whole.
            Some(Language::new(unsafe { LanguageFn::from_raw(built.language) }))
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use tree_sitter::{Language, Parser};

    const GO: &str = "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\ntype Server struct {\n\tname string\n\tports []int\n}\n\nfunc (s *Server) Run(ctx context.Context) (err error) {\n\tdefer func() { recover() }()\n\tfor i, p := range s.ports {\n\t\tif p > 1024 && i%2 == 0 {\n\t\t\tfmt.Println(p)\n\t\t} else {\n\t\t\tcontinue\n\t\t}\n\t}\n\tch := make(chan int, 3)\n\tselect {\n\tcase v := <-ch:\n\t\t_ = v\n\tdefault:\n\t}\n\treturn nil\n}\n\nfunc main() { os.Exit(0) }\n";
    const C_SHARP: &str = "using System;\nusing System.Linq;\n\nnamespace App.Core\n{\n    [Serializable]\n    public sealed class Program<T> : IThing where T : new()\n    {\n        private readonly int _count = 3;\n        public string Name { get; init; } = \"x\";\n        public static async Task<int> Main(string[] args)\n        {\n            var xs = args.Where(a => a.Length > 2).Select(a => $\"{a}!\").ToList();\n            foreach (var x in xs) { Console.WriteLine(x ?? \"none\"); }\n            switch (args.Length) { case 0: return 1; default: break; }\n            await Task.Delay(10);\n            return xs.Count is > 0 and < 10 ? 0 : 2;\n        }\n    }\n    public record Point(int X, int Y);\n    interface IThing { void Do(); }\n}\n";
    const PYTHON: &str = "import os\nfrom typing import Optional\n\n\n@dataclass(frozen=True)\nclass Price:\n    model: str\n    per_million: float = 0.0\n\n    def cost(self, tokens: int) -> float:\n        return tokens * self.per_million / 1_000_000\n\n\nasync def main(argv: list[str]) -> Optional[int]:\n    prices = {p.model: p for p in load() if p.per_million > 0}\n    try:\n        with open(argv[1]) as f:\n            data = [line.strip() for line in f]\n    except (OSError, IndexError) as e:\n        print(f\"no file: {e!r}\")\n        return 1\n    match data:\n        case [first, *rest]:\n            return len(rest)\n        case _:\n            return None\n    lambda x: x ** 2\n";
    const JAVASCRIPT: &str = "'use strict';\nconst { spawnSync } = require('node:child_process');\n\nclass Runner extends Base {\n  #count = 0;\n  static of(x) { return new Runner(x); }\n  async *lines(stream) {\n    for await (const chunk of stream) yield `${chunk}`;\n  }\n}\n\nfunction main(argv = process.argv.slice(2)) {\n  const result = spawnSync(argv[0], argv.slice(1), { stdio: 'inherit' });\n  if (result.signal) return 128 + (os.constants.signals[result.signal] ?? 0);\n  return result.status ?? 1;\n}\n\nexport default main;\nlabel: for (let i = 0; i < 3; i++) { if (i) break label; }\nconst re = /a+b/gi, obj = { ...rest, [key]: value, get x() { return 1; } };\n";
    const TYPESCRIPT: &str = "import type { Options } from './options';\n\nexport interface Row<T extends object = {}> {\n  readonly id: string;\n  value?: T | null;\n}\n\nexport enum Kind { A = 1, B }\n\nexport abstract class Store<K, V> implements Iterable<V> {\n  private map = new Map<K, V>();\n  constructor(protected readonly name: string) { super(); }\n  abstract load(key: K): Promise<V | undefined>;\n  *[Symbol.iterator](): Iterator<V> { yield* this.map.values(); }\n}\n\ntype Pick2<T, K extends keyof T> = { [P in K]: T[P] };\nexport const total = (rows: Row[]): number => rows.reduce((a, r) => a + (r.value as number), 0);\ndeclare module 'x' { export function f(): void; }\nlet n = <number>value satisfies number;\n";
    const TSX: &str = "import React, { useState } from 'react';\n\ntype Props = { rows: Array<{ id: string; label: string }> };\n\nexport function Table({ rows }: Props): JSX.Element {\n  const [open, setOpen] = useState<boolean>(false);\n  return (\n    <table className=\"usage\" onClick={() => setOpen(!open)}>\n      {rows.map((r) => (\n        <tr key={r.id}><td>{r.label}</td>{open && <td>&nbsp;</td>}</tr>\n      ))}\n      <>fragment</>\n    </table>\n  );\n}\nconst generic = <T,>(x: T) => x;\n";
    const MARKDOWN: &str = "# Bee\n\nA line with *emphasis* and `code`.\n\n## Install\n\n```sh\nnpx beectl usage\n```\n\n- one\n- two\n  1. nested\n\n> a quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nSetext\n------\n\n    indented code\n\n[link]: https://example.com\n";

    /// Each grammar as built here, its crate's own, and a sample that uses
    /// much of it.
    fn grammars() -> Vec<(&'static str, Option<Language>, Language, &'static str)> {
        vec![
            ("rust", super::rust(), tree_sitter_rust::LANGUAGE.into(), include_str!("outline.rs")),
            ("python", super::python(), tree_sitter_python::LANGUAGE.into(), PYTHON),
            ("typescript", super::typescript(), tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), TYPESCRIPT),
            ("tsx", super::tsx(), tree_sitter_typescript::LANGUAGE_TSX.into(), TSX),
            ("javascript", super::javascript(), tree_sitter_javascript::LANGUAGE.into(), JAVASCRIPT),
            ("go", super::go(), tree_sitter_go::LANGUAGE.into(), GO),
            ("c_sharp", super::c_sharp(), tree_sitter_c_sharp::LANGUAGE.into(), C_SHARP),
            ("markdown", super::markdown(), tree_sitter_md::LANGUAGE.into(), MARKDOWN),
        ]
    }

    /// The parse tables inflated here are the crate's: every state's next
    /// state on every symbol (the large and small parse tables, their map
    /// and the shift actions) and every state's valid lookaheads agree.
    #[test]
    fn every_grammar_has_its_crates_tables() {
        for (name, ours, theirs, _) in grammars() {
            let ours = ours.unwrap_or_else(|| panic!("{name}: its tables did not inflate"));
            assert_eq!(ours.abi_version(), theirs.abi_version(), "{name}");
            assert_eq!(ours.parse_state_count(), theirs.parse_state_count(), "{name}");
            assert_eq!(ours.node_kind_count(), theirs.node_kind_count(), "{name}");
            let states = u16::try_from(ours.parse_state_count()).unwrap();
            let symbols = u16::try_from(ours.node_kind_count()).unwrap();
            let mut differ = Vec::new();
            let mut shifts = 0usize;
            for state in 0..states {
                for symbol in 0..symbols {
                    let next = ours.next_state(state, symbol);
                    shifts += usize::from(next != 0);
                    if next != theirs.next_state(state, symbol) {
                        differ.push((state, symbol));
                    }
                }
                let lookaheads = |l: &Language| l.lookahead_iterator(state).map(|i| i.collect::<Vec<_>>());
                if lookaheads(&ours) != lookaheads(&theirs) {
                    differ.push((state, u16::MAX));
                }
            }
            assert!(
                differ.is_empty(),
                "{name}: {} (state, symbol) pairs differ, first {:?}",
                differ.len(),
                &differ[..differ.len().min(5)]
            );
            // A table left zeroed would agree with nothing but itself.
            assert!(shifts > usize::from(states), "{name}: only {shifts} transitions");
        }
    }

    /// A sample parses to the same tree with both, and without an error
    /// (the lexer's modes and the grammar's scanner run on every token).
    #[test]
    fn every_grammar_parses_as_its_crate_does() {
        for (name, ours, theirs, sample) in grammars() {
            let tree = |language: &Language| {
                let mut parser = Parser::new();
                parser.set_language(language).unwrap();
                parser.parse(sample, None).unwrap()
            };
            let (ours, theirs) = (tree(&ours.unwrap()), tree(&theirs));
            assert!(!ours.root_node().has_error(), "{name}: {}", ours.root_node().to_sexp());
            assert!(ours.root_node().descendant_count() > 40, "{name}: a sample too small to say much");
            assert_eq!(ours.root_node().to_sexp(), theirs.root_node().to_sexp(), "{name}");
        }
    }
}
