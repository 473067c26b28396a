//! beed's command line: its arguments, its logs (`BEE_LOG`, on stderr), its
//! runtime and its stop on SIGTERM or SIGINT. The `beed` binary runs
//! [`main`], and so does `beectl` when it is started under the name `beed`
//! (the release archives and npm packages ship one program for both).

use crate::server::{self, DaemonConfig};
use bee_proto::ledger::Provider;
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

/// Bee's local daemon: owns the stores and serves the socket API.
#[derive(Debug, Parser)]
#[command(name = "beed", version, about)]
struct Args {
    /// Socket to listen on [default: $BEE_SOCKET or ${BEE_HOME:-$HOME}/.bee/run/beed.sock]
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Delivery store [default: ${BEE_HOME:-$HOME}/.bee/usage/delivery-v1]
    #[arg(long, value_name = "PATH")]
    delivery_store: Option<PathBuf>,
    /// Claude Code transcripts to ingest; repeatable [default: $BEE_CLAUDE_PROJECTS,
    /// else projects/ of each directory in $CLAUDE_CONFIG_DIR, else ~/.claude/projects]
    #[arg(long, value_name = "DIR")]
    claude_projects: Vec<PathBuf>,
    /// Codex rollout logs to ingest [default: $BEE_CODEX_SESSIONS, else $CODEX_HOME/sessions,
    /// else ~/.codex/sessions]
    #[arg(long, value_name = "DIR")]
    codex_sessions: Option<PathBuf>,
    /// Seconds between ingestion passes over the provider logs; 0 turns ingestion off.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    ingest_every: u64,
    /// Also serve the event API and the dashboard on this loopback address
    /// (e.g. 127.0.0.1:4000) [default: $BEE_HTTP, else off]
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// Serve reads on the loopback listener (recent events, filter options,
    /// the stream, the verdicts) without the per-user secret, as the
    /// reference client expects. Every local user and every web page the user
    /// opens can then read the stored events.
    #[arg(long)]
    http_open_reads: bool,
    /// A loopback origin (e.g. http://localhost:5173, the reference client's
    /// dev server) whose pages may answer an agent's question without the
    /// per-user secret, when the browser runs as beed's own user (Linux:
    /// the peer socket's owner); repeatable. Only pages you serve yourself
    /// belong here: any page of that origin in your browser may answer.
    #[arg(long, value_name = "ORIGIN", value_parser = server::http::parse_answer_origin)]
    http_allow_origin: Vec<String>,
    /// Receive Claude Code's own OpenTelemetry (OTLP/HTTP, JSON or protobuf)
    /// on this loopback address, e.g. 127.0.0.1:4318: each request it
    /// reports becomes a response with its measured duration and reported
    /// cost [default: $BEE_OTLP, else `[receive] otlp` in config.toml, else off]
    #[arg(long, value_name = "ADDR")]
    otlp: Option<std::net::SocketAddr>,
    /// Store the full event payload (prompts, tool inputs, transcripts) for
    /// this source app; repeatable. Off by default: a privacy trade-off.
    #[arg(long, value_name = "APP")]
    capture_payload: Vec<String>,
    /// A pinned manifest the dashboard's verdicts judge its source app's
    /// sessions by (its settings.json beside it); repeatable [default: the
    /// user's ~/.claude/bee-manifest.json, when there is one].
    #[arg(long, value_name = "FILE")]
    manifest: Vec<PathBuf>,
}

/// Runs beed with this process's arguments until SIGTERM or SIGINT; its
/// exit status (0, 4 for a refused argument, 5 for a failed start).
pub fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 4 } else { 0 });
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_env("BEE_LOG").unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let config = match DaemonConfig::from_env(args.socket, args.delivery_store) {
        Ok(mut config) => {
            if !args.claude_projects.is_empty() {
                config.log_roots.set(Provider::Claude, args.claude_projects);
            }
            if let Some(sessions) = args.codex_sessions {
                config.log_roots.set(Provider::Codex, vec![sessions]);
            }
            config.ingest_every = (args.ingest_every > 0).then(|| std::time::Duration::from_secs(args.ingest_every));
            config.capture_payload = args.capture_payload.into_iter().collect();
            config.http_open_reads = args.http_open_reads;
            config.http_allow_origins = args.http_allow_origin;
            if !args.manifest.is_empty() {
                config.manifests = args.manifest;
            }
            let http = args.http.map(Ok).or_else(|| address_from_env("BEE_HTTP")).transpose();
            let otlp = args.otlp.map(Ok).or_else(|| address_from_env("BEE_OTLP")).or_else(otlp_from_config).transpose();
            match (http, otlp) {
                (Ok(http), Ok(otlp)) => (config.http, config.otlp) = (http, otlp),
                (Err(err), _) | (_, Err(err)) => {
                    tracing::error!("{err}");
                    return ExitCode::from(4);
                }
            }
            config
        }
        Err(err) => {
            tracing::error!("{err}");
            return ExitCode::from(5);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!("cannot start the runtime: {err}");
            return ExitCode::from(5);
        }
    };
    let served = runtime.block_on(async {
        // Handlers go in before anything else, so a stop requested during
        // start-up is still a graceful one.
        let shutdown = shutdown_signal().map_err(server::StartError::Io)?;
        server::serve(config, shutdown).await
    });
    // A blocking task still running (an ingestion pass in its middle, a
    // read of a huge log) is not waited for: the stores are crash-safe,
    // and a stop asked for is a stop.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err}");
            ExitCode::from(5)
        }
    }
}

/// An address from an environment variable, when it is set and not empty.
fn address_from_env(variable: &str) -> Option<Result<std::net::SocketAddr, String>> {
    let value = std::env::var(variable).ok().filter(|v| !v.is_empty())?;
    Some(value.parse().map_err(|err| format!("{variable} is not an address: {err}")))
}

/// `[receive] otlp = "127.0.0.1:4318"` in config.toml.
fn otlp_from_config() -> Option<Result<std::net::SocketAddr, String>> {
    #[derive(serde::Deserialize)]
    struct File {
        receive: Option<Receive>,
    }
    #[derive(serde::Deserialize)]
    struct Receive {
        otlp: Option<String>,
    }
    match crate::storage::files::read_config::<File>() {
        Ok(file) => {
            let address = file?.receive?.otlp?;
            Some(address.parse().map_err(|err| format!("config.toml [receive] otlp is not an address: {err}")))
        }
        // The file's other settings are not beed's to refuse a start over.
        Err(message) => {
            tracing::error!("{message}; [receive] not read");
            None
        }
    }
}

/// Installs SIGTERM and SIGINT handlers now; the future resolves on either.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received"),
            _ = int.recv() => tracing::info!("SIGINT received"),
        }
    })
}
