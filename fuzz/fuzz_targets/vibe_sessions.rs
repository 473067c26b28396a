//! Ingestion's reader of Mistral Vibe's session documents never panics on
//! any bytes, and hands the store nothing it would refuse without saying
//! so: the bytes as a 2.x session's `meta.json` (its parent's beside it,
//! for a continuation), and as a unified store's projection (its
//! `meta.json` and runtime state beside it).
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(reader) = bee_daemon::ledger::agents::agent(Provider::MistralVibe).whole_file() else { return };
    let Ok(dir) = tempfile::tempdir() else { return };
    let store = dir.path().join("unified/aaaaaaaa-0000-4000-8000-000000000001");
    let generation = store.join("generations/0000000000000008");
    // Two session folders, so a document naming a parent finds one.
    let files = [
        dir.path().join("session_20260601_090000_aaaaaaaa/meta.json"),
        dir.path().join("session_20260601_090100_bbbbbbbb/meta.json"),
        generation.join("projection-state.json"),
    ];
    for path in &files {
        let written = path.parent().is_some_and(|parent| std::fs::create_dir_all(parent).is_ok())
            && std::fs::write(path, data).is_ok();
        if !written {
            return;
        }
    }
    let _ = std::fs::write(store.join("meta.json"), data);
    let _ = std::fs::write(generation.join("runtime-state.json"), data);
    for path in &files {
        let mut evidence = Vec::new();
        if reader.read(path, &Default::default(), &mut evidence).is_ok() {
            for item in &evidence {
                let _ = item.is_valid();
            }
        }
    }
});
