//! Bearer API keys mapped to tenants: who is calling.

use std::collections::HashMap;

use spec::openwop::{Owner, Subject, SubjectKind};

use super::config::ApiKeyConfig;
use super::error::ApiError;

/// The issuer of every subject this host vouches for (its API keys, its own workloads).
pub const HOST_ISSUER: &str = "urn:conformance-harness:reference-runtime";

/// An owner block for runs the host itself starts (schedules, heartbeats): a workload subject of
/// the host's own issuer.
pub(crate) fn workload_owner(tenant: &str, subject_id: String) -> Owner {
    Owner {
        tenant: tenant.to_string(),
        workspace: None,
        subject: Subject {
            issuer: HOST_ISSUER.to_string(),
            subject_id,
            tenant: tenant.to_string(),
            lane: spec::openwop::SubjectLane::Workload,
            kind: SubjectKind::Workload,
            key_class: None,
            actor: None,
        },
    }
}

/// The authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The tenant the key belongs to.
    pub tenant: String,
    /// The subject the key acts as.
    pub subject: String,
    /// Whether the key is a test key (may use mock providers).
    pub is_test_key: bool,
}

impl Caller {
    /// The caller as an upstream `Subject`: authenticated by an API key this host issued, so
    /// the issuer is the host's own and the subject id the key's principal.
    pub fn as_subject(&self) -> Subject {
        Subject::api_key(HOST_ISSUER, &self.subject, &self.tenant, SubjectKind::User)
    }

    /// The owner block of runs this caller creates.
    pub fn owner(&self) -> Owner {
        Owner {
            tenant: self.tenant.clone(),
            workspace: None,
            subject: self.as_subject(),
        }
    }
}

/// The configured keys.
pub(crate) struct KeyTable {
    by_key: HashMap<String, Caller>,
}

impl KeyTable {
    pub(crate) fn new(keys: &[ApiKeyConfig], test_key_prefix: &str) -> Self {
        let by_key = keys
            .iter()
            .map(|k| {
                (
                    k.key.clone(),
                    Caller {
                        tenant: k.tenant.clone(),
                        subject: k.subject.clone(),
                        is_test_key: !test_key_prefix.is_empty()
                            && k.key.starts_with(test_key_prefix),
                    },
                )
            })
            .collect();
        KeyTable { by_key }
    }

    /// Resolves an `Authorization` header value. Never logs or echoes the key.
    pub(crate) fn resolve(&self, authorization: Option<&str>) -> Result<Caller, ApiError> {
        let value = authorization.ok_or_else(ApiError::unauthenticated)?;
        let (scheme, key) = value
            .split_once(' ')
            .ok_or_else(ApiError::unauthenticated)?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ApiError::unauthenticated());
        }
        self.by_key
            .get(key.trim())
            .cloned()
            .ok_or_else(ApiError::unauthenticated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openwop::infra::config::OpenWopConfig;

    #[test]
    fn resolves_bearer_keys_to_their_tenant() {
        let config = OpenWopConfig::default();
        let table = KeyTable::new(&config.api_keys, &config.test_key_prefix);
        let a = table
            .resolve(Some("Bearer hk_test_openwop_tenant_a"))
            .unwrap();
        assert_eq!(a.tenant, "tenant-a");
        assert!(a.is_test_key);
        let b = table
            .resolve(Some("bearer hk_test_openwop_tenant_b"))
            .unwrap();
        assert_eq!(b.tenant, "tenant-b");
        for bad in [
            None,
            Some(""),
            Some("Bearer"),
            Some("Basic hk_test_openwop_tenant_a"),
            Some("Bearer nope"),
        ] {
            assert_eq!(
                table.resolve(bad).unwrap_err().code(),
                "unauthenticated",
                "{bad:?}"
            );
        }
    }
}
