//! Conformance cases: the file format ([`model`]) and loading with lint ([`load`]).

pub mod exactly_one;
pub mod load;
pub mod model;

pub use exactly_one::NotExactlyOne;
pub use load::{Corpus, LintProblem, LoadCasesError, LoadedCase, lint_case, load_corpus};
pub use model::*;
