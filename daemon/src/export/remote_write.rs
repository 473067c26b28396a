//! Prometheus remote write 1.0: the protocol's own protobuf messages
//! (`prometheus/prompb/remote.proto`, `types.proto`), snappy block-compressed.

use prost::Message;

use super::Series;

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
    #[prost(message, repeated, tag = "3")]
    pub metadata: Vec<MetricMetadata>,
}

/// `prometheus.MetricMetadata`: a metric family's type, help and unit.
#[derive(Clone, PartialEq, Message)]
pub struct MetricMetadata {
    /// `MetricType`: 1 counter, 2 gauge.
    #[prost(int32, tag = "1")]
    pub r#type: i32,
    #[prost(string, tag = "2")]
    pub metric_family_name: String,
    #[prost(string, tag = "4")]
    pub help: String,
    #[prost(string, tag = "5")]
    pub unit: String,
}

/// `MetricType.COUNTER` and `MetricType.GAUGE`.
const COUNTER: i32 = 1;
const GAUGE: i32 = 2;

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

/// The snappy-compressed `WriteRequest` of `series`, each one sample at
/// `at_ms`, labels sorted with `__name__` first as the protocol asks. A
/// series for which `starts_at` gives a time is new to the receiver: a 0
/// at that time comes first, so `increase()` counts its first value.
pub fn encode(
    series: &[Series],
    at_ms: i64,
    starts_at: impl Fn(&Series) -> Option<i64>,
) -> Result<Vec<u8>, snap::Error> {
    let timeseries = series
        .iter()
        .map(|one| {
            let mut samples: Vec<Sample> =
                starts_at(one).map(|start_ms| Sample { value: 0.0, timestamp: start_ms }).into_iter().collect();
            samples.push(Sample { value: one.value, timestamp: at_ms });
            let mut labels = vec![Label { name: "__name__".to_owned(), value: one.name.to_owned() }];
            labels.extend(
                one.labels.iter().map(|(name, value)| Label { name: (*name).to_owned(), value: value.clone() }),
            );
            labels.sort_by(|a, b| a.name.cmp(&b.name));
            TimeSeries { labels, samples }
        })
        .collect();
    // Each family's metadata once, from the one table of them.
    let mut metadata: Vec<MetricMetadata> = Vec::new();
    for one in series {
        if metadata.iter().any(|family| family.metric_family_name == one.name) {
            continue;
        }
        if let Some(meta) = bee_proto::export::series_meta(one.name) {
            metadata.push(MetricMetadata {
                r#type: if meta.counter { COUNTER } else { GAUGE },
                metric_family_name: meta.name.to_owned(),
                help: meta.help.to_owned(),
                unit: meta.unit.to_owned(),
            });
        }
    }
    snap::raw::Encoder::new().compress_vec(&WriteRequest { timeseries, metadata }.encode_to_vec())
}

/// The largest request [`decode`] unpacks: a snappy body declares its own
/// length, and six bytes can claim gigabytes.
pub const MAX_DECODED_BYTES: usize = 32 << 20;

/// The `WriteRequest` in a snappy-compressed body (tests, and a receiver's check).
pub fn decode(body: &[u8]) -> Result<WriteRequest, String> {
    let declared = snap::raw::decompress_len(body).map_err(|err| err.to_string())?;
    if declared > MAX_DECODED_BYTES {
        return Err(format!("the body claims {declared} bytes unpacked, over {MAX_DECODED_BYTES}"));
    }
    let raw = snap::raw::Decoder::new().decompress_vec(body).map_err(|err| err.to_string())?;
    WriteRequest::decode(raw.as_slice()).map_err(|err| err.to_string())
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
        let body = encode(&series, 1_764_000_000_000, |_| None).unwrap();
        let request = decode(&body).unwrap();
        let names: Vec<&str> = request.timeseries[0].labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["__name__", "kind", "user"]);
        assert_eq!(request.timeseries[0].labels[0].value, "bee_tokens_total");
        assert_eq!(request.timeseries[0].samples, vec![Sample { value: 1976.0, timestamp: 1_764_000_000_000 }]);
        assert_eq!(
            (request.metadata.len(), request.metadata[0].r#type, request.metadata[0].unit.as_str()),
            (1, COUNTER, "tokens"),
            "its family's metadata, once"
        );
        let started = decode(&encode(&series, 1_764_000_000_000, |_| Some(1_763_999_970_000)).unwrap()).unwrap();
        let samples = &started.timeseries[0].samples;
        assert_eq!(
            samples,
            &[
                Sample { value: 0.0, timestamp: 1_763_999_970_000 },
                Sample { value: 1976.0, timestamp: 1_764_000_000_000 }
            ],
            "a new series starts from 0"
        );
        assert!(decode(b"not snappy").is_err());
        // Found by the fuzz target: six bytes that claim 3.6 GB unpacked.
        assert!(decode(&[0xd3, 0xd3, 0xd3, 0xd3, 0x0d, 0x0d]).unwrap_err().contains("claims"));
    }
}
