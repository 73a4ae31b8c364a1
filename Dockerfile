# syntax=docker/dockerfile:1
# The mtkit image: the four tools as static binaries on distroless
# (no shell, no libc, runs as nonroot). deploy/kubernetes/ uses it.
#   docker build -t registry.example.com/mtkit:latest .
# The build needs no network beyond the Go module proxy.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/mtrun ./cmd/mtgen ./cmd/mtconvert ./cmd/mtstats

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
USER nonroot:nonroot
ENTRYPOINT ["mtrun"]
