//! A target from a URL and options: what an embedder (and `conformance run --target`) gives to
//! reach a host the harness did not start. Reached through [`crate::target`].

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::case::Principal;
use crate::host::{SecretHeader, Target, Upstream};
use crate::upstream::{FakeUpstream, ProvidersFile, Role, RoleBinding, merge_bindings};

/// Why a target could not be made from a URL and options.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The URL does not parse.
    #[error("the target is not a URL: {0}")]
    Url(String),
    /// The URL carries a user name or password (credentials go in headers, never in the URL).
    #[error("the target URL must not carry credentials; give them as headers")]
    CredentialsInUrl,
    /// A header is not `Name: value` with a token name.
    #[error("{0}")]
    Header(String),
    /// A role binding (`--bind`, `--provider-role`, a providers file) is invalid.
    #[error("{0}")]
    Binding(String),
    /// The fake providers did not start (an address in use, …): an environment error.
    #[error("the fake providers did not start: {0}")]
    FakeProviders(String),
}

impl TargetError {
    /// Whether the operator's input is at fault (else the environment is).
    pub fn is_usage(&self) -> bool {
        !matches!(self, TargetError::FakeProviders(_))
    }
}

/// The fake providers to start for the host to call.
#[derive(Debug, Clone)]
pub struct FakeProvidersOptions {
    /// The canary credential the fakes require (the host must never echo it).
    pub canary: String,
    /// Where the fake providers the host calls listen (`--providers-listen`: the address the
    /// host's providers are configured with).
    pub listen: SocketAddr,
    /// The fakes' second listener (`--providers-streaming-listen`; a free loopback port when
    /// `None`).
    pub streaming_listen: Option<SocketAddr>,
}

/// How to reach and authenticate to an external host, and what it is configured with.
#[derive(Debug, Clone)]
pub struct TargetOptions {
    /// Headers sent on every request.
    pub headers: Vec<SecretHeader>,
    /// Headers per principal ([`Principal::A`], [`Principal::B`]).
    pub principals: BTreeMap<Principal, Vec<SecretHeader>>,
    /// Which provider id the host uses for each role, with its wire format.
    pub bindings: Vec<RoleBinding>,
    /// The fake providers to start (none when `None`: a plan foresees them, a run without
    /// them BLOCKs the cases that need them).
    pub fake_providers: Option<FakeProvidersOptions>,
}

impl Default for TargetOptions {
    fn default() -> Self {
        TargetOptions {
            headers: Vec::new(),
            principals: BTreeMap::new(),
            bindings: RoleBinding::defaults(),
            fake_providers: None,
        }
    }
}

/// A header given as `Name: value` (the name a token, lowercased; the value trimmed).
pub fn parse_header(text: &str) -> Result<SecretHeader, TargetError> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| TargetError::Header("a header is `Name: value`".into()))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    {
        return Err(TargetError::Header(format!(
            "`{name}` is not a header name"
        )));
    }
    Ok(SecretHeader {
        name: name.to_ascii_lowercase(),
        value: value.trim().to_string(),
    })
}

/// Headers one a line (a header file): blank lines and `#` comments skipped.
pub fn parse_header_lines(text: &str) -> Result<Vec<SecretHeader>, TargetError> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(parse_header)
        .collect()
}

/// The role bindings: the defaults, then a providers file's ([`ProvidersFile::parse`]), then
/// `role=provider` pairs (provider id only), then `--bind` flags ([`RoleBinding::parse_flag`]).
pub fn bindings_from(
    providers_file: Option<&ProvidersFile>,
    provider_roles: &[String],
    binds: &[String],
) -> Result<Vec<RoleBinding>, TargetError> {
    let mut bindings = RoleBinding::defaults();
    if let Some(file) = providers_file {
        bindings = merge_bindings(bindings, file.bindings());
    }
    for pair in provider_roles {
        let (role, id) = pair.split_once('=').ok_or_else(|| {
            TargetError::Binding(format!("--provider-role is `name=value`, got `{pair}`"))
        })?;
        let mut binding = bindings
            .iter()
            .find(|b| b.role.as_str() == role)
            .cloned()
            .ok_or_else(|| {
                TargetError::Binding(format!("--provider-role: unknown role `{role}`"))
            })?;
        binding.provider = id.to_string();
        bindings = merge_bindings(bindings, vec![binding]);
    }
    let mut bound = Vec::new();
    for flag in binds {
        bound.push(
            RoleBinding::parse_flag(flag)
                .map_err(|e| TargetError::Binding(format!("--bind: {e}")))?,
        );
    }
    Ok(merge_bindings(bindings, bound))
}

/// Whether `url` can be a target: a URL without credentials.
pub fn check_url(url: &str) -> Result<(), TargetError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| TargetError::Url(e.to_string()))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(TargetError::CredentialsInUrl);
    }
    Ok(())
}

/// The target at `url` (a trailing slash dropped), with the fake providers started when the
/// options ask for them. Its capabilities and facts are empty until a run probes it.
pub async fn external(url: &str, options: TargetOptions) -> Result<Target, TargetError> {
    check_url(url)?;
    let providers: BTreeMap<Role, String> = options
        .bindings
        .iter()
        .map(|b| (b.role, b.provider.clone()))
        .collect();
    let mut canary = None;
    let mut upstream: Option<Arc<dyn Upstream>> = None;
    if let Some(fakes) = options.fake_providers {
        let started = FakeUpstream::start(
            &fakes.canary,
            options.bindings,
            fakes.streaming_listen,
            Some(fakes.listen),
        )
        .await
        .map_err(|e| TargetError::FakeProviders(e.to_string()))?;
        upstream = Some(Arc::new(started));
        canary = Some(fakes.canary);
    }
    Ok(Target {
        kind: crate::host::TargetKind::External,
        base_url: url.trim_end_matches('/').to_string(),
        headers: options.headers,
        principals: options.principals,
        providers,
        facts: BTreeMap::new(),
        capabilities: Default::default(),
        canary,
        upstream,
        implementation: None,
        unjudgeable: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_and_reject() {
        let header = parse_header("X-Api-Key:  s3cret ").unwrap();
        assert_eq!(
            (header.name.as_str(), header.value.as_str()),
            ("x-api-key", "s3cret")
        );
        assert!(parse_header("no colon").is_err());
        assert!(parse_header("bad name: v").is_err());
        let lines = parse_header_lines("# comment\n\nA: 1\nB: 2\n").unwrap();
        assert_eq!(lines.len(), 2);
    }

    #[tokio::test]
    async fn a_url_with_credentials_is_refused() {
        let error = external("http://user:pw@example.test", TargetOptions::default())
            .await
            .err()
            .unwrap();
        assert!(matches!(error, TargetError::CredentialsInUrl));
        let target = external("http://example.test/", TargetOptions::default())
            .await
            .unwrap();
        assert_eq!(target.base_url, "http://example.test");
        assert_eq!(target.kind, crate::host::TargetKind::External);
    }
}
