//! Fidelity to upstream: compares the published schemas with a transcription of the facts the
//! protocols' own files state (`spec/upstream/`, format in its README).
//!
//! Both sides are normalised into one canonical *shape* (a JSON object whose keys are the
//! transcription's: `type`, `enum`/`const`, `pattern`, bounds, `closed`, `hatch`, `required`,
//! `properties`, `items`, …): `$ref`s are resolved on both sides (so a grammar inlined on one side
//! and referenced on the other compares equal), `anyOf` nullable forms and schemars' encodings
//! (`oneOf` of documented `const`s, a `type` implied by a `const`, one-value enums) are folded,
//! and documentation keywords are dropped. The shapes are then compared key by key. Every
//! [`Difference`] must be covered by a reviewed [`Deviation`]; a deviation that covers nothing is
//! stale. [`Comparison::failures`] lists both, each naming the def, the key, both values and the
//! upstream repository, path and commit.
//!
//! The corpus runner ([`CorpusEntry`], [`run_corpus`]) validates documents shaped as upstream
//! describes exactly the way the harness validates them.
//!
//! Loading ([`Transcription::load`], [`load_corpus`]) reads files: it is a tool of this test
//! binary (used by `fidelity.rs`), not part of the `spec` crate's API, which does no I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use spec::schema::{self, Published};

/// The extension-key hatch a closed upstream def admits beside its members.
pub const HATCH_PATTERN: &str = spec::openwop::payloads::EXTENSION_HATCH_PATTERN;

/// Keys a transcribed shape may carry (`notes` and `published` are not compared).
const SHAPE_KEYS: [&str; 34] = [
    "type",
    "ref",
    "enum",
    "const",
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "items",
    "contains",
    "propertyNames",
    "closed",
    "hatch",
    "required",
    "properties",
    "patternProperties",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "if",
    "then",
    "else",
    "not",
    "notes",
];

/// The marker a resolved fact `ref` leaves in its canonical shape: differences below it are
/// located at the referenced def, so one deviation covers every place that uses it.
const FROM: &str = "$from";

/// How deep `$ref`s are followed (recursive defs such as a nested actor stop here, equally on
/// both sides).
const MAX_DEPTH: usize = 24;

/// Why the transcription could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum FidelityError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file is not in the transcription format.
    #[error("{path} is not in the transcription format: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// One upstream file the transcription states (a row of `sources.json`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The id facts files and refs use.
    pub id: String,
    /// `owner/name` on GitHub.
    pub repo: String,
    /// The file's path in the repository.
    pub path: String,
    /// The full commit the transcription states.
    pub commit: String,
    /// What the file is.
    pub what: String,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}@{}", self.repo, self.path, self.commit)
    }
}

/// The transcription of one upstream file (`facts/<source id>.json`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactsFile {
    /// The id of the [`Source`] it transcribes.
    pub source: String,
    /// Upstream def name (`#` for the document root) → shape.
    pub defs: BTreeMap<String, Value>,
}

/// Which way a published schema departs from upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// A host that follows upstream can fail.
    Stricter,
    /// A host upstream rejects can pass.
    Looser,
    /// The same constraint said another way.
    Representation,
}

/// Why a published schema departs from upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviationKind {
    /// A project-only tightening a seed demands (applied in `overlay`).
    Overlay,
    /// Upstream contradicts itself; the project takes the reading that fails neither side.
    Tolerance,
    /// The schema says the same thing another way.
    Representation,
    /// The project states what upstream states elsewhere (its prose, its server, a sibling
    /// file) rather than in the transcribed file; the reason names where.
    Prose,
}

/// A reviewed difference (an entry of `deviations.json`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deviation {
    /// `<source id>#<def>[/<path>]`: covers every difference at or below it.
    #[serde(rename = "where")]
    pub location: String,
    /// Which way the project departs.
    pub direction: Direction,
    /// Why.
    pub kind: DeviationKind,
    /// The reason; for an overlay, the seed sentence that justifies it (quoted).
    pub reason: String,
    /// The seed an overlay rests on (`000`, `002`).
    #[serde(default)]
    pub seed: Option<String>,
}

impl Deviation {
    /// Whether this deviation covers a difference at `location`.
    pub fn covers(&self, location: &str) -> bool {
        location == self.location
            || location
                .strip_prefix(self.location.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// Everything under `spec/upstream/`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcription {
    /// `sources.json`.
    pub sources: Vec<Source>,
    /// `facts/*.json`, in file-name order.
    pub facts: Vec<FactsFile>,
    /// `deviations.json`.
    pub deviations: Vec<Deviation>,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, FidelityError> {
    let text = std::fs::read_to_string(path).map_err(|source| FidelityError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| FidelityError::Format {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn json_files(dir: &Path) -> Result<Vec<PathBuf>, FidelityError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(dir).map_err(|source| FidelityError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    Ok(files)
}

impl Transcription {
    /// Loads `dir/sources.json`, `dir/facts/*.json` and `dir/deviations.json`; an absent file
    /// counts as empty.
    pub fn load(dir: &Path) -> Result<Self, FidelityError> {
        let optional = |name: &str| {
            let path = dir.join(name);
            path.is_file().then_some(path)
        };
        let sources = match optional("sources.json") {
            Some(path) => read_json(&path)?,
            None => Vec::new(),
        };
        let deviations = match optional("deviations.json") {
            Some(path) => read_json(&path)?,
            None => Vec::new(),
        };
        let mut facts = Vec::new();
        for path in json_files(&dir.join("facts"))? {
            let file: FactsFile = read_json(&path)?;
            facts.push(file);
        }
        Ok(Transcription {
            sources,
            facts,
            deviations,
        })
    }

    /// The source row with this id.
    pub fn source(&self, id: &str) -> Option<&Source> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// Resolves `<source>#<def>` or `<source>#<def>/<pointer into the def>`.
    fn fact_def(&self, reference: &str) -> Option<&Value> {
        let (source, def) = reference.split_once('#')?;
        let (def, pointer) = match def.split_once('/') {
            Some((def, rest)) => (def, format!("/{rest}")),
            None => (def, String::new()),
        };
        self.facts
            .iter()
            .filter(|f| f.source == source)
            .find_map(|f| f.defs.get(def))
            .and_then(|shape| shape.pointer(&pointer))
    }
}

/// One key on which a published def and its transcription differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// `<source id>#<def>/<path to the key>`: inside a referenced def, where that def states it.
    pub location: String,
    /// The same key reached from the compared def (`<source id>#<def>/<path>`), through any
    /// references: equal to `location` unless the key lies inside a referenced def. A deviation
    /// at either covers the difference (one at the referenced def covers every use; one at a
    /// use covers that use only).
    pub site: String,
    /// What upstream states (`None`: nothing).
    pub upstream: Option<Value>,
    /// What the project publishes (`None`: nothing).
    pub project: Option<Value>,
}

fn show(value: &Option<Value>) -> String {
    match value {
        Some(v) => v.to_string(),
        None => "(nothing)".into(),
    }
}

/// How one transcribed def compares.
#[derive(Debug, Clone, PartialEq)]
pub struct DefComparison {
    /// `<source id>#<def>`.
    pub def: String,
    /// Where the project publishes it.
    pub published: String,
    /// Every difference (covered or not).
    pub differences: Vec<Difference>,
    /// The differences no deviation covers.
    pub unexplained: Vec<Difference>,
    /// Why it could not be compared (the published location does not resolve, …).
    pub error: Option<String>,
}

/// The outcome of comparing a whole transcription.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// One entry per transcribed def that names a `published` location.
    pub defs: Vec<DefComparison>,
    /// Deviations that cover no difference.
    pub stale: Vec<Deviation>,
    /// Problems with the transcription itself (unknown source, unknown shape key, …).
    pub problems: Vec<String>,
    upstream_of: BTreeMap<String, String>,
}

impl Comparison {
    /// Defs whose shapes are identical.
    pub fn identical(&self) -> usize {
        self.defs
            .iter()
            .filter(|d| d.error.is_none() && d.differences.is_empty())
            .count()
    }

    /// Defs that differ only by reviewed deviations.
    pub fn deviating(&self) -> usize {
        self.defs
            .iter()
            .filter(|d| d.error.is_none() && !d.differences.is_empty() && d.unexplained.is_empty())
            .count()
    }

    /// Every failure, one readable message each.
    pub fn failures(&self) -> Vec<String> {
        let mut out = self.problems.clone();
        for def in &self.defs {
            let upstream = self
                .upstream_of
                .get(def.def.split('#').next().unwrap_or_default())
                .cloned()
                .unwrap_or_else(|| "(source not in sources.json)".into());
            if let Some(error) = &def.error {
                out.push(format!(
                    "def `{}` (upstream {upstream}) cannot be compared with `{}`: {error}",
                    def.def, def.published
                ));
            }
            for d in &def.unexplained {
                out.push(format!(
                    "def `{}` (published as `{}`) differs from upstream {upstream} at `{}`: upstream states {}, the project publishes {}; fix the schema or add a reviewed entry to spec/upstream/deviations.json",
                    def.def,
                    def.published,
                    d.location,
                    show(&d.upstream),
                    show(&d.project)
                ));
            }
        }
        for stale in &self.stale {
            out.push(format!(
                "deviation at `{}` ({:?}) covers no difference any more: remove it from spec/upstream/deviations.json",
                stale.location, stale.kind
            ));
        }
        out
    }

    /// A summary a person can read.
    pub fn summary(&self) -> String {
        let failing = self
            .defs
            .iter()
            .filter(|d| d.error.is_some() || !d.unexplained.is_empty())
            .count();
        let mut text = format!(
            "fidelity: {} defs compared, {} identical, {} deviating (reviewed), {} failing; {} stale deviations, {} transcription problems\n",
            self.defs.len(),
            self.identical(),
            self.deviating(),
            failing,
            self.stale.len(),
            self.problems.len()
        );
        for def in &self.defs {
            let verdict = if def.error.is_some() || !def.unexplained.is_empty() {
                "FAIL"
            } else if def.differences.is_empty() {
                "identical"
            } else {
                "deviating"
            };
            text.push_str(&format!(
                "  {verdict:<9} {} -> {} ({} differences)\n",
                def.def,
                def.published,
                def.differences.len()
            ));
        }
        text
    }
}

impl Direction {
    /// The word `deviations.json` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stricter => "stricter",
            Self::Looser => "looser",
            Self::Representation => "representation",
        }
    }
}

impl DeviationKind {
    /// The word `deviations.json` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Overlay => "overlay",
            Self::Tolerance => "tolerance",
            Self::Representation => "representation",
            Self::Prose => "prose",
        }
    }
}

/// The verdict on one run event type: the comparison of the payload def `_typeIndex` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeVerdict {
    /// Its payload def is identical to upstream.
    Identical,
    /// Its payload def differs only by reviewed deviations.
    Deviating,
    /// Its payload def fails the comparison.
    Failing,
    /// No transcribed def names its payload def.
    NotCompared,
}

/// The closing note of the fidelity review: counts of defs and of run event types compared,
/// identical and deviating, then one line per reviewed deviation (where, direction, kind,
/// reason). `type_index` is the published `_typeIndex` (v2 type → payload def).
pub fn closing_note(
    transcription: &Transcription,
    comparison: &Comparison,
    type_index: &Map<String, Value>,
) -> String {
    let verdict_of = |def: &str| {
        let at = format!("run-event-payloads#{def}");
        match comparison.defs.iter().find(|d| d.def == at) {
            None => TypeVerdict::NotCompared,
            Some(d) if d.error.is_some() || !d.unexplained.is_empty() => TypeVerdict::Failing,
            Some(d) if d.differences.is_empty() => TypeVerdict::Identical,
            Some(_) => TypeVerdict::Deviating,
        }
    };
    let verdicts: Vec<(&String, TypeVerdict)> = type_index
        .iter()
        .map(|(t, def)| (t, verdict_of(def.as_str().unwrap_or_default())))
        .collect();
    let count = |v: TypeVerdict| verdicts.iter().filter(|(_, x)| *x == v).count();
    let failing_defs = comparison
        .defs
        .iter()
        .filter(|d| d.error.is_some() || !d.unexplained.is_empty())
        .count();
    let mut text = format!(
        "defs compared: {}, identical: {}, deviating (reviewed): {}, failing: {}\n\
         run event types compared: {} of {}, identical: {}, deviating (reviewed): {}, failing: {}\n",
        comparison.defs.len(),
        comparison.identical(),
        comparison.deviating(),
        failing_defs,
        verdicts.len() - count(TypeVerdict::NotCompared),
        verdicts.len(),
        count(TypeVerdict::Identical),
        count(TypeVerdict::Deviating),
        count(TypeVerdict::Failing),
    );
    for (t, v) in &verdicts {
        if matches!(v, TypeVerdict::NotCompared | TypeVerdict::Failing) {
            text.push_str(&format!("  type {t}: {v:?}\n"));
        }
    }
    let mut by_kind: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for d in &transcription.deviations {
        *by_kind
            .entry((d.kind.as_str(), d.direction.as_str()))
            .or_default() += 1;
    }
    let kinds: Vec<String> = by_kind
        .iter()
        .map(|((kind, direction), n)| format!("{n} {kind}/{direction}"))
        .collect();
    text.push_str(&format!(
        "reviewed deviations: {} ({})\n",
        transcription.deviations.len(),
        kinds.join(", ")
    ));
    for d in &transcription.deviations {
        text.push_str(&format!(
            "  {} | {} | {} | {}\n",
            d.location,
            d.direction.as_str(),
            d.kind.as_str(),
            d.reason
        ));
    }
    text
}

/// Compares every transcribed def that names a `published` location with the project's schema,
/// looked up by `published_doc` (schema file stem → document).
pub fn compare_with(
    transcription: &Transcription,
    published_doc: &dyn Fn(&str) -> Option<Value>,
) -> Comparison {
    let mut problems = Vec::new();
    let mut defs = Vec::new();
    let upstream_of: BTreeMap<String, String> = transcription
        .sources
        .iter()
        .map(|s| (s.id.clone(), s.to_string()))
        .collect();
    for file in &transcription.facts {
        if transcription.source(&file.source).is_none() {
            problems.push(format!(
                "facts file for `{}` names no row of sources.json",
                file.source
            ));
        }
        for (name, shape) in &file.defs {
            let def = format!("{}#{name}", file.source);
            check_shape_keys(&def, shape, &mut problems);
            let Some(published) = shape.get("published").and_then(Value::as_str) else {
                continue;
            };
            let mut outcome = DefComparison {
                def: def.clone(),
                published: published.to_string(),
                differences: Vec::new(),
                unexplained: Vec::new(),
                error: None,
            };
            match resolve_published(published, published_doc) {
                Ok((doc, target)) => {
                    let upstream = canon_fact(transcription, shape, 0);
                    let project = canon_published(&doc, &target, 0);
                    diff(&def, &def, &upstream, &project, &mut outcome.differences);
                    outcome.unexplained = outcome
                        .differences
                        .iter()
                        .filter(|d| {
                            !transcription
                                .deviations
                                .iter()
                                .any(|dev| dev.covers(&d.location) || dev.covers(&d.site))
                        })
                        .cloned()
                        .collect();
                }
                Err(error) => outcome.error = Some(error),
            }
            defs.push(outcome);
        }
    }
    let stale = transcription
        .deviations
        .iter()
        .filter(|dev| {
            !defs
                .iter()
                .flat_map(|d| d.differences.iter())
                .any(|d| dev.covers(&d.location) || dev.covers(&d.site))
        })
        .cloned()
        .collect();
    Comparison {
        defs,
        stale,
        problems,
        upstream_of,
    }
}

/// Compares the transcription with the schemas the types of this crate generate.
pub fn compare(transcription: &Transcription) -> Comparison {
    compare_with(transcription, &|stem| {
        Published::from_name(stem).map(Published::generate)
    })
}

fn check_shape_keys(at: &str, shape: &Value, problems: &mut Vec<String>) {
    let Value::Object(object) = shape else {
        problems.push(format!("`{at}` is not an object"));
        return;
    };
    for (key, value) in object {
        if key == "published" && !at.contains('/') {
            continue;
        }
        if !SHAPE_KEYS.contains(&key.as_str()) {
            problems.push(format!(
                "`{at}` carries `{key}`, not a key of the facts format"
            ));
            continue;
        }
        match key.as_str() {
            "properties" | "patternProperties" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    check_shape_keys(&format!("{at}/{key}/{name}"), sub, problems);
                }
            }
            "items"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "not" => check_shape_keys(&format!("{at}/{key}"), value, problems),
            "anyOf" | "oneOf" | "allOf" => {
                for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                    check_shape_keys(&format!("{at}/{key}/{i}"), sub, problems);
                }
            }
            _ => {}
        }
    }
}

/// Resolves `<stem>` or `<stem>#<pointer>` to (the whole document, the target schema). A
/// pointer segment `@<member>=<value>` selects the array element whose `properties.<member>`
/// is `const` `<value>` (the branch of a tagged `oneOf`).
fn resolve_published(
    published: &str,
    published_doc: &dyn Fn(&str) -> Option<Value>,
) -> Result<(Value, Value), String> {
    let (stem, pointer) = published.split_once('#').unwrap_or((published, ""));
    let doc = published_doc(stem).ok_or_else(|| format!("no published schema `{stem}`"))?;
    let mut target = &doc;
    for segment in pointer.split('/').filter(|s| !s.is_empty()) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        target = if let Some(selector) = segment.strip_prefix('@') {
            let (member, value) = selector
                .split_once('=')
                .ok_or_else(|| format!("selector `{segment}` is not `@member=value`"))?;
            target
                .as_array()
                .and_then(|branches| {
                    branches
                        .iter()
                        .find(|b| b["properties"][member]["const"].as_str() == Some(value))
                })
                .ok_or_else(|| format!("no branch with `{member}` = `{value}` in `{published}`"))?
        } else {
            match target {
                Value::Object(o) => o.get(&segment),
                Value::Array(a) => segment.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            }
            .ok_or_else(|| format!("`{published}` does not resolve at `{segment}`"))?
        };
    }
    let target = target.clone();
    Ok((doc, target))
}

fn pointer_get<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    doc.pointer(pointer)
}

/// Keywords that document rather than constrain.
fn is_annotation(key: &str) -> bool {
    matches!(
        key,
        "description"
            | "title"
            | "$comment"
            | "$schema"
            | "$id"
            | "$defs"
            | "definitions"
            | "examples"
            | "default"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "_typeIndex"
            | "notes"
            | "published"
    ) || key.starts_with("x-")
}

/// The canonical shape of a published JSON Schema.
fn canon_published(doc: &Value, schema: &Value, depth: usize) -> Map<String, Value> {
    let mut out = Map::new();
    if depth > MAX_DEPTH {
        out.insert("truncated".into(), json!(true));
        return out;
    }
    let object = match schema {
        Value::Bool(true) => return out,
        Value::Bool(false) => {
            out.insert("not".into(), json!({}));
            return out;
        }
        Value::Object(o) => o,
        other => {
            out.insert("invalid".into(), other.clone());
            return out;
        }
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        match pointer_get(doc, reference) {
            Some(target) => out = canon_published(doc, target, depth + 1),
            None => {
                out.insert("ref".into(), json!(reference));
            }
        }
    }
    let mut conflicts = Vec::new();
    for (key, value) in object {
        if key == "$ref" || is_annotation(key) {
            continue;
        }
        match key.as_str() {
            "additionalProperties" => match value {
                Value::Bool(false) => {
                    out.insert("closed".into(), json!(true));
                }
                Value::Bool(true) => {}
                schema => {
                    out.insert(
                        key.clone(),
                        Value::Object(canon_published(doc, schema, depth + 1)),
                    );
                }
            },
            "patternProperties" => {
                let mut others = Map::new();
                for (pattern, sub) in value.as_object().into_iter().flatten() {
                    if pattern == HATCH_PATTERN {
                        out.insert("hatch".into(), json!(true));
                    } else {
                        others.insert(
                            pattern.clone(),
                            Value::Object(canon_published(doc, sub, depth + 1)),
                        );
                    }
                }
                if !others.is_empty() {
                    out.insert(key.clone(), Value::Object(others));
                }
            }
            "properties" => {
                let properties: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, sub)| {
                        (
                            name.clone(),
                            Value::Object(canon_published(doc, sub, depth + 1)),
                        )
                    })
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
            "items" | "not" | "propertyNames" | "contains" | "if" | "then" | "else" => {
                out.insert(
                    key.clone(),
                    Value::Object(canon_published(doc, value, depth + 1)),
                );
            }
            "anyOf" | "oneOf" => {
                let branches = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| Value::Object(canon_published(doc, b, depth + 1)))
                    .collect();
                out.insert(key.clone(), Value::Array(branches));
            }
            "allOf" => {
                for branch in value.as_array().into_iter().flatten() {
                    let branch = canon_published(doc, branch, depth + 1);
                    merge_into(&mut out, branch, &mut conflicts);
                }
            }
            "enum" if out.get("enum").is_some_and(Value::is_array) => {
                let conjunct = value.as_array().cloned().unwrap_or_default();
                intersect_enum(&mut out, &conjunct);
            }
            _ => {
                if let Some(existing) = out.get(key)
                    && existing != value
                {
                    conflicts.push(json!({ key.clone(): value.clone() }));
                    continue;
                }
                out.insert(key.clone(), value.clone());
            }
        }
    }
    push_conjuncts(&mut out, conflicts);
    finish(out)
}

/// Two `enum`s in one conjunction admit the values both list.
fn intersect_enum(out: &mut Map<String, Value>, conjunct: &[Value]) {
    if let Some(Value::Array(existing)) = out.get_mut("enum") {
        let keep: BTreeSet<String> = conjunct.iter().map(sorted_text).collect();
        existing.retain(|v| keep.contains(&sorted_text(v)));
    }
}

/// Appends shapes to the canonical `allOf` (the conjuncts that cannot be merged into one shape:
/// conditionals and conflicting constraints).
fn push_conjuncts(out: &mut Map<String, Value>, conjuncts: Vec<Value>) {
    if conjuncts.is_empty() {
        return;
    }
    match out.get_mut("allOf") {
        Some(Value::Array(existing)) => existing.extend(conjuncts),
        _ => {
            out.insert("allOf".into(), Value::Array(conjuncts));
        }
    }
}

fn merge_into(
    out: &mut Map<String, Value>,
    branch: Map<String, Value>,
    conflicts: &mut Vec<Value>,
) {
    for (key, value) in branch {
        match out.get_mut(&key) {
            None => {
                out.insert(key, value);
            }
            Some(existing) if *existing == value => {}
            Some(Value::Array(_)) if key == "enum" && value.is_array() => {
                let conjunct = value.as_array().cloned().unwrap_or_default();
                intersect_enum(out, &conjunct);
            }
            Some(Value::Array(existing)) if key == "allOf" => {
                existing.extend(value.as_array().into_iter().flatten().cloned());
            }
            Some(Value::Array(existing)) if key == "required" => {
                for name in value.as_array().into_iter().flatten() {
                    if !existing.contains(name) {
                        existing.push(name.clone());
                    }
                }
            }
            Some(Value::Object(existing)) if key == "properties" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    existing.entry(name.clone()).or_insert_with(|| sub.clone());
                }
            }
            Some(_) => conflicts.push(json!({ key: value })),
        }
    }
}

/// The canonical shape of a transcribed fact.
fn canon_fact(transcription: &Transcription, shape: &Value, depth: usize) -> Map<String, Value> {
    let mut out = Map::new();
    if depth > MAX_DEPTH {
        out.insert("truncated".into(), json!(true));
        return out;
    }
    let Value::Object(object) = shape else {
        out.insert("invalid".into(), shape.clone());
        return out;
    };
    let mut conflicts = Vec::new();
    if let Some(reference) = object.get("ref").and_then(Value::as_str) {
        match transcription.fact_def(reference) {
            Some(target) => {
                out = canon_fact(transcription, target, depth + 1);
                // Differences inside a referenced def are reported where upstream states them.
                out.insert(FROM.into(), json!(reference));
            }
            None => {
                out.insert("ref".into(), json!(reference));
            }
        }
    }
    for (key, value) in object {
        if key == "ref" || is_annotation(key) {
            continue;
        }
        match key.as_str() {
            "closed" | "hatch" if value == &json!(false) => {}
            "properties" | "patternProperties" => {
                let properties: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, sub)| {
                        (
                            name.clone(),
                            Value::Object(canon_fact(transcription, sub, depth + 1)),
                        )
                    })
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
            "items" | "additionalProperties" | "contains" | "propertyNames" => {
                out.insert(
                    key.clone(),
                    Value::Object(canon_fact(transcription, value, depth + 1)),
                );
            }
            "if" | "then" | "else" | "not" => {
                let mut sub = Value::Object(canon_fact(transcription, value, depth + 1));
                strip_from(&mut sub);
                out.insert(key.clone(), sub);
            }
            "allOf" => {
                for branch in value.as_array().into_iter().flatten() {
                    let mut branch = Value::Object(canon_fact(transcription, branch, depth + 1));
                    strip_from(&mut branch);
                    if let Value::Object(branch) = branch {
                        merge_into(&mut out, branch, &mut conflicts);
                    }
                }
            }
            "anyOf" | "oneOf" => {
                let branches = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| {
                        let mut b = Value::Object(canon_fact(transcription, b, depth + 1));
                        strip_from(&mut b);
                        b
                    })
                    .collect();
                out.insert(key.clone(), Value::Array(branches));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    push_conjuncts(&mut out, conflicts);
    finish(out)
}

/// Rewrites every number with an integral value as an integer, so `2.0` and `2` compare equal
/// (JSON Schema compares numbers by value).
fn integral_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if !(n.is_i64() || n.is_u64()) => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *value = json!(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral_numbers),
        Value::Object(o) => o.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

fn strip_from(value: &mut Value) {
    match value {
        Value::Object(o) => {
            o.remove(FROM);
            o.values_mut().for_each(strip_from);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_from),
        _ => {}
    }
}

fn json_type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_admits(types: &Value, value: &Value) -> bool {
    let kind = json_type_of(value);
    let admits = |t: &str| t == kind || (t == "number" && kind == "integer");
    match types {
        Value::String(t) => admits(t),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(admits),
        _ => false,
    }
}

/// The text of a value with every object's keys in sorted order (an order-independent key).
fn sorted_text(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(o) => {
                let keys: BTreeMap<&String, Value> =
                    o.iter().map(|(k, v)| (k, sorted(v))).collect();
                Value::Object(keys.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

fn sort_values(values: &mut [Value]) {
    values.sort_by_key(sorted_text);
}

/// Shared folding: one-value enums become `const`; a `type` every allowed value already has is
/// dropped; `required`, `enum` and `type` arrays are sorted; `anyOf`/`oneOf` of bare values or
/// bare types fold into `enum`/`type`; tagged branches that differ only in one member's value
/// are merged; a nullable `anyOf` folds into its other branch plus `null`.
///
/// Representations of the same meaning also fold: numbers compare by value (`2.0` is `2`); an
/// empty sub-shape (`items: {}`, `additionalProperties: {}`, `properties: {}`) and a `type`
/// naming every JSON type constrain nothing and are dropped; a conditional (`if`/`then`/`else`)
/// becomes one conjunct of `allOf`, whose conjuncts compare as a set.
fn finish(mut out: Map<String, Value>) -> Map<String, Value> {
    for value in out.values_mut() {
        if !value.is_object() {
            integral_numbers(value);
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "properties",
        "patternProperties",
    ] {
        if out
            .get(key)
            .is_some_and(|v| v.as_object().is_some_and(Map::is_empty))
        {
            out.remove(key);
        }
    }
    if let Some(Value::Array(types)) = out.get("type") {
        let names: BTreeSet<&str> = types.iter().filter_map(Value::as_str).collect();
        if ["array", "boolean", "null", "number", "object", "string"]
            .iter()
            .all(|t| names.contains(t))
        {
            out.remove("type");
        }
    }
    let conditional: Map<String, Value> = ["if", "then", "else"]
        .into_iter()
        .filter_map(|k| out.remove(k).map(|v| (k.to_string(), v)))
        .collect();
    if !conditional.is_empty() {
        push_conjuncts(&mut out, vec![Value::Object(conditional)]);
    }
    if let Some(Value::Array(conjuncts)) = out.get_mut("allOf") {
        let mut seen = BTreeSet::new();
        conjuncts.retain(|v| seen.insert(sorted_text(v)));
        sort_values(conjuncts);
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(mut branches)) = out.remove(key) else {
            continue;
        };
        // A branch's `type` the enclosing shape already states adds nothing.
        if let Some(outer) = out.get("type").cloned() {
            for branch in &mut branches {
                if let Value::Object(b) = branch
                    && b.len() > 1
                    && b.get("type") == Some(&outer)
                {
                    b.remove("type");
                }
            }
        }
        merge_tagged_branches(&mut branches);
        // Nullable form: [X, {type: null}].
        let null_branch = json!({"type": "null"});
        if key == "anyOf" && branches.len() == 2 && branches.contains(&null_branch) {
            let Some(Value::Object(other)) = branches.into_iter().find(|b| *b != null_branch)
            else {
                continue;
            };
            let mut merged = other;
            let types = match merged.remove("type") {
                Some(Value::String(t)) => vec![json!(t), json!("null")],
                Some(Value::Array(mut ts)) => {
                    ts.push(json!("null"));
                    ts
                }
                _ => vec![json!("null")],
            };
            merged.insert("type".into(), Value::Array(types));
            let mut conflicts = Vec::new();
            merge_into(&mut out, merged, &mut conflicts);
            continue;
        }
        let values: Option<Vec<Value>> = branches
            .iter()
            .map(|b| {
                let b = b.as_object()?;
                if b.len() != 1 {
                    return None;
                }
                b.get("const")
                    .map(|c| vec![c.clone()])
                    .or_else(|| b.get("enum").and_then(Value::as_array).cloned())
            })
            .collect::<Option<Vec<Vec<Value>>>>()
            .map(|v| v.into_iter().flatten().collect());
        if let Some(values) = values
            && !branches.is_empty()
            && !out.contains_key("enum")
            && !out.contains_key("const")
        {
            out.insert("enum".into(), Value::Array(values));
            continue;
        }
        let types: Option<Vec<Value>> = branches
            .iter()
            .map(|b| {
                let b = b.as_object()?;
                (b.len() == 1).then(|| b.get("type").cloned()).flatten()
            })
            .collect();
        if let Some(types) = types
            && !branches.is_empty()
            && !out.contains_key("type")
        {
            let flat: Vec<Value> = types
                .into_iter()
                .flat_map(|t| match t {
                    Value::Array(ts) => ts,
                    t => vec![t],
                })
                .collect();
            out.insert("type".into(), Value::Array(flat));
            continue;
        }
        if branches.len() == 1 {
            let Some(Value::Object(only)) = branches.pop() else {
                continue;
            };
            let mut conflicts = Vec::new();
            merge_into(&mut out, only, &mut conflicts);
            if !conflicts.is_empty() {
                out.insert("allOf".into(), Value::Array(conflicts));
            }
            continue;
        }
        sort_values(&mut branches);
        out.insert(key.into(), Value::Array(branches));
    }
    if let Some(Value::Array(values)) = out.get_mut("enum") {
        let mut seen = BTreeSet::new();
        values.retain(|v| seen.insert(sorted_text(v)));
        sort_values(values);
        if values.len() == 1 {
            let only = values.remove(0);
            out.remove("enum");
            out.insert("const".into(), only);
        }
    }
    if let Some(Value::Array(types)) = out.get_mut("type") {
        let mut seen = BTreeSet::new();
        types.retain(|v| seen.insert(v.to_string()));
        sort_values(types);
        if types.len() == 1 {
            let only = types.remove(0);
            out.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(required)) = out.get_mut("required") {
        sort_values(required);
        if required.is_empty() {
            out.remove("required");
        }
    }
    let allowed: Option<Vec<Value>> = out
        .get("const")
        .map(|c| vec![c.clone()])
        .or_else(|| out.get("enum").and_then(Value::as_array).cloned());
    if let Some(values) = &allowed {
        for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            let implied = out.get(key).and_then(Value::as_f64).is_some_and(|bound| {
                values.iter().all(|v| {
                    v.as_f64().is_some_and(|v| match key {
                        "minimum" => v >= bound,
                        "maximum" => v <= bound,
                        "exclusiveMinimum" => v > bound,
                        _ => v < bound,
                    })
                })
            });
            if implied {
                out.remove(key);
            }
        }
    }
    if let (Some(values), Some(types)) = (allowed, out.get("type"))
        && values.iter().all(|v| type_admits(types, v))
    {
        out.remove("type");
    }
    out
}

/// Merges branches of a tagged union that are identical except for one member whose shape is
/// only a `const`/`enum` (e.g. four media parts `{type: const image}`, … vs one with
/// `{type: enum [image, audio, video, file]}`).
fn merge_tagged_branches(branches: &mut Vec<Value>) {
    let values_of = |shape: &Value| -> Option<Vec<Value>> {
        let o = shape.as_object()?;
        if o.len() != 1 {
            return None;
        }
        o.get("const")
            .map(|c| vec![c.clone()])
            .or_else(|| o.get("enum").and_then(Value::as_array).cloned())
    };
    loop {
        let mut merged = None;
        'search: for i in 0..branches.len() {
            for j in (i + 1)..branches.len() {
                let (Some(a), Some(b)) = (
                    branches[i]["properties"].as_object(),
                    branches[j]["properties"].as_object(),
                ) else {
                    continue;
                };
                let mut rest_a = branches[i].clone();
                let mut rest_b = branches[j].clone();
                rest_a.as_object_mut().map(|o| o.remove("properties"));
                rest_b.as_object_mut().map(|o| o.remove("properties"));
                if rest_a != rest_b || a.len() != b.len() {
                    continue;
                }
                let differing: Vec<&String> = a.keys().filter(|k| a.get(*k) != b.get(*k)).collect();
                if differing.len() != 1 || !b.contains_key(differing[0]) {
                    continue;
                }
                let name = differing[0];
                if let (Some(mut va), Some(vb)) = (values_of(&a[name]), values_of(&b[name])) {
                    va.extend(vb);
                    let mut shape = Map::new();
                    shape.insert("enum".into(), Value::Array(va));
                    let mut branch = branches[i].clone();
                    branch["properties"][name] = Value::Object(finish(shape));
                    merged = Some((i, j, branch));
                    break 'search;
                }
            }
        }
        match merged {
            Some((i, j, branch)) => {
                branches[i] = branch;
                branches.remove(j);
            }
            None => break,
        }
    }
}

/// Key-by-key comparison; nested shapes (`properties`, `items`, `additionalProperties`) are
/// compared member by member.
fn diff(
    location: &str,
    site: &str,
    upstream: &Map<String, Value>,
    project: &Map<String, Value>,
    out: &mut Vec<Difference>,
) {
    let location = match upstream.get(FROM).and_then(Value::as_str) {
        Some(from) => from,
        None => location,
    };
    let keys: BTreeSet<&String> = upstream
        .keys()
        .chain(project.keys())
        .filter(|k| *k != FROM)
        .collect();
    for key in keys {
        let here = format!("{location}/{key}");
        let site_here = format!("{site}/{key}");
        match (upstream.get(key), project.get(key)) {
            (Some(a), Some(b)) if without_from(a) == *b => {}
            (Some(Value::Object(a)), Some(Value::Object(b)))
                if key == "properties" || key == "patternProperties" =>
            {
                let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                for name in names {
                    let at = format!("{here}/{name}");
                    let site_at = format!("{site_here}/{name}");
                    match (a.get(name), b.get(name)) {
                        (Some(Value::Object(x)), Some(Value::Object(y))) => {
                            diff(&at, &site_at, x, y, out)
                        }
                        (x, y) if x.map(without_from) == y.cloned() => {}
                        (x, y) => out.push(Difference {
                            location: at,
                            site: site_at,
                            upstream: x.map(without_from),
                            project: y.cloned(),
                        }),
                    }
                }
            }
            (Some(Value::Object(a)), Some(Value::Object(b)))
                if key == "items" || key == "additionalProperties" =>
            {
                diff(&here, &site_here, a, b, out)
            }
            (a, b) => out.push(Difference {
                location: here,
                site: site_here,
                upstream: a.map(without_from),
                project: b.cloned(),
            }),
        }
    }
}

fn without_from(value: &Value) -> Value {
    let mut value = value.clone();
    strip_from(&mut value);
    value
}

/// One document of the corpus: shaped as upstream describes, valid or not.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusEntry {
    /// A name unique in its file.
    pub name: String,
    /// A run event type: the document is its payload, validated with
    /// [`schema::validate_run_event_payload`].
    #[serde(rename = "type", default)]
    pub event_type: Option<String>,
    /// `<published stem>[#<$defs name>]`: the document is validated with [`schema::validate`]
    /// (or against that definition of the published schema).
    #[serde(default)]
    pub schema: Option<String>,
    /// The document.
    pub document: Value,
    /// Whether upstream admits it.
    pub valid: bool,
    /// Why (the upstream fact it exercises).
    pub why: String,
}

/// Loads every `*.json` of `dir` as an array of [`CorpusEntry`], each named `<file>: <name>`.
pub fn load_corpus(dir: &Path) -> Result<Vec<(String, CorpusEntry)>, FidelityError> {
    let mut out = Vec::new();
    for path in json_files(dir)? {
        let entries: Vec<CorpusEntry> = read_json(&path)?;
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.extend(entries.into_iter().map(|e| (file.clone(), e)));
    }
    Ok(out)
}

/// Validates one corpus entry the way the harness does: `Ok(true)` valid, `Ok(false)` invalid,
/// `Err` when it cannot be judged (unknown schema, an event type without a definition).
pub fn judge(entry: &CorpusEntry) -> Result<bool, String> {
    match (&entry.event_type, &entry.schema) {
        (Some(event_type), None) => {
            match schema::validate_run_event_payload(event_type, &entry.document) {
                Ok(true) => Ok(true),
                Ok(false) => Err(format!(
                    "`{event_type}` has no payload definition: nothing was checked"
                )),
                Err(_) => Ok(false),
            }
        }
        (None, Some(target)) => {
            let (stem, def) = target.split_once('#').unwrap_or((target, ""));
            let published = Published::from_name(stem)
                .ok_or_else(|| format!("no published schema `{stem}`"))?;
            if def.is_empty() {
                return Ok(schema::validate(published, &entry.document).is_ok());
            }
            let def = def.trim_start_matches("/$defs/");
            let mut wrapper: Value = serde_json::from_str(published.committed_text())
                .map_err(|e| format!("{stem} is not JSON: {e}"))?;
            if wrapper["$defs"].get(def).is_none() {
                return Err(format!("`{stem}` has no definition `{def}`"));
            }
            if let Value::Object(o) = &mut wrapper {
                for key in [
                    "oneOf",
                    "anyOf",
                    "allOf",
                    "properties",
                    "required",
                    "type",
                    "_typeIndex",
                ] {
                    o.remove(key);
                }
                o.insert("additionalProperties".into(), json!(true));
                o.insert("$ref".into(), json!(format!("#/$defs/{def}")));
            }
            let validator = schema::compile(&wrapper)?;
            Ok(schema::violations_of(&validator, &entry.document).is_ok())
        }
        _ => Err("an entry names exactly one of `type` and `schema`".into()),
    }
}

/// Every corpus entry whose verdict differs from its `valid`, or that cannot be judged.
pub fn run_corpus(entries: &[(String, CorpusEntry)]) -> Vec<String> {
    let mut names = BTreeSet::new();
    let mut failures = Vec::new();
    for (file, entry) in entries {
        if !names.insert((file.clone(), entry.name.clone())) {
            failures.push(format!("{file}: `{}` is named twice", entry.name));
        }
        match judge(entry) {
            Ok(valid) if valid == entry.valid => {}
            Ok(valid) => failures.push(format!(
                "{file}: `{}` should be {} ({}) but validates as {}",
                entry.name,
                if entry.valid { "valid" } else { "invalid" },
                entry.why,
                if valid { "valid" } else { "invalid" }
            )),
            Err(why) => failures.push(format!("{file}: `{}` cannot be judged: {why}", entry.name)),
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Source {
        Source {
            id: "up".into(),
            repo: "owner/repo".into(),
            path: "schema/thing.json".into(),
            commit: "0".repeat(40),
            what: "a thing".into(),
        }
    }

    fn published_thing() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "id": {"$ref": "#/$defs/Id", "description": "The id."},
                "kind": {"oneOf": [
                    {"type": "string", "const": "a", "description": "A."},
                    {"type": "string", "const": "b"}
                ]},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "parts": {"type": "array", "items": {"oneOf": [
                    {"type": "object", "properties": {"type": {"type": "string", "const": "image"}, "uri": {"type": "string"}}, "required": ["type", "uri"]},
                    {"type": "object", "properties": {"type": {"type": "string", "const": "audio"}, "uri": {"type": "string"}}, "required": ["uri", "type"]}
                ]}}
            },
            "required": ["kind", "id"],
            "$defs": {"Id": {"type": "string", "pattern": "^[a-z]+$"}}
        })
    }

    fn transcription(required: Value) -> Transcription {
        let facts = FactsFile {
            source: "up".into(),
            defs: [
                (
                    "#".to_string(),
                    json!({
                        "published": "thing",
                        "type": "object",
                        "closed": true,
                        "required": required,
                        "properties": {
                            "id": {"ref": "up#id"},
                            "kind": {"type": "string", "enum": ["b", "a"]},
                            "note": {"type": ["null", "string"]},
                            "parts": {"type": "array", "items": {"type": "object", "required": ["type", "uri"], "properties": {
                                "type": {"enum": ["audio", "image"]}, "uri": {"type": "string"}
                            }}}
                        }
                    }),
                ),
                (
                    "id".to_string(),
                    json!({"type": "string", "pattern": "^[a-z]+$"}),
                ),
            ]
            .into_iter()
            .collect(),
        };
        Transcription {
            sources: vec![source()],
            facts: vec![facts],
            deviations: Vec::new(),
        }
    }

    fn lookup(stem: &str) -> Option<Value> {
        (stem == "thing").then(published_thing)
    }

    #[test]
    fn equivalent_encodings_compare_identical() {
        let comparison = compare_with(&transcription(json!(["id", "kind"])), &lookup);
        assert_eq!(comparison.failures(), Vec::<String>::new());
        assert_eq!(comparison.defs.len(), 1);
        assert_eq!(comparison.identical(), 1);
    }

    #[test]
    fn a_changed_required_set_fails_naming_the_def_and_the_upstream_file() {
        let comparison = compare_with(&transcription(json!(["id"])), &lookup);
        let failures = comparison.failures();
        assert_eq!(failures.len(), 1, "{failures:#?}");
        assert!(failures[0].contains("`up##/required`"), "{}", failures[0]);
        assert!(failures[0].contains("def `up##`"), "{}", failures[0]);
        assert!(
            failures[0].contains("owner/repo:schema/thing.json@0000"),
            "{}",
            failures[0]
        );
        assert!(failures[0].contains(r#"["id","kind"]"#), "{}", failures[0]);
    }

    #[test]
    fn a_reviewed_deviation_covers_its_difference_and_a_stale_one_fails() {
        let mut t = transcription(json!(["id"]));
        t.deviations.push(Deviation {
            location: "up##/required".into(),
            direction: Direction::Stricter,
            kind: DeviationKind::Overlay,
            reason: "\"kind MUST be present\"".into(),
            seed: Some("000".into()),
        });
        let comparison = compare_with(&t, &lookup);
        assert_eq!(comparison.failures(), Vec::<String>::new());
        assert_eq!(comparison.deviating(), 1);

        let mut t = transcription(json!(["id", "kind"]));
        t.deviations.push(Deviation {
            location: "up##/properties/kind".into(),
            direction: Direction::Looser,
            kind: DeviationKind::Prose,
            reason: "no longer true".into(),
            seed: None,
        });
        let failures = compare_with(&t, &lookup).failures();
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].contains("covers no difference"),
            "{}",
            failures[0]
        );
    }

    #[test]
    fn a_member_missing_on_one_side_is_a_difference() {
        let mut t = transcription(json!(["id", "kind"]));
        t.facts[0].defs.get_mut("#").unwrap()["properties"]["limits"] = json!({"type": "object"});
        let failures = compare_with(&t, &lookup).failures();
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].contains("`up##/properties/limits`"),
            "{}",
            failures[0]
        );
        assert!(
            failures[0].contains("the project publishes (nothing)"),
            "{}",
            failures[0]
        );
    }

    #[test]
    fn unknown_shape_keys_and_unknown_published_schemas_are_problems() {
        let mut t = transcription(json!(["id", "kind"]));
        t.facts[0].defs.get_mut("#").unwrap()["requried"] = json!([]);
        t.facts[0]
            .defs
            .insert("other".into(), json!({"published": "nothing-here"}));
        let failures = compare_with(&t, &lookup).failures();
        assert!(
            failures.iter().any(|f| f.contains("`requried`")),
            "{failures:#?}"
        );
        assert!(
            failures
                .iter()
                .any(|f| f.contains("no published schema `nothing-here`")),
            "{failures:#?}"
        );
    }

    #[test]
    fn the_hatch_and_a_referenced_grammar_compare_with_their_published_encodings() {
        let published = json!({
            "$defs": {"ev": {
                "type": "object", "additionalProperties": false,
                "patternProperties": {HATCH_PATTERN: {}},
                "properties": {"nodeId": {"type": "string", "pattern": "^n$"}},
                "required": ["nodeId"]
            }}
        });
        let facts = FactsFile {
            source: "up".into(),
            defs: [
                ("ev".to_string(), json!({"published": "doc#/$defs/ev", "type": "object", "closed": true, "hatch": true,
                    "required": ["nodeId"], "properties": {"nodeId": {"ref": "up#ids/properties/nodeId"}}})),
                ("ids".to_string(), json!({"properties": {"nodeId": {"type": "string", "pattern": "^n$"}}})),
            ]
            .into_iter()
            .collect(),
        };
        let t = Transcription {
            sources: vec![source()],
            facts: vec![facts],
            deviations: Vec::new(),
        };
        let comparison = compare_with(&t, &|stem| (stem == "doc").then(|| published.clone()));
        assert_eq!(comparison.failures(), Vec::<String>::new());
        assert_eq!(comparison.identical(), 1);
    }

    fn one_def(shape: Value, extra: Option<(&str, Value)>) -> Transcription {
        let mut defs: BTreeMap<String, Value> = [("ev".to_string(), shape)].into_iter().collect();
        if let Some((name, def)) = extra {
            defs.insert(name.to_string(), def);
        }
        Transcription {
            sources: vec![source()],
            facts: vec![FactsFile {
                source: "up".into(),
                defs,
            }],
            deviations: Vec::new(),
        }
    }

    fn conditional_published() -> Value {
        json!({"$defs": {"ev": {
            "type": "object",
            "properties": {
                "lane": {"type": "string"},
                "key": {"type": "string"},
                "score": {"type": "number", "minimum": 0.0, "maximum": 2.0}
            },
            "allOf": [
                {"if": {"properties": {"lane": {"const": "saml"}}},
                 "then": {"required": ["key"]},
                 "else": {"not": {"required": ["key"]}}}
            ]
        }}})
    }

    fn conditional_fact(then_required: &str) -> Value {
        json!({
            "published": "doc#/$defs/ev",
            "type": "object",
            "properties": {
                "lane": {"type": "string"},
                "key": {"type": "string"},
                "score": {"type": "number", "minimum": 0, "maximum": 2}
            },
            "allOf": [
                {"if": {"properties": {"lane": {"const": "saml"}}},
                 "then": {"required": [then_required]},
                 "else": {"not": {"required": ["key"]}}}
            ]
        })
    }

    #[test]
    fn conditionals_compare_as_shapes_and_numbers_by_value() {
        let published = conditional_published();
        let lookup = |stem: &str| (stem == "doc").then(|| published.clone());
        let same = compare_with(&one_def(conditional_fact("key"), None), &lookup);
        assert_eq!(same.failures(), Vec::<String>::new());
        assert_eq!(same.identical(), 1);

        let changed = compare_with(&one_def(conditional_fact("lane"), None), &lookup);
        let failures = changed.failures();
        assert_eq!(failures.len(), 1, "{failures:#?}");
        assert!(failures[0].contains("`up#ev/allOf`"), "{}", failures[0]);
    }

    #[test]
    fn a_deviation_at_a_use_covers_the_referenced_def_there_only() {
        let published = json!({"$defs": {"ev": {
            "type": "object",
            "properties": {"config": {"type": "object"}}
        }}});
        let shape = json!({
            "published": "doc#/$defs/ev",
            "type": "object",
            "properties": {"config": {"ref": "up#config"}}
        });
        let config = json!({"type": "object", "closed": true});
        let mut t = one_def(shape, Some(("config", config)));
        let lookup = |stem: &str| (stem == "doc").then(|| published.clone());
        let failures = compare_with(&t, &lookup).failures();
        assert_eq!(failures.len(), 1, "{failures:#?}");
        assert!(
            failures[0].contains("`up#config/closed`"),
            "{}",
            failures[0]
        );

        t.deviations.push(Deviation {
            location: "up#ev/properties/config".into(),
            direction: Direction::Looser,
            kind: DeviationKind::Representation,
            reason: "published with its JSON type only".into(),
            seed: None,
        });
        assert_eq!(compare_with(&t, &lookup).failures(), Vec::<String>::new());
    }

    #[test]
    fn corpus_entries_are_judged_the_way_the_harness_validates() {
        let entry = |document: Value, valid: bool| CorpusEntry {
            name: "request".into(),
            event_type: None,
            schema: Some("execution-request".into()),
            document,
            valid,
            why: "required ability".into(),
        };
        let ok = entry(
            json!({"ability": "a", "input": [{"type": "text", "text": ""}]}),
            true,
        );
        let bad = entry(json!({"input": [{"type": "text", "text": ""}]}), true);
        assert_eq!(judge(&ok), Ok(true));
        assert_eq!(judge(&bad), Ok(false));
        let failures = run_corpus(&[("x.json".into(), ok), ("x.json".into(), bad)]);
        assert_eq!(failures.len(), 2, "{failures:#?}");
        assert!(failures.iter().any(|f| f.contains("named twice")));
        assert!(failures.iter().any(|f| f.contains("should be valid")));
    }
}
