//! `beectl plan create | bind | unbind | claim | report | show`: the write
//! side of plans (agents only read them, through the MCP server). Each
//! answer is one JSON document, with what its labels mean.

use bee_daemon::context::plans::{self, Plan, PlanError, PlanFile};
use bee_daemon::rendered::Rendered;
use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;
use serde_json::json;
use std::path::PathBuf;

use beectl::args::PlanCommand;

fn failure(err: PlanError) -> Rendered {
    if err.code == "invalid_usage" {
        return Rendered::invalid_usage(err.message);
    }
    Rendered::json(Exit::Unavailable, &CommandError::unavailable(err.code, err.message))
}

fn answered(plan: Result<Plan, PlanError>) -> Rendered {
    match plan {
        Ok(plan) => Rendered::json(Exit::Success, &plans::show_document(&plan)),
        Err(err) => failure(err),
    }
}

fn checkout(dir: Option<String>) -> PathBuf {
    dir.map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."))
}

pub fn plan(command: PlanCommand) -> Rendered {
    match command {
        PlanCommand::Create { file } => {
            let text = match crate::commands::manifest::read(&file) {
                Ok(text) => text,
                Err(rendered) => return rendered,
            };
            match serde_json::from_str::<PlanFile>(&text) {
                Ok(plan) => answered(plans::create(plan)),
                Err(err) => Rendered::invalid_usage(format!("{file}: not a plan: {err}")),
            }
        }
        PlanCommand::Bind { space, checkout: dir } => match plans::bind(&checkout(dir), &space) {
            Ok(binding) => Rendered::json(Exit::Success, &json!({"schemaVersion": 1, "binding": binding})),
            Err(err) => failure(err),
        },
        PlanCommand::Unbind { checkout: dir } => match plans::unbind(&checkout(dir)) {
            Ok(binding) => Rendered::json(Exit::Success, &json!({"schemaVersion": 1, "binding": binding})),
            Err(err) => failure(err),
        },
        PlanCommand::Claim { plan, step, owner } => answered(plans::claim(&plan, &step, &owner)),
        PlanCommand::Report { plan, step, owner, blocked } => answered(plans::report(&plan, &step, &owner, blocked)),
        PlanCommand::Show { plan } => answered(plans::show(&plan)),
    }
}
