//! `provider_calls`: how many calls the fake providers received for a script (and role).

use super::context::Outcome;
use crate::case::ProviderCallsExpect;
use crate::transcript::StepRecord;
use crate::verdict::CheckOutcome;

/// The fake providers (or the one of `expect.role`) received `expect.count` calls, or at most
/// `expect.max`, for `expect.script`.
pub(super) fn provider_calls(
    out: &Outcome<'_>,
    step: &StepRecord,
    expect: &ProviderCallsExpect,
) -> CheckOutcome {
    let calls: u32 = step
        .provider_calls
        .iter()
        .filter(|c| {
            c.script == expect.script
                && expect
                    .role
                    .as_ref()
                    .is_none_or(|r| c.role.as_ref() == Some(r))
        })
        .map(|c| c.count)
        .sum();
    let whom = expect.role.as_ref().map_or_else(
        || "the fake providers".to_string(),
        |r| format!("the `{r}` provider"),
    );
    if let Some(count) = expect.count
        && calls != count
    {
        return out.fail(
            format!(
                "{whom} received {calls} call(s) for script `{}`",
                expect.script
            ),
            format!("{count} call(s)"),
            format!("{calls} call(s)"),
        );
    }
    if let Some(max) = expect.max
        && calls > max
    {
        return out.fail(
            format!(
                "{whom} received {calls} call(s) for script `{}`",
                expect.script
            ),
            format!("at most {max} call(s)"),
            format!("{calls} call(s)"),
        );
    }
    out.pass(format!(
        "{whom} received {calls} call(s) for script `{}`",
        expect.script
    ))
}
