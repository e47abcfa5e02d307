//! Loading a suite that takes tools from MCP servers: the servers it names are listed
//! first (connect, `tools/list`, close, within [`LIST_BOUND`]), then the suite is
//! compiled with their tools handed in. The suite layer itself opens no connection
//! (see [`crate::suite::servers`]); this is the loader the command line uses.

use std::path::Path;

use super::fetch::{LIST_BOUND, list_tools_blocking};
use super::{ClientOptions, ServerSpec};
use crate::suite::servers::{ServerTools, servers_to_list};
use crate::suite::{Suite, SuiteError};

/// Read the suite at `path`, list the tools of every MCP server it names, and compile
/// it. A suite that names none is compiled as [`crate::suite::load()`] compiles it.
pub fn load(path: &Path) -> Result<Suite, SuiteError> {
    let (model, text) = crate::suite::load::read_suite_file(path)?;
    let servers = list(&servers_to_list(&model, path));
    crate::suite::compile::compile(model, &text, path, &servers)
}

/// List the tools of each of `servers` (one after another, each bounded); a server that
/// cannot be listed keeps why, for the suite to report where it names the server.
pub fn list(servers: &[ServerSpec]) -> ServerTools {
    let mut out = ServerTools::none();
    for server in servers {
        let listed = list_tools_blocking(server, ClientOptions::default(), LIST_BOUND)
            .map(|listing| listing.tools)
            .map_err(|e| e.to_string());
        out.insert(server, listed);
    }
    out
}
