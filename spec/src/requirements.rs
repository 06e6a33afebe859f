//! The requirement registry: one record per normative statement of the two spec documents.
//!
//! The data lives in `spec/requirements.json` and is embedded at compile time; [`registry`]
//! parses it once. Each [`Requirement`] carries a stable dotted id
//! (`exec.idempotency.same-request-same-execution`, `events.resume.exclusive-cursor`), its
//! [`Level`], the [`Document`] and section it comes from, a short exact quote of the normative
//! clause, and its [`Testability`]: `wire` (testable over HTTP from outside the host),
//! `capability:<name>` (testable when the host advertises that capability) or `not-wire` (with a
//! reason).
//!
//! Quotes are exact after [`normalise_whitespace`]: the drift test
//! (`spec/tests/it/requirements_drift.rs`) checks every one against the documents in
//! `SPEC_DOCUMENTS_DIR`.
//!
//! ```
//! use spec::requirements::{registry, Level, Severity};
//!
//! let rule = registry().get("events.terminal.exactly-one").expect("registered");
//! assert_eq!(rule.level, Level::Must);
//! assert_eq!(rule.severity(), Severity::Fail);
//! assert!(registry().validate().is_ok());
//! ```

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// The registry file, embedded at compile time.
pub const EMBEDDED_REGISTRY_JSON: &str = include_str!("../requirements.json");

/// The registry format version this module reads (the file's `version`).
pub const REGISTRY_FORMAT_VERSION: u32 = 1;

/// Every capability name a `capability:<name>` testability may use: the discovery families and
/// facets of the run events chapter, plus the optional stream modes (a host declares the modes
/// it serves in the `details.supported` of a `400 unsupported_stream_mode`).
pub const KNOWN_CAPABILITIES: &[&str] = &[
    "providerUsage",
    "providerUsage.costEstimates",
    "heartbeat",
    "feedback",
    "supportedEnvelopes",
    "schemaVersions",
    "envelopeStrictness",
    "envelopeContracts",
    "envelopes.reliability",
    "envelopes.reasoning",
    "envelopes.tierOneSubsetCompliance",
    "streamMode.values",
    "streamMode.messages",
    "streamMode.debug",
];

static REGISTRY: LazyLock<RequirementRegistry> = LazyLock::new(|| {
    match RequirementRegistry::from_json(EMBEDDED_REGISTRY_JSON) {
        Ok(registry) => registry,
        Err(error) => panic!(
            "the embedded spec/requirements.json is not a valid requirement registry ({error}); \
             run `cargo test -p spec --test it -- requirements_drift` to locate the problem"
        ),
    }
});

/// The embedded requirement registry, parsed on first use.
///
/// # Panics
///
/// Panics if the embedded `spec/requirements.json` does not parse. The file is compiled into
/// the crate, and the crate's tests parse and validate it, so this cannot happen in a tested
/// build.
pub fn registry() -> &'static RequirementRegistry {
    &REGISTRY
}

/// Collapses every run of whitespace to one space and trims both ends; nothing else changes
/// (no case folding, no Unicode normalisation). Quotes are compared with documents in this form.
pub fn normalise_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The whole registry: the documents it quotes and the requirements.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequirementRegistry {
    /// Format version of the file ([`REGISTRY_FORMAT_VERSION`]).
    pub version: u32,
    /// The normative documents the requirements quote.
    pub documents: Vec<DocumentInfo>,
    /// One record per normative statement, in document order.
    pub requirements: Vec<Requirement>,
}

impl RequirementRegistry {
    /// Parses a registry from its JSON text. This checks the shape only; call
    /// [`RequirementRegistry::validate`] for the cross-record rules.
    pub fn from_json(text: &str) -> Result<Self, RegistryError> {
        Ok(serde_json::from_str(text)?)
    }

    /// The requirement with this id, if any.
    pub fn get(&self, id: &str) -> Option<&Requirement> {
        self.requirements
            .iter()
            .find(|requirement| requirement.id == id)
    }

    /// All requirements, in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, Requirement> {
        self.requirements.iter()
    }

    /// Number of requirements.
    pub fn len(&self) -> usize {
        self.requirements.len()
    }

    /// Whether the registry has no requirement.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements quoted from one document, in file order.
    pub fn in_document(&self, document: Document) -> impl Iterator<Item = &Requirement> {
        self.requirements
            .iter()
            .filter(move |requirement| requirement.document == document)
    }

    /// The description of one document, if the registry lists it.
    pub fn document(&self, document: Document) -> Option<&DocumentInfo> {
        self.documents.iter().find(|info| info.id == document)
    }

    /// Checks the rules the JSON shape cannot express: a supported version, unique ids in the
    /// id grammar whose prefix matches the document, a listed document, a surface matching the
    /// document, a non-empty whitespace-normalised quote without bullet characters, a section,
    /// a reason exactly on `not-wire` records, and known capability names.
    ///
    /// Returns every problem found, not only the first.
    pub fn validate(&self) -> Result<(), Vec<RegistryProblem>> {
        let mut problems = Vec::new();
        if self.version != REGISTRY_FORMAT_VERSION {
            problems.push(RegistryProblem::UnsupportedVersion {
                version: self.version,
            });
        }
        let mut listed = HashSet::new();
        for info in &self.documents {
            if !listed.insert(info.id) {
                problems.push(RegistryProblem::DuplicateDocument { document: info.id });
            }
        }
        let mut seen = HashSet::new();
        for requirement in &self.requirements {
            if !seen.insert(requirement.id.as_str()) {
                problems.push(RegistryProblem::DuplicateId {
                    id: requirement.id.clone(),
                });
            }
            if !listed.contains(&requirement.document) {
                problems.push(RegistryProblem::UnlistedDocument {
                    id: requirement.id.clone(),
                    document: requirement.document,
                });
            }
            requirement.check(&mut problems);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

impl<'a> IntoIterator for &'a RequirementRegistry {
    type Item = &'a Requirement;
    type IntoIter = std::slice::Iter<'a, Requirement>;

    fn into_iter(self) -> Self::IntoIter {
        self.requirements.iter()
    }
}

/// One normative document the registry quotes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentInfo {
    /// Which document this is.
    pub id: Document,
    /// File name inside the documents directory (`SPEC_DOCUMENTS_DIR`).
    pub file: String,
    /// Human title.
    pub title: String,
    /// The document's own status line (`pre-alpha normative draft`, `stable`).
    pub status: String,
    /// How the registry reads the document (for example, that sections are editorial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// The two normative documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Document {
    /// The execution protocol (seed `000`, surface X).
    ExecutionProtocol,
    /// The OpenWOP v2 run events chapter (seed `002`, surface W).
    RunEvents,
}

impl Document {
    /// The id as written in the registry (`execution-protocol`, `run-events`).
    pub fn as_str(self) -> &'static str {
        match self {
            Document::ExecutionProtocol => "execution-protocol",
            Document::RunEvents => "run-events",
        }
    }

    /// The surface the document specifies.
    pub fn surface(self) -> Surface {
        match self {
            Document::ExecutionProtocol => Surface::X,
            Document::RunEvents => Surface::W,
        }
    }

    /// The first segment of the ids of this document's requirements.
    pub fn id_prefix(self) -> &'static str {
        match self {
            Document::ExecutionProtocol => "exec",
            Document::RunEvents => "events",
        }
    }
}

impl fmt::Display for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The protocol surface a requirement binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Surface {
    /// The execution protocol (`/v1/executions`).
    X,
    /// The OpenWOP v2 run events surface (`/runs/{runId}/events`).
    W,
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Surface::X => "X",
            Surface::W => "W",
        })
    }
}

/// One normative statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Stable dotted id: `exec.<area>.<rule>` or `events.<area>.<rule>`. Ids are API: never
    /// reused for another obligation.
    pub id: String,
    /// The requirement level.
    pub level: Level,
    /// The document the quote comes from.
    pub document: Document,
    /// The section heading (run events) or an editorial topic (execution protocol, which has
    /// no headings).
    pub section: String,
    /// The normative clause, quoted exactly (after [`normalise_whitespace`]).
    pub quote: String,
    /// How the requirement can be tested.
    pub testability: Testability,
    /// Why a `not-wire` requirement cannot be tested over HTTP; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The surface the requirement binds.
    pub surface: Surface,
    /// How the contract reads the requirement, why it was split, or an ambiguity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

impl Requirement {
    /// The outcome a violation of this requirement gets (from its [`Level`]).
    pub fn severity(&self) -> Severity {
        self.level.severity()
    }

    fn check(&self, problems: &mut Vec<RegistryProblem>) {
        let id = || self.id.clone();
        if !is_valid_id(&self.id) {
            problems.push(RegistryProblem::BadId { id: id() });
        } else if self.id.split('.').next() != Some(self.document.id_prefix()) {
            problems.push(RegistryProblem::IdPrefixMismatch {
                id: id(),
                document: self.document,
            });
        }
        if self.surface != self.document.surface() {
            problems.push(RegistryProblem::SurfaceMismatch {
                id: id(),
                surface: self.surface,
                document: self.document,
            });
        }
        if self.quote.trim().is_empty() {
            problems.push(RegistryProblem::EmptyQuote { id: id() });
        } else if normalise_whitespace(&self.quote) != self.quote || self.quote.contains('•') {
            problems.push(RegistryProblem::UnnormalisedQuote { id: id() });
        }
        if self.section.trim().is_empty() {
            problems.push(RegistryProblem::EmptySection { id: id() });
        }
        let has_reason = self
            .reason
            .as_deref()
            .is_some_and(|reason| !reason.trim().is_empty());
        match &self.testability {
            Testability::NotWire if !has_reason => {
                problems.push(RegistryProblem::MissingReason { id: id() });
            }
            Testability::Wire | Testability::Capability(_) if self.reason.is_some() => {
                problems.push(RegistryProblem::UnexpectedReason { id: id() });
            }
            _ => {}
        }
        if let Testability::Capability(name) = &self.testability
            && !KNOWN_CAPABILITIES.contains(&name.as_str())
        {
            problems.push(RegistryProblem::UnknownCapability {
                id: id(),
                capability: name.clone(),
            });
        }
    }
}

/// Whether `id` follows `^(exec|events)(\.[a-z0-9]+(-[a-z0-9]+)*)+$`.
pub fn is_valid_id(id: &str) -> bool {
    let mut segments = id.split('.');
    if !matches!(segments.next(), Some("exec" | "events")) {
        return false;
    }
    let mut rest = segments.peekable();
    rest.peek().is_some()
        && rest.all(|segment| {
            segment.split('-').all(|word| {
                !word.is_empty()
                    && word
                        .bytes()
                        .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit())
            })
        })
}

/// A requirement level (RFC 2119 keywords; `REQUIRED` is recorded as `MUST`, `OPTIONAL` as
/// `MAY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Level {
    /// `MUST` (also `REQUIRED`).
    #[serde(rename = "MUST")]
    Must,
    /// `MUST NOT`.
    #[serde(rename = "MUST NOT")]
    MustNot,
    /// `SHOULD`.
    #[serde(rename = "SHOULD")]
    Should,
    /// `SHOULD NOT`.
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    /// `MAY` (also `OPTIONAL`).
    #[serde(rename = "MAY")]
    May,
}

impl Level {
    /// The keyword as written in the registry.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::ShouldNot => "SHOULD NOT",
            Level::May => "MAY",
        }
    }

    /// `MUST`/`MUST NOT` → [`Severity::Fail`], `SHOULD`/`SHOULD NOT` → [`Severity::Warn`],
    /// `MAY` → [`Severity::Info`].
    pub fn severity(self) -> Severity {
        match self {
            Level::Must | Level::MustNot => Severity::Fail,
            Level::Should | Level::ShouldNot => Severity::Warn,
            Level::May => Severity::Info,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a violation of a requirement means for a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational only (`MAY`).
    Info,
    /// A warning (`SHOULD`, `SHOULD NOT`).
    Warn,
    /// A failure (`MUST`, `MUST NOT`).
    Fail,
}

impl Severity {
    /// Lowercase name (`info`, `warn`, `fail`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Fail => "fail",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a requirement can be tested. Written in the registry as `wire`, `not-wire` or
/// `capability:<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Testability {
    /// Testable over HTTP from outside the host.
    Wire,
    /// Testable only when the host advertises this capability (a name from
    /// [`KNOWN_CAPABILITIES`] in a valid registry).
    Capability(String),
    /// Not testable over HTTP; the record's `reason` says why.
    NotWire,
}

impl Testability {
    /// The capability name, for `capability:<name>`.
    pub fn capability(&self) -> Option<&str> {
        match self {
            Testability::Capability(name) => Some(name),
            Testability::Wire | Testability::NotWire => None,
        }
    }

    /// Whether a harness can test the requirement over HTTP at all (possibly gated on a
    /// capability).
    pub fn is_testable(&self) -> bool {
        !matches!(self, Testability::NotWire)
    }
}

impl FromStr for Testability {
    type Err = TestabilityParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "wire" => Ok(Testability::Wire),
            "not-wire" => Ok(Testability::NotWire),
            _ => match text.strip_prefix("capability:") {
                Some(name) if !name.is_empty() && !name.contains(char::is_whitespace) => {
                    Ok(Testability::Capability(name.to_owned()))
                }
                _ => Err(TestabilityParseError {
                    input: text.to_owned(),
                }),
            },
        }
    }
}

impl TryFrom<String> for Testability {
    type Error = TestabilityParseError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl From<Testability> for String {
    fn from(testability: Testability) -> Self {
        testability.to_string()
    }
}

impl fmt::Display for Testability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Testability::Wire => f.write_str("wire"),
            Testability::NotWire => f.write_str("not-wire"),
            Testability::Capability(name) => write!(f, "capability:{name}"),
        }
    }
}

/// A testability string that is none of `wire`, `not-wire`, `capability:<name>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not a testability: expected `wire`, `not-wire` or `capability:<name>`")]
pub struct TestabilityParseError {
    input: String,
}

/// The registry text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The JSON is malformed or does not have the registry's shape.
    #[error("the requirement registry does not parse: {0}")]
    Parse(#[from] serde_json::Error),
}

/// A rule of [`RequirementRegistry::validate`] that a registry breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryProblem {
    /// The file's format version is not [`REGISTRY_FORMAT_VERSION`].
    #[error("registry version {version} is not supported (expected {REGISTRY_FORMAT_VERSION})")]
    UnsupportedVersion {
        /// The version found.
        version: u32,
    },
    /// A document is listed twice.
    #[error("document `{document}` is listed twice")]
    DuplicateDocument {
        /// The repeated document.
        document: Document,
    },
    /// Two requirements share an id.
    #[error("`{id}`: the id is used by more than one requirement")]
    DuplicateId {
        /// The repeated id.
        id: String,
    },
    /// An id outside the grammar `^(exec|events)(\.[a-z0-9]+(-[a-z0-9]+)*)+$`.
    #[error("`{id}`: the id does not match ^(exec|events)(\\.[a-z0-9]+(-[a-z0-9]+)*)+$")]
    BadId {
        /// The offending id.
        id: String,
    },
    /// The id's first segment does not belong to the cited document.
    #[error("`{id}`: a requirement of `{document}` must have an id starting with `{}.`", document.id_prefix())]
    IdPrefixMismatch {
        /// The offending id.
        id: String,
        /// The cited document.
        document: Document,
    },
    /// The requirement cites a document the registry does not list.
    #[error("`{id}`: cites `{document}`, which the registry's documents do not list")]
    UnlistedDocument {
        /// The offending id.
        id: String,
        /// The cited document.
        document: Document,
    },
    /// The surface is not the cited document's surface.
    #[error("`{id}`: surface {surface} does not match document `{document}`")]
    SurfaceMismatch {
        /// The offending id.
        id: String,
        /// The surface given.
        surface: Surface,
        /// The cited document.
        document: Document,
    },
    /// The quote is empty.
    #[error("`{id}`: the quote is empty")]
    EmptyQuote {
        /// The offending id.
        id: String,
    },
    /// The quote has irregular whitespace or a bullet character.
    #[error("`{id}`: the quote must be whitespace-normalised and contain no bullet (•)")]
    UnnormalisedQuote {
        /// The offending id.
        id: String,
    },
    /// The section is empty.
    #[error("`{id}`: the section is empty")]
    EmptySection {
        /// The offending id.
        id: String,
    },
    /// A `not-wire` requirement without a reason.
    #[error("`{id}`: testability not-wire needs a non-empty reason")]
    MissingReason {
        /// The offending id.
        id: String,
    },
    /// A reason on a requirement that is testable.
    #[error("`{id}`: only not-wire requirements carry a reason (use notes)")]
    UnexpectedReason {
        /// The offending id.
        id: String,
    },
    /// A `capability:<name>` whose name is not in [`KNOWN_CAPABILITIES`].
    #[error("`{id}`: unknown capability `{capability}`")]
    UnknownCapability {
        /// The offending id.
        id: String,
        /// The unknown name.
        capability: String,
    },
}
