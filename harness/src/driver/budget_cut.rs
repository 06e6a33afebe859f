//! What a step the case's budget cut short was waiting for, from what it recorded: the text the
//! step's ERROR (or its precondition's BLOCKED) gives, so an operator reads whether the host
//! sent nothing, was still sending, or kept answering what the step was waiting to change
//! (a run that never became terminal names the status it stayed in).

use crate::transcript::{BodyEnd, Exchange, StepRecord};

/// What the step was waiting for when the case's budget ran out.
pub(crate) fn pending(record: &StepRecord) -> String {
    let Some(last) = record.exchanges.last() else {
        return "no request was sent yet".into();
    };
    let request = format!("`{} {}`", last.request.method, path_of(last));
    let tries = match record.exchanges.len() {
        1 => String::new(),
        n => format!(" (the last of {n} requests)"),
    };
    match (&last.response, &last.transport_error) {
        (None, Some(transport)) => format!("{request}{tries} got no answer: {}", transport.message),
        (None, None) => {
            format!("no answer yet to {request}{tries}")
        }
        (Some(response), _) if !response.headers_received() => format!(
            "the host had sent no response headers for {request}{tries} {} ms after it was sent",
            response.end_at_ms
        ),
        (Some(response), _) if response.end == BodyEnd::Timeout => format!(
            "the host was still sending its answer to {request}{tries} (status {}, {} byte(s) read)",
            response.status, response.body_bytes
        ),
        (Some(response), _) => {
            let status_member = response
                .json
                .as_ref()
                .and_then(|body| body.get("status"))
                .and_then(|status| status.as_str())
                .map(|status| format!(", its `status` `{status}`"))
                .unwrap_or_default();
            format!(
                "the last answer to {request}{tries} was status {}{status_member}",
                response.status
            )
        }
    }
}

/// The request's path and query (the target's base URL is the same for every request).
fn path_of(exchange: &Exchange) -> String {
    let url = &exchange.request.url;
    reqwest::Url::parse(url).map_or_else(
        |_| url.clone(),
        |parsed| match parsed.query() {
            Some(query) => format!("{}?{query}", parsed.path()),
            None => parsed.path().to_string(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{RequestRecord, ResponseRecord};

    fn record(exchanges: Vec<Exchange>) -> StepRecord {
        StepRecord {
            step: "wait".into(),
            location: "/steps/1".into(),
            action: "wait_terminal".into(),
            exchanges,
            bindings: Vec::new(),
            completed: false,
            provider_calls: Vec::new(),
            exchanges_dropped: 0,
            refusals_waited_out: 0,
            not_taken: None,
        }
    }

    fn exchange(response: Option<ResponseRecord>) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "GET".into(),
                url: "http://127.0.0.1:9/runs/r1/events?streamMode=debug".into(),
                headers: Vec::new(),
                body: None,
            },
            response,
            transport_error: None,
            sent_at_ms: 10,
        }
    }

    fn response(status: u16, end: BodyEnd, json: Option<serde_json::Value>) -> ResponseRecord {
        ResponseRecord {
            status,
            headers: Vec::new(),
            headers_at_ms: 0,
            body: String::new(),
            body_bytes: 0,
            body_utf8: true,
            json,
            frames: Vec::new(),
            trailing_partial_frame: None,
            end,
            end_at_ms: 4000,
            excerpt: None,
            folded: None,
            run_end: None,
        }
    }

    #[test]
    fn a_host_that_sent_no_headers_is_told_apart_from_one_still_sending() {
        let silent = record(vec![exchange(Some(response(0, BodyEnd::Timeout, None)))]);
        assert_eq!(
            pending(&silent),
            "the host had sent no response headers for `GET /runs/r1/events?streamMode=debug` 4000 ms after it was sent"
        );
        let sending = record(vec![exchange(Some(response(200, BodyEnd::Timeout, None)))]);
        assert!(
            pending(&sending).starts_with(
                "the host was still sending its answer to `GET /runs/r1/events?streamMode=debug` (status 200"
            ),
            "{}",
            pending(&sending)
        );
    }

    #[test]
    fn a_repeated_request_names_its_last_answer_and_the_status_it_held() {
        let running = Some(serde_json::json!({"status": "running"}));
        let answers = vec![
            exchange(Some(response(200, BodyEnd::ServerClosed, running.clone()))),
            exchange(Some(response(200, BodyEnd::ServerClosed, running))),
        ];
        assert_eq!(
            pending(&record(answers)),
            "the last answer to `GET /runs/r1/events?streamMode=debug` (the last of 2 requests) was status 200, its `status` `running`"
        );
        assert_eq!(pending(&record(Vec::new())), "no request was sent yet");
    }
}
