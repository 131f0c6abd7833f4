# The approvals bot as a container image: a static binary on a distroless
# base, run as a non-root user, with the SQLite store on a volume.
#
#   docker build -t approvalsbot .
#   docker run --read-only --tmpfs /tmp -v approvalsbot-data:/var/lib/approvalsbot \
#     -v "$PWD/bot.yaml:/etc/approvalsbot/bot.yaml:ro" --env-file bot.env \
#     -p 8080:8080 -p 127.0.0.1:9090:9090 --stop-timeout 20 approvalsbot
#
# bot.yaml then says listen: ":8080", listen_private: ":9090" and
# store.dsn: "file:/var/lib/approvalsbot/bot.db". 8080 is the public
# listener (Slack, Discord, the decision page, health); 9090 takes the job
# backend's events and Prometheus' scrapes (and health), and is published
# only where those reach it, never to the internet.
# The bot stops within its stop_timeout (10s by default) after SIGTERM;
# give the container longer than that before it is killed (--stop-timeout,
# Compose's stop_grace_period, Kubernetes' terminationGracePeriodSeconds).

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
# The build stamp (`bot version`: the commit, and whether the tree had
# changes not committed) is the go command's, read from .git. So the
# context is the whole checkout: .git and every tracked file
# (.dockerignore leaves out only what git does not track), or git would
# see the files left out as deleted and the image would claim changes the
# checkout does not have. Passing the commit as a build argument instead
# would need the builder to supply it by hand, and could name a commit
# other than the source built. In a `git worktree` checkout .git is a file
# naming a directory outside the context: git cannot read it here, and
# the binary is built without the stamp (bot version: "commit unknown")
# rather than not at all. Build from a clone to have it.
COPY . .
RUN vcs=true; [ -d .git ] || vcs=false; \
    CGO_ENABLED=0 go build -buildvcs=$vcs -trimpath -ldflags="-s -w" -o /out/bot ./cmd/bot \
 && mkdir -p /out/data && /out/bot version

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bot /usr/local/bin/bot
# The store's directory, owned by the image's non-root user (65532) and
# private to it: the bot refuses a database others may read.
COPY --from=build --chown=65532:65532 --chmod=0700 /out/data /var/lib/approvalsbot
USER 65532:65532
WORKDIR /var/lib/approvalsbot
VOLUME ["/var/lib/approvalsbot"]
EXPOSE 8080 9090
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/bot"]
CMD ["serve", "--config", "/etc/approvalsbot/bot.yaml"]
