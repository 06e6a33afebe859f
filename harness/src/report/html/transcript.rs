//! The transcript of a case: requests, responses, SSE frames with their timing.

use std::fmt::Write as _;

use super::text::{
    HTML_EXCHANGE_LIMIT, HTML_FRAME_DATA_LIMIT, HTML_FRAME_LIMIT, HTML_STEP_LIMIT, HTML_TEXT_LIMIT,
    absent, capped, capped_to, esc, pre, pretty_json,
};
use crate::transcript::{BodyEnd, Exchange, FrameKind, Header, ResponseRecord, StepRecord};

pub(super) fn transcript(out: &mut String, steps: &[StepRecord], stop_at: usize) {
    let _ = writeln!(out, "<h3>Transcript ({} step(s))</h3>", steps.len());
    if steps.is_empty() {
        out.push_str("<p class=\"muted\">Nothing was sent.</p>\n");
        return;
    }
    let half = HTML_STEP_LIMIT / 2;
    for (index, step) in steps.iter().enumerate() {
        if steps.len() > HTML_STEP_LIMIT && index >= half && index < steps.len() - half {
            if index == half {
                let _ = writeln!(
                    out,
                    "<p class=\"note\">{} step(s) not shown (see report.json).</p>",
                    steps.len() - 2 * half
                );
            }
            continue;
        }
        let _ = writeln!(
            out,
            "<div class=\"step\"><h4>Step <code>{}</code> <span class=\"muted\">{} at <code>{}</code>{}</span></h4>",
            esc(&step.step),
            esc(&step.action),
            esc(&step.location),
            match (&step.not_taken, step.completed) {
                (Some(why), _) => format!(" — {}", esc(why)),
                (None, true) => String::new(),
                (None, false) => " — did not complete within the case's time".to_string(),
            }
        );
        if !step.bindings.is_empty() {
            let bindings: Vec<String> = step
                .bindings
                .iter()
                .map(|(name, value)| {
                    format!(
                        "<code>{} = {}</code>",
                        esc(name),
                        esc(&capped(&value.to_string()))
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "<p class=\"muted\">Bindings: {}</p>",
                bindings.join(", ")
            );
        }
        if !step.provider_calls.is_empty() {
            let calls: Vec<String> = step
                .provider_calls
                .iter()
                .map(|c| {
                    let role = c
                        .role
                        .as_deref()
                        .map(|r| format!(" ({})", esc(r)))
                        .unwrap_or_default();
                    format!(
                        "<code>{}</code> @ <code>{}</code>{role}: {}",
                        esc(&c.script),
                        esc(&c.instance),
                        c.count
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "<p class=\"muted\">Fake-provider calls: {}</p>",
                calls.join("; ")
            );
        }
        let total = step.exchanges.len();
        let half = HTML_EXCHANGE_LIMIT / 2;
        for (index, exchange) in step.exchanges.iter().enumerate() {
            if total > HTML_EXCHANGE_LIMIT && index >= half && index < total - half {
                if index == half {
                    let _ = writeln!(
                        out,
                        "<p class=\"note\">{} exchange(s) not shown (see report.json).</p>",
                        total - 2 * half
                    );
                }
                continue;
            }
            if out.len() >= stop_at {
                let _ = writeln!(
                    out,
                    "<p class=\"note\">The rest of this transcript is not shown: the page reached its size budget (see report.json).</p></div>"
                );
                return;
            }
            exchange_html(out, exchange, index + 1, total);
        }
        out.push_str("</div>\n");
    }
}

fn exchange_html(out: &mut String, exchange: &Exchange, number: usize, total: usize) {
    let request = &exchange.request;
    let counter = if total > 1 {
        format!(" <span class=\"muted\">#{number}/{total}</span>")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "<div class=\"exchange\"><div class=\"request-line\"><span class=\"method\">{}</span> <code>{}</code>{counter} \
         <span class=\"muted\">sent at +{} ms</span></div>",
        esc(&request.method),
        esc(&request.url),
        exchange.sent_at_ms
    );
    headers(out, &request.headers);
    if let Some(body) = &request.body {
        out.push_str(&pre(body));
    }
    if let Some(error) = &exchange.transport_error {
        let _ = writeln!(
            out,
            "<div class=\"box {}\"><strong>{}</strong>: {}</div>",
            if error.unreachable { "error" } else { "fail" },
            if error.unreachable {
                "Target unreachable"
            } else {
                "No response"
            },
            esc(&error.message)
        );
    }
    if let Some(response) = &exchange.response {
        response_html(out, response);
    }
    out.push_str("</div>\n");
}

fn response_html(out: &mut String, response: &ResponseRecord) {
    let end = match &response.end {
        BodyEnd::ServerClosed => "closed by the server".to_string(),
        BodyEnd::ClientStopped => "stopped by the harness".to_string(),
        BodyEnd::Timeout => "timed out (the server kept it open)".to_string(),
        BodyEnd::Broken(detail) => format!("broken: {}", esc(detail)),
        BodyEnd::TooLarge(detail) => format!("too large: {}", esc(detail)),
    };
    let _ = writeln!(
        out,
        "<div class=\"response-line\"><span class=\"status s{}\">{}</span> \
         <span class=\"muted\">headers at {} ms · {} body byte(s){} · {end} at {} ms</span></div>",
        (response.status / 100).min(5),
        response.status,
        response.headers_at_ms,
        response.body_bytes,
        if response.body_utf8 {
            ""
        } else {
            " · not valid UTF-8"
        },
        response.end_at_ms
    );
    headers(out, &response.headers);
    if response.frames.is_empty() {
        if !response.body.is_empty() {
            match &response.json {
                Some(json) if response.body.len() <= HTML_TEXT_LIMIT => {
                    out.push_str(&pre(&pretty_json(json)))
                }
                _ => out.push_str(&pre(&response.body)),
            }
        }
    } else {
        frames(out, response);
        if !response.body.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary class=\"muted\">Raw stream text</summary>{}</details>",
                pre(&response.body)
            );
        }
    }
    if let Some(partial) = &response.trailing_partial_frame {
        let _ = writeln!(
            out,
            "<div class=\"box fail\"><strong>Truncated final frame</strong> (bytes after the last complete frame, with no blank line):{}</div>",
            pre(partial)
        );
    }
}

fn frames(out: &mut String, response: &ResponseRecord) {
    let events = response.events().count();
    let comments = response.frames.len() - events;
    let _ = writeln!(
        out,
        "<table class=\"frames\"><tr><th>#</th><th>ms after send</th><th>+gap ms</th><th>id:</th><th>event:</th><th>data:</th></tr>"
    );
    let mut previous = response.headers_at_ms;
    let mut number = 0;
    for frame in response.frames.iter().take(HTML_FRAME_LIMIT) {
        let gap = frame.at_ms.saturating_sub(previous);
        previous = frame.at_ms;
        match &frame.kind {
            FrameKind::Event {
                id,
                event,
                data,
                retry,
                ..
            } => {
                number += 1;
                let id = match id.as_deref() {
                    None => absent("(no id)"),
                    Some("") => absent("\"\" (empty id)"),
                    Some(id) => format!("<code>{}</code>", esc(id)),
                };
                let event = event.as_deref().map_or_else(|| absent("(none)"), esc);
                let retry = retry
                    .map(|r| format!(" <span class=\"muted\">retry: {r}</span>"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "<tr><td>{number}</td><td>{}</td><td>+{gap}</td><td>{id}</td><td>{event}{retry}</td><td class=\"data\">{}</td></tr>",
                    frame.at_ms,
                    esc(&capped_to(data, HTML_FRAME_DATA_LIMIT))
                );
            }
            FrameKind::Comment { text } => {
                let _ = writeln!(
                    out,
                    "<tr class=\"comment\"><td></td><td>{}</td><td>+{gap}</td><td colspan=\"3\">: {} <span class=\"muted\">(comment / keep-alive)</span></td></tr>",
                    frame.at_ms,
                    esc(&capped_to(text, HTML_FRAME_DATA_LIMIT))
                );
            }
        }
    }
    out.push_str("</table>\n");
    let _ = write!(
        out,
        "<p class=\"note\">{events} event frame(s), {comments} comment(s)."
    );
    if response.frames.len() > HTML_FRAME_LIMIT {
        let _ = write!(
            out,
            " {} frame(s) not shown (see report.json).",
            response.frames.len() - HTML_FRAME_LIMIT
        );
    }
    out.push_str("</p>\n");
}

fn headers(out: &mut String, headers: &[Header]) {
    if headers.is_empty() {
        return;
    }
    out.push_str("<table class=\"headers\">");
    for header in headers {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td></tr>",
            esc(&header.name),
            esc(&capped(&header.value))
        );
    }
    out.push_str("</table>\n");
}
