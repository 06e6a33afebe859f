# syntax=docker/dockerfile:1
# A static `conformance` binary (musl) in an image with nothing else; the corpus is embedded.
#
#   docker build -t conformance .
#   docker run --rm --network host conformance run --target http://127.0.0.1:8080
#
# The build steps between the markers are README.md's install steps, word for word (a test
# compares them).
FROM rust:1.95-alpine AS build
# A C toolchain for the bundled SQLite and the TLS library; CA certificates for the image.
RUN apk add --no-cache build-base cmake perl ca-certificates
WORKDIR /src
COPY . .
# install-steps:begin
RUN cargo install --locked --path harness/cli
# install-steps:end
# A smoke test (the empty image below runs only a static binary); a temporary directory.
RUN /usr/local/cargo/bin/conformance --version && mkdir -p /out/tmp && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /usr/local/cargo/bin/conformance /conformance
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/tmp /tmp
WORKDIR /work
ENTRYPOINT ["/conformance"]
CMD ["--help"]
