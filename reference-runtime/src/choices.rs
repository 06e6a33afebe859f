//! Host choices: the configuration knobs for behaviours the two protocols leave open (see
//! `spec/open-points.json`). Every option of every knob keeps every MUST and SHOULD; the
//! defaults are the standard profile's options, the others are what the tolerance matrix runs
//! the corpus against.
//!
//! ```toml
//! [server]
//! json_charset = true                        # `application/json; charset=utf-8`
//!
//! [execution]
//! unsatisfiable_requirements = "fail-execution"   # or "refuse" (the default)
//! id_form = "prefixed"                            # or "uuid" (the default)
//! replay_status = "accepted"                      # or "ok" (the default: 200)
//! cursor_precedence = "last-event-id"             # or "after" (the default)
//!
//! [openwop.choices]
//! cross_tenant = "not-found"                 # or "forbidden" (the default)
//! cancel = "asynchronous"                    # or "synchronous" (the default)
//! run_id_form = "dotted"                     # or "run-hex" (the default)
//! multi_admitted = "once-per-mode"           # or "once" (the default)
//! ```

use serde::Deserialize;

/// `[execution]`: surface-X choices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExecutionChoices {
    /// How a request whose `requirements` no provider satisfies is refused.
    pub unsatisfiable_requirements: UnsatisfiableRequirements,
    /// The form of a minted execution id.
    pub id_form: ExecutionIdForm,
    /// The status of an idempotent replay.
    pub replay_status: ReplayStatus,
    /// Which cursor wins when a request sends both `after` and `Last-Event-ID`.
    pub cursor_precedence: CursorPrecedence,
}

/// Which cursor wins when both `after` and `Last-Event-ID` are sent (the seed: the endpoint
/// "accepts after or Last-Event-ID").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CursorPrecedence {
    /// `after` (CONTRACT.md).
    #[default]
    After,
    /// `Last-Event-ID`.
    LastEventId,
}

/// The status of an idempotent replay (the seed says only that it "returns that execution").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayStatus {
    /// 200 (CONTRACT.md).
    #[default]
    Ok,
    /// 202, like the first submission.
    Accepted,
}

/// How a request whose `requirements` no provider satisfies is refused (CONTRACT.md admits
/// both; the provider is never called either way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnsatisfiableRequirements {
    /// 422 `capability_unavailable` at admission; nothing is created.
    #[default]
    Refuse,
    /// 202, then `execution.accepted` and `execution.failed{capability_unavailable}`.
    FailExecution,
}

/// The form of a minted execution id (the seed fixes none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionIdForm {
    /// A hyphenated UUID.
    #[default]
    Uuid,
    /// `exe_<32 hex>`.
    Prefixed,
}

impl ExecutionIdForm {
    /// A new execution id of this form.
    pub fn mint(self) -> String {
        let id = uuid::Uuid::new_v4();
        match self {
            ExecutionIdForm::Uuid => id.to_string(),
            ExecutionIdForm::Prefixed => format!("exe_{}", id.simple()),
        }
    }
}

/// `[openwop.choices]`: surface-W choices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OpenWopChoices {
    /// The answer to a request naming another tenant's run.
    pub cross_tenant: CrossTenantAnswer,
    /// Whether cancel appends `run.cancelled` before it answers.
    pub cancel: CancelAnswer,
    /// The opaque part of a minted run id.
    pub run_id_form: RunIdForm,
    /// How a mixed-mode stream sends an event more than one of its modes admits.
    pub multi_admitted: MultiAdmitted,
}

/// How a mixed-mode stream sends an event more than one of its modes admits (the chapter: a
/// consumer MUST tolerate it; CONTRACT.md: once, named by the first admitting mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MultiAdmitted {
    /// Once; `event:` names the first admitting mode of the client's list.
    #[default]
    Once,
    /// Once per admitting mode, each frame's `event:` naming its mode.
    OncePerMode,
}

/// The answer to a request naming another tenant's run (CONTRACT.md: 403 or 404, never its
/// data; either answer is the same whether or not the run exists).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrossTenantAnswer {
    /// 403 `id_tenant_mismatch`.
    #[default]
    Forbidden,
    /// 404 `not_found`.
    NotFound,
}

/// When `POST /runs/{runId}/cancel` appends `run.cancelled`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CancelAnswer {
    /// Before it answers `{status: cancelled}`.
    #[default]
    Synchronous,
    /// After it answers `{status: cancelling}` (the run stops at once; its terminal event
    /// follows shortly).
    Asynchronous,
}

/// The opaque part of a minted run id, within the tenant-bound grammar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunIdForm {
    /// `run-<32 hex>`.
    #[default]
    RunHex,
    /// `r.<25 base-36 digits>_<8 hex>` (a dot and an underscore: unreserved characters a
    /// client might mishandle in a path).
    Dotted,
}

impl RunIdForm {
    /// A new run id of tenant `tenant`, `<tenant>/<opaque>`.
    pub fn mint(self, tenant: &str) -> String {
        let id = uuid::Uuid::new_v4();
        match self {
            RunIdForm::RunHex => format!("{tenant}/run-{}", id.simple()),
            RunIdForm::Dotted => {
                let mut value = id.as_u128();
                let mut digits = Vec::with_capacity(26);
                while digits.len() < 25 {
                    let digit = (value % 36) as u8;
                    digits.push(if digit < 10 {
                        b'0' + digit
                    } else {
                        b'a' + digit - 10
                    });
                    value /= 36;
                }
                let base36: String = digits.into_iter().rev().map(char::from).collect();
                let tail = &uuid::Uuid::new_v4().simple().to_string()[..8];
                format!("{tenant}/r.{base36}_{tail}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_id_form_is_tenant_bound() {
        for form in [RunIdForm::RunHex, RunIdForm::Dotted] {
            let id = form.mint("tenant-a");
            let (tenant, opaque) = id.split_once('/').unwrap();
            assert_eq!(tenant, "tenant-a");
            assert!((16..=128).contains(&opaque.len()), "{form:?}: {id}");
            assert!(
                opaque
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._~-".contains(&b)),
                "{form:?}: {id}"
            );
        }
        assert!(RunIdForm::Dotted.mint("t").starts_with("t/r."));
    }

    #[test]
    fn execution_id_forms_differ() {
        assert_eq!(ExecutionIdForm::Uuid.mint().len(), 36);
        assert!(ExecutionIdForm::Prefixed.mint().starts_with("exe_"));
    }
}
