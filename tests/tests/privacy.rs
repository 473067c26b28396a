//! Stores hold metadata only: no prompt, no output, in any file Bee writes,
//! whether the observation went to beed or to the spool.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;

const PROMPT: &str = "SECRET-PROMPT-7f3a: the API key is sk-live-0000";
const OUTPUT: &[u8] = b"SECRET-BLOCK-9c2e: internal steering text\n";

#[test]
fn no_prompt_or_output_text_reaches_any_store_file() {
    let home = TestHome::new();
    let block = home.file("block.md", OUTPUT);
    let envelope = prompt_envelope(SESSION, PROMPT);
    // Spooled while beed is down, then recorded through beed.
    home.fire_with_receipt("plain", &block, &envelope);
    home.fire_with_receipt("context-json", &block, &envelope);
    let daemon = home.start_daemon();
    home.fire_with_receipt("plain", &block, &envelope);
    let wrapped = ["prompt", "--surface", "plain", "--", "sh", "-c", "cat"];
    let (echoed, _) = home.hook(&wrapped, &envelope);
    assert_eq!(echoed.stdout, envelope, "the wrapped command echoed the envelope back");
    // One more spooled copy survives in the spool until beed reads it.
    daemon.freeze();
    home.fire_with_receipt("plain", &block, &envelope);
    let files_while_running = home.bee_files();
    daemon.resume();
    assert!(eventually(std::time::Duration::from_secs(10), || home.report(&[]).1["observedEvents"] == 5));
    drop(daemon);

    let mut files = home.bee_files();
    files.extend(files_while_running);
    assert!(files.len() >= 3, "{:?}", files.iter().map(|f| &f.0).collect::<Vec<_>>());
    let needles: [&[u8]; 6] = [
        b"SECRET-PROMPT-7f3a",
        b"sk-live-0000",
        b"SECRET-BLOCK-9c2e",
        b"internal steering text",
        b"/home/dev/app",
        b"/home/dev/.claude/projects",
    ];
    for (path, bytes) in &files {
        for needle in needles {
            assert!(!contains(bytes, needle), "{} contains {:?}", path.display(), String::from_utf8_lossy(needle));
        }
    }
}
