//! Expanding a step's request (or SSE subscription) into what the driver sends: the target's
//! base URL and headers, the principal's credential, the negotiated protocol version.

use std::time::Duration;

use super::context::StepContext;
use crate::case::{CaseSurface, Principal, RequestSpec, StreamSpec};
use crate::driver::http::{PreparedRequest, StopCondition};
use crate::driver::run_ends::{CloseAfterRunEnd, RunLookout};
use crate::mock_provider_seat::MockProviderSeat;
use crate::template::TemplateError;

/// How often a stream read to its close asks its run's poll whether the run ended (before
/// `--time-scale`).
const LOOKOUT_EVERY: Duration = Duration::from_secs(1);

impl StepContext<'_> {
    /// Expands an SSE subscription: the request (with `Accept: text/event-stream` unless the
    /// case set one) and its stop condition (windows scaled by `--time-scale`).
    pub(crate) fn prepare_stream(
        &self,
        stream: &StreamSpec,
        default_principal: Principal,
    ) -> Result<(PreparedRequest, StopCondition), TemplateError> {
        let mut request = stream.to_request();
        if !request
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("accept"))
        {
            request
                .headers
                .insert("Accept".into(), "text/event-stream".into());
        }
        let prepared = self.prepare(&request, default_principal)?;
        let stop = match &stream.until {
            None if stream.run_ended => StopCondition {
                duration: Some(self.close_window()),
                ..StopCondition::default()
            },
            None => StopCondition::default(),
            Some(until) => StopCondition {
                frames: until.frames,
                event: match &until.event {
                    None => None,
                    Some(selector) => Some(self.scope.interpolate(selector)?),
                },
                duration: match &until.duration_ms {
                    None if stream.run_ended => Some(self.close_window()),
                    None => None,
                    Some(v) => self.scope.expand(v)?.as_f64().map(|ms| {
                        Duration::from_secs_f64(ms.max(0.0) / 1000.0)
                            .mul_f64(self.time_scale.max(0.01))
                    }),
                },
                ..StopCondition::default()
            },
        };
        // The events chapter: the host closes the stream after the run's terminal event. A
        // stream read to its close on a run not known to have ended keeps a lookout on it.
        let lookout = (stream.until.is_none() && !stream.run_ended)
            .then(|| {
                RunLookout::of(
                    &prepared.url,
                    &prepared.headers,
                    LOOKOUT_EVERY.mul_f64(self.time_scale.max(0.01)),
                )
            })
            .flatten()
            .map(Box::new);
        let stop = StopCondition {
            close_after_terminal: (self.surface == CaseSurface::Openwop).then(|| {
                CloseAfterRunEnd {
                    grace: self.close_window(),
                    run: CloseAfterRunEnd::run_of(&prepared.url),
                    ends: self.run_ends.clone(),
                    lookout,
                }
            }),
            ..stop
        };
        Ok((prepared, stop))
    }

    /// Expands a request and builds it for the driver.
    pub(crate) fn prepare(
        &self,
        request: &RequestSpec,
        default_principal: Principal,
    ) -> Result<PreparedRequest, TemplateError> {
        let scope = self.scope;
        let path = scope.interpolate(&request.path)?;
        let mut url = match reqwest::Url::parse(&format!("{}{}", self.target.base_url, path)) {
            Ok(url) => url,
            // A path the case writes is linted; one that expands to no path took a value the
            // host sent (an address discovery declares) that is not one: the case cannot go on.
            Err(e) if request.path.contains("${") => {
                let mut expressions = Vec::new();
                crate::template::expressions_in_text(&request.path, &mut expressions);
                return Err(TemplateError::Missing(
                    expressions.join("}`, `${"),
                    format!(
                        "what the host sent is not a request path: `{path}` (read as a URL: {e})"
                    ),
                ));
            }
            Err(e) => {
                return Err(TemplateError::Syntax(
                    request.path.clone(),
                    format!("not a valid URL path: {e}"),
                ));
            }
        };
        if !request.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in &request.query {
                pairs.append_pair(name, &scope.interpolate(value)?);
            }
        }
        let mut headers: Vec<(String, String)> = self
            .target
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect();
        // Every request on OpenWOP's unversioned paths carries the protocol version negotiated
        // from discovery (a case's own header wins); `/v1/…` paths (surface X, and OpenWOP v1's
        // own) never do: upstream refuses a `/v1/` path with another major.
        if let Some(version) = crate::probe::negotiated_version(&self.target.facts)
            .filter(|_| !path.starts_with("/v1/"))
        {
            headers.push((crate::probe::VERSION_HEADER.into(), version.to_string()));
        }
        let principal = request.auth.unwrap_or(default_principal);
        for header in self.target.principal_headers(principal) {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&header.name));
            headers.push((header.name, header.value));
        }
        for (name, value) in &request.headers {
            let value = scope.interpolate(value)?;
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            headers.push((name.clone(), value));
        }
        let has_content_type = headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
        let mut body = match (&request.json, &request.body) {
            (Some(json), _) => {
                if !has_content_type {
                    headers.push(("Content-Type".into(), "application/json".into()));
                }
                let mut json = scope.expand(json)?;
                // A run's mock provider at the seat the host reads (the probe's fact).
                if request.method.eq_ignore_ascii_case("POST")
                    && path.split('?').next() == Some("/runs")
                {
                    MockProviderSeat::of(&self.target.facts).write(&mut json);
                }
                Some(serde_json::to_vec(&json).unwrap_or_default())
            }
            (None, Some(text)) => Some(scope.interpolate(text)?.into_bytes()),
            (None, None) => None,
        };
        if let Some(size) = request.body_filler_bytes {
            // Pad with leading whitespace, which keeps a JSON body valid JSON.
            let mut padded =
                vec![b' '; (size as usize).saturating_sub(body.as_ref().map_or(0, Vec::len))];
            padded.extend(body.take().unwrap_or_default());
            body = Some(padded);
        }
        // A host often refuses a request without credentials before reading its body; one
        // that then keeps the connection reads the unread body as the head of the next request
        // (a keep-alive framing bug outside the chapter, seen on two independent hosts). Such
        // a request's connection ends with its answer, so the case's next request is read.
        if body.is_some()
            && matches!(principal, Principal::None | Principal::Invalid)
            && !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("connection"))
        {
            headers.push(("Connection".into(), "close".into()));
        }
        let method = reqwest::Method::from_bytes(request.method.to_ascii_uppercase().as_bytes())
            .map_err(|_| {
                TemplateError::Syntax(request.method.clone(), "not an HTTP method".into())
            })?;
        Ok(PreparedRequest {
            method,
            url: url.to_string(),
            headers,
            body,
        })
    }
}
