//! Export: any config.toml text gives settings or named errors, never a
//! panic, and never a config with an error beside it; any body a receiver
//! gets decodes to a write request or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = bee_daemon::export::remote_write::decode(data);
    let Ok(text) = std::str::from_utf8(data) else { return };
    for candidate in [text.to_owned(), format!("[export]\n{text}")] {
        let settings = bee_daemon::export::settings_from(&candidate, Path::new("config.toml"));
        assert!(settings.config.is_none() || settings.errors.is_empty());
        if let Some(config) = settings.config {
            assert!(config.interval.as_secs() >= 1 && !config.user.trim().is_empty());
            assert!(config.remote_write.is_some() || config.otlp.is_some());
            for endpoint in config.remote_write.iter().chain(&config.otlp) {
                assert!(endpoint.url.starts_with("http://") || endpoint.url.starts_with("https://"));
            }
        }
    }
});
