//! One executor per step action: each performs its action against the target within a
//! [`StepContext`] and returns the step's record (the case run judges it). The structural
//! actions (`parallel`, `repeat`, `generate`) run their own steps in the case run.

mod come_back;
mod concurrent;
mod context;
mod poll;
mod poll_pages;
mod poll_until;
mod prepare;
mod request;
mod stream;
mod wait_terminal;

pub(crate) use come_back::{ComeBack, come_back};
pub(crate) use concurrent::run as concurrent;
pub(crate) use context::StepContext;
pub(crate) use poll_until::run as poll_until;
pub(crate) use request::run as request;
pub(crate) use stream::run as stream;
pub(crate) use wait_terminal::run as wait_terminal;
