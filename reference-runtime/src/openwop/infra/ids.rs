//! Host-minted ids (events outside a run's log; run, event and interrupt ids of a run are
//! minted by `choices`) and
//! tenant-bound run ids in paths.

use super::auth::Caller;
use super::error::ApiError;

/// The opaque part of every id this host mints: 32 lowercase hex digits (never a `~`).
fn opaque() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A new event id, `evt-<32 hex>` (36 characters, `^[A-Za-z0-9._~-]{16,128}$`).
pub(crate) fn mint_event_id() -> String {
    format!("evt-{}", opaque())
}

/// Whether `value` matches the tenant-bound id grammar
/// `^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$`.
pub(crate) fn is_tenant_bound_id(value: &str) -> bool {
    let unreserved = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._~-".contains(&b))
    };
    let Some((tenant, opaque)) = value.split_once('/') else {
        return false;
    };
    let tenant = tenant.strip_prefix("anon:").unwrap_or(tenant);
    (1..=128).contains(&tenant.len())
        && unreserved(tenant)
        && (16..=128).contains(&opaque.len())
        && unreserved(opaque)
}

/// The run id a request path names: the raw second path segment (`/runs/{runId}/…`), decoded from
/// the `~2F` or the `%2F` form, checked against the grammar and bound to the caller's tenant.
///
/// A foreign tenant segment answers 403 `id_tenant_mismatch` whether or not the run exists, so
/// existence is never disclosed.
pub(crate) fn run_id_from_path(path: &str, caller: &Caller) -> Result<String, ApiError> {
    let segment = path
        .split('/')
        .nth(2)
        .filter(|s| !s.is_empty())
        .ok_or_else(ApiError::not_found)?;
    let run_id = spec::openwop::decode_run_id_path_segment(segment).ok_or_else(|| {
        ApiError::validation("the runId path segment has a malformed ~XX or %XX escape")
    })?;
    if !is_tenant_bound_id(&run_id) {
        return Err(ApiError::validation(
            "the runId must be tenant-bound, <tenant>/<opaque>, with the / written ~2F",
        ));
    }
    let tenant = run_id.split('/').next().unwrap_or_default();
    if tenant != caller.tenant {
        return Err(ApiError::new(
            "id_tenant_mismatch",
            "the runId names another tenant",
        ));
    }
    Ok(run_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller() -> Caller {
        Caller {
            tenant: "tenant-a".into(),
            subject: "s".into(),
            is_test_key: true,
        }
    }

    #[test]
    fn minted_ids_follow_their_grammar() {
        let run = crate::openwop::infra::choices::RunIdForm::RunHex.mint("tenant-a");
        assert!(is_tenant_bound_id(&run), "{run}");
        for form in [
            crate::openwop::infra::choices::InterruptIdForm::IntHex,
            crate::openwop::infra::choices::InterruptIdForm::Dotted,
        ] {
            assert!(is_tenant_bound_id(&form.mint("tenant-a")));
        }
        let event = mint_event_id();
        assert!((16..=128).contains(&event.len()));
        assert!(!run.contains('~'));
    }

    #[test]
    fn path_segments_accept_both_encodings() {
        let run = crate::openwop::infra::choices::RunIdForm::RunHex.mint("tenant-a");
        let tilde = spec::openwop::encode_run_id_for_path(&run);
        let percent = run.replace('/', "%2F");
        for form in [tilde, percent.clone(), percent.replace("%2F", "%2f")] {
            let path = format!("/runs/{form}/events");
            assert_eq!(run_id_from_path(&path, &caller()).unwrap(), run);
        }
        let bare = "/runs/run-0123456789abcdef";
        assert_eq!(
            run_id_from_path(bare, &caller()).unwrap_err().code(),
            "validation_error"
        );
        let bad_escape = "/runs/tenant-a~2xrun-0123456789abcdef";
        assert_eq!(
            run_id_from_path(bad_escape, &caller()).unwrap_err().code(),
            "validation_error"
        );
        let foreign = "/runs/tenant-b~2Frun-0123456789abcdef";
        assert_eq!(
            run_id_from_path(foreign, &caller()).unwrap_err().code(),
            "id_tenant_mismatch"
        );
    }
}
