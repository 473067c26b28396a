//! `beectl design import | map | capture | mcp`: the CLI side of design
//! bundles (it writes; the MCP server in `mcp::design` only reads), each
//! answering one JSON document.

use bee_daemon::rendered::Rendered;
use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;
use serde_json::json;
use std::path::PathBuf;

use crate::design::{self, DesignError, Viewport};
use beectl::args::DesignCommand;

fn failure(err: DesignError) -> Rendered {
    if err.code == "invalid_usage" {
        return Rendered::invalid_usage(err.message);
    }
    Rendered::json(Exit::Unavailable, &CommandError::unavailable(err.code, err.message))
}

/// The pinned root: `--root` (absolute, physical) or the current directory.
pub fn root(root: Option<&str>) -> Result<PathBuf, Rendered> {
    crate::input::physical_root(root).map_err(|_| {
        Rendered::invalid_usage(format!(
            "--root: {} must be an existing, absolute, physical directory",
            root.unwrap_or("the current directory")
        ))
    })
}

fn viewport(text: &str) -> Result<Viewport, Rendered> {
    text.split_once('x')
        .and_then(|(w, h)| Some(Viewport { width: w.parse().ok()?, height: h.parse().ok()? }))
        .ok_or_else(|| Rendered::invalid_usage(format!("--viewport {text:?}: WIDTHxHEIGHT, as 1280x800")))
}

pub fn run(command: DesignCommand) -> Rendered {
    let pinned = match &command {
        DesignCommand::Import { root, .. } | DesignCommand::Map { root, .. } | DesignCommand::Capture { root, .. } => {
            root.as_deref()
        }
        DesignCommand::Mcp { root } => Some(root.as_str()),
    };
    let root = match self::root(pinned) {
        Ok(root) => root,
        Err(rendered) => return rendered,
    };
    let answer = match command {
        DesignCommand::Import { dir, bundle, .. } => design::import(&root, &dir, &bundle).map(|manifest| {
            let mut kinds = std::collections::BTreeMap::new();
            for e in &manifest.entries {
                *kinds.entry(serde_json::to_value(e.kind).unwrap_or_default().as_str().unwrap_or("").to_owned()).or_insert(0) += 1;
            }
            json!({"schemaVersion": 1, "status": "imported", "bundle": manifest.bundle,
                   "path": design::design_dir(&root).join(&manifest.bundle).strip_prefix(&root).map(|p| p.display().to_string()).unwrap_or_default(),
                   "entries": manifest.entries.len(), "kinds": kinds,
                   "note": "every entry is as the export declares it (draft unless it says ready): importing approves nothing"})
        }),
        DesignCommand::Map { id, source, bundle, .. } => design::map(&root, bundle.as_deref(), &id, &source)
            .map(|(manifest, mapped)| json!({"schemaVersion": 1, "status": "mapped", "bundle": manifest.bundle, "id": id, "source": mapped})),
        DesignCommand::Capture { id, url, file, viewport, bundle, .. } => {
            let viewport = match self::viewport(&viewport) {
                Ok(viewport) => viewport,
                Err(rendered) => return rendered,
            };
            design::capture(&root, bundle.as_deref(), &id, url.as_deref(), file.as_deref(), viewport)
                .map(|(manifest, capture)| json!({"schemaVersion": 1, "status": "captured", "bundle": manifest.bundle, "id": id, "capture": capture}))
        }
        DesignCommand::Mcp { .. } => return crate::mcp::design::serve(root),
    };
    match answer {
        Ok(document) => Rendered::json(Exit::Success, &document),
        Err(err) => failure(err),
    }
}
