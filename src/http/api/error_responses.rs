//! The error responses every operation can give, written into the OpenAPI
//! document from what the operation takes (a credential, path and query
//! parameters, a body), so that clients, and schemathesis's status-code
//! check, meet no undocumented status. Each is an [`ErrorBody`](crate::http::error::ErrorBody).

use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{OpenApi, Ref, RefOr, Response};

/// Adds the error responses each operation can give and does not list yet.
pub fn document(doc: &mut OpenApi) {
    let secured_by_default = doc.security.as_ref().is_some_and(|s| !s.is_empty());
    for (path, item) in doc.paths.paths.iter_mut() {
        // Writes on a campaign or an assignment meet its state (archived,
        // closed, submitted, ...).
        let stateful = path.contains("/campaigns/{id}") || path.contains("/assignments/{id}");
        let operations = [
            (&mut item.get, false),
            (&mut item.head, false),
            (&mut item.put, stateful),
            (&mut item.post, stateful),
            (&mut item.delete, stateful),
            (&mut item.patch, stateful),
        ];
        for (operation, conflicts) in operations {
            let Some(operation) = operation else { continue };
            let conflict = conflicts.then_some(("409", "The state of what it changes does not allow it now"));
            for (status, why) in possible_errors(operation, secured_by_default).into_iter().chain(conflict) {
                operation.responses.responses.entry(status.to_owned()).or_insert_with(|| error(why));
            }
        }
    }
}

/// The statuses an operation can answer with besides its own, and why.
fn possible_errors(operation: &Operation, secured_by_default: bool) -> Vec<(&'static str, &'static str)> {
    // `security(())` (an empty requirement) marks an operation anyone may call.
    let secured = match &operation.security {
        None => secured_by_default,
        Some(requirements) => !requirements.iter().any(|r| *r == SecurityRequirement::default()),
    };
    let takes = |place: ParameterIn| operation.parameters.iter().flatten().any(|p| p.parameter_in == place);
    let mut errors = Vec::new();
    if secured {
        errors.push(("401", "No valid credential (token or session)"));
        errors.push(("403", "The credential's role may not do this, or a session write lacks its CSRF token"));
    }
    if takes(ParameterIn::Path) {
        errors.push(("400", "A path parameter does not parse"));
        errors.push(("404", "Nothing of that id"));
    }
    if takes(ParameterIn::Query) {
        errors.push(("400", "The query string does not parse"));
        errors.push(("404", "An id the query names does not exist"));
        errors.push(("422", "A query parameter is out of range"));
    }
    if operation.request_body.is_some() {
        errors.push(("400", "The body does not parse"));
        errors.push(("413", "The body is too large"));
        errors.push(("415", "The body's content type is not the one documented"));
        errors.push(("422", "The body parses but a value is refused; the message names it"));
    }
    errors
}

fn error(description: &str) -> RefOr<Response> {
    let content =
        utoipa::openapi::content::ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build();
    RefOr::T(
        utoipa::openapi::ResponseBuilder::new().description(description).content("application/json", content).build(),
    )
}
