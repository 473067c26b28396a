//! `SKILL.md` files (front matter, then a body) never panic the skill
//! bridge's parser, and a parsed skill always has a name.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok((name, _, _, body)) = bee_daemon::context::skills::parse(text) {
        assert!(!name.trim().is_empty());
        assert!(body.len() <= text.len());
    }
});
