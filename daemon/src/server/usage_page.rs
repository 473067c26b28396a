//! The usage page (`GET /usage`, `usage.html` beside this file: daily bars
//! by agent, the days' and agents' figures, the sessions; no script or
//! font from elsewhere) and its data on the loopback listener: `GET /api/usage` answers
//! `beectl usage --json`'s document for the same question in the same words
//! (`by`, `since`, `until`, `timezone`, `agent`, `project`, `model`,
//! `order`, `last`), read by the one rule the command line reads them by
//! ([`UsageWords::ask`]) and priced by the same table (the bundled one with
//! the user's price file over it), so the page, the command line and the
//! MCP tools cannot disagree. A read: it needs the dashboard's secret
//! unless reads are open (see [`super::http`]).

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use bee_proto::events::{EventError, USAGE_CHANGES_PATH, USAGE_DATA_PATH, USAGE_LIVE_PATH};
use std::path::PathBuf;
use std::sync::Arc;

use crate::ledger::views::prices::PriceTable;
use crate::ledger::views::usage::{self, UsageWords};

const PAGE: &str = include_str!("usage.html");

/// The usage page (served by the guarded dashboard route, which also
/// takes the secret from its URL).
pub fn page() -> Html<&'static str> {
    Html(PAGE)
}

/// What the usage page's routes read: the ledger, and its generation.
#[derive(Debug, Clone)]
pub struct UsagePage {
    pub ledger_store: PathBuf,
    pub changes: Arc<tokio::sync::watch::Sender<u64>>,
}

/// The usage page's data routes.
pub fn router(page: UsagePage) -> Router {
    Router::new()
        .route(USAGE_DATA_PATH, get(usage_data))
        .route(USAGE_CHANGES_PATH, get(usage_changes))
        .route(USAGE_LIVE_PATH, get(usage_live))
        .with_state(Arc::new(page))
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangesQuery {
    after: Option<u64>,
}

/// The ledger's generation, once it is not `after` or after a while: the
/// page redraws when a new record comes, as `beectl top` does.
async fn usage_changes(
    State(page): State<Arc<UsagePage>>,
    query: Result<Query<ChangesQuery>, QueryRejection>,
) -> Response {
    match query {
        Ok(Query(query)) => axum::Json(super::changes::next_change(&page.changes, query.after).await).into_response(),
        Err(rejection) => refused(StatusCode::BAD_REQUEST, rejection.body_text()),
    }
}

fn refused(status: StatusCode, error: String) -> Response {
    (status, axum::Json(EventError { error })).into_response()
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LiveQuery {
    timezone: Option<String>,
}

/// `beectl top --json`'s view (its windows with their trend and projection,
/// burn, today by hour, sessions, limit hits) in the zone asked, without
/// the hook events beside its sessions: the page's gauges.
async fn usage_live(State(page): State<Arc<UsagePage>>, query: Result<Query<LiveQuery>, QueryRejection>) -> Response {
    let zone = match query.map(|Query(query)| query.timezone) {
        Ok(None) => crate::ledger::views::calendar::Zone::local(),
        Ok(Some(name)) => match crate::ledger::views::calendar::Zone::named(&name) {
            Ok(zone) => zone,
            Err(message) => return refused(StatusCode::BAD_REQUEST, format!("--timezone: {message}")),
        },
        Err(rejection) => return refused(StatusCode::BAD_REQUEST, rejection.body_text()),
    };
    let dir = page.ledger_store.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let prices = PriceTable::user_or_bundled();
        crate::ledger::views::live::view(&dir, bee_proto::time::now_unix_ms(), &zone, &prices)
    })
    .await;
    match answer {
        Ok(Ok(view)) => axum::Json(view).into_response(),
        Ok(Err(issue)) => refused(StatusCode::SERVICE_UNAVAILABLE, format!("the ledger: {}", issue.as_str())),
        Err(err) => refused(StatusCode::INTERNAL_SERVER_ERROR, err.to_string()),
    }
}

/// `beectl usage --json`'s bytes (its trailing newline too) for the words
/// of the query; a question it would refuse is a 400 saying why, a ledger
/// or price file it cannot read a 503.
async fn usage_data(State(page): State<Arc<UsagePage>>, query: Result<Query<UsageWords>, QueryRejection>) -> Response {
    let dir = page.ledger_store.clone();
    let words = match query {
        Ok(Query(words)) => words,
        Err(rejection) => return refused(StatusCode::BAD_REQUEST, rejection.body_text()),
    };
    let answer = tokio::task::spawn_blocking(move || -> Result<Vec<u8>, (StatusCode, String)> {
        let ask = words.ask(bee_proto::time::now_unix_ms()).map_err(|message| (StatusCode::BAD_REQUEST, message))?;
        let prices = PriceTable::with_user_file(PriceTable::user_file().as_deref()).map_err(|err| {
            let message = format!("{err} (Bee's user price file, merged over the bundled table: fix or remove it)");
            (StatusCode::SERVICE_UNAVAILABLE, message)
        })?;
        let report = usage::report(&dir, &ask, &prices)
            .map_err(|issue| (StatusCode::SERVICE_UNAVAILABLE, format!("the ledger: {}", issue.as_str())))?;
        let mut bytes =
            serde_json::to_vec(&report).map_err(|err| (StatusCode::INTERNAL_SERVER_ERROR, err.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    })
    .await;
    match answer {
        Ok(Ok(bytes)) => {
            ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], bytes).into_response()
        }
        Ok(Err((status, message))) => refused(status, message),
        Err(err) => refused(StatusCode::INTERNAL_SERVER_ERROR, err.to_string()),
    }
}
