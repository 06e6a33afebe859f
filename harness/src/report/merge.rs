//! `conformance merge`: the JSON reports of the partitions of one run (`--partition k/n`)
//! joined into the report of that run, refusing reports that are not of one run: another
//! corpus, target, harness, seed or selection, a missing or repeated partition, a case run twice.

use std::collections::{BTreeMap, BTreeSet};

use crate::capability::HostCapability;
use crate::case::LoadedCase;
use crate::partition::Partition;
use crate::report::model::{CaseResult, REPORT_FORMAT_VERSION, RunReport, SurfaceJudgement};

/// Why reports cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no report to merge")]
    Empty,
    /// Reports differ in something one run shares.
    #[error(
        "the reports are not of one run: {what} differs ({first} in {first_report}, {other} in {other_report})"
    )]
    Differ {
        /// What differs (`corpus`, `target`, …).
        what: &'static str,
        /// The first report's value.
        first: String,
        /// The first report's name.
        first_report: String,
        /// The other value.
        other: String,
        /// The other report's name.
        other_report: String,
    },
    /// A report is of another report format version.
    #[error(
        "{report} has report format {found}; this harness merges format {REPORT_FORMAT_VERSION}"
    )]
    Format {
        /// The report.
        report: String,
        /// Its format version.
        found: u32,
    },
    /// A report is not the report of a partition.
    #[error("{report} is not the report of a partition (it was run without --partition)")]
    NotAPartition {
        /// The report.
        report: String,
    },
    /// Partitions are missing or repeated.
    #[error("the partitions do not make one run: {0}")]
    Partitions(String),
    /// A case appears in two reports.
    #[error("case `{case}` is in both {first_report} and {other_report}")]
    CaseTwice {
        /// The case id.
        case: String,
        /// One report.
        first_report: String,
        /// The other.
        other_report: String,
    },
    /// The corpus given for the merge is not the reports'.
    #[error(
        "the reports ran corpus {reports}; the corpus given for the merge is {given} (pass the cases directory they ran with --cases)"
    )]
    Corpus {
        /// The reports' corpus digest.
        reports: String,
        /// The given corpus's digest.
        given: String,
    },
}

/// Merges the reports of every partition of one run (`named` pairs a report with the name
/// messages use, e.g. its path). `corpus` is the corpus they ran, with `corpus_digest` its
/// digest: it orders the merged cases as the unsplit run orders them and gives the merged
/// case-set digest.
///
/// # Errors
///
/// [`MergeError`]: the reports are not the partitions of one run of this corpus.
pub fn merge_partitions(
    named: &[(String, RunReport)],
    corpus: &[LoadedCase],
    corpus_digest: &str,
) -> Result<RunReport, MergeError> {
    let Some((first_name, first)) = named.first() else {
        return Err(MergeError::Empty);
    };
    let mut partitions: BTreeMap<u32, String> = BTreeMap::new();
    let mut shape: Option<(String, u32)> = None;
    for (name, report) in named {
        if report.format_version != REPORT_FORMAT_VERSION {
            return Err(MergeError::Format {
                report: name.clone(),
                found: report.format_version,
            });
        }
        let same = |what: &'static str, of: &dyn Fn(&RunReport) -> String| {
            let (a, b) = (of(first), of(report));
            if a == b {
                Ok(())
            } else {
                Err(MergeError::Differ {
                    what,
                    first: a,
                    first_report: first_name.clone(),
                    other: b,
                    other_report: name.clone(),
                })
            }
        };
        same("corpus", &|r| {
            format!("{} {}", r.corpus.version, r.corpus.digest)
        })?;
        // The built-in runtime listens on a fresh port in every run: its kind (profile and
        // defects) names it; an external target is its kind and URL.
        same("target", &|r| {
            if r.target.kind.starts_with("built-in") {
                r.target.kind.clone()
            } else {
                format!("{} {}", r.target.kind, r.target.base_url)
            }
        })?;
        same("harness version", &|r| r.harness_version.clone())?;
        same("selection", &|r| selection(r).join(" "))?;
        same("baseline", &|r| format!("{:?}", r.options.baseline))?;
        same(
            "proptest seed (give every partition the same --proptest-seed)",
            &|r| r.options.proptest_seed.to_string(),
        )?;
        same("time scale", &|r| r.options.time_scale.to_string())?;
        let partition = report
            .options
            .filters
            .iter()
            .find_map(|f| Partition::from_filter(f))
            .ok_or_else(|| MergeError::NotAPartition {
                report: name.clone(),
            })?;
        let strategy = partition.to_string();
        let strategy = strategy.split(':').next().unwrap_or_default().to_string();
        match &shape {
            None => shape = Some((strategy, partition.total)),
            Some((s, n)) if *s == strategy && *n == partition.total => {}
            Some((s, n)) => {
                return Err(MergeError::Partitions(format!(
                    "{name} is partition {partition}, the others are {s}:k/{n}"
                )));
            }
        }
        if let Some(other) = partitions.insert(partition.index, name.clone()) {
            return Err(MergeError::Partitions(format!(
                "partition {partition} is both {other} and {name}"
            )));
        }
    }
    if first.corpus.digest != corpus_digest {
        return Err(MergeError::Corpus {
            reports: first.corpus.digest.clone(),
            given: corpus_digest.to_string(),
        });
    }
    let total = shape.map(|(_, n)| n).unwrap_or(1);
    let missing: Vec<String> = (1..=total)
        .filter(|k| !partitions.contains_key(k))
        .map(|k| format!("{k}/{total}"))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Partitions(format!(
            "missing partition(s) {}",
            missing.join(", ")
        )));
    }

    // The cases, in the unsplit run's order (corpus order; the baseline's rows for unknown
    // cases, the same in every partition, once at the end).
    let position: BTreeMap<&str, usize> = corpus
        .iter()
        .enumerate()
        .map(|(i, c)| (c.case.id.as_str(), i))
        .collect();
    let mut seen: BTreeMap<String, (String, CaseResult)> = BTreeMap::new();
    for (name, report) in named {
        for case in &report.cases {
            match seen.get(&case.id) {
                Some((_, earlier))
                    if !position.contains_key(case.id.as_str()) && earlier == case => {}
                Some((other, _)) => {
                    return Err(MergeError::CaseTwice {
                        case: case.id.clone(),
                        first_report: other.clone(),
                        other_report: name.clone(),
                    });
                }
                None => {
                    seen.insert(case.id.clone(), (name.clone(), case.clone()));
                }
            }
        }
    }
    let mut cases: Vec<CaseResult> = seen.into_values().map(|(_, c)| c).collect();
    cases.sort_by_key(|c| {
        (
            position.get(c.id.as_str()).copied().unwrap_or(usize::MAX),
            c.id.clone(),
        )
    });
    let ran: BTreeSet<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    let case_set_digest =
        crate::runner::case_set_digest(corpus.iter().filter(|c| ran.contains(c.case.id.as_str())));

    let started_at = named
        .iter()
        .map(|(_, r)| r.started_at.clone())
        .min()
        .unwrap_or_default();
    let finished_at = named
        .iter()
        .map(|(_, r)| r.finished_at.clone())
        .max()
        .unwrap_or_default();
    let duration_ms = match (
        chrono::DateTime::parse_from_rfc3339(&started_at),
        chrono::DateTime::parse_from_rfc3339(&finished_at),
    ) {
        (Ok(a), Ok(b)) => (b - a).num_milliseconds().max(0) as u64,
        _ => named.iter().map(|(_, r)| r.duration_ms).max().unwrap_or(0),
    };
    let surfaces: Vec<SurfaceJudgement> = first
        .surfaces
        .iter()
        .map(|s| {
            let mut s = s.clone();
            for (_, report) in named {
                for other in report.surfaces.iter().filter(|o| o.surface == s.surface) {
                    s.served |= other.served;
                    s.requested |= other.requested;
                }
            }
            s
        })
        .collect();
    let capabilities = HostCapability::in_written_order(
        named
            .iter()
            .flat_map(|(_, report)| report.target.capabilities.iter().cloned()),
    );
    let mut merged = first.clone();
    merged.run_id = format!(
        "{}-merged-{total}",
        first.run_id.split('-').next().unwrap_or("run")
    );
    merged.started_at = started_at;
    merged.finished_at = finished_at;
    merged.duration_ms = duration_ms;
    merged.target.capabilities = capabilities;
    merged.options.filters = selection(first);
    merged.options.case_set_digest = case_set_digest;
    merged.run_errors = crate::runner::sanity_errors(&cases);
    merged.unmatched_provider_requests = Vec::new();
    for (_, report) in named {
        for line in &report.unmatched_provider_requests {
            if !merged.unmatched_provider_requests.contains(line) {
                merged.unmatched_provider_requests.push(line.clone());
            }
        }
    }
    merged.cases = cases;
    merged.surfaces = surfaces;
    crate::runner::refresh(&mut merged);
    Ok(merged)
}

/// A report's filters other than its partition.
fn selection(report: &RunReport) -> Vec<String> {
    report
        .options
        .filters
        .iter()
        .filter(|f| Partition::from_filter(f).is_none())
        .cloned()
        .collect()
}
