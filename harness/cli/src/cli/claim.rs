//! Signed claims: `run --claim` writes one, `verify-claim` checks one, `claim-key` makes keys.

use std::collections::BTreeMap;
use std::path::Path;

use harness::case::CorpusFiles;
use harness::report::RunReport;
use harness::report::claim::{
    Claim, ClaimInputs, SignedClaim, badge_svg, parse_key, public_key_of, sha256_hex, summary_line,
};

use super::args::{ClaimKeyArgs, VerifyClaimArgs};
use super::corpus::{files, source};
use super::exit::{environment, usage};

/// The environment variable holding the claim's secret key.
pub const CLAIM_KEY_ENV: &str = "CONFORMANCE_CLAIM_KEY";

/// The claim's secret key: from the file, else the environment (a usage error when neither).
pub fn secret_key(file: Option<&Path>) -> anyhow::Result<[u8; 32]> {
    let text = match file {
        Some(path) => std::fs::read_to_string(path).map_err(|e| {
            usage(format!(
                "failed to read the claim key {}: {e}",
                path.display()
            ))
        })?,
        None => std::env::var(CLAIM_KEY_ENV).map_err(|_| {
            usage(format!(
                "--claim needs a secret key: --claim-key-file FILE or ${CLAIM_KEY_ENV}"
            ))
        })?,
    };
    parse_key(&text, "the claim's secret key").map_err(|e| usage(e.to_string()))
}

/// SHA-256 of the embedded requirement registry.
fn registry_digest() -> String {
    sha256_hex(spec::requirements::EMBEDDED_REGISTRY_JSON.as_bytes())
}

/// Writes the signed claim of a run, its badge and its one-line summary.
pub fn write_claim(
    report: &RunReport,
    corpus: &CorpusFiles,
    discovery: &BTreeMap<String, String>,
    claim_file: &Path,
    secret: &[u8; 32],
    report_dir: &Path,
) -> anyhow::Result<()> {
    let mut cases = BTreeMap::new();
    for case in report.cases.iter().filter(|c| !c.file.is_empty()) {
        if let Some(bytes) = corpus.get(&case.file) {
            cases.insert(case.file.clone(), sha256_hex(bytes));
        }
    }
    let inputs = ClaimInputs {
        cases,
        registry: registry_digest(),
        discovery: discovery.clone(),
    };
    let claim = Claim::of_run(report, inputs, spec::requirements::registry())
        .map_err(|e| environment(e.to_string()))?;
    let signed = claim.sign(secret).map_err(|e| environment(e.to_string()))?;
    let text = serde_json::to_string_pretty(&signed)? + "\n";
    std::fs::write(claim_file, text)
        .map_err(|e| environment(format!("failed to write {}: {e}", claim_file.display())))?;
    let badge = report_dir.join("badge.svg");
    std::fs::write(&badge, badge_svg(&signed.claim))
        .map_err(|e| environment(format!("failed to write {}: {e}", badge.display())))?;
    let summary = report_dir.join("claim-summary.md");
    std::fs::write(&summary, summary_line(&signed.claim) + "\n")
        .map_err(|e| environment(format!("failed to write {}: {e}", summary.display())))?;
    eprintln!(
        "wrote the claim {} (signer {}), {} and {}",
        claim_file.display(),
        signed.signature.public_key,
        badge.display(),
        summary.display()
    );
    Ok(())
}

/// `conformance verify-claim`: 0 verified, 1 refused (every reason printed), 2 usage.
pub fn verify(args: &VerifyClaimArgs) -> anyhow::Result<u8> {
    let key_text = if Path::new(&args.key).is_file() {
        std::fs::read_to_string(&args.key)
            .map_err(|e| usage(format!("failed to read {}: {e}", args.key)))?
    } else {
        args.key.clone()
    };
    let key = parse_key(&key_text, "--key").map_err(|e| usage(e.to_string()))?;
    let text = std::fs::read(&args.file)
        .map_err(|e| usage(format!("failed to read {}: {e}", args.file.display())))?;
    let signed: SignedClaim = match serde_json::from_slice(&text) {
        Ok(signed) => signed,
        Err(e) => {
            crate::outln!(
                "refused: {} does not read as a claim ({e}): it changed, or it is not a claim",
                args.file.display()
            );
            return Ok(1);
        }
    };
    let mut problems = signed.verify_signature(&key).problems;
    if problems.is_empty() {
        // The signed claim is authentic: now what it names against what is here.
        if signed.claim.digests.registry != registry_digest() {
            problems.push(format!(
                "the requirement registry changed: the claim ran sha256 {}, this harness has {}",
                signed.claim.digests.registry,
                registry_digest()
            ));
        }
        let source = source(&args.corpus);
        let corpus = files(&source)?;
        for (file, digest) in &signed.claim.digests.cases {
            match corpus.get(file) {
                None => problems.push(format!(
                    "case file `{file}` the claim names is not in {}",
                    source.describe()
                )),
                Some(bytes) if sha256_hex(bytes) != *digest => problems.push(format!(
                    "case file `{file}` changed: the claim ran sha256 {digest}, {} has {}",
                    source.describe(),
                    sha256_hex(bytes)
                )),
                Some(_) => {}
            }
        }
        let blocked = signed.claim.blocked_musts();
        if !blocked.is_empty() {
            problems.push(format!(
                "the claim has {} MUST requirement(s) BLOCKED (not judged): {}",
                blocked.len(),
                blocked.join(", ")
            ));
        }
    }
    if !problems.is_empty() {
        crate::outln!("refused: {}", args.file.display());
        for problem in &problems {
            crate::outln!("  - {problem}");
        }
        return Ok(1);
    }
    crate::outln!("verified: {}", summary_line(&signed.claim));
    if let Some(path) = &args.badge {
        std::fs::write(path, badge_svg(&signed.claim))
            .map_err(|e| environment(format!("failed to write {}: {e}", path.display())))?;
    }
    Ok(0)
}

/// `conformance claim-key`: a fresh key pair; the secret file is created new with mode 0600.
pub fn make_key(args: &ClaimKeyArgs) -> anyhow::Result<u8> {
    let secret: [u8; 32] = rand::random();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    {
        use std::io::Write;
        let mut file = options.open(&args.secret).map_err(|e| {
            usage(format!(
                "failed to create {} (it must not exist): {e}",
                args.secret.display()
            ))
        })?;
        file.write_all(format!("{}\n", hex::encode(secret)).as_bytes())
            .map_err(|e| environment(format!("failed to write {}: {e}", args.secret.display())))?;
    }
    let public = public_key_of(&secret);
    std::fs::write(&args.public, format!("{public}\n"))
        .map_err(|e| environment(format!("failed to write {}: {e}", args.public.display())))?;
    crate::outln!(
        "wrote the secret key {} and the public key {} ({public})",
        args.secret.display(),
        args.public.display()
    );
    Ok(0)
}
