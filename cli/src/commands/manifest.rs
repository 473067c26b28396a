//! A manifest file `beectl context` and `beectl plan create` take: read
//! whole, at most 1 MiB, a regular file, or a clear error.

use bee_daemon::rendered::Rendered;

/// A manifest file's text (at most 1 MiB, a regular file).
pub fn read(path: &str) -> Result<String, Rendered> {
    use std::io::Read;
    let unavailable = |message: String| {
        Rendered::json(
            bee_proto::exit::Exit::Unavailable,
            &bee_proto::delivery::CommandError::unavailable("manifest_invalid", message),
        )
    };
    let file = bee_daemon::storage::files::open_regular(std::path::Path::new(path))
        .map_err(|err| unavailable(format!("{path}: {err}")))?;
    let mut text = String::new();
    file.take(1 << 20).read_to_string(&mut text).map_err(|err| unavailable(format!("{path}: {err}")))?;
    Ok(text)
}
