//! The one report model every format is rendered from (documented, versioned; its JSON Schema
//! is `spec/schema/report.schema.json`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::capability::HostCapability;
use crate::case::CaseSurface;
use crate::transcript::StepRecord;
use crate::verdict::{CheckOutcome, Level, Verdict};

/// Every verdict, in the order reports list counts: the host's outcomes first, then the
/// baseline's, then the harness's.
pub const VERDICT_DISPLAY_ORDER: [Verdict; 9] = [
    Verdict::Pass,
    Verdict::Fail,
    Verdict::Warn,
    Verdict::Info,
    Verdict::Skip,
    Verdict::Blocked,
    Verdict::Xfail,
    Verdict::Stale,
    Verdict::Error,
];

/// The report format version. Bump it on any incompatible change.
pub const REPORT_FORMAT_VERSION: u32 = 1;

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(title = "ConformanceReport")]
pub struct RunReport {
    /// [`REPORT_FORMAT_VERSION`].
    pub format_version: u32,
    /// The run's id (also the report directory name).
    pub run_id: String,
    /// The harness version.
    pub harness_version: String,
    /// The corpus the run's cases came from (empty in reports written before it was recorded).
    #[serde(default)]
    pub corpus: CorpusSummary,
    /// When the run started and finished (RFC 3339).
    pub started_at: String,
    /// When the run finished.
    pub finished_at: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The target, with secrets redacted.
    pub target: TargetSummary,
    /// How the run was configured.
    pub options: RunOptionsSummary,
    /// The overall verdict (PASS when conforming; see the exit codes).
    pub verdict: Verdict,
    /// Why the run ended in ERROR, when it did (e.g. every request got 401).
    pub run_errors: Vec<String>,
    /// Counts of case verdicts.
    pub summary: Summary,
    /// What the run could not judge and why (a BLOCKED case of level MUST, an advertised or
    /// requested surface with no judged case): when not empty, the run does not conform.
    #[serde(default)]
    pub not_judged: Vec<String>,
    /// Per surface: whether the host serves it, and how many of the MUST requirements its
    /// selected cases prove were judged.
    #[serde(default)]
    pub surfaces: Vec<SurfaceJudgement>,
    /// Requests that reached the fake providers' listener and matched no fake (a host
    /// configured with a wrong base path or instance, a request without a script marker), as
    /// `METHOD /path → status (×count)`, in order of first arrival; the query is never shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmatched_provider_requests: Vec<String>,
    /// Per-requirement verdicts (every requirement any case proves).
    pub requirements: Vec<RequirementResult>,
    /// Per-case results, in run order.
    pub cases: Vec<CaseResult>,
    /// Per SSE stream: time to first byte and first event, the largest gap, frames per
    /// second; the slowest streams of the run.
    #[serde(default)]
    pub streaming: super::streaming::StreamingMetrics,
    /// Differential mode (`run --differential`): the cases whose transcripts differ from the
    /// reference runtime's, after normalising what differs by right. INFO only: never a verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differential: Option<Differential>,
}

/// The corpus a run's cases came from: what `conformance --version` names, or a cases
/// directory given with `--cases`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CorpusSummary {
    /// The corpus version (the harness version it is embedded in).
    pub version: String,
    /// SHA-256 of every file of the cases directory and of the spec data (hex).
    pub digest: String,
    /// `embedded`, or the cases directory given with `--cases`.
    pub source: String,
}

/// The target as reported (no secrets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetSummary {
    /// `external`, `built-in`, or `built-in (<traits>)` naming what sets the built-in runtime
    /// apart (`built-in (divergent profile; defects: a, b)`): the target kind as reports name
    /// it, with free-text traits, so a string.
    pub kind: String,
    /// The base URL.
    pub base_url: String,
    /// What the host advertised or the harness probed, by capability name.
    #[schemars(with = "Vec<String>")]
    pub capabilities: Vec<HostCapability>,
    /// Header names the harness sends on every request (values never reported).
    pub header_names: Vec<String>,
    /// The host's self-description, when it gave one (discovery `implementation`).
    pub implementation: Option<String>,
}

/// The run's options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunOptionsSummary {
    /// The time scale applied to every wait.
    pub time_scale: f64,
    /// Parallel cases.
    pub jobs: u32,
    /// The shuffle seed, when shuffled.
    pub shuffle_seed: Option<u64>,
    /// The seed of property-based generation (replays the same inputs).
    pub proptest_seed: u64,
    /// The baseline file, when any.
    pub baseline: Option<String>,
    /// Filters applied.
    pub filters: Vec<String>,
    /// SHA-256 of the case set that ran (ids and file contents).
    pub case_set_digest: String,
}

/// Counts of case verdicts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// Cases run or skipped.
    pub total: u32,
    /// By verdict (serialised by its name: `PASS`, `FAIL`, …); verdicts no case had are absent.
    pub by_verdict: BTreeMap<Verdict, u32>,
}

impl Summary {
    /// Counts the verdicts of `cases`.
    pub fn of(cases: &[CaseResult]) -> Summary {
        let mut by_verdict = BTreeMap::new();
        for case in cases {
            *by_verdict.entry(case.verdict).or_insert(0) += 1;
        }
        Summary {
            total: cases.len() as u32,
            by_verdict,
        }
    }

    /// How many cases had `verdict`.
    pub fn count(&self, verdict: Verdict) -> u32 {
        self.by_verdict.get(&verdict).copied().unwrap_or(0)
    }

    /// Every verdict with its count, in [`VERDICT_DISPLAY_ORDER`] (zero counts included).
    pub fn counts(&self) -> impl Iterator<Item = (Verdict, u32)> + '_ {
        VERDICT_DISPLAY_ORDER
            .into_iter()
            .map(|verdict| (verdict, self.count(verdict)))
    }
}

/// How much of one surface the run judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SurfaceJudgement {
    /// `execution` or `openwop`.
    #[schemars(with = "String")]
    pub surface: CaseSurface,
    /// Whether the host serves it (its discovery document was read).
    pub served: bool,
    /// Whether the operator asked for it (`--surface`).
    pub requested: bool,
    /// Cases of this surface that ran.
    pub cases: u32,
    /// Of those, cases judged (not SKIP, BLOCKED or ERROR).
    pub cases_judged: u32,
    /// MUST requirements the cases of this surface prove.
    pub must_requirements: u32,
    /// Of those, requirements at least one judged check proved.
    pub must_requirements_judged: u32,
}

/// One requirement's verdict across the cases that prove it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequirementResult {
    /// The requirement id.
    pub id: String,
    /// Its level in the registry (`MUST`, `MUST NOT`, …).
    #[serde(with = "blank_when_none")]
    #[schemars(with = "String")]
    pub level: Option<spec::requirements::Level>,
    /// The document.
    #[serde(with = "blank_when_none")]
    #[schemars(with = "String")]
    pub document: Option<spec::requirements::Document>,
    /// The section.
    pub section: String,
    /// The quoted normative sentence.
    pub quote: String,
    /// The worst verdict of its checks.
    pub verdict: Verdict,
    /// The cases that prove it.
    pub cases: Vec<String>,
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseResult {
    /// The case id.
    pub id: String,
    /// The case title.
    pub title: String,
    /// The case file, relative to the cases directory.
    pub file: String,
    /// The case's level.
    pub level: Level,
    /// `execution` or `openwop`.
    #[schemars(with = "String")]
    pub surface: ResultSurface,
    /// Tags.
    pub tags: Vec<String>,
    /// The requirement ids it proves.
    pub requirements: Vec<String>,
    /// The verdict (after the baseline).
    pub verdict: Verdict,
    /// The verdict before the baseline was applied.
    pub raw_verdict: Verdict,
    /// Why it was skipped, blocked, errored, or what the baseline said.
    pub reason: Option<String>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Every check's outcome.
    pub checks: Vec<CheckOutcome>,
    /// What was sent and received, step by step.
    pub transcript: Vec<StepRecord>,
    /// The seed and minimal input of a failing property-based step.
    pub counterexample: Option<Counterexample>,
    /// The fake-provider scripts the case served (so `repro/<case>.sh` can serve them again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_scripts: Vec<ServedScript>,
}

/// What a case result belongs to: the surface its case drives, or the baseline (a STALE row
/// for a baseline entry that names no case of the corpus). Written as `execution`, `openwop`
/// or `baseline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultSurface {
    /// A case of the execution protocol.
    Execution,
    /// A case of the OpenWOP v2 run events surface.
    Openwop,
    /// A baseline entry naming a case the corpus lacks.
    Baseline,
}

impl ResultSurface {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultSurface::Execution => CaseSurface::Execution.as_str(),
            ResultSurface::Openwop => CaseSurface::Openwop.as_str(),
            ResultSurface::Baseline => "baseline",
        }
    }
}

impl From<CaseSurface> for ResultSurface {
    fn from(surface: CaseSurface) -> Self {
        match surface {
            CaseSurface::Execution => ResultSurface::Execution,
            CaseSurface::Openwop => ResultSurface::Openwop,
        }
    }
}

impl PartialEq<CaseSurface> for ResultSurface {
    fn eq(&self, other: &CaseSurface) -> bool {
        *self == ResultSurface::from(*other)
    }
}

impl std::fmt::Display for ResultSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A fake-provider script as the case served it: its local name, the id its marker selects,
/// and the complete mock-provider script (with that `id`), ready to be written as a file for
/// `conformance mock-provider --scripts DIR`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServedScript {
    /// The case's local script name (the key of the case's `scripts`).
    pub name: String,
    /// The script id the marker `[[script:<id>]]` in the requests selects.
    pub id: String,
    /// The mock-provider script, including `id`.
    pub script: serde_json::Value,
}

/// A shrunk failing input of a `generate` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Counterexample {
    /// The step.
    pub step: String,
    /// The generator.
    pub strategy: String,
    /// The seed that replays the generation (`--proptest-seed`).
    pub seed: u64,
    /// The minimal failing value.
    pub value: serde_json::Value,
}

/// The differences of a run from the reference runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Differential {
    /// What the target was compared with (`built-in`).
    pub reference: String,
    /// Cases compared.
    pub cases_compared: u32,
    /// The cases whose normalised transcripts differ, in run order.
    pub cases: Vec<CaseDifference>,
}

/// One case's remaining differences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseDifference {
    /// The case id.
    pub case: String,
    /// Its verdict against the target.
    pub target_verdict: Verdict,
    /// Its verdict against the reference runtime.
    pub reference_verdict: Verdict,
    /// Open points bordering the requirements the case proves: a difference there may be by
    /// right.
    pub open_points: Vec<String>,
    /// Open points whose options were normalised away before comparing (the content-type's
    /// parameters, header name case, an error's wording, a replay's status, …).
    pub normalised: Vec<String>,
    /// Lines that differ (on either side).
    pub differing_lines: u32,
    /// The aligned transcript around the differences.
    pub rows: Vec<DiffRow>,
}

/// One row of the aligned two-column transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffRow {
    /// How the two sides relate.
    pub kind: RowKind,
    /// The target's line.
    pub target: Option<String>,
    /// The reference's line.
    pub reference: Option<String>,
}

/// How a row's two sides relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RowKind {
    /// The same on both sides (context).
    Same,
    /// A line on each side, different.
    Changed,
    /// Only the target has it.
    TargetOnly,
    /// Only the reference has it.
    ReferenceOnly,
    /// Lines left out between two differences.
    Gap,
}

/// An optional registry value written as its string, or as `""` when absent (a requirement the
/// registry no longer has, in a merged older report).
mod blank_when_none {
    use serde::de::{Deserialize, DeserializeOwned, Deserializer, IntoDeserializer};
    use serde::ser::{Serialize, Serializer};

    pub(super) fn serialize<T: Serialize, S: Serializer>(
        value: &Option<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => value.serialize(serializer),
            None => serializer.serialize_str(""),
        }
    }

    pub(super) fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<T>, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.is_empty() {
            return Ok(None);
        }
        T::deserialize(IntoDeserializer::<D::Error>::into_deserializer(text)).map(Some)
    }
}
