//! Integration tests of `mock-provider`, as a plain HTTP client (and the official SDKs) see it.

mod async_media;
mod concurrency;
mod decode;
mod faults;
mod responses;
mod round_trip;
mod schema;
mod sdk;
mod sse;
mod standalone;
mod support;
mod timing;
mod verification;
