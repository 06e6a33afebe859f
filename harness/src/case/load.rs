//! Loading the case corpus, and lint: every problem in every case file, with file and JSON
//! path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::model::{
    Case, Check, CheckKind, ConcurrentCopy, HeaderExpect, JsonExpect, Premise, PublishedSchema,
    Step, StepAction, case_schema,
};
use super::surface::CaseSurface;
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
    PublishedSchema::names()
}

/// Loads every `*.json` file under `dir` (recursively, in sorted order) and lints it; the
/// `regressions/` directory and `selftest-exemptions.json` are data of other kinds.
pub fn load_corpus(dir: &Path) -> Result<Corpus, LoadCasesError> {
    Ok(CorpusFiles::read_dir(dir)?.lint())
}

/// The files of a cases directory (cases and the data beside them), by path relative to it:
/// read from a directory, or embedded in a binary. [`CorpusFiles::lint`] loads the cases.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CorpusFiles {
    files: BTreeMap<String, Vec<u8>>,
}

/// Paths and sizes only: a failed comparison names files, never dumps their bytes.
impl std::fmt::Debug for CorpusFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.files
                    .iter()
                    .map(|(path, bytes)| (path, format!("{} bytes", bytes.len()))),
            )
            .finish()
    }
}

impl CorpusFiles {
    /// Every file under `dir` (recursively; dot files left out).
    ///
    /// # Errors
    ///
    /// The directory or a file that could not be read.
    pub fn read_dir(dir: &Path) -> Result<CorpusFiles, LoadCasesError> {
        let mut paths = Vec::new();
        collect_files(dir, &mut paths)?;
        let mut files = BTreeMap::new();
        for path in paths {
            let bytes = std::fs::read(&path).map_err(|source| LoadCasesError::Read {
                path: path.clone(),
                source,
            })?;
            let file = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            files.insert(file, bytes);
        }
        Ok(CorpusFiles { files })
    }

    /// Files given as `(relative path, bytes)` pairs (an embedded corpus).
    pub fn from_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> CorpusFiles {
        CorpusFiles {
            files: files
                .into_iter()
                .map(|(path, bytes)| (path.to_string(), bytes.to_vec()))
                .collect(),
        }
    }

    /// One file's bytes.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// Every file, sorted by path.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_str(), b.as_slice()))
    }

    /// How many files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there is no file at all.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The property-based regressions (`regressions/<case id>.json`), by file name.
    pub fn regressions(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.iter()
            .filter_map(|(path, bytes)| path.strip_prefix("regressions/").map(|n| (n, bytes)))
            .filter(|(name, _)| !name.contains('/') && name.ends_with(".json"))
    }

    /// Lints every case file (in path order): the valid cases and every problem.
    pub fn lint(&self) -> Corpus {
        let mut corpus = Corpus::default();
        let mut ids: BTreeMap<String, String> = BTreeMap::new();
        for (file, bytes) in self.iter().filter(|(path, _)| is_case_file(path)) {
            match lint_case(file, bytes) {
                Ok(loaded) => {
                    if let Some(other) = ids.insert(loaded.case.id.clone(), file.to_string()) {
                        corpus.problems.push(LintProblem {
                            file: file.to_string(),
                            pointer: "/id".into(),
                            message: format!(
                                "case id `{}` is also used by {other}",
                                loaded.case.id
                            ),
                        });
                    } else {
                        corpus.cases.push(loaded);
                    }
                }
                Err(mut problems) => corpus.problems.append(&mut problems),
            }
        }
        corpus.problems.sort();
        corpus
    }
}

/// Whether a file of the cases directory is a case: a `*.json` file outside any `regressions/`
/// directory (counterexamples of property-based steps), other than `selftest-exemptions.json`.
pub fn is_case_file(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let Some(name) = parts.pop() else {
        return false;
    };
    name.ends_with(".json") && name != "selftest-exemptions.json" && !parts.contains(&"regressions")
}

/// SHA-256 (hex) of a set of files: each file's path, a NUL, its length (8 bytes, big endian)
/// and its bytes, in the order given. The corpus digest `conformance --version` prints.
pub fn digest_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for (path, bytes) in files {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update((bytes.len() as u64).to_be_bytes());
        hasher.update(bytes);
    }
    hex::encode(hasher.finalize())
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LoadCasesError> {
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
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// Parses and lints one case file.
pub fn lint_case(file: &str, bytes: &[u8]) -> Result<LoadedCase, Vec<LintProblem>> {
    static SCHEMA: LazyLock<Value> = LazyLock::new(case_schema);
    static VALIDATOR: LazyLock<jsonschema::Validator> =
        LazyLock::new(|| spec::schema::compile(&SCHEMA).expect("the case schema compiles"));
    let problem = |pointer: &str, message: String| LintProblem {
        file: file.to_string(),
        pointer: pointer.to_string(),
        message,
    };
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => return Err(vec![problem("", format!("not valid JSON: {e}"))]),
    };
    let mut problems: Vec<LintProblem> = schema_problems(&VALIDATOR, &SCHEMA, &value)
        .into_iter()
        .map(|(pointer, message)| problem(&pointer, message))
        .collect();
    super::robustness::lint(&value, &mut |pointer, message| {
        problems.push(problem(pointer, message))
    });
    // Semantic lint runs whenever the file decodes, so one pass reports every problem: an
    // object without exactly one key of its set is reported here and repaired for the rest
    // of lint, which reads the case typed.
    let mut value = value;
    exactly_one_problems(&mut value, &mut |pointer, message| {
        problems.push(problem(pointer, message))
    });
    // One message per problem: an object whose only would-be key is unknown (a misspelled
    // check or action) is named by its unknown key, with the closest known one; "found []"
    // would say the same again.
    let unknown_keys: BTreeSet<String> = problems
        .iter()
        .filter(|p| p.message.starts_with(UNKNOWN_KEY))
        .map(|p| p.pointer.clone())
        .collect();
    let exactly_one_named: BTreeSet<String> = problems
        .iter()
        .filter(|p| p.message.contains(" has exactly one "))
        .map(|p| p.pointer.clone())
        .collect();
    problems.retain(|p| {
        let redundant_empty = p.message.ends_with("found []") && unknown_keys.contains(&p.pointer);
        let said_twice =
            p.message.starts_with(EXACTLY_ONE) && exactly_one_named.contains(&p.pointer);
        !(redundant_empty || said_twice)
    });
    // Needs are typed when the case decodes: one outside the vocabulary is reported (after
    // the requirements, below) and left out, so the rest of the case is still linted.
    let need_problems = invalid_needs(&mut value);
    let case: Case = match serde_json::from_value(value.clone()) {
        Ok(case) => case,
        Err(e) if problems.is_empty() => {
            return Err(vec![problem(
                "",
                format!("does not match the case format: {e}"),
            )]);
        }
        Err(_) => {
            // The case does not decode: the semantic problems that do not need it are still
            // reported in this pass.
            lint_raw_semantics(&value, &mut |pointer, message| {
                problems.push(problem(pointer, message))
            });
            problems.extend(need_problems.iter().map(|(p, m)| problem(p, m.clone())));
            return Err(problems);
        }
    };
    lint_semantics(&case, &need_problems, &mut |pointer, message| {
        problems.push(problem(pointer, message))
    });
    optional_step_problems(&value, &case.needs, &mut |pointer, message| {
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

/// How a schema problem about an unexpected key begins.
const UNKNOWN_KEY: &str = "unknown key `";

/// How a schema problem about an "exactly one of" object begins (the exactly-one pass names
/// the steps' and checks' own, so the schema's is kept only where that pass is silent).
const EXACTLY_ONE: &str = "exactly one key of ";

/// The schema's problems with `value`, one message per problem, each naming what is allowed:
/// an unknown key with the closest known key (or the keys allowed there), a value outside a
/// closed set with its values and the closest one. A step or check without exactly one key of
/// its set is left to the exactly-one pass, which names the keys it found.
fn schema_problems(
    validator: &jsonschema::Validator,
    schema: &Value,
    value: &Value,
) -> Vec<(String, String)> {
    use jsonschema::error::ValidationErrorKind as Kind;
    let mut out = Vec::new();
    for error in validator.iter_errors(value) {
        let at = error.instance_path().to_string();
        let schema_path = error.schema_path().to_string();
        match error.kind() {
            Kind::AdditionalProperties { unexpected } => {
                let parent = schema_path
                    .strip_suffix("/additionalProperties")
                    .unwrap_or(&schema_path);
                let allowed: Vec<&str> = schema
                    .pointer(&format!("{parent}/properties"))
                    .and_then(Value::as_object)
                    .map(|o| o.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                for key in unexpected {
                    let message = match crate::suggest::closest(key, allowed.iter().copied()) {
                        Some(near) => format!("{UNKNOWN_KEY}{key}`; did you mean `{near}`?"),
                        None if allowed.is_empty() => format!("{UNKNOWN_KEY}{key}`"),
                        None => format!("{UNKNOWN_KEY}{key}`; allowed: {}", allowed.join(", ")),
                    };
                    out.push((at.clone(), message));
                }
            }
            Kind::OneOfNotValid { .. } | Kind::OneOfMultipleValid { .. } => {
                let branches = schema.pointer(&schema_path).and_then(Value::as_array);
                let constants: Option<Vec<String>> = branches.and_then(|branches| {
                    branches
                        .iter()
                        .map(|b| b.get("const").map(display_value))
                        .collect()
                });
                let exactly_one = branches
                    .is_some_and(|branches| branches.iter().all(|b| b.get("required").is_some()));
                match constants {
                    Some(values) => out.push((at, not_one_of(error.instance(), &values))),
                    None if exactly_one => {
                        let keys: Vec<&str> = branches
                            .into_iter()
                            .flatten()
                            .filter_map(|b| b.pointer("/required/0").and_then(Value::as_str))
                            .collect();
                        let found: Vec<&str> = keys
                            .iter()
                            .copied()
                            .filter(|k| error.instance().get(*k).is_some())
                            .collect();
                        out.push((
                            at,
                            format!("{EXACTLY_ONE}{}, found {found:?}", keys.join(", ")),
                        ));
                    }
                    None => out.push((at, error.masked().to_string())),
                }
            }
            Kind::Enum { options } => {
                let values: Vec<String> = options
                    .as_array()
                    .map(|o| o.iter().map(display_value).collect())
                    .unwrap_or_default();
                out.push((at, not_one_of(error.instance(), &values)));
            }
            _ => out.push((at, error.masked().to_string())),
        }
    }
    out
}

/// A value for a message: a string bare, anything else as JSON.
fn display_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// "`x` is not one of A, B; did you mean `A`?"
fn not_one_of(found: &Value, values: &[String]) -> String {
    let shown = match found {
        Value::String(s) => s.clone(),
        other => {
            let text = other.to_string();
            if text.chars().count() > 60 {
                format!("{}…", text.chars().take(60).collect::<String>())
            } else {
                text
            }
        }
    };
    let hint = match found {
        Value::String(s) => crate::suggest::did_you_mean(s, values.iter().map(String::as_str)),
        _ => String::new(),
    };
    format!("`{shown}` is not one of {}{hint}", values.join(", "))
}

/// The semantic checks that need no decoded case (its `requirements` and `needs`), for a case
/// that does not decode, so they are reported in the same pass as its format problems.
fn lint_raw_semantics(value: &Value, report: &mut dyn FnMut(&str, String)) {
    let registry = spec::requirements::registry();
    let strings = |key: &str| -> Vec<(usize, String)> {
        value
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, v)| v.as_str().map(|s| (i, s.to_string())))
            .collect()
    };
    for (i, id) in strings("requirements") {
        if registry.get(&id).is_none() {
            report(
                &format!("/requirements/{i}"),
                unknown_requirement(&id, registry),
            );
        }
    }
}

/// The `needs` entries outside the vocabulary, each with its pointer and lint's message; they
/// are taken out of `value` so the case decodes into typed needs.
fn invalid_needs(value: &mut Value) -> Vec<(String, String)> {
    let Some(needs) = value.get_mut("needs").and_then(Value::as_array_mut) else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    let mut i = 0;
    needs.retain(|need| {
        let at = i;
        i += 1;
        let Some(text) = need.as_str() else {
            return true;
        };
        match super::needs::check_need(text) {
            Ok(()) => true,
            Err(message) => {
                problems.push((format!("/needs/{at}"), message));
                false
            }
        }
    });
    problems
}

/// The problems of the steps with `needs` in the case `root` (its typed `needs` are
/// `case_needs`): a step's needs name only optional stream modes and capabilities (either
/// way) the case does not already need, and a step that may not be taken is read
/// (`${steps.<id>…}`, a premise, a comparison) only by steps taken no more often (needing at
/// least what it needs).
fn optional_step_problems(
    root: &Value,
    case_needs: &[super::needs::CaseNeed],
    report: &mut dyn FnMut(&str, String),
) {
    use super::needs::{CaseNeed, Need};
    let mut steps = Vec::new();
    every_step(root, "/steps", &mut steps);
    let needs_of = |step: &Value| -> BTreeSet<CaseNeed> {
        step["needs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| serde_json::from_value(n.clone()).ok())
            .collect()
    };
    for (at, step) in &steps {
        let needs = needs_of(step);
        for (n, need) in needs.iter().enumerate() {
            let step_need = match need.need {
                Need::StreamMode(_) => !need.negated,
                Need::Capability { .. } => true,
                _ => false,
            };
            if !step_need {
                report(
                    &format!("{at}/needs/{n}"),
                    format!(
                        "a step needs only optional stream modes (`stream-mode:<mode>`) and capabilities (`capability:…`, `!capability:…`), not `{need}`: the case's `needs` hold the rest"
                    ),
                );
            } else if case_needs.contains(need) {
                report(
                    &format!("{at}/needs/{n}"),
                    format!("`{need}` is a need of the case already: the step is always taken"),
                );
            }
        }
        let Some(id) = step["id"].as_str().filter(|_| !needs.is_empty()) else {
            continue;
        };
        for (reader_at, reader) in &steps {
            if reader_at == at || needs_of(reader).is_superset(&needs) {
                continue;
            }
            if let Some(place) = reads_step(reader, id, reader_at) {
                report(
                    &place,
                    format!(
                        "reads step `{id}`, which is not taken on a host without its `needs`: a step reading it needs them too"
                    ),
                );
            }
        }
    }
}

/// Every step under the `steps` array at `pointer` of `root`, nested ones included, with its
/// pointer.
fn every_step<'a>(root: &'a Value, pointer: &str, out: &mut Vec<(String, &'a Value)>) {
    let Some(steps) = root.pointer(pointer).and_then(Value::as_array) else {
        return;
    };
    for (i, step) in steps.iter().enumerate() {
        let at = format!("{pointer}/{i}");
        out.push((at.clone(), step));
        for inner in ["parallel", "repeat/steps", "generate/steps"] {
            every_step(root, &format!("{at}/{inner}"), out);
        }
    }
}

/// Where the step `step` (at `here`; its nested steps aside) reads the step `id`: a template
/// `${steps.<id>…}`, a premise on it, or a check comparing with it.
fn reads_step(step: &Value, id: &str, here: &str) -> Option<String> {
    let nested = ["parallel", "repeat", "generate"];
    let members = step.as_object()?;
    members
        .iter()
        .filter(|(key, _)| !nested.contains(&key.as_str()))
        .find_map(|(key, member)| reads_in(key, member, id, &format!("{here}/{key}")))
}

fn reads_in(key: &str, value: &Value, id: &str, here: &str) -> Option<String> {
    let names = |v: &Value| v.as_str() == Some(id);
    match value {
        Value::String(text) => {
            let template = format!("steps.{id}");
            let templated = text.match_indices(&template).any(|(at, _)| {
                !text[at + template.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            });
            // A step named outright: a premise's `step`, `exclusive_after.full`,
            // `events_equal`, `listed_types_observed.steps`.
            let named = matches!(key, "step" | "full" | "events_equal" | "steps") && names(value);
            (templated || named).then(|| here.to_string())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| reads_in(key, item, id, &format!("{here}/{i}"))),
        Value::Object(members) => members
            .iter()
            .find_map(|(k, member)| reads_in(k, member, id, &format!("{here}/{k}"))),
        _ => None,
    }
}

/// "unknown requirement `x`; did you mean `y`?" (or where the ids are).
fn unknown_requirement(id: &str, registry: &spec::requirements::RequirementRegistry) -> String {
    match crate::suggest::closest(id, registry.iter().map(|r| r.id.as_str())) {
        Some(near) => format!("unknown requirement `{id}`; did you mean `{near}`?"),
        None => format!("unknown requirement `{id}` (see spec/requirements.json)"),
    }
}

fn lint_semantics(
    case: &Case,
    need_problems: &[(String, String)],
    report: &mut dyn FnMut(&str, String),
) {
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
                unknown_requirement(id, registry),
            );
        }
    }
    for (pointer, message) in need_problems {
        report(pointer, message.clone());
    }
    if let Some(problem) = super::robustness::budget_problem(case) {
        report("/timeout_ms", problem);
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
        // Checks may refer to this step itself; actions only to earlier steps.
        let expressions = super::written::expressions(step);
        lint_expressions(case, &expressions, &at, defined, vars, report);
        for (pointer, path) in action_paths(&step.action) {
            for expression in unencoded_run_ids(path) {
                report(
                    &format!("{at}/{pointer}"),
                    format!(
                        "`${{{expression}}}` fills a run id segment of a path: add `|path` (or `|pct`)"
                    ),
                );
            }
        }
        let mut scoped_vars = vars.clone();
        match &step.action {
            StepAction::Parallel(parallel) => {
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
            StepAction::Repeat(repeat) => {
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
            StepAction::Generate(generate) => {
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
            StepAction::Stream(stream)
                if stream.run_ended
                    && stream
                        .until
                        .as_ref()
                        .is_some_and(|until| until.duration_ms.is_some()) =>
            {
                report(
                    &format!("{at}/stream/run_ended"),
                    "a stream on a run that ended is read to its close or one keep-alive interval (`run_ended`): it takes no `until.duration_ms`".into(),
                );
            }
            StepAction::Request(_)
            | StepAction::Stream(_)
            | StepAction::PollUntil(_)
            | StepAction::WaitTerminal(_)
            | StepAction::Concurrent(_) => {}
        }
        if let Some(id) = &step.id
            && !defined.insert(id.clone())
        {
            report(&format!("{at}/id"), format!("step id `{id}` is used twice"));
        }
        for (j, evidence) in step.evidence.iter().enumerate() {
            let scripted = case
                .scripts
                .get(&evidence.script)
                .and_then(|script| script.get("calls"))
                .and_then(|calls| calls.get(&evidence.role));
            match scripted {
                None if !case.scripts.contains_key(&evidence.script) => report(
                    &format!("{at}/evidence/{j}/script"),
                    format!("the case has no script `{}`", evidence.script),
                ),
                None => report(
                    &format!("{at}/evidence/{j}/role"),
                    format!(
                        "script `{}` scripts no calls for role `{}`",
                        evidence.script, evidence.role
                    ),
                ),
                Some(list) => {
                    let scripted = list.as_array().map_or(0, Vec::len);
                    let wanted = evidence.calls.unwrap_or(1) as usize;
                    if wanted > scripted {
                        report(
                            &format!("{at}/evidence/{j}/calls"),
                            format!(
                                "script `{}` scripts {scripted} call(s) for role `{}`, fewer than the {wanted} the step depends on",
                                evidence.script, evidence.role
                            ),
                        );
                    }
                }
            }
        }
        for (j, check) in step.expect.iter().enumerate() {
            for of in check.when.iter().flat_map(Premise::of_steps) {
                if !defined.contains(&of.step) {
                    report(
                        &format!("{at}/expect/{j}/when"),
                        format!(
                            "the premise reads step `{}`, which is not judged before this check (an earlier step, one listed before it in the same parallel, or this one)",
                            of.step
                        ),
                    );
                }
            }
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

/// The URL paths an action sends to, with their pointers below the step.
fn action_paths(action: &StepAction) -> Vec<(&'static str, &str)> {
    match action {
        StepAction::Request(request) => vec![("request/path", request.path.as_str())],
        StepAction::Stream(stream) => vec![("stream/path", stream.path.as_str())],
        StepAction::PollUntil(poll) => {
            vec![("poll_until/request/path", poll.request.path.as_str())]
        }
        StepAction::Concurrent(concurrent) => match &concurrent.copy {
            ConcurrentCopy::Request(request) => {
                vec![("concurrent/request/path", request.path.as_str())]
            }
            ConcurrentCopy::Stream(stream) => {
                vec![("concurrent/stream/path", stream.path.as_str())]
            }
        },
        StepAction::WaitTerminal(_)
        | StepAction::Parallel(_)
        | StepAction::Repeat(_)
        | StepAction::Generate(_) => Vec::new(),
    }
}

/// The expressions of a path that fill a segment after `/runs/` without a path-safe filter
/// (`|path` or `|pct`): a tenant-bound run id's `/` would split the segment.
fn unencoded_run_ids(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = path;
    while let Some(at) = rest.find("/runs/") {
        rest = &rest[at + "/runs/".len()..];
        let segment = rest.split('/').next().unwrap_or_default();
        let mut within = segment;
        while let Some(start) = within.find("${") {
            let Some(len) = within[start..].find('}') else {
                break;
            };
            let expression = &within[start + 2..start + len];
            let filtered = expression
                .rsplit_once('|')
                .is_some_and(|(_, filter)| matches!(filter.trim(), "path" | "pct"));
            if !filtered {
                out.push(expression);
            }
            within = &within[start + len + 1..];
        }
    }
    out
}

/// A check whose level is above every requirement it cites (a MUST check citing only SHOULD
/// requirements): its FAIL would cite no MUST. CONTRACT and MAY checks are never above.
pub fn level_above_requirements(case: &Case, check: &Check) -> Option<String> {
    use crate::verdict::Level;
    let level = check.level.unwrap_or(case.level);
    if !matches!(level, Level::Must | Level::Should) {
        return None;
    }
    let levels = cited_levels(case, check);
    let highest = levels.iter().map(|(_, l)| *l).min()?;
    (level < highest).then(|| {
        format!(
            "the check's level {} is above the requirements it cites ({}): a failure must cite a requirement of its level (lower the check's level, or cite the {} requirement it proves)",
            level.as_str(),
            levels
                .iter()
                .map(|(id, l)| format!("{id} {}", l.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
            level.as_str()
        )
    })
}

/// A SHOULD check of a surface-W case citing no SHOULD requirement: its WARN would charge the
/// host with a recommendation the chapter does not make. (Surface X has no SHOULD of its seed;
/// CONTRACT.md asserts two of its contract rules at SHOULD, so the rule is surface W's.)
fn warn_without_should(case: &Case, check: &Check) -> Option<String> {
    use crate::verdict::Level;
    if case.surface != CaseSurface::Openwop || check.level.unwrap_or(case.level) != Level::Should {
        return None;
    }
    let levels = cited_levels(case, check);
    let recommends = levels.iter().any(|(_, level)| *level == Level::Should);
    (!levels.is_empty() && !recommends).then(|| {
        format!(
            "the check is SHOULD but cites no SHOULD of the chapter ({}): a WARN must cite the recommendation it proves (cite it, or report at MAY or CONTRACT)",
            check
                .requirements
                .as_ref()
                .unwrap_or(&case.requirements)
                .join(", ")
        )
    })
}

/// The requirements a check cites (its own, else its case's) that the registry holds, each
/// with its level.
fn cited_levels(case: &Case, check: &Check) -> Vec<(String, crate::verdict::Level)> {
    let registry = spec::requirements::registry();
    check
        .requirements
        .as_ref()
        .unwrap_or(&case.requirements)
        .iter()
        .filter_map(|id| {
            let record = registry.get(id)?;
            Some((
                id.clone(),
                crate::verdict::Level::of_requirement(record.level),
            ))
        })
        .collect()
}

fn lint_check(
    case: &Case,
    check: &Check,
    at: &str,
    defined: &BTreeSet<String>,
    vars: &BTreeSet<String>,
    report: &mut dyn FnMut(&str, String),
) {
    let registry = spec::requirements::registry();
    for (i, id) in check.requirements.iter().flatten().enumerate() {
        if registry.get(id).is_none() {
            report(
                &format!("{at}/requirements/{i}"),
                unknown_requirement(id, registry),
            );
        }
    }
    if let Some(problem) = level_above_requirements(case, check) {
        report(&format!("{at}/level"), problem);
    }
    if let Some(problem) = warn_without_should(case, check) {
        report(&format!("{at}/level"), problem);
    }
    match &check.kind {
        CheckKind::EventsEqual(step) if !defined.contains(step) => report(
            &format!("{at}/events_equal"),
            format!("no earlier step `{step}`"),
        ),
        CheckKind::ExclusiveAfter(expect) if !defined.contains(&expect.full) => report(
            &format!("{at}/exclusive_after/full"),
            format!("no earlier step `{}`", expect.full),
        ),
        CheckKind::ListedTypesObserved(listed) => {
            for (i, step) in listed.steps.iter().enumerate() {
                if !defined.contains(step) {
                    report(
                        &format!("{at}/listed_types_observed/steps/{i}"),
                        format!("no earlier step `{step}`"),
                    );
                }
            }
        }
        CheckKind::ProviderCalls(calls) if !case.scripts.contains_key(&calls.script) => report(
            &format!("{at}/provider_calls/script"),
            format!("the case has no script `{}`", calls.script),
        ),
        CheckKind::Header(HeaderExpect {
            matches: Some(regex),
            ..
        })
        | CheckKind::Json(JsonExpect {
            matches: Some(regex),
            ..
        }) => {
            if let Err(e) = regex::Regex::new(regex) {
                report(at, format!("invalid regular expression: {e}"));
            }
        }
        _ => {}
    }
    let expressions = super::written::expressions(check);
    lint_expressions(case, &expressions, at, defined, vars, report);
    let (inner_checks, inner_base): (&[Check], String) = match &check.kind {
        CheckKind::EachWithStatus(selected) => {
            (&selected.expect, format!("{at}/each_with_status/expect"))
        }
        CheckKind::Each(checks) => (checks, format!("{at}/each")),
        _ => (&[], String::new()),
    };
    for (i, inner) in inner_checks.iter().enumerate() {
        lint_check(
            case,
            inner,
            &format!("{inner_base}/{i}"),
            defined,
            vars,
            report,
        );
    }
}

/// Reports every step, check and concurrent action in `value` (a whole case) that does not
/// carry exactly one key of its set, and repairs each so that the case decodes for the rest of
/// lint: of several keys the first is kept; a check without a kind gets an empty `same`, a
/// step without an action an empty `parallel`. The published schema reports the same
/// objects (`oneOf`); a concurrent action's problem is left to it alone.
fn exactly_one_problems(value: &mut Value, report: &mut dyn FnMut(&str, String)) {
    if let Some(steps) = value.get_mut("steps") {
        step_shapes(steps, "/steps", report);
    }
}

fn step_shapes(steps: &mut Value, base: &str, report: &mut dyn FnMut(&str, String)) {
    let Some(steps) = steps.as_array_mut() else {
        return;
    };
    for (i, step) in steps.iter_mut().enumerate() {
        let at = format!("{base}/{i}");
        let Some(object) = step.as_object_mut() else {
            continue;
        };
        if let Err(problem) = StepAction::key_in(object) {
            report(&at, problem.to_string());
            keep_one(
                object,
                &problem.found,
                ("parallel", Value::Array(Vec::new())),
            );
        }
        if let Some(concurrent) = object.get_mut("concurrent").and_then(Value::as_object_mut)
            && let Err(problem) = ConcurrentCopy::key_in(concurrent)
        {
            if problem.found.is_empty() {
                object.remove("concurrent");
                object.insert("parallel".into(), Value::Array(Vec::new()));
            } else {
                keep_one(concurrent, &problem.found, ("request", Value::Null));
            }
        }
        for (key, nested) in [
            ("parallel", "parallel"),
            ("repeat", "repeat/steps"),
            ("generate", "generate/steps"),
        ] {
            let inner = match object.get_mut(key) {
                Some(Value::Array(_)) if key == "parallel" => object.get_mut(key),
                Some(Value::Object(o)) => o.get_mut("steps"),
                _ => None,
            };
            if let Some(inner) = inner {
                step_shapes(inner, &format!("{at}/{nested}"), report);
            }
        }
        if let Some(checks) = object.get_mut("expect") {
            check_shapes(checks, &format!("{at}/expect"), report);
        }
    }
}

fn check_shapes(checks: &mut Value, base: &str, report: &mut dyn FnMut(&str, String)) {
    let Some(checks) = checks.as_array_mut() else {
        return;
    };
    for (i, check) in checks.iter_mut().enumerate() {
        let at = format!("{base}/{i}");
        let Some(object) = check.as_object_mut() else {
            continue;
        };
        if let Err(problem) = CheckKind::key_in(object) {
            report(&at, problem.to_string());
            keep_one(object, &problem.found, ("same", Value::Array(Vec::new())));
        }
        // A `schema` check naming no published schema is reported here and, like a check
        // without a kind, repaired to an empty `same`, so that the case decodes into the closed
        // type for the rest of lint.
        if let Some(Value::String(name)) = object.get("schema")
            && let Err(message) = PublishedSchema::from_name(name)
        {
            report(&format!("{at}/schema"), message);
            object.remove("schema");
            object.insert("same".into(), Value::Array(Vec::new()));
        }
        if let Some(inner) = object.get_mut("each") {
            check_shapes(inner, &format!("{at}/each"), report);
        }
        if let Some(inner) = object
            .get_mut("each_with_status")
            .and_then(|e| e.get_mut("expect"))
        {
            check_shapes(inner, &format!("{at}/each_with_status/expect"), report);
        }
    }
}

/// Keeps the first of `found` in `object` and removes the others, or (none found) inserts
/// `empty`.
fn keep_one(object: &mut Map<String, Value>, found: &[&str], empty: (&str, Value)) {
    match found.split_first() {
        Some((_, rest)) => {
            for key in rest {
                object.remove(*key);
            }
        }
        None => {
            object.insert(empty.0.into(), empty.1);
        }
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
    fn a_check_above_its_requirements_level_is_reported() {
        let mut case = minimal();
        case["steps"][0]["expect"][1] = json!({
            "requirements": ["events.stream-mode.should-implement-values"],
            "json": {"pointer": "/execution_id", "type": "string"}
        });
        let problems = lint(case.clone()).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/0/expect/1/level" && p.message.contains("above")),
            "{problems:?}"
        );
        // At the requirement's own level (or CONTRACT) it is fine.
        case["steps"][0]["expect"][1]["level"] = json!("SHOULD");
        assert!(lint(case.clone()).is_ok());
        case["steps"][0]["expect"][1]["level"] = json!("CONTRACT");
        assert!(lint(case).is_ok());
    }

    #[test]
    fn a_step_needing_an_optional_mode_is_read_only_by_steps_taken_no_more_often() {
        let stream = |id: &str, mode: &str| {
            json!({"id": id, "needs": [format!("stream-mode:{mode}")],
                   "stream": {"path": "/runs/r/events", "query": {"streamMode": mode}, "run_ended": true},
                   "expect": [{"status": 200}]})
        };
        let case = |steps: Value, needs: Value| {
            json!({
                "id": "w.example.optional", "title": "t", "requirements": ["events.sse.close-after-terminal"],
                "level": "MUST", "surface": "openwop", "needs": needs,
                "steps": steps
            })
        };
        let mut reading_debug = stream("resumed", "debug");
        reading_debug["expect"] = json!([{"exclusive_after": {"cursor": 0, "full": "full"}}]);
        // Two debug steps, one reading the other: taken together or not at all.
        let fine = case(
            json!([stream("full", "debug"), reading_debug.clone()]),
            json!(["fixture:conformance-noop"]),
        );
        assert!(lint(fine).is_ok());
        // An updates step (always taken) reading the debug one.
        let mut always = reading_debug;
        always.as_object_mut().unwrap().remove("needs");
        let problems = lint(case(
            json!([stream("full", "debug"), always]),
            json!(["fixture:conformance-noop"]),
        ))
        .unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/1/expect/0/exclusive_after/full"
                    && p.message.contains("not taken")),
            "{problems:?}"
        );
        // A template reading it is a read too.
        let templated = json!({"request": {"path": "/runs/${steps.full.body.runId}"}, "expect": [{"status": 200}]});
        let problems = lint(case(
            json!([stream("full", "debug"), templated]),
            json!(["fixture:conformance-noop"]),
        ))
        .unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/1/request/path"),
            "{problems:?}"
        );
        // Only optional stream modes, and none the case needs already.
        let mut fixture_step = stream("full", "debug");
        fixture_step["needs"] = json!(["fixture:conformance-noop"]);
        let problems = lint(case(json!([fixture_step]), json!([]))).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/0/needs/0" && p.message.contains("only optional")),
            "{problems:?}"
        );
        let problems = lint(case(
            json!([stream("full", "debug")]),
            json!(["stream-mode:debug"]),
        ))
        .unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/0/needs/0" && p.message.contains("already")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_surface_w_warn_citing_no_should_is_reported() {
        let mut case = json!({
            "id": "w.example.minimal", "title": "t", "requirements": ["events.subscribers.no-limit-except-resource-protection"],
            "level": "MUST", "surface": "openwop",
            "steps": [{"request": {"path": "/runs"},
                       "expect": [{"status": 200}, {"level": "SHOULD", "status": 200}]}]
        });
        let problems = lint(case.clone()).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/0/expect/1/level" && p.message.contains("no SHOULD")),
            "{problems:?}"
        );
        // Citing the recommendation it proves, or reported at MAY, it is fine.
        case["steps"][0]["expect"][1]["requirements"] =
            json!(["events.stream-mode.should-implement-values"]);
        assert!(lint(case.clone()).is_ok());
        case["steps"][0]["expect"][1] = json!({"level": "MAY", "status": 200});
        assert!(lint(case.clone()).is_ok());
        // Surface X's contract rules asserted at SHOULD (CONTRACT.md) are not concerned.
        let mut x = minimal();
        x["steps"][0]["expect"][0]["level"] = json!("SHOULD");
        assert!(lint(x).is_ok());
    }

    #[test]
    fn evidence_names_a_script_and_a_role_it_scripts() {
        let mut case = minimal();
        case["scripts"] = json!({"main": {"calls": {"text-primary": [{"kind": "completion"}]}}});
        case["steps"][1]["evidence"] = json!([
            {"script": "nope", "role": "text-primary"},
            {"script": "main", "role": "media"},
            {"script": "main", "role": "text-primary", "calls": 2}
        ]);
        let problems = lint(case.clone()).unwrap_err();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        for pointer in [
            "/steps/1/evidence/0/script",
            "/steps/1/evidence/1/role",
            "/steps/1/evidence/2/calls",
        ] {
            assert!(pointers.contains(&pointer), "{pointer}: {problems:?}");
        }
        case["steps"][1]["evidence"] = json!([{"script": "main", "role": "text-primary"}]);
        assert!(lint(case).is_ok());
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
    fn an_object_without_exactly_one_key_is_reported_and_the_rest_still_linted() {
        let mut case = minimal();
        // A step with no action, a check with no kind, a check with two: each reported once
        // with its path, and the semantic problems around them are still found.
        case["steps"][1] = json!({"note": "no action", "expect": [
            {"level": "SHOULD", "requirements": ["exec.nope"]},
            {"status": 200, "status_in": [200], "same": ["${defs.absent}"]}
        ]});
        let problems = lint(case).unwrap_err();
        let with = |pointer: &str, text: &str| {
            problems
                .iter()
                .filter(|p| p.pointer == pointer && p.message == text)
                .count()
        };
        assert_eq!(
            with("/steps/1", "a step has exactly one action, found []"),
            1,
            "{problems:?}"
        );
        assert_eq!(
            with(
                "/steps/1/expect/0",
                "a check has exactly one check key, found []"
            ),
            1,
            "{problems:?}"
        );
        assert_eq!(
            with(
                "/steps/1/expect/1",
                r#"a check has exactly one check key, found ["status", "status_in", "same"]"#
            ),
            1,
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/1/expect/0/requirements/0"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_concurrent_step_needs_a_request_or_a_stream() {
        let mut case = minimal();
        case["steps"][1] = json!({"concurrent": {"count": 2}});
        let problems = lint(case.clone()).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer.starts_with("/steps/1/concurrent")),
            "{problems:?}"
        );
        case["steps"][1] =
            json!({"concurrent": {"count": 2, "request": {"path": "/v1/providers"}}});
        let loaded = lint(case).unwrap();
        assert!(matches!(
            &loaded.case.steps[1].action,
            StepAction::Concurrent(c) if matches!(c.copy, ConcurrentCopy::Request(_))
        ));
    }

    #[test]
    fn a_case_reads_and_writes_through_its_raw_form() {
        let value = minimal();
        let case: Case = serde_json::from_value(value.clone()).unwrap();
        assert!(matches!(case.steps[0].action, StepAction::Request(_)));
        assert!(matches!(
            case.steps[0].expect[0].kind,
            CheckKind::Status(202)
        ));
        assert_eq!(case.steps[0].expect[1].name(), "json");
        let written = serde_json::to_value(&case).unwrap();
        let again: Case = serde_json::from_value(written).unwrap();
        assert_eq!(again, case);
        let error = serde_json::from_value::<Check>(json!({"status": 1, "json": {"pointer": ""}}))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"a check has exactly one check key, found ["status", "json"]"#
        );
    }

    #[test]
    fn a_run_id_in_a_path_needs_a_path_safe_filter() {
        assert_eq!(
            unencoded_run_ids("/runs/${steps.create.body.runId}/events"),
            vec!["steps.create.body.runId"]
        );
        assert!(unencoded_run_ids("/runs/${steps.create.body.runId|path}/events").is_empty());
        assert!(unencoded_run_ids("/runs/${steps.create.body.runId | pct}").is_empty());
        assert!(unencoded_run_ids("/runs/tenant-a~2Frun-x/events").is_empty());
        assert!(unencoded_run_ids("/v1/executions/${steps.create.body.execution_id}").is_empty());
        assert_eq!(
            unencoded_run_ids("/conformance/seams/mock-ai/runs/${steps.c.body.runId|json}/calls"),
            vec!["steps.c.body.runId|json"]
        );
        let mut case = minimal();
        case["id"] = json!("w.example.minimal");
        case["surface"] = json!("openwop");
        case["steps"][1] = json!({"stream": {"path": "/runs/${steps.create.body.runId}/events"}});
        let problems = lint(case).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/steps/1/stream/path" && p.message.contains("add `|path`")),
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
    fn one_message_per_problem_with_the_closest_match_or_the_allowed_values() {
        let mut case = minimal();
        case["steps"][0]["expect"][0] = json!({"stauts": 202});
        case["level"] = json!("MUTS");
        case["needs"] = json!(["fixture:conformance-multinode"]);
        let problems = lint(case).unwrap_err();
        let at = |pointer: &str| -> Vec<&str> {
            problems
                .iter()
                .filter(|p| p.pointer == pointer)
                .map(|p| p.message.as_str())
                .collect()
        };
        assert_eq!(
            at("/steps/0/expect/0"),
            ["unknown key `stauts`; did you mean `status`?"],
            "{problems:#?}"
        );
        assert_eq!(
            at("/level"),
            ["`MUTS` is not one of MUST, SHOULD, MAY, CONTRACT; did you mean `MUST`?"],
            "{problems:#?}"
        );
        assert_eq!(at("/needs/0").len(), 1, "{problems:#?}");
        assert!(
            at("/needs/0")[0].contains("did you mean `conformance-multi-node`?"),
            "{problems:#?}"
        );
        assert_eq!(problems.len(), 3, "{problems:#?}");
    }

    #[test]
    fn schema_and_semantic_problems_are_reported_in_one_pass() {
        let mut case = minimal();
        // A type error the case cannot be decoded past, and problems only the registries see.
        case["timeout_ms"] = json!("soon");
        case["requirements"] = json!(["exec.submission.returns-203"]);
        case["needs"] = json!(["stream-mode:debgu"]);
        let problems = lint(case).unwrap_err();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert!(pointers.contains(&"/timeout_ms"), "{problems:#?}");
        assert!(
            problems.iter().any(|p| p.pointer == "/requirements/0"
                && p.message
                    .contains("did you mean `exec.submission.returns-202`?")),
            "{problems:#?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.pointer == "/needs/0" && p.message.contains("`debug`")),
            "{problems:#?}"
        );
    }

    #[test]
    fn a_schema_check_names_a_published_schema() {
        let mut case = minimal();
        case["steps"][0]["expect"][0] = json!({"schema": "execution-submision"});
        let problems = lint(case.clone()).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].pointer, "/steps/0/expect/0/schema");
        assert!(
            problems[0].message.starts_with(
                "unknown schema `execution-submision`; did you mean `execution-submission`?"
            ),
            "{problems:#?}"
        );
        case["steps"][0]["expect"][0] = json!({"schema": "execution-submission"});
        let loaded = lint(case).unwrap();
        assert_eq!(
            loaded.case.steps[0].expect[0].kind,
            CheckKind::Schema(PublishedSchema(
                spec::schema::Published::ExecutionSubmission
            ))
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
