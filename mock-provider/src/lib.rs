//! Wiremock-based fake model providers (in progress).
