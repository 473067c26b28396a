//! `beectl delivery report | read`: ask beed, else read the store offline.

use bee_daemon::delivery::report::{self as reader, ReportQuery};
use bee_daemon::rendered::Rendered;
use bee_proto::api::{DELIVERY_READ_PATH, DELIVERY_REPORT_PATH, DeliveryReadRequest, DeliveryReportRequest};
use serde::Serialize;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::ask;
use beectl::args::{ReadArgs, ReportArgs};

/// How long beectl waits for beed before reading offline instead.
const DAEMON_TIMEOUT: Duration = Duration::from_secs(3);

pub fn report(args: ReportArgs) -> Rendered {
    let store = match absolute(&args.store) {
        Ok(store) => store,
        Err(message) => return Rendered::invalid_usage(message),
    };
    let request =
        DeliveryReportRequest { store: store.display().to_string(), session: args.session.clone(), limit: args.limit };
    let query = ReportQuery { session: args.session, limit: args.limit };
    let rendered = ask_daemon(DELIVERY_REPORT_PATH, &request).unwrap_or_else(|| reader::report(&store, &query));
    if args.table { crate::render::table::delivery_report(rendered) } else { rendered }
}

pub fn read(args: ReadArgs) -> Rendered {
    let store = match absolute(&args.store) {
        Ok(store) => store,
        Err(message) => return Rendered::invalid_usage(message),
    };
    let request = DeliveryReadRequest { store: store.display().to_string(), event: args.event };
    ask_daemon(DELIVERY_READ_PATH, &request).unwrap_or_else(|| reader::read(&store, args.event))
}

fn absolute(store: &str) -> Result<PathBuf, String> {
    std::path::absolute(Path::new(store)).map_err(|err| format!("--store: {err}"))
}

/// The daemon's answer, or `None` when the store must be read offline.
fn ask_daemon<T: Serialize>(path: &str, request: &T) -> Option<Rendered> {
    let body = serde_json::to_vec(request).ok()?;
    let answer = ask::post(path, body, DAEMON_TIMEOUT, "reading the store offline")?;
    match answer.exit {
        Some(exit) => Some(Rendered { exit, bytes: answer.body }),
        None => {
            let _ = writeln!(std::io::stderr(), "beectl: beed's answer had no exit status; reading the store offline");
            None
        }
    }
}
