//! [`probed_runner`]: a case runner over a target once the harness's probe has read what the
//! host advertises, as `conformance run` builds one (the tests that drive cases in-process).

use std::sync::Arc;
use std::time::Duration;

use harness::run::{CaseRunner, ClientOptions, HttpDriver, Limits};
use harness::target::Target;

/// A runner over `target`, its capabilities read by the probe, at time scale 1 and proptest
/// seed 1, keeping no regressions.
pub(crate) async fn probed_runner(mut target: Target) -> CaseRunner {
    let driver = HttpDriver::new(&ClientOptions::default(), Limits::default()).unwrap();
    harness::target::probe(&driver, &target, Duration::from_secs(10))
        .await
        .apply_to(&mut target);
    CaseRunner {
        driver,
        target: Arc::new(target),
        time_scale: 1.0,
        proptest_seed: 1,
        regressions_dir: None,
    }
}
