//! `beectl artifact add | list | get`: files stored on purpose under the
//! Bee home, content-addressed, and given back only after their sha256
//! verifies. `get` writes a new file and never overwrites one.

use bee_daemon::context::artifacts::{self, ArtifactError, Meta};
use bee_daemon::rendered::Rendered;
use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;
use serde::Serialize;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Stored<'a> {
    schema_version: u32,
    /// `added`, `already_stored` or `written`.
    status: &'a str,
    artifact: Meta,
    #[serde(skip_serializing_if = "Option::is_none")]
    out: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    schema_version: u32,
    artifacts: Vec<Meta>,
}

/// An artifact error as the command's error document.
pub fn failure(err: ArtifactError) -> Rendered {
    if err.code == "invalid_usage" {
        return Rendered::invalid_usage(err.message);
    }
    Rendered::json(Exit::Unavailable, &CommandError::unavailable(err.code, err.message))
}

pub fn add(file: &str) -> Rendered {
    match artifacts::add(Path::new(file)) {
        Ok((artifact, new)) => Rendered::json(
            Exit::Success,
            &Stored { schema_version: 1, status: if new { "added" } else { "already_stored" }, artifact, out: None },
        ),
        Err(err) => failure(err),
    }
}

pub fn list() -> Rendered {
    match artifacts::list() {
        Ok(artifacts) => Rendered::json(Exit::Success, &Listed { schema_version: 1, artifacts }),
        Err(err) => failure(err),
    }
}

pub fn get(id: &str, out: &str) -> Rendered {
    let (artifact, bytes) = match artifacts::load(id) {
        Ok(found) => found,
        Err(err) => return failure(err),
    };
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(out)
        .and_then(|mut file| file.write_all(&bytes).and_then(|()| file.sync_all()));
    match written {
        Ok(()) => Rendered::json(
            Exit::Success,
            &Stored { schema_version: 1, status: "written", artifact, out: Some(out.to_owned()) },
        ),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Rendered::json(
            Exit::Unavailable,
            &CommandError::unavailable("out_exists", format!("{out} exists; `artifact get` never overwrites a file")),
        ),
        Err(err) => failure(ArtifactError { code: "io", message: format!("{out}: {err}") }),
    }
}
