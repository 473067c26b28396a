//! Prometheus remote write 1.0: the protocol's own protobuf messages
//! (`prometheus/prompb/remote.proto`, `types.proto`), snappy block-compressed,
//! POSTed to the configured endpoint; and beed's exporter loop around it.
//!
//! The loop runs on beed's runtime, never on the hook path: each send reads
//! the stores on a blocking thread, holds only that send's series (bounded
//! by the stores' distinct label sets, not by how long a collector was
//! down), and writes its state for `beectl export status`.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use prost::Message;

use super::{ExportConfig, Series, Stores};

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// `prometheus.TimeSeries`.
#[derive(Clone, PartialEq, Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

/// `prometheus.Label`.
#[derive(Clone, PartialEq, Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Sample`.
#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    /// Milliseconds since the Unix epoch.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// How long one send may take before it counts as failed.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// The snappy-compressed `WriteRequest` of `series`, each one sample at
/// `at_ms`, labels sorted with `__name__` first as the protocol asks.
pub fn encode(series: &[Series], at_ms: i64) -> Result<Vec<u8>, snap::Error> {
    let timeseries = series
        .iter()
        .map(|one| {
            let mut labels = vec![Label { name: "__name__".to_owned(), value: one.name.to_owned() }];
            labels.extend(
                one.labels.iter().map(|(name, value)| Label { name: (*name).to_owned(), value: value.clone() }),
            );
            labels.sort_by(|a, b| a.name.cmp(&b.name));
            TimeSeries { labels, samples: vec![Sample { value: one.value, timestamp: at_ms }] }
        })
        .collect();
    snap::raw::Encoder::new().compress_vec(&WriteRequest { timeseries }.encode_to_vec())
}

/// The `WriteRequest` in a snappy-compressed body (tests, and a receiver's check).
pub fn decode(body: &[u8]) -> Result<WriteRequest, String> {
    let raw = snap::raw::Decoder::new().decompress_vec(body).map_err(|err| err.to_string())?;
    WriteRequest::decode(raw.as_slice()).map_err(|err| err.to_string())
}

/// POSTs one body; `Err` says why the collector did not take it.
async fn send(
    client: &Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
    config: &ExportConfig,
    body: Vec<u8>,
) -> Result<(), String> {
    let mut request = hyper::Request::post(&config.remote_write.url)
        .header(hyper::header::CONTENT_TYPE, "application/x-protobuf")
        .header(hyper::header::CONTENT_ENCODING, "snappy")
        .header("X-Prometheus-Remote-Write-Version", "0.1.0")
        .header(hyper::header::USER_AGENT, concat!("bee/", env!("CARGO_PKG_VERSION")));
    for (name, value) in &config.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request.body(Full::new(Bytes::from(body))).map_err(|err| err.to_string())?;
    let answer = tokio::time::timeout(SEND_TIMEOUT, client.request(request))
        .await
        .map_err(|_| format!("no answer within {} s", SEND_TIMEOUT.as_secs()))?
        .map_err(|err| format!("{}: {err}", config.remote_write.authority))?;
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

/// Sends every `config.interval` until beed stops, writing the state after
/// each attempt. Failures are logged when they start or change and when
/// they end, not at every tick.
pub async fn run(config: ExportConfig, stores: Stores) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let host = super::host_name();
    let mut state = super::read_state()
        .filter(|state| state.prometheus_remote_write.as_deref() == Some(config.remote_write.url.as_str()))
        .unwrap_or_default();
    state.prometheus_remote_write = Some(config.remote_write.url.clone());
    let mut ticks = tokio::time::interval(config.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tracing::info!(
        "exporting to {} every {} s as user {:?}",
        config.remote_write.url,
        config.interval.as_secs(),
        config.user
    );
    loop {
        ticks.tick().await;
        let now_ms = bee_proto::time::now_unix_ms();
        let (reading_stores, user, host) = (stores.clone(), config.user.clone(), host.clone());
        let read = tokio::task::spawn_blocking(move || {
            let (series, cursor, problems) = super::read_series(&reading_stores, &user, &host, now_ms);
            encode(&series, now_ms).map(|body| (body, series.len(), cursor, problems))
        })
        .await;
        state.last_attempt_utc = Some(bee_proto::time::format_unix_ms(now_ms));
        let outcome = match read {
            Ok(Ok((body, count, cursor, problems))) => {
                for problem in &problems {
                    tracing::warn!("export: {problem}; its series are left out of this send");
                }
                send(&client, &config, body).await.map(|()| (count, cursor))
            }
            Ok(Err(err)) => Err(format!("encoding: {err}")),
            Err(err) => Err(format!("reading the stores: {err}")),
        };
        match outcome {
            Ok((count, cursor)) => {
                if state.consecutive_failures > 0 {
                    tracing::info!("export: sent again after {} failed attempts", state.consecutive_failures);
                }
                state.last_success_utc = state.last_attempt_utc.clone();
                state.last_error = None;
                state.consecutive_failures = 0;
                state.series_sent = count as u64;
                state.cursor = Some(cursor);
            }
            Err(error) => {
                if state.last_error.as_deref() != Some(error.as_str()) {
                    tracing::warn!(
                        "export to {} failed: {error}; the next send carries every total",
                        config.remote_write.url
                    );
                }
                state.last_error = Some(error);
                state.consecutive_failures += 1;
            }
        }
        let written = state.clone();
        if let Ok(Err(err)) = tokio::task::spawn_blocking(move || super::write_state(&written)).await {
            tracing::warn!("export: its state could not be written: {err}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_request_round_trips_with_name_first_and_labels_sorted() {
        let series = vec![Series {
            name: "bee_tokens_total",
            labels: vec![("kind", "output".to_owned()), ("user", "alice".to_owned())],
            value: 1976.0,
        }];
        let body = encode(&series, 1_764_000_000_000).unwrap();
        let request = decode(&body).unwrap();
        let names: Vec<&str> = request.timeseries[0].labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["__name__", "kind", "user"]);
        assert_eq!(request.timeseries[0].labels[0].value, "bee_tokens_total");
        assert_eq!(request.timeseries[0].samples, vec![Sample { value: 1976.0, timestamp: 1_764_000_000_000 }]);
        assert!(decode(b"not snappy").is_err());
    }
}
