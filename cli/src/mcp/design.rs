//! `beectl design mcp --stdio --root /ABS/CHECKOUT`: the design bundles of
//! one checkout for agents, over MCP (the official Rust SDK). Four tools,
//! all read-only: list, slice, verify, visual report. Every answer is
//! `{"schemaVersion":1,"ok":…,"data"|"error":…,"trusted":false,
//! "acceptance":false}`: a read, never an approval. The main server's
//! limits hold: frames of 512 KiB, results of 256 KiB, 15 s a call.

use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;

use crate::design::{self, DesignError};
use bee_proto::mcp::MAX_RESULT_BYTES;

/// `beectl design mcp`: runs until the client closes stdin.
pub fn serve(root: PathBuf) -> Rendered {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => return crate::render::errors::unavailable("io", Some(format!("the runtime: {err}"))),
    };
    let served = runtime.block_on(async {
        let mut tool_router = DesignServer::tool_router();
        crate::mcp::schema::tighten(&mut tool_router);
        let server = DesignServer { root, tool_router };
        let service = server.serve(crate::mcp::transport::stdio()).await.map_err(|e| e.to_string())?;
        service.waiting().await.map(|_| ()).map_err(|e| e.to_string())
    });
    // Whatever is still running (a timed-out call's thread) is not waited for.
    runtime.shutdown_background();
    match served {
        Ok(()) => Rendered { exit: Exit::Success, bytes: Vec::new() },
        Err(message) => {
            eprintln!("beectl design mcp: {message}");
            Rendered { exit: Exit::Unavailable, bytes: Vec::new() }
        }
    }
}

#[derive(Clone)]
pub struct DesignServer {
    root: PathBuf,
    tool_router: ToolRouter<Self>,
}

/// `bee_design_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListArgs {}

/// `bee_design_slice`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SliceArgs {
    /// An entry's id, as bee_design_list gives it.
    id: String,
    /// The bundle [default: the only one].
    bundle: Option<String>,
    /// The whole slice's size limit, 512..65536 [default: 16384].
    budget_bytes: Option<u64>,
}

/// `bee_design_verify`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerifyArgs {
    /// One entry (and its dependencies) [default: every entry].
    id: Option<String>,
    /// The bundle [default: the only one].
    bundle: Option<String>,
}

/// `bee_visual_report`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VisualArgs {
    /// An entry's id.
    id: String,
    /// The bundle [default: the only one].
    bundle: Option<String>,
}

/// The envelope every answer has; an answer over 256 KiB is the error
/// `result_too_large`, never a cut one.
fn envelope(answer: Result<Value, DesignError>) -> CallToolResult {
    let failed = |code: &str, message: String| {
        CallToolResult::error(vec![ContentBlock::text(
            json!({"schemaVersion": 1, "ok": false,
                   "error": bee_proto::mcp::ToolError { error_code: code.to_owned(), message },
                   "trusted": false, "acceptance": false})
            .to_string(),
        )])
    };
    match answer {
        Ok(data) => {
            let text = json!({"schemaVersion": 1, "ok": true, "data": data, "trusted": false, "acceptance": false})
                .to_string();
            if text.len() > MAX_RESULT_BYTES {
                return failed(
                    "result_too_large",
                    format!(
                        "the answer is {} bytes; a tool result is at most {MAX_RESULT_BYTES} (256 KiB)",
                        text.len()
                    ),
                );
            }
            CallToolResult::success(vec![ContentBlock::text(text)])
        }
        Err(err) => failed(err.code, err.message),
    }
}

/// `read` off the runtime, within the tools' time limit (`timeout`).
async fn answer(read: impl FnOnce() -> Result<Value, DesignError> + Send + 'static) -> CallToolResult {
    let limit = crate::mcp::transport::tool_timeout();
    match tokio::time::timeout(limit, tokio::task::spawn_blocking(read)).await {
        Ok(Ok(answer)) => envelope(answer),
        Ok(Err(err)) => envelope(Err(DesignError { code: "io", message: format!("the call stopped: {err}") })),
        Err(_) => envelope(Err(DesignError {
            code: "timeout",
            message: format!("the call took longer than {} ms", limit.as_millis()),
        })),
    }
}

#[tool_router]
impl DesignServer {
    #[tool(
        description = "The design bundles of this checkout: path (relative to the root), entry ids, kinds, status, dependencies, mapped sources and captures. Never raw HTML.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn bee_design_list(&self, Parameters(_): Parameters<ListArgs>) -> Result<CallToolResult, ErrorData> {
        let root = self.root.clone();
        Ok(answer(move || design::list(&root)).await)
    }

    #[tool(
        description = "Source and dependency context for one entry: its markup or style and its dependencies' (dependencies first), assets by metadata only, and the sources mapped to it, within budgetBytes (512..65536); complete: false says context is missing or did not fit.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn bee_design_slice(&self, Parameters(a): Parameters<SliceArgs>) -> Result<CallToolResult, ErrorData> {
        let root = self.root.clone();
        Ok(answer(move || design::slice(&root, a.bundle.as_deref(), &a.id, a.budget_bytes.unwrap_or(16_384))).await)
    }

    #[tool(
        description = "Integrity of a bundle, per check: each file's hash against the manifest, dependencies (exist, acyclic), mappings (file and symbol exist). Not a screenshot comparison, not an approval.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn bee_design_verify(&self, Parameters(a): Parameters<VerifyArgs>) -> Result<CallToolResult, ErrorData> {
        let root = self.root.clone();
        Ok(answer(move || design::verify(&root, a.bundle.as_deref(), a.id.as_deref())).await)
    }

    #[tool(
        description = "decision, findings and limitations for one entry from stored evidence only: missing, stale or mismatched captures, and a pixel difference against the reference image where both exist. Runs no browser.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn bee_visual_report(&self, Parameters(a): Parameters<VisualArgs>) -> Result<CallToolResult, ErrorData> {
        let root = self.root.clone();
        Ok(answer(move || design::visual_report(&root, a.bundle.as_deref(), &a.id)).await)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DesignServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bee-design", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "The design bundles of this checkout, read-only: list, slice, verify, visual report. \
                 Every answer is trusted: false and acceptance: false: verify the task's outcome with real \
                 files, processes and tests.",
            )
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let error = |code, message| envelope(Err(DesignError { code, message }));
        crate::mcp::schema::call_tool(self, &self.tool_router, request, context, error).await
    }
}
