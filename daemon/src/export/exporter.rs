//! beed's exporter: every interval it reads the series once and POSTs them to
//! each configured destination (Prometheus remote write, OTLP/HTTP), then
//! writes each destination's state for `beectl export status`, and what it
//! keeps between sends (the ledger's running totals, the series each
//! destination took) in `export/counters.json`.
//!
//! It runs on beed's runtime, never on the hook path: the stores are read on
//! a blocking thread, and only that send's series are held (bounded by the
//! stores' distinct label sets, not by how long a collector was down).

use std::time::Duration;

use bee_proto::export::{DestinationState, ExportState, StoreCursor};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::{Endpoint, ExportConfig, Stores};

/// How long one send may take before it counts as failed.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A client for http and https: TLS through rustls, trusting the system's
/// roots and the config's `ca_file`. Roots that fail to load are logged; an
/// https send then fails with the TLS error, in the state and the log.
fn client(extra_roots: &[Vec<u8>]) -> Result<HttpClient, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for error in &native.errors {
        tracing::warn!("export: a system root certificate could not be read: {error}");
    }
    let (added, ignored) = roots.add_parsable_certificates(native.certs);
    tracing::debug!("export: {added} system root certificates, {ignored} unusable");
    for root in extra_roots {
        roots
            .add(rustls::pki_types::CertificateDer::from(root.clone()))
            .map_err(|err| format!("a ca_file certificate is not usable: {err}"))?;
    }
    let tls =
        rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|err| format!("TLS cannot be set up: {err}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
    let connector =
        hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().build();
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

/// One destination's wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    RemoteWrite,
    Otlp,
}

/// POSTs one body; `Err` says why the collector did not take it.
async fn post(
    client: &HttpClient,
    endpoint: &Endpoint,
    format: Format,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> Result<(), String> {
    let mut request = hyper::Request::post(&endpoint.url)
        .header(hyper::header::CONTENT_TYPE, "application/x-protobuf")
        .header(hyper::header::USER_AGENT, concat!("bee/", env!("CARGO_PKG_VERSION")));
    let body = match format {
        Format::RemoteWrite => {
            request = request
                .header(hyper::header::CONTENT_ENCODING, "snappy")
                .header("X-Prometheus-Remote-Write-Version", "0.1.0");
            body
        }
        // OTLP/HTTP receivers take gzip (the specification's one
        // compression): a push shrinks to about a fifth.
        Format::Otlp => {
            request = request.header(hyper::header::CONTENT_ENCODING, "gzip");
            gzip(&body).map_err(|err| format!("compressing: {err}"))?
        }
    };
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request.body(Full::new(Bytes::from(body))).map_err(|err| err.to_string())?;
    let answer = tokio::time::timeout(SEND_TIMEOUT, client.request(request))
        .await
        .map_err(|_| format!("no answer within {} s", SEND_TIMEOUT.as_secs()))?
        .map_err(|err| format!("{}: {}", endpoint.authority, with_causes(&err)))?;
    let status = answer.status();
    if status.is_success() {
        return Ok(());
    }
    // The collector's reason, its first line and no more (it may echo a label).
    let body = tokio::time::timeout(SEND_TIMEOUT, answer.into_body().collect())
        .await
        .ok()
        .and_then(Result::ok)
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    let reason = String::from_utf8_lossy(&body).lines().next().unwrap_or("").chars().take(200).collect::<String>();
    Err(format!("HTTP {status}: {reason}"))
}

/// `body` gzip-compressed.
fn gzip(body: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 4), flate2::Compression::default());
    encoder.write_all(body)?;
    encoder.finish()
}

/// An error with every cause below it: the client's own says only
/// "client error (Connect)", the cause says which certificate was refused.
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        cause = inner.source();
    }
    text
}

/// Notes one attempt's outcome; failures are logged when they start or
/// change and when they end, not at every tick.
fn note(state: &mut DestinationState, attempt_utc: &str, outcome: Result<(usize, StoreCursor), String>) {
    state.last_attempt_utc = Some(attempt_utc.to_owned());
    match outcome {
        Ok((count, cursor)) => {
            if state.consecutive_failures > 0 {
                tracing::info!(
                    "export to {}: sent again after {} failed attempts",
                    state.url,
                    state.consecutive_failures
                );
            }
            state.last_success_utc = Some(attempt_utc.to_owned());
            state.last_error = None;
            state.consecutive_failures = 0;
            state.series_sent = count as u64;
            state.cursor = Some(cursor);
        }
        Err(error) => {
            if state.last_error.as_deref() != Some(error.as_str()) {
                tracing::warn!("export to {} failed: {error}; the next send carries every total", state.url);
            }
            state.last_error = Some(error);
            state.consecutive_failures += 1;
        }
    }
}

/// A destination's state, continued from the last run's when it sent to the same URL.
fn continued(previous: Option<DestinationState>, endpoint: &Endpoint) -> DestinationState {
    previous
        .filter(|state| state.url == endpoint.url)
        .unwrap_or_else(|| DestinationState { url: endpoint.url.clone(), ..DestinationState::default() })
}

/// Sends the log events after the destination's log cursor (to the OTLP
/// logs endpoint, when there is one), and moves the cursor on only when the
/// collector took them. `verdicts` are the last full read's.
async fn send_logs(
    client: &HttpClient,
    config: &ExportConfig,
    stores: &Stores,
    destination: &mut DestinationState,
    verdicts: Option<Vec<crate::events::audit::Verdict>>,
    host: &str,
    now_ms: i64,
) -> Result<(), String> {
    let Some(endpoint) = &config.otlp_logs else { return Ok(()) };
    let from = destination.log_cursor.clone().unwrap_or_default();
    let (reading, user, host_label) = (stores.clone(), config.user.clone(), host.to_owned());
    let (events, next, problems) = tokio::task::spawn_blocking(move || {
        super::read_log_events(&reading, from, verdicts.as_deref(), &user, &host_label, now_ms)
    })
    .await
    .map_err(|err| format!("reading the log events: {err}"))?;
    for problem in &problems {
        tracing::warn!("export: {problem}; its log events wait for the next send");
    }
    if !events.is_empty() {
        let now_ns = super::otlp::unix_ns(now_ms);
        let body = super::otlp::encode_logs(&events, host, now_ns);
        post(client, endpoint, Format::Otlp, &config.headers, body).await.map_err(|err| format!("logs: {err}"))?;
        destination.log_events_sent += events.len() as u64;
    }
    destination.log_cursor = Some(next);
    Ok(())
}

/// Sends every `config.interval` until beed stops.
pub async fn run(config: ExportConfig, stores: Stores) {
    let host = super::host_name();
    let previous = super::read_state().unwrap_or_default();
    let mut state = ExportState {
        prometheus: config.remote_write.as_ref().map(|endpoint| continued(previous.prometheus, endpoint)),
        otlp: config.otlp.as_ref().map(|endpoint| continued(previous.otlp, endpoint)),
    };
    let client = match client(&config.extra_roots) {
        Ok(client) => client,
        Err(error) => {
            tracing::error!("export: {error}; nothing is exported");
            fail_all(&mut state, &bee_proto::time::format_unix_ms(bee_proto::time::now_unix_ms()), &error);
            write(state, None).await;
            return;
        }
    };
    // The cumulative sums' start, kept across restarts: the totals cover the
    // whole store whenever beed started, so a restart is no counter reset.
    if let Some(otlp) = state.otlp.as_mut() {
        otlp.series_start_ms.get_or_insert_with(bee_proto::time::now_unix_ms);
    }
    let start_ns = super::otlp::unix_ns(
        state.otlp.as_ref().and_then(|otlp| otlp.series_start_ms).unwrap_or_else(bee_proto::time::now_unix_ms),
    );
    let mut kept = super::read_kept().unwrap_or_default();
    // What the file says is input, not authority: a state that cannot be
    // one beed wrote (a part negative or not a number, a read in the
    // future, cuts out of order) is dropped and the totals read afresh.
    let mut counters: Option<super::CounterState> =
        kept.counters.take().filter(|saved| saved.is_sound(bee_proto::time::now_unix_ms())).map(Into::into);
    // What each destination holds: kept apart from the state above, and
    // the floor no rebuilt state sends a series below.
    let mut sent = super::read_sent().unwrap_or_default();
    let mut ticks = tokio::time::interval(config.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let to: Vec<&str> = state.destinations().map(|(_, destination)| destination.url.as_str()).collect();
    tracing::info!("exporting to {} every {} s as user {:?}", to.join(" and "), config.interval.as_secs(), config.user);
    // A new series' 0 sample lies one interval before its first value.
    let interval_ms = i64::try_from(config.interval.as_millis()).unwrap_or(i64::MAX);
    loop {
        ticks.tick().await;
        let now_ms = bee_proto::time::now_unix_ms();
        let attempt_utc = bee_proto::time::format_unix_ms(now_ms);
        let (reading, user, host_label, mut moving, floors) =
            (stores.clone(), config.user.clone(), host.clone(), counters.take(), sent.floors());
        // Every tick reads: the ledger's part costs what changed since the
        // last read (see `counters`), and each read moves the boundary
        // that tells late arrivals apart.
        let read = tokio::task::spawn_blocking(move || {
            let reading = super::read(&reading, &user, &host_label, now_ms, &mut moving, &floors);
            (reading, moving)
        })
        .await;
        let (super::Reading { series, cursor, problems, verdicts }, moved) = match read {
            Ok(read) => read,
            Err(err) => {
                fail_all(&mut state, &attempt_utc, &format!("reading the stores: {err}"));
                write(state.clone(), None).await;
                // The totals as last kept: never started again from 0.
                counters = kept.counters.clone().map(Into::into);
                continue;
            }
        };
        counters = moved;
        for problem in &problems {
            tracing::warn!("export: {problem}; its series are left out of this send");
        }
        if let (Some(endpoint), Some(destination)) = (&config.remote_write, state.prometheus.as_mut()) {
            let taken = kept.taken.entry(endpoint.url.clone()).or_default();
            // A series the destination was sent before is no new series,
            // whatever the state file says.
            taken.extend(series.iter().filter(|one| sent.holds(&endpoint.url, one)).map(super::Series::key));
            let outcome =
                send_remote_write(&client, endpoint, &config.headers, &series, taken, now_ms, interval_ms).await;
            if outcome.is_ok() {
                sent.note(&endpoint.url, &series);
            }
            note(destination, &attempt_utc, outcome.map(|()| (series.len(), cursor)));
        }
        if let (Some(endpoint), Some(destination)) = (&config.otlp, state.otlp.as_mut()) {
            let now_ns = super::otlp::unix_ns(now_ms);
            let body = super::otlp::encode(&series, &host, start_ns, now_ns);
            let mut outcome = post(&client, endpoint, Format::Otlp, &config.headers, body).await;
            if outcome.is_ok() {
                let verdicts = verdicts.clone();
                sent.note(&endpoint.url, &series);
                outcome = send_logs(&client, &config, &stores, destination, verdicts, &host, now_ms).await;
            }
            note(destination, &attempt_utc, outcome.map(|()| (series.len(), cursor)));
        }
        kept.counters = counters.as_ref().map(Into::into);
        write(state.clone(), Some((kept.clone(), sent.clone()))).await;
    }
}

/// Sends `series` by remote write, each counter that `taken` does not
/// hold yet from a 0 sample one interval earlier, and notes them taken.
/// A receiver that already holds one of them (its state file was lost)
/// refuses that older sample: the push goes again without 0 samples.
async fn send_remote_write(
    client: &HttpClient,
    endpoint: &Endpoint,
    headers: &[(String, String)],
    series: &[super::Series],
    taken: &mut std::collections::BTreeSet<String>,
    now_ms: i64,
    interval_ms: i64,
) -> Result<(), String> {
    let new: std::collections::HashSet<String> = series
        .iter()
        .filter(|one| super::is_counter(one))
        .map(super::Series::key)
        .filter(|key| !taken.contains(key))
        .collect();
    let start_ms = now_ms.saturating_sub(interval_ms);
    let encode = |with_zeros: bool| {
        super::remote_write::encode(series, now_ms, |one| (with_zeros && new.contains(&one.key())).then_some(start_ms))
            .map_err(|err| format!("encoding: {err}"))
    };
    let mut outcome = post(client, endpoint, Format::RemoteWrite, headers, encode(!new.is_empty())?).await;
    if !new.is_empty() && outcome.as_ref().is_err_and(|err| err.starts_with("HTTP 400")) {
        tracing::info!("export to {}: a new series' 0 sample was refused; sent without", endpoint.url);
        outcome = post(client, endpoint, Format::RemoteWrite, headers, encode(false)?).await;
    }
    if outcome.is_ok() {
        taken.extend(new);
    }
    outcome
}

/// Notes the same failure for every destination.
fn fail_all(state: &mut ExportState, attempt_utc: &str, error: &str) {
    for destination in [state.prometheus.as_mut(), state.otlp.as_mut()].into_iter().flatten() {
        note(destination, attempt_utc, Err(error.to_owned()));
    }
}

/// Writes the state for `beectl export status`, and what the exporter
/// keeps when given, off the runtime.
async fn write(state: ExportState, kept: Option<(super::Kept, super::Sent)>) {
    let written = tokio::task::spawn_blocking(move || {
        super::write_state(&state)?;
        match &kept {
            Some((kept, sent)) => super::write_kept(kept).and_then(|()| super::write_sent(sent)),
            None => Ok(()),
        }
    });
    if let Ok(Err(err)) = written.await {
        tracing::warn!("export: its state could not be written: {err}");
    }
}
