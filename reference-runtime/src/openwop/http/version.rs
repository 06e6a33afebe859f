//! `OpenWOP-Version` on every surface-W response, the request header's major checked, and the
//! flat error envelope guaranteed on every 4xx/5xx (also for what the framework refuses itself,
//! such as an unknown method).

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use spec::openwop::PROTOCOL_VERSION;

use crate::openwop::http::error_response::envelope_for_bare_status;
use crate::openwop::infra::error::{ApiError, details};

/// The response header.
pub(crate) const VERSION_HEADER: &str = "openwop-version";

/// The major of an `OpenWOP-Version` value (`M` or `M.m`), `None` when malformed.
fn major(value: &str) -> Option<u64> {
    let number = |s: &str| {
        (!s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0')))
        .then(|| s.parse::<u64>().ok())
        .flatten()
    };
    match value.split_once('.') {
        Some((major, minor)) => number(minor).and(number(major)),
        None => number(value),
    }
}

/// The middleware. `serves_v1`: a dual-stack host also answers discovery in major 1
/// ([`crate::openwop::infra::choices::VersionDefault::V1UnlessAsked`]); every other path is v2 only.
pub(crate) async fn protocol_version(serves_v1: bool, request: Request, next: Next) -> Response {
    let requested = request
        .headers()
        .get(VERSION_HEADER)
        .map(|v| v.to_str().ok().and_then(|v| major(v.trim())));
    let v1_discovery = serves_v1 && request.uri().path() == "/.well-known/openwop";
    let mut response = match requested {
        Some(None) => {
            ApiError::validation("OpenWOP-Version must be M or M.m (e.g. 2.0)").into_response()
        }
        Some(Some(1)) if v1_discovery => next.run(request).await,
        Some(Some(major)) if major != 2 => ApiError::new(
            "protocol_version_unsupported",
            "this host serves OpenWOP 2.x only",
        )
        .with_details(details([("protocolVersions", json!([PROTOCOL_VERSION]))]))
        .into_response(),
        _ => next.run(request).await,
    };
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if (status.is_client_error() || status.is_server_error()) && !is_json {
        response = envelope_for_bare_status(status).into_response();
    }
    // The representation's version, unless the handler named another (a v1 document).
    if !response.headers().contains_key(VERSION_HEADER) {
        response
            .headers_mut()
            .insert(VERSION_HEADER, HeaderValue::from_static(PROTOCOL_VERSION));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majors_parse() {
        assert_eq!(major("2"), Some(2));
        assert_eq!(major("2.0"), Some(2));
        assert_eq!(major("1.4"), Some(1));
        for bad in ["", "v2", "2.", ".0", "02", "2.0.1", "two"] {
            assert_eq!(major(bad), None, "{bad}");
        }
    }
}
