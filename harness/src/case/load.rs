//! Loading the case corpus, and lint: every problem in every case file, with file and JSON
//! path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde_json::Value;

use super::model::{Case, CaseSurface, Check, Step, case_schema};
use crate::template;

/// A case and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedCase {
    /// The case.
    pub case: Case,
    /// The file, relative to the corpus directory.
    pub file: String,
    /// SHA-256 of the file's bytes (hex).
    pub digest: String,
}

/// One problem in one case file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LintProblem {
    /// The file, relative to the corpus directory.
    pub file: String,
    /// JSON pointer to the offending value.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for LintProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{}: {at}: {}", self.file, self.message)
    }
}

/// Reading the corpus failed (not a lint problem: the directory itself).
#[derive(Debug, thiserror::Error)]
pub enum LoadCasesError {
    /// The directory or a file could not be read.
    #[error("failed to read `{path}`")]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The outcome of loading a corpus: the valid cases and every problem found.
#[derive(Debug, Default)]
pub struct Corpus {
    /// Cases that passed lint, sorted by file.
    pub cases: Vec<LoadedCase>,
    /// Every problem, sorted by file and pointer.
    pub problems: Vec<LintProblem>,
}

/// Schemas the `schema` check may name: every published schema.
pub fn known_schema_names() -> Vec<&'static str> {
    spec::schema::Published::ALL
        .iter()
        .map(|p| p.name())
        .collect()
}

/// Loads every `*.json` file under `dir` (recursively, in sorted order) and lints it; the
/// `regressions/` directory and `selftest-exemptions.json` are data of other kinds.
pub fn load_corpus(dir: &Path) -> Result<Corpus, LoadCasesError> {
    let mut files = Vec::new();
    collect_json_files(dir, &mut files)?;
    files.sort();
    let mut corpus = Corpus::default();
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for path in files {
        let bytes = std::fs::read(&path).map_err(|source| LoadCasesError::Read {
            path: path.clone(),
            source,
        })?;
        let file = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        match lint_case(&file, &bytes) {
            Ok(loaded) => {
                if let Some(other) = ids.insert(loaded.case.id.clone(), file.clone()) {
                    corpus.problems.push(LintProblem {
                        file: file.clone(),
                        pointer: "/id".into(),
                        message: format!("case id `{}` is also used by {other}", loaded.case.id),
                    });
                } else {
                    corpus.cases.push(loaded);
                }
            }
            Err(mut problems) => corpus.problems.append(&mut problems),
        }
    }
    corpus.problems.sort();
    Ok(corpus)
}

fn collect_json_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LoadCasesError> {
    let entries = std::fs::read_dir(dir).map_err(|source| LoadCasesError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| LoadCasesError::Read {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            // `regressions/` holds counterexamples of property-based steps, not cases.
            if name != "regressions" {
                collect_json_files(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "json")
            && name != "selftest-exemptions.json"
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Parses and lints one case file.
pub fn lint_case(file: &str, bytes: &[u8]) -> Result<LoadedCase, Vec<LintProblem>> {
    static VALIDATOR: LazyLock<jsonschema::Validator> =
        LazyLock::new(|| spec::schema::compile(&case_schema()).expect("the case schema compiles"));
    let problem = |pointer: &str, message: String| LintProblem {
        file: file.to_string(),
        pointer: pointer.to_string(),
        message,
    };
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => return Err(vec![problem("", format!("not valid JSON: {e}"))]),
    };
    let mut problems: Vec<LintProblem> = match spec::schema::violations_of(&VALIDATOR, &value) {
        Ok(()) => Vec::new(),
        Err(violations) => violations
            .into_iter()
            .map(|v| problem(&v.instance_path, v.message))
            .collect(),
    };
    super::robustness::lint(&value, &mut |pointer, message| {
        problems.push(problem(pointer, message))
    });
    // Semantic lint runs whenever the file decodes, so one pass reports every problem.
    let case: Case = match serde_json::from_value(value) {
        Ok(case) => case,
        Err(e) if problems.is_empty() => {
            return Err(vec![problem(
                "",
                format!("does not match the case format: {e}"),
            )]);
        }
        Err(_) => return Err(problems),
    };
    lint_semantics(&case, &mut |pointer, message| {
        problems.push(problem(pointer, message))
    });
    if !problems.is_empty() {
        return Err(problems);
    }
    use sha2::{Digest, Sha256};
    Ok(LoadedCase {
        case,
        file: file.to_string(),
        digest: hex::encode(Sha256::digest(bytes)),
    })
}

fn lint_semantics(case: &Case, report: &mut dyn FnMut(&str, String)) {
    let registry = spec::requirements::registry();
    let expected_prefix = match case.surface {
        CaseSurface::Execution => "x.",
        CaseSurface::Openwop => "w.",
    };
    if !case.id.starts_with(expected_prefix) {
        report(
            "/id",
            format!(
                "a {:?} case id starts with `{expected_prefix}`",
                case.surface
            ),
        );
    }
    for (i, id) in case.requirements.iter().enumerate() {
        if registry.get(id).is_none() {
            report(
                &format!("/requirements/{i}"),
                format!("unknown requirement `{id}` (see spec/requirements.json)"),
            );
        }
    }
    for (i, need) in case.needs.iter().enumerate() {
        if !is_known_need(need) {
            report(
                &format!("/needs/{i}"),
                format!("unknown capability form `{need}`"),
            );
        }
    }
    let mut defined_steps = BTreeSet::new();
    let mut vars = BTreeSet::new();
    lint_steps(
        case,
        &case.steps,
        "/steps",
        &mut defined_steps,
        &mut vars,
        report,
    );
}

fn is_known_need(need: &str) -> bool {
    let need = need.strip_prefix('!').unwrap_or(need);
    const PREFIXES: [&str; 6] = [
        "fact:",
        "fixture:",
        "mock-provider:",
        "stream-mode:",
        "capability:",
        "provider:",
    ];
    PREFIXES
        .iter()
        .any(|p| need.strip_prefix(p).is_some_and(|rest| !rest.is_empty()))
        || matches!(need, "tenant-b" | "subscriber-limit" | "restartable")
}

fn lint_steps(
    case: &Case,
    steps: &[Step],
    base: &str,
    defined: &mut BTreeSet<String>,
    vars: &mut BTreeSet<String>,
    report: &mut dyn FnMut(&str, String),
) {
    for (i, step) in steps.iter().enumerate() {
        let at = format!("{base}/{i}");
        let actions = step.actions();
        if actions.len() != 1 {
            report(
                &at,
                format!("a step has exactly one action, found {actions:?}"),
            );
        }
        let step_json = serde_json::to_value(step).unwrap_or(Value::Null);
        let mut expressions = Vec::new();
        // Checks may refer to this step itself; actions only to earlier steps.
        let mut action_json = step_json.clone();
        if let Some(object) = action_json.as_object_mut() {
            object.remove("expect");
            object.remove("parallel");
            object.remove("repeat");
            object.remove("generate");
        }
        template::expressions_in(&action_json, &mut expressions);
        lint_expressions(case, &expressions, &at, defined, vars, report);
        let mut scoped_vars = vars.clone();
        if let Some(parallel) = &step.parallel {
            let mut inner = defined.clone();
            lint_steps(
                case,
                parallel,
                &format!("{at}/parallel"),
                &mut inner,
                &mut scoped_vars,
                report,
            );
            defined.extend(inner);
        }
        if let Some(repeat) = &step.repeat {
            let mut bounds = Vec::new();
            template::expressions_in(&repeat.from, &mut bounds);
            template::expressions_in(&repeat.to, &mut bounds);
            lint_expressions(
                case,
                &bounds,
                &format!("{at}/repeat"),
                defined,
                vars,
                report,
            );
            scoped_vars.insert(repeat.var.clone());
            lint_steps(
                case,
                &repeat.steps,
                &format!("{at}/repeat/steps"),
                defined,
                &mut scoped_vars,
                report,
            );
        }
        if let Some(generate) = &step.generate {
            scoped_vars.insert(generate.var.clone());
            lint_steps(
                case,
                &generate.steps,
                &format!("{at}/generate/steps"),
                defined,
                &mut scoped_vars,
                report,
            );
        }
        if let Some(id) = &step.id
            && !defined.insert(id.clone())
        {
            report(&format!("{at}/id"), format!("step id `{id}` is used twice"));
        }
        for (j, check) in step.expect.iter().enumerate() {
            lint_check(
                case,
                check,
                &format!("{at}/expect/{j}"),
                defined,
                &scoped_vars,
                report,
            );
        }
    }
}

fn lint_check(
    case: &Case,
    check: &Check,
    at: &str,
    defined: &BTreeSet<String>,
    vars: &BTreeSet<String>,
    report: &mut dyn FnMut(&str, String),
) {
    let kinds = check.kinds();
    if kinds.len() != 1 {
        report(
            at,
            format!("a check has exactly one check key, found {kinds:?}"),
        );
    }
    let registry = spec::requirements::registry();
    for (i, id) in check.requirements.iter().flatten().enumerate() {
        if registry.get(id).is_none() {
            report(
                &format!("{at}/requirements/{i}"),
                format!("unknown requirement `{id}`"),
            );
        }
    }
    if let Some(name) = &check.schema
        && spec::schema::Published::from_name(name).is_none()
    {
        report(
            &format!("{at}/schema"),
            format!("unknown schema `{name}`; one of {:?}", known_schema_names()),
        );
    }
    for (key, step) in [
        ("events_equal", &check.events_equal),
        (
            "exclusive_after/full",
            &check.exclusive_after.as_ref().map(|e| e.full.clone()),
        ),
    ] {
        if let Some(step) = step
            && !defined.contains(step)
        {
            report(&format!("{at}/{key}"), format!("no earlier step `{step}`"));
        }
    }
    for (i, step) in check
        .listed_types_observed
        .iter()
        .flat_map(|l| l.steps.iter().enumerate())
    {
        if !defined.contains(step) {
            report(
                &format!("{at}/listed_types_observed/steps/{i}"),
                format!("no earlier step `{step}`"),
            );
        }
    }
    if let Some(calls) = &check.provider_calls
        && !case.scripts.contains_key(&calls.script)
    {
        report(
            &format!("{at}/provider_calls/script"),
            format!("the case has no script `{}`", calls.script),
        );
    }
    for regex in [
        check.header.as_ref().and_then(|h| h.matches.as_ref()),
        check.json.as_ref().and_then(|j| j.matches.as_ref()),
    ]
    .into_iter()
    .flatten()
    {
        if let Err(e) = regex::Regex::new(regex) {
            report(at, format!("invalid regular expression: {e}"));
        }
    }
    let mut expressions = Vec::new();
    let check_json = serde_json::to_value(check).unwrap_or(Value::Null);
    template::expressions_in(&check_json, &mut expressions);
    lint_expressions(case, &expressions, at, defined, vars, report);
    if let Some(selected) = &check.each_with_status {
        for (i, inner) in selected.expect.iter().enumerate() {
            lint_check(
                case,
                inner,
                &format!("{at}/each_with_status/expect/{i}"),
                defined,
                vars,
                report,
            );
        }
    }
    for (i, inner) in check.each.iter().flatten().enumerate() {
        lint_check(
            case,
            inner,
            &format!("{at}/each/{i}"),
            defined,
            vars,
            report,
        );
    }
}

fn lint_expressions(
    case: &Case,
    expressions: &[String],
    at: &str,
    defined: &BTreeSet<String>,
    vars: &BTreeSet<String>,
    report: &mut dyn FnMut(&str, String),
) {
    for expression in expressions {
        if let Err(e) = template::check_syntax(expression) {
            report(at, e.to_string());
            continue;
        }
        let mut parts = expression.trim().split(['.', '|', ' ', '[']);
        let root = parts.next().unwrap_or_default();
        let name = parts.next().unwrap_or_default();
        let problem = match root {
            "steps" if !defined.contains(name) => Some(format!(
                "`${{{expression}}}` refers to step `{name}`, which is not an earlier step"
            )),
            "var" if !vars.contains(name) => Some(format!(
                "`${{{expression}}}` refers to variable `{name}`, which no enclosing repeat or generate binds"
            )),
            "defs" if !case.defs.contains_key(name) => {
                Some(format!("`${{{expression}}}`: the case has no def `{name}`"))
            }
            "script" if !case.scripts.contains_key(name) => Some(format!(
                "`${{{expression}}}`: the case has no script `{name}`"
            )),
            _ => None,
        };
        if let Some(message) = problem {
            report(at, message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lint(value: Value) -> Result<LoadedCase, Vec<LintProblem>> {
        lint_case("t.json", value.to_string().as_bytes())
    }

    fn minimal() -> Value {
        json!({
            "id": "x.example.minimal", "title": "t", "requirements": ["exec.submission.returns-202"],
            "level": "MUST", "surface": "execution",
            "steps": [{"id": "create", "request": {"method": "POST", "path": "/v1/executions", "json": {}},
                       "expect": [{"status": 202}, {"json": {"pointer": "/execution_id", "type": "string"}}]},
                      {"request": {"path": "/v1/executions/${steps.create.body.execution_id}"}, "expect": [{"status": 200}]}]
        })
    }

    #[test]
    fn a_valid_case_loads() {
        let loaded = lint(minimal()).unwrap();
        assert_eq!(loaded.case.steps.len(), 2);
        assert_eq!(loaded.digest.len(), 64);
    }

    #[test]
    fn reports_every_problem_with_its_path() {
        let mut case = minimal();
        case["requirements"] = json!(["exec.nope"]);
        case["steps"][0]["expect"][0] = json!({"status": 202, "status_in": [200]});
        case["steps"][1]["request"]["path"] = json!("/v1/executions/${steps.later.body.id}");
        case["needs"] = json!(["wings"]);
        let problems = lint(case).unwrap_err();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert!(pointers.contains(&"/requirements/0"), "{problems:?}");
        assert!(pointers.contains(&"/needs/0"), "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/1" && p.message.contains("not an earlier step")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.message.contains("exactly one")),
            "{problems:?}"
        );
    }

    #[test]
    fn schema_violations_name_their_path() {
        let mut case = minimal();
        case["steps"][0]["expect"][0] = json!({"stauts": 202});
        let problems = lint(case).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer.starts_with("/steps/0/expect/0")),
            "{problems:?}"
        );
    }

    #[test]
    fn repeat_variables_are_scoped() {
        let mut case = minimal();
        case["steps"][1] = json!({"repeat": {"var": "n", "from": 0, "to": 2, "steps": [
            {"request": {"path": "/v1/executions/${steps.create.body.execution_id}/events", "headers": {"Last-Event-ID": "${var.n}"}}}
        ]}});
        assert!(lint(case.clone()).is_ok(), "{:?}", lint(case.clone()).err());
        case["steps"]
            .as_array_mut()
            .unwrap()
            .push(json!({"request": {"path": "/x/${var.n}"}}));
        assert!(lint(case).is_err());
    }
}
