//! A claim a reviewer can verify: what a run proved about a host, with the digests of what it
//! ran (cases, requirement registry, discovery documents, options), signed with Ed25519.
//!
//! The signature covers a manifest: the SHA-256 of the canonical JSON (keys sorted, no
//! whitespace) of every member of the claim, down to one entry per requirement and per case
//! file. Verifying checks the signature over the manifest, then each member against its
//! digest, so a changed byte is named by the member it changed. The claim's schema is
//! `spec/schema/claim.schema.json`.

use std::collections::BTreeMap;

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::model::{CorpusSummary, RunOptionsSummary, RunReport, Summary};
use crate::verdict::{Level, Verdict};

/// The claim format version. Bump it on any incompatible change.
pub const CLAIM_FORMAT_VERSION: u32 = 1;

/// The signature algorithm a claim names.
pub const CLAIM_SIGNATURE_ALGORITHM: &str = "ed25519";

/// How deep the manifest names members (`digests/cases/<file>` is three levels).
const MANIFEST_DEPTH: usize = 3;

/// A signed claim file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(title = "ConformanceClaim")]
#[serde(deny_unknown_fields)]
pub struct SignedClaim {
    /// What the run proved.
    pub claim: Claim,
    /// The signature over the claim's manifest.
    pub signature: ClaimSignature,
}

/// What a run proved about a host, and of what it was run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// [`CLAIM_FORMAT_VERSION`].
    pub format_version: u32,
    /// The harness version that ran.
    pub harness_version: String,
    /// The corpus it ran (version and digest).
    pub corpus: CorpusSummary,
    /// The run's id.
    pub run_id: String,
    /// When the run finished (RFC 3339).
    pub finished_at: String,
    /// The target.
    pub target: ClaimTarget,
    /// The run's verdict.
    pub verdict: Verdict,
    /// Counts of case verdicts.
    pub summary: Summary,
    /// What the run could not judge that conformance needs.
    pub not_judged: Vec<String>,
    /// The digests of what ran.
    pub digests: ClaimDigests,
    /// The run's options (their digest is in `digests.options`).
    pub options: RunOptionsSummary,
    /// Every requirement of the registry, by id, with what the run established about it.
    pub dispositions: BTreeMap<String, Disposition>,
}

/// The target a claim is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimTarget {
    /// `built-in …` or `external`.
    pub kind: String,
    /// The base URL.
    pub base_url: String,
    /// The host's self-description, when it gave one.
    pub implementation: Option<String>,
}

/// SHA-256 digests (hex) of what a run read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimDigests {
    /// Every case file that ran, by its path in the cases directory.
    pub cases: BTreeMap<String, String>,
    /// The requirement registry (`spec/requirements.json`).
    pub registry: String,
    /// The discovery documents as the host answered them, by path.
    pub discovery: BTreeMap<String, String>,
    /// The canonical JSON of the claim's `options`.
    pub options: String,
}

/// What a run established about one requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Disposition {
    /// Its level in the registry (`MUST`, `SHOULD NOT`, …).
    pub level: String,
    /// Judged and held, judged and broken, or not judged.
    pub disposition: DispositionKind,
    /// The worst verdict of its checks, when a case proving it ran.
    pub verdict: Option<Verdict>,
    /// Why it was not judged, or what broke it.
    pub reason: Option<String>,
    /// The cases that prove it.
    pub cases: Vec<String>,
}

/// Whether a requirement was judged, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DispositionKind {
    /// Every check of it held (PASS or INFO).
    JudgedPass,
    /// A check of it broke (FAIL, WARN, STALE, or a baselined XFAIL).
    JudgedFail,
    /// No check of it was judged (SKIP, BLOCKED, ERROR, or no case of the run proves it).
    NotJudged,
}

/// The signature block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimSignature {
    /// [`CLAIM_SIGNATURE_ALGORITHM`].
    pub algorithm: String,
    /// The signer's public key (hex, 32 bytes).
    pub public_key: String,
    /// SHA-256 of the canonical JSON of each member of the claim, by its path (`verdict`,
    /// `dispositions/<id>`, `digests/cases/<file>`, …).
    pub manifest: BTreeMap<String, String>,
    /// The Ed25519 signature (hex, 64 bytes) of the canonical JSON of `manifest`.
    pub value: String,
}

/// A claim that does not verify, or a key that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    /// A key is not 32 bytes of hex.
    #[error("{what} is not an Ed25519 key (64 hex digits)")]
    Key {
        /// Which key.
        what: &'static str,
    },
    /// The claim could not be rendered.
    #[error("failed to render the claim: {0}")]
    Render(String),
}

/// Reads a key: 32 bytes as 64 hex digits (surrounding whitespace ignored).
///
/// # Errors
///
/// [`ClaimError::Key`] when it is not.
pub fn parse_key(text: &str, what: &'static str) -> Result<[u8; 32], ClaimError> {
    let bytes = hex::decode(text.trim()).map_err(|_| ClaimError::Key { what })?;
    bytes.try_into().map_err(|_| ClaimError::Key { what })
}

/// The public key (hex) of a secret key.
pub fn public_key_of(secret: &[u8; 32]) -> String {
    hex::encode(SigningKey::from_bytes(secret).verifying_key().to_bytes())
}

/// SHA-256 (hex) of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Canonical JSON: object keys sorted at every level, no whitespace.
pub fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// What a claim is made of besides the report.
#[derive(Debug, Clone, Default)]
pub struct ClaimInputs {
    /// Every case file that ran: path → SHA-256.
    pub cases: BTreeMap<String, String>,
    /// SHA-256 of the requirement registry.
    pub registry: String,
    /// The discovery documents: path → SHA-256.
    pub discovery: BTreeMap<String, String>,
}

impl Claim {
    /// The claim of a run: every requirement of `registry` with its disposition.
    ///
    /// # Errors
    ///
    /// [`ClaimError::Render`] when the options do not render as JSON.
    pub fn of_run(
        report: &RunReport,
        inputs: ClaimInputs,
        registry: &spec::requirements::RequirementRegistry,
    ) -> Result<Claim, ClaimError> {
        let options_json =
            serde_json::to_value(&report.options).map_err(|e| ClaimError::Render(e.to_string()))?;
        let mut dispositions = BTreeMap::new();
        for requirement in registry.iter() {
            let result = report.requirements.iter().find(|r| r.id == requirement.id);
            let disposition = match result {
                None => Disposition {
                    level: requirement.level.as_str().to_string(),
                    disposition: DispositionKind::NotJudged,
                    verdict: None,
                    reason: Some("no case of the run proves it".into()),
                    cases: Vec::new(),
                },
                Some(result) => {
                    let kind = match result.verdict {
                        Verdict::Pass | Verdict::Info => DispositionKind::JudgedPass,
                        Verdict::Fail | Verdict::Warn | Verdict::Stale | Verdict::Xfail => {
                            DispositionKind::JudgedFail
                        }
                        Verdict::Skip | Verdict::Blocked | Verdict::Error => {
                            DispositionKind::NotJudged
                        }
                    };
                    let reason = (kind != DispositionKind::JudgedPass).then(|| {
                        report
                            .cases
                            .iter()
                            .filter(|c| result.cases.contains(&c.id))
                            .find(|c| c.verdict == result.verdict)
                            .and_then(|c| c.reason.as_ref().map(|r| format!("{}: {r}", c.id)))
                            .unwrap_or_else(|| result.verdict.to_string())
                    });
                    Disposition {
                        level: requirement.level.as_str().to_string(),
                        disposition: kind,
                        verdict: Some(result.verdict),
                        reason,
                        cases: result.cases.clone(),
                    }
                }
            };
            dispositions.insert(requirement.id.clone(), disposition);
        }
        Ok(Claim {
            format_version: CLAIM_FORMAT_VERSION,
            harness_version: report.harness_version.clone(),
            corpus: report.corpus.clone(),
            run_id: report.run_id.clone(),
            finished_at: report.finished_at.clone(),
            target: ClaimTarget {
                kind: report.target.kind.clone(),
                base_url: report.target.base_url.clone(),
                implementation: report.target.implementation.clone(),
            },
            verdict: report.verdict,
            summary: report.summary.clone(),
            not_judged: report.not_judged.clone(),
            digests: ClaimDigests {
                cases: inputs.cases,
                registry: inputs.registry,
                discovery: inputs.discovery,
                options: sha256_hex(canonical_json(&options_json).as_bytes()),
            },
            options: report.options.clone(),
            dispositions,
        })
    }

    /// Signs the claim with an Ed25519 secret key.
    ///
    /// # Errors
    ///
    /// [`ClaimError::Render`] when the claim does not render as JSON.
    pub fn sign(self, secret: &[u8; 32]) -> Result<SignedClaim, ClaimError> {
        let key = SigningKey::from_bytes(secret);
        let manifest = manifest_of(&self)?;
        let signature = key.sign(canonical_json(&manifest_value(&manifest)).as_bytes());
        Ok(SignedClaim {
            claim: self,
            signature: ClaimSignature {
                algorithm: CLAIM_SIGNATURE_ALGORITHM.to_string(),
                public_key: hex::encode(key.verifying_key().to_bytes()),
                manifest,
                value: hex::encode(signature.to_bytes()),
            },
        })
    }

    /// The requirements of level MUST (or MUST NOT) the run could not judge because their
    /// cases were BLOCKED.
    pub fn blocked_musts(&self) -> Vec<&str> {
        self.dispositions
            .iter()
            .filter(|(_, d)| d.verdict == Some(Verdict::Blocked) && is_must_level(&d.level))
            .map(|(id, _)| id.as_str())
            .collect()
    }

    /// How many requirements of level MUST have each disposition: (pass, fail, not judged).
    pub fn must_counts(&self) -> (usize, usize, usize) {
        let musts = self
            .dispositions
            .values()
            .filter(|d| is_must_level(&d.level));
        let mut counts = (0, 0, 0);
        for d in musts {
            match d.disposition {
                DispositionKind::JudgedPass => counts.0 += 1,
                DispositionKind::JudgedFail => counts.1 += 1,
                DispositionKind::NotJudged => counts.2 += 1,
            }
        }
        counts
    }
}

fn is_must_level(level: &str) -> bool {
    serde_json::from_value::<spec::requirements::Level>(Value::String(level.to_string()))
        .is_ok_and(|l| Level::of_requirement(l) == Level::Must)
}

/// The manifest of a claim: each member's path and the SHA-256 of its canonical JSON.
fn manifest_of(claim: &Claim) -> Result<BTreeMap<String, String>, ClaimError> {
    let value = serde_json::to_value(claim).map_err(|e| ClaimError::Render(e.to_string()))?;
    let mut out = BTreeMap::new();
    collect_members(&value, "", 1, &mut out);
    Ok(out)
}

fn collect_members(value: &Value, path: &str, depth: usize, out: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) if depth <= MANIFEST_DEPTH && !map.is_empty() => {
            for (key, member) in map {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}/{key}")
                };
                collect_members(member, &path, depth + 1, out);
            }
        }
        leaf => {
            out.insert(
                path.to_string(),
                sha256_hex(canonical_json(leaf).as_bytes()),
            );
        }
    }
}

fn manifest_value(manifest: &BTreeMap<String, String>) -> Value {
    Value::Object(
        manifest
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// What verifying a claim found wrong, each with what changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verification {
    /// Problems with the signature or the claim's own members.
    pub problems: Vec<String>,
}

impl SignedClaim {
    /// Checks the signature with `public_key`, then every member of the claim against the
    /// signed manifest, and the options against their digest; every problem says what changed.
    pub fn verify_signature(&self, public_key: &[u8; 32]) -> Verification {
        let mut problems = Vec::new();
        if self.signature.algorithm != CLAIM_SIGNATURE_ALGORITHM {
            problems.push(format!(
                "the signature algorithm is `{}`, not `{CLAIM_SIGNATURE_ALGORITHM}`",
                self.signature.algorithm
            ));
            return Verification { problems };
        }
        if !self
            .signature
            .public_key
            .eq_ignore_ascii_case(&hex::encode(public_key))
        {
            problems.push(format!(
                "the claim names the signer key {}, not the key given ({})",
                self.signature.public_key,
                hex::encode(public_key)
            ));
        }
        let key = match VerifyingKey::from_bytes(public_key) {
            Ok(key) => key,
            Err(e) => {
                problems.push(format!("the key given is not an Ed25519 public key: {e}"));
                return Verification { problems };
            }
        };
        let signature = match parse_signature(&self.signature.value) {
            Some(signature) => signature,
            None => {
                problems.push("the signature value is not 64 bytes of hex: it changed".into());
                return Verification { problems };
            }
        };
        let signed = canonical_json(&manifest_value(&self.signature.manifest));
        if key.verify(signed.as_bytes(), &signature).is_err() {
            problems.push(
                "the signature does not match the signed manifest under the key given: the manifest or the signature changed, or another key signed it"
                    .into(),
            );
            return Verification { problems };
        }
        match manifest_of(&self.claim) {
            Ok(now) => {
                for (path, digest) in &self.signature.manifest {
                    match now.get(path) {
                        Some(d) if d == digest => {}
                        Some(_) => {
                            problems.push(format!("claim member `{path}` changed after signing"))
                        }
                        None => problems
                            .push(format!("claim member `{path}` was removed after signing")),
                    }
                }
                for path in now
                    .keys()
                    .filter(|p| !self.signature.manifest.contains_key(*p))
                {
                    problems.push(format!("claim member `{path}` was added after signing"));
                }
            }
            Err(e) => problems.push(e.to_string()),
        }
        match serde_json::to_value(&self.claim.options) {
            Ok(options)
                if sha256_hex(canonical_json(&options).as_bytes())
                    == self.claim.digests.options => {}
            _ => problems.push("the options do not match `digests/options`".into()),
        }
        Verification { problems }
    }
}

fn parse_signature(text: &str) -> Option<Signature> {
    let bytes: [u8; 64] = hex::decode(text.trim()).ok()?.try_into().ok()?;
    Some(Signature::from_bytes(&bytes))
}

/// The one-line summary of a claim, for a README.
pub fn summary_line(claim: &Claim) -> String {
    let (pass, fail, not_judged) = claim.must_counts();
    format!(
        "Conformance {}: {} MUST requirement(s) judged pass, {} fail, {} not judged — {} {} (harness {}, corpus {} sha256:{}, run {})",
        claim.verdict,
        pass,
        fail,
        not_judged,
        claim
            .target
            .implementation
            .as_deref()
            .unwrap_or(&claim.target.kind),
        claim.target.base_url,
        claim.harness_version,
        claim.corpus.version,
        &claim
            .corpus
            .digest
            .get(..12)
            .unwrap_or(&claim.corpus.digest),
        claim.run_id
    )
}

/// A badge (SVG, in the flat shields style) of a claim's verdict and MUST counts.
pub fn badge_svg(claim: &Claim) -> String {
    let (pass, fail, not_judged) = claim.must_counts();
    let label = "conformance";
    let message = format!(
        "{} · MUST {pass}/{}",
        claim.verdict,
        pass + fail + not_judged
    );
    let colour = match claim.verdict {
        Verdict::Pass | Verdict::Info | Verdict::Skip | Verdict::Xfail => "#4c1",
        Verdict::Warn => "#dfb317",
        Verdict::Fail | Verdict::Stale => "#e05d44",
        Verdict::Blocked | Verdict::Error => "#9f9f9f",
    };
    // About 7 px per character of Verdana 11 px, plus padding.
    let width = |text: &str| 10 + 7 * text.chars().count();
    let (left, right) = (width(label), width(&message));
    let total = left + right;
    let escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{label}: {msg}">
<title>{label}: {msg}</title>
<rect width="{left}" height="20" fill="#555"/>
<rect x="{left}" width="{right}" height="20" fill="{colour}"/>
<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">
<text x="{lx}" y="14">{label}</text>
<text x="{rx}" y="14">{msg}</text>
</g>
</svg>
"##,
        msg = escape(&message),
        lx = left / 2,
        rx = left + right / 2,
    )
}

/// The claim schema's `$id`.
pub const CLAIM_SCHEMA_ID: &str =
    "https://conformance-harness.invalid/spec/schema/claim.schema.json";

/// The claim's JSON Schema (published as `spec/schema/claim.schema.json`).
pub fn claim_schema() -> Value {
    super::json::published_schema::<SignedClaim>(CLAIM_SCHEMA_ID)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> Claim {
        let blocked = Disposition {
            level: "MUST".into(),
            disposition: DispositionKind::NotJudged,
            verdict: Some(Verdict::Blocked),
            reason: Some("w.case: no fixture".into()),
            cases: vec!["w.case".into()],
        };
        let passed = Disposition {
            level: "SHOULD".into(),
            disposition: DispositionKind::JudgedPass,
            verdict: Some(Verdict::Pass),
            reason: None,
            cases: vec!["x.case".into()],
        };
        Claim {
            format_version: CLAIM_FORMAT_VERSION,
            harness_version: "0.1.0".into(),
            corpus: CorpusSummary::default(),
            run_id: "run".into(),
            finished_at: "2026-12-01T00:00:00.000Z".into(),
            target: ClaimTarget {
                kind: "external".into(),
                base_url: "http://host.test".into(),
                implementation: None,
            },
            verdict: Verdict::Blocked,
            summary: Summary::default(),
            not_judged: Vec::new(),
            digests: ClaimDigests {
                cases: BTreeMap::new(),
                registry: String::new(),
                discovery: BTreeMap::new(),
                options: String::new(),
            },
            options: RunOptionsSummary {
                time_scale: 1.0,
                jobs: 1,
                shuffle_seed: None,
                proptest_seed: 1,
                baseline: None,
                filters: Vec::new(),
                case_set_digest: String::new(),
            },
            dispositions: BTreeMap::from([("a".into(), blocked), ("b".into(), passed)]),
        }
    }

    #[test]
    fn a_signed_claim_verifies_and_a_changed_member_is_named() {
        let secret = [7u8; 32];
        let public: [u8; 32] = parse_key(&public_key_of(&secret), "key").unwrap();
        let mut c = claim();
        let options = serde_json::to_value(&c.options).unwrap();
        c.digests.options = sha256_hex(canonical_json(&options).as_bytes());
        let signed = c.sign(&secret).unwrap();
        assert_eq!(
            signed.verify_signature(&public).problems,
            Vec::<String>::new()
        );
        assert_eq!(signed.claim.blocked_musts(), vec!["a"]);
        assert_eq!(signed.claim.must_counts(), (0, 0, 1));

        let mut changed = signed.clone();
        changed.claim.dispositions.get_mut("b").unwrap().level = "MAY".into();
        assert_eq!(
            changed.verify_signature(&public).problems,
            vec!["claim member `dispositions/b/level` changed after signing".to_string()]
        );
        let mut resigned = signed.clone();
        resigned
            .signature
            .manifest
            .insert("verdict".into(), "0".repeat(64));
        assert!(resigned.verify_signature(&public).problems[0].contains("does not match"));
        let other: [u8; 32] = parse_key(&public_key_of(&[8u8; 32]), "key").unwrap();
        assert!(!signed.verify_signature(&other).problems.is_empty());
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let value: Value =
            serde_json::from_str(r#"{"b":1,"a":{"d":[{"z":1,"y":2}],"c":null}}"#).unwrap();
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}"#
        );
    }
}
