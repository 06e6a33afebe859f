//! Unknown members of a submission dropped before admission sees them
//! (`x-malformed-request-accepted`): the request object is closed, so the clean admission
//! refuses a member it does not define; the defective one never sees it.

use serde_json::Value;

use crate::execution::admission::REQUEST_MEMBERS;

/// `submitted` (a submission's JSON) without the members the request object does not define;
/// whether any was dropped. Anything but a JSON object is left alone.
pub(super) fn drop_unknown(submitted: &mut Value) -> bool {
    let Value::Object(members) = submitted else {
        return false;
    };
    let before = members.len();
    members.retain(|name, _| REQUEST_MEMBERS.contains(&name.as_str()));
    members.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_undefined_members_are_dropped() {
        let mut request = json!({"ability": "text.generate", "input": [], "unexpected": true});
        assert!(drop_unknown(&mut request));
        assert_eq!(request, json!({"ability": "text.generate", "input": []}));
        let mut closed = request.clone();
        assert!(!drop_unknown(&mut closed));
        assert_eq!(closed, request);
        let mut list = json!([{"unexpected": true}]);
        assert!(!drop_unknown(&mut list));
    }
}
