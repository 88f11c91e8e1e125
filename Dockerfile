# The capslint image: the static (musl) binary alone, at /capslint, for copying into compute images:
#
#   COPY --from=ghcr.io/capslint/capslint:0.1.0 /capslint /usr/local/bin/capslint
#
# The release workflow builds it for linux/amd64 and linux/arm64 from the binaries it built, laid out as
# dist/image-<arch>/capslint; nothing is compiled here.
FROM scratch
ARG TARGETARCH
COPY --chmod=0755 dist/image-${TARGETARCH}/capslint /capslint
ENTRYPOINT ["/capslint"]
