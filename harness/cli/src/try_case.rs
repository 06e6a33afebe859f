//! `conformance try FILE.json`: one new or edited case against the standard runtime, every
//! non-standard built-in profile and every known-bad runtime of the kill matrix, so a spec author
//! sees in seconds whether it passes where it must, tolerates every profile, and which defects
//! it kills.

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::launch::{BuiltInProfile, defect_catalogue};
use crate::selftest::{SelftestError, run_against};
use crate::tolerance::intolerance_of;
use harness::case::{CaseSurface, LoadedCase};
use harness::report::RunReport;
use harness::verdict::Verdict;

/// The case against one clean profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileOutcome {
    /// The profile.
    pub profile: BuiltInProfile,
    /// The case's verdict.
    pub verdict: Verdict,
    /// Why it is not tolerance, if it is not.
    pub intolerance: Option<String>,
}

/// The case against one defective runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefectOutcome {
    /// The defect.
    pub defect: String,
    /// The profile it ran under.
    pub profile: BuiltInProfile,
    /// The case's verdict.
    pub verdict: Verdict,
    /// Whether the case caught it (FAIL or WARN).
    pub killed: bool,
}

/// Everything `try` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TryReport {
    /// The case.
    pub case: String,
    /// The clean runtime, standard profile first.
    pub profiles: Vec<ProfileOutcome>,
    /// Every defect of the case's surface.
    pub defects: Vec<DefectOutcome>,
}

impl TryReport {
    /// Whether the case passes (or skips) the standard runtime and tolerates every profile.
    pub fn tolerated(&self) -> bool {
        self.profiles.iter().all(|p| p.intolerance.is_none())
    }

    /// The defects it kills.
    pub fn kills(&self) -> impl Iterator<Item = &DefectOutcome> {
        self.defects.iter().filter(|d| d.killed)
    }
}

/// How many runtimes run at once.
const RUNTIMES_AT_ONCE: usize = 6;

fn verdict_of(
    report: &RunReport,
    id: &str,
    profile: BuiltInProfile,
) -> Option<(Verdict, Option<String>)> {
    report
        .cases
        .iter()
        .find(|c| c.id == id)
        .map(|c| (c.verdict, intolerance_of(c, profile.departs_from())))
}

/// Runs one case everywhere.
pub async fn try_case(case: &LoadedCase, time_scale: f64) -> Result<TryReport, SelftestError> {
    let cases = std::slice::from_ref(case);
    let id = case.case.id.as_str();
    let mut profiles = Vec::new();
    for profile in BuiltInProfile::ALL {
        let report = run_against(cases, Vec::new(), profile, None, 1, time_scale).await?;
        let (verdict, intolerance) = verdict_of(&report, id, profile).unwrap_or((
            Verdict::Error,
            Some("the case did not run (filtered out?)".into()),
        ));
        profiles.push(ProfileOutcome {
            profile,
            verdict,
            intolerance,
        });
    }
    let surface = case.case.surface;
    let selected: Vec<_> = defect_catalogue()
        .into_iter()
        .filter(|d| (d.surface == "X") == (surface == CaseSurface::Execution))
        .collect();
    let mut defects: Vec<DefectOutcome> = futures::stream::iter(selected)
        .map(|info| async move {
            let report = run_against(
                cases,
                vec![info.name.clone()],
                info.profile,
                None,
                1,
                time_scale,
            )
            .await?;
            let verdict = verdict_of(&report, id, info.profile).map_or(Verdict::Error, |(v, _)| v);
            Ok::<_, SelftestError>(DefectOutcome {
                defect: info.name,
                profile: info.profile,
                verdict,
                killed: matches!(verdict, Verdict::Fail | Verdict::Warn),
            })
        })
        .buffer_unordered(RUNTIMES_AT_ONCE)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    defects.sort_by(|a, b| a.defect.cmp(&b.defect));
    Ok(TryReport {
        case: id.to_string(),
        profiles,
        defects,
    })
}

/// The report as text.
pub fn render_text(report: &TryReport) -> String {
    let mut out = format!("case {}\n\nclean runtime:\n", report.case);
    for p in &report.profiles {
        out.push_str(&format!(
            "  {:<12} {:<5} {}\n",
            p.profile.as_str(),
            p.verdict.as_str(),
            match &p.intolerance {
                None => "ok".to_string(),
                Some(why) => format!("NOT TOLERATED: {why}"),
            }
        ));
    }
    let kills: Vec<&DefectOutcome> = report.kills().collect();
    out.push_str(&format!(
        "\nkills {} of {} defect(s) of its surface:\n",
        kills.len(),
        report.defects.len()
    ));
    for d in &kills {
        let profile = if d.profile.is_standard() {
            String::new()
        } else {
            format!(" (profile {})", d.profile)
        };
        out.push_str(&format!("  {} {}{profile}\n", d.verdict.as_str(), d.defect));
    }
    let errors: Vec<&str> = report
        .defects
        .iter()
        .filter(|d| d.verdict == Verdict::Error)
        .map(|d| d.defect.as_str())
        .collect();
    if !errors.is_empty() {
        out.push_str(&format!("\nERROR against: {}\n", errors.join(", ")));
    }
    out.push_str(&format!(
        "\n{}\n",
        if report.tolerated() {
            "tolerated: passes (or skips) the standard runtime and every profile"
        } else {
            "NOT TOLERATED: fix the case before adding it"
        }
    ));
    out
}
