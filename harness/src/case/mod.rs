//! Conformance cases: the file format ([`model`]), loading with lint ([`load`]) and the
//! robustness rules lint and the engine enforce ([`robustness`]); the closed vocabulary of
//! `needs` ([`needs`]) and of the global seams a case writes ([`shared_seam`]).

pub mod exactly_one;
pub mod load;
pub mod model;
pub mod needs;
pub mod robustness;
pub mod shared_seam;
mod surface;
mod upstream_seam;
mod written;

pub use exactly_one::NotExactlyOne;
pub use load::{
    Corpus, CorpusFiles, LintProblem, LoadCasesError, LoadedCase, digest_files, is_case_file,
    lint_case, load_corpus,
};
pub use model::*;
pub use surface::CaseSurface;
pub use upstream_seam::UpstreamSeam;
