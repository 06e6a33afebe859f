//! `conformance try FILE.json`: one new or edited case against the standard runtime, every
//! non-standard built-in profile and every known-bad runtime of the kill matrix, so a spec author
//! sees in seconds whether it passes where it must, tolerates every profile, and which defects
//! it kills.
//!
//! `try` fails (see [`TryReport::problems`]) when the case does not tolerate a profile, when no
//! built-in runtime judges it at all (every profile SKIP or BLOCKED: a case that would ship
//! green and never run), and when a MUST case kills no defect of its surface without an entry
//! in `cases/selftest-exemptions.json` (the kill matrix's rule).

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
    /// Why the case has that verdict when it did not run to a judgement (SKIP, BLOCKED,
    /// ERROR), as the run reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
    /// The case's level (`MUST`, `SHOULD`, `MAY`, `CONTRACT`).
    #[serde(default)]
    pub level: String,
    /// The reason `selftest-exemptions.json` gives for a MUST case that kills no defect, when
    /// it has an entry there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exemption: Option<String>,
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

    /// The profiles under which the case ran to a judgement (not SKIP, BLOCKED or ERROR).
    pub fn judged_by(&self) -> impl Iterator<Item = &ProfileOutcome> {
        self.profiles.iter().filter(|p| is_judged(p.verdict))
    }

    /// Why the case is not ready to be added, each a sentence; empty when it is: it does not
    /// tolerate a profile, no built-in runtime judges it, or (a MUST case without an
    /// exemption) it kills no defect.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for p in self.profiles.iter() {
            if let Some(why) = &p.intolerance {
                problems.push(format!("profile {} does not tolerate it: {why}", p.profile));
            }
        }
        if self.judged_by().next().is_none() {
            let verdicts: Vec<String> = self
                .profiles
                .iter()
                .map(|p| {
                    format!(
                        "{} {}{}",
                        p.profile,
                        p.verdict.as_str(),
                        p.reason
                            .as_ref()
                            .map(|r| format!(" ({r})"))
                            .unwrap_or_default()
                    )
                })
                .collect();
            problems.push(format!(
                "no built-in runtime runs the case, so it would never be judged: {}",
                verdicts.join("; ")
            ));
        } else if self.kills().next().is_none() && self.level == "MUST" && self.exemption.is_none()
        {
            problems.push(format!(
                "it kills none of the {} defect(s) of its surface: a MUST case must catch a known-bad runtime, or be listed with the reason in cases/selftest-exemptions.json",
                self.defects.len()
            ));
        }
        problems
    }
}

/// Whether a verdict is a judgement of the host (the case ran to its checks).
fn is_judged(verdict: Verdict) -> bool {
    matches!(
        verdict,
        Verdict::Pass
            | Verdict::Fail
            | Verdict::Warn
            | Verdict::Info
            | Verdict::Xfail
            | Verdict::Stale
    )
}

/// How many runtimes run at once.
const RUNTIMES_AT_ONCE: usize = 6;

/// The case's verdict, its reason and (for a clean profile) why it is not tolerance.
type Outcome = (Verdict, Option<String>, Option<String>);

fn verdict_of(report: &RunReport, id: &str, profile: BuiltInProfile) -> Option<Outcome> {
    report.cases.iter().find(|c| c.id == id).map(|c| {
        (
            c.verdict,
            c.reason.clone(),
            intolerance_of(c, profile.departs_from()),
        )
    })
}

/// Runs one case everywhere. `exemption` is the case's entry in `selftest-exemptions.json`,
/// if any; `progress` hears one line per runtime as it finishes.
pub async fn try_case(
    case: &LoadedCase,
    time_scale: f64,
    exemption: Option<String>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<TryReport, SelftestError> {
    let cases = std::slice::from_ref(case);
    let id = case.case.id.as_str();
    let mut profiles = Vec::new();
    for profile in BuiltInProfile::ALL {
        let report = run_against(cases, Vec::new(), profile, None, 1, time_scale).await?;
        let (verdict, reason, intolerance) = verdict_of(&report, id, profile).unwrap_or((
            Verdict::Error,
            Some("the case did not run (filtered out?)".into()),
            Some("the case did not run (filtered out?)".into()),
        ));
        progress(&format!("profile {profile}: {}", verdict.as_str()));
        profiles.push(ProfileOutcome {
            profile,
            verdict,
            reason,
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
            let verdict =
                verdict_of(&report, id, info.profile).map_or(Verdict::Error, |(v, _, _)| v);
            progress(&format!("defect {}: {}", info.name, verdict.as_str()));
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
        level: case.case.level.as_str().to_string(),
        exemption,
        profiles,
        defects,
    })
}

/// The report as text.
pub fn render_text(report: &TryReport) -> String {
    let mut out = format!("case {}\n\nclean runtime:\n", report.case);
    let width = report
        .profiles
        .iter()
        .map(|p| p.profile.as_str().len())
        .max()
        .unwrap_or(0);
    for p in &report.profiles {
        out.push_str(&format!(
            "  {:<width$} {:<7} {}\n",
            p.profile.as_str(),
            p.verdict.as_str(),
            match (&p.intolerance, &p.reason) {
                (Some(why), _) => format!("NOT TOLERATED: {why}"),
                (None, Some(reason)) if !is_judged(p.verdict) => format!("not judged: {reason}"),
                (None, _) => "ok".to_string(),
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
    if let Some(why) = &report.exemption
        && kills.is_empty()
    {
        out.push_str(&format!(
            "\nkills no defect; exempted in selftest-exemptions.json: {why}\n"
        ));
    }
    let problems = report.problems();
    if problems.is_empty() {
        let judged: Vec<&str> = report.judged_by().map(|p| p.profile.as_str()).collect();
        out.push_str(&format!(
            "\nready: judged under {}, tolerates every profile, kills {} defect(s)\n",
            judged.join(", "),
            kills.len()
        ));
    } else {
        out.push_str("\nNOT READY: fix the case before adding it:\n");
        for problem in &problems {
            out.push_str(&format!("  - {problem}\n"));
        }
    }
    out
}
