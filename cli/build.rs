//! Builds the outline's tree-sitter grammars with their parse tables stored
//! deflated: each grammar's generated `parser.c` (from its crate's source,
//! found as `package_folders` says) is compiled with its six integer tables
//! declared but not initialised, so they take no room in `beectl`, and a
//! `bee_grammar_fill_*` function that copies them in from the deflated
//! bytes this script embeds (`mcp::grammars` inflates them once, on a
//! grammar's first use). The tables were 10.3 MB of `beectl`'s 29.6 MB,
//! mostly zeros; deflated they are 0.75 MB.
//!
//! The tables' bytes come from the grammar itself: a small host program
//! that includes the untouched `parser.c` writes each table as the C
//! compiler laid it out. Every target Bee ships is little-endian, and the
//! tables hold only 8-, 16- and 32-bit integers (no pointers), so the
//! host's layout is the target's.

use std::collections::BTreeMap;
use std::error::Error;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tables moved out of the binary: pointer-free integer arrays, the
/// bulk of every generated parser.
const TABLES: [&str; 6] = [
    "ts_parse_table",
    "ts_small_parse_table",
    "ts_small_parse_table_map",
    "ts_parse_actions",
    "ts_lex_modes",
    "ts_primary_state_ids",
];

/// One grammar: Bee's key for it, its crate, the folder of its `parser.c`
/// inside the crate, and its language function.
struct Grammar {
    key: &'static str,
    package: &'static str,
    source: &'static str,
    language: &'static str,
}

const GRAMMARS: [Grammar; 8] = [
    Grammar { key: "rust", package: "tree-sitter-rust", source: "src", language: "tree_sitter_rust" },
    Grammar { key: "python", package: "tree-sitter-python", source: "src", language: "tree_sitter_python" },
    Grammar {
        key: "typescript",
        package: "tree-sitter-typescript",
        source: "typescript/src",
        language: "tree_sitter_typescript",
    },
    Grammar { key: "tsx", package: "tree-sitter-typescript", source: "tsx/src", language: "tree_sitter_tsx" },
    Grammar { key: "javascript", package: "tree-sitter-javascript", source: "src", language: "tree_sitter_javascript" },
    Grammar { key: "go", package: "tree-sitter-go", source: "src", language: "tree_sitter_go" },
    Grammar { key: "c_sharp", package: "tree-sitter-c-sharp", source: "src", language: "tree_sitter_c_sharp" },
    Grammar {
        key: "markdown",
        package: "tree-sitter-md",
        source: "tree-sitter-markdown/src",
        language: "tree_sitter_markdown",
    },
];

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    let packages = package_folders(&out)?;
    for grammar in &GRAMMARS {
        let folder = packages
            .get(grammar.package)
            .ok_or_else(|| format!("{} is not among beectl's dependencies", grammar.package))?;
        let source = folder.join(grammar.source);
        let parser = source.join("parser.c");
        let scanner = source.join("scanner.c");
        let scanner = scanner.exists().then_some(scanner);
        println!("cargo:rerun-if-changed={}", parser.display());
        let text = std::fs::read_to_string(&parser).map_err(|e| format!("{}: {e}", parser.display()))?;
        let tables = dump_tables(grammar, &parser, &source, scanner.as_deref(), &out)?;

        // Their total size (u32 LE), then the tables deflated, in order.
        let total: usize = tables.iter().map(|t| t.bytes.len()).sum();
        let mut deflated = flate2::write::DeflateEncoder::new(
            u32::try_from(total)?.to_le_bytes().to_vec(),
            flate2::Compression::best(),
        );
        for table in &tables {
            deflated.write_all(&table.bytes)?;
        }
        std::fs::write(out.join(format!("{}.tables", grammar.key)), deflated.finish()?)?;

        let rewritten = out.join(format!("parser_{}.c", grammar.key));
        std::fs::write(&rewritten, without_tables(grammar, &text, &tables)?)?;
        // One library per grammar: each is built against its own
        // `tree_sitter/parser.h` (the rewritten file is in OUT_DIR, so its
        // includes resolve through this folder).
        let mut build = cc::Build::new();
        build.std("c11").warnings(false).include(&source).file(&rewritten);
        // Bee's names for the grammar's global symbols, so the grammar
        // crates themselves can sit beside it (the tests compare the two).
        for global in std::iter::once(grammar.language.to_owned()).chain(
            ["create", "destroy", "scan", "serialize", "deserialize"]
                .map(|f| format!("{}_external_scanner_{f}", grammar.language)),
        ) {
            build.define(&global, Some(format!("bee_{global}").as_str()));
        }
        if let Some(scanner) = scanner {
            build.file(scanner);
        }
        build.compile(&format!("bee-grammar-{}", grammar.key));
    }
    Ok(())
}

/// Each grammar package's folder (the registry, a vendor directory or a
/// path: wherever cargo put it). The versions are the ones this build uses
/// (`cargo tree` of beectl's build dependencies); the folders come from
/// `cargo metadata` of a manifest that names only those, so nothing else of
/// the workspace (other crates' dev-dependencies) has to be on disk.
fn package_folders(out: &Path) -> Result<BTreeMap<String, PathBuf>, Box<dyn Error>> {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR is not set")?);
    let package = std::env::var("CARGO_PKG_NAME")?;
    let mut tree = vec!["tree", "-p", &package, "-e", "build", "--depth", "1", "--prefix", "none", "--manifest-path"];
    let manifest = manifest_dir.join("Cargo.toml");
    let manifest = manifest.to_str().ok_or("a manifest path that is not UTF-8")?;
    tree.push(manifest);
    let mut versions = BTreeMap::new();
    for line in cargo(&tree)?.lines() {
        let mut words = line.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next().and_then(|v| v.strip_prefix('v'))) else {
            continue;
        };
        if GRAMMARS.iter().any(|g| g.package == name) {
            versions.insert(name.to_owned(), version.to_owned());
        }
    }

    let sources = out.join("grammar-sources");
    std::fs::create_dir_all(&sources)?;
    let mut toml = String::from(
        "[package]\nname = \"bee-grammar-sources\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[lib]\npath = \"lib.rs\"\n\n[dependencies]\n",
    );
    for (name, version) in &versions {
        writeln!(toml, "{name} = \"={version}\"")?;
    }
    toml.push_str("\n[workspace]\n");
    std::fs::write(sources.join("Cargo.toml"), toml)?;
    std::fs::write(sources.join("lib.rs"), "")?;
    let sources_manifest = sources.join("Cargo.toml");
    let sources_manifest = sources_manifest.to_str().ok_or("an OUT_DIR that is not UTF-8")?;
    let metadata = cargo(&["metadata", "--format-version", "1", "--manifest-path", sources_manifest])?;
    // The two fields read of cargo metadata's document.
    #[derive(serde::Deserialize)]
    struct Metadata {
        packages: Vec<Package>,
    }
    #[derive(serde::Deserialize)]
    struct Package {
        name: String,
        manifest_path: PathBuf,
    }
    let metadata: Metadata = serde_json::from_str(&metadata)?;
    let mut folders = BTreeMap::new();
    for package in metadata.packages {
        if versions.contains_key(&package.name) {
            let folder = package.manifest_path.parent().ok_or("a manifest path without a folder")?.to_path_buf();
            folders.insert(package.name, folder);
        }
    }
    Ok(folders)
}

/// Runs cargo with `args` and returns what it printed: offline first (the
/// build dependencies are on disk by now), then, only if that fails, as
/// the build itself may (a `cargo install` that resolved newer versions
/// than the lock file it was packaged with).
fn cargo(args: &[&str]) -> Result<String, Box<dyn Error>> {
    let program = std::env::var_os("CARGO").ok_or("CARGO is not set")?;
    let mut failures = Vec::new();
    for offline in [true, false] {
        let mut command = Command::new(&program);
        command.args(args);
        if offline {
            command.arg("--offline");
        }
        let output = command.output()?;
        if output.status.success() {
            return Ok(String::from_utf8(output.stdout)?);
        }
        failures.push(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    Err(format!("cargo {}: {}", args.join(" "), failures.join("\n")).into())
}

/// One table as the grammar's compiler laid it out.
struct Table {
    name: &'static str,
    bytes: Vec<u8>,
    elements: usize,
}

/// Compiles and runs a host program that includes the untouched `parser.c`
/// and writes each table's size, element count and bytes.
fn dump_tables(
    grammar: &Grammar,
    parser: &Path,
    source: &Path,
    scanner: Option<&Path>,
    out: &Path,
) -> Result<Vec<Table>, Box<dyn Error>> {
    let program = out.join(format!("dump_{}.c", grammar.key));
    let data = out.join(format!("dump_{}.bin", grammar.key));
    let mut c = format!("#include <stdio.h>\n#include \"{}\"\n", parser.display());
    c.push_str("int main(int argc, char **argv) {\n  if (argc != 2) return 2;\n  FILE *f = fopen(argv[1], \"wb\");\n  if (!f) return 3;\n");
    for table in TABLES {
        writeln!(
            c,
            "  printf(\"%zu %zu\\n\", sizeof {table}, sizeof {table} / sizeof {table}[0]);\n  if (fwrite({table}, 1, sizeof {table}, f) != sizeof {table}) return 4;"
        )?;
    }
    c.push_str("  return fclose(f) == 0 ? 0 : 5;\n}\n");
    std::fs::write(&program, c)?;

    let host = std::env::var("HOST")?;
    let compiler = cc::Build::new()
        .target(&host)
        .host(&host)
        .opt_level(0)
        .std("c11")
        .warnings(false)
        .cargo_metadata(false)
        .include(source)
        .get_compiler();
    let executable = out.join(format!("dump_{}{}", grammar.key, std::env::consts::EXE_SUFFIX));
    let mut compile = compiler.to_command();
    compile.arg(&program);
    if let Some(scanner) = scanner {
        compile.arg(scanner);
    }
    compile.arg("-o").arg(&executable);
    let compiled = compile.output()?;
    if !compiled.status.success() {
        return Err(format!("compiling {}: {}", program.display(), String::from_utf8_lossy(&compiled.stderr)).into());
    }
    let ran = Command::new(&executable).arg(&data).output()?;
    if !ran.status.success() {
        return Err(format!("{} failed: {}", executable.display(), ran.status).into());
    }
    let bytes = std::fs::read(&data)?;
    for scratch in [&executable, &data] {
        std::fs::remove_file(scratch)?;
    }
    let sizes = String::from_utf8(ran.stdout)?;
    let mut tables = Vec::new();
    let mut at = 0;
    for (name, line) in TABLES.into_iter().zip(sizes.lines()) {
        let (size, elements) = line.split_once(' ').ok_or("a size line without its element count")?;
        let (size, elements): (usize, usize) = (size.parse()?, elements.parse()?);
        let table = bytes.get(at..at + size).ok_or("the tables' file is shorter than their sizes")?;
        tables.push(Table { name, bytes: table.to_vec(), elements });
        at += size;
    }
    if tables.len() != TABLES.len() || at != bytes.len() {
        return Err(format!("{}: the tables' sizes do not add up to what was written", grammar.key).into());
    }
    Ok(tables)
}

/// `parser.c` with each table's definition replaced by a writable,
/// uninitialised declaration of the same type and size, and a function
/// that fills them, in order, from exactly their bytes.
fn without_tables(grammar: &Grammar, text: &str, tables: &[Table]) -> Result<String, Box<dyn Error>> {
    let mut rewritten = String::with_capacity(text.len() / 4);
    rewritten.push_str("#include <string.h>\n");
    let mut lines = text.lines();
    let mut replaced = Vec::new();
    while let Some(line) = lines.next() {
        let table = tables.iter().find(|t| {
            line.strip_prefix("static const ")
                .and_then(|rest| rest.split_once(' '))
                .is_some_and(|(_, rest)| rest.starts_with(&format!("{}[", t.name)))
        });
        let Some(table) = table else {
            rewritten.push_str(line);
            rewritten.push('\n');
            continue;
        };
        // `static const TYPE NAME[DIMS] = {` ... `};` (the generator's layout).
        let declaration = line
            .strip_prefix("static const ")
            .and_then(|rest| rest.strip_suffix(" = {"))
            .ok_or_else(|| format!("{}: {} is not laid out as expected", grammar.key, table.name))?;
        let declaration = declaration.replacen("[]", &format!("[{}]", table.elements), 1);
        writeln!(rewritten, "static {declaration};")?;
        for skipped in lines.by_ref() {
            if skipped == "};" {
                break;
            }
        }
        replaced.push(table.name);
    }
    if replaced.len() != tables.len() {
        return Err(format!("{}: found {replaced:?} of the tables {TABLES:?}", grammar.key).into());
    }
    let total: usize = tables.iter().map(|t| t.bytes.len()).sum();
    writeln!(
        rewritten,
        "\nint bee_grammar_fill_{}(const unsigned char *data, size_t len) {{\n  if (len != {total}) return -1;",
        grammar.key
    )?;
    for table in tables {
        writeln!(rewritten, "  memcpy((void *){0}, data, sizeof {0});\n  data += sizeof {0};", table.name)?;
    }
    rewritten.push_str("  return 0;\n}\n");
    if !text.contains(&format!("*{}(void)", grammar.language)) {
        return Err(format!("{}: no {} in parser.c", grammar.key, grammar.language).into());
    }
    Ok(rewritten)
}
