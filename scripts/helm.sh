#!/usr/bin/env bash
# Installs the Go tools the Helm chart's tests use (make test-helm), under build/:
#   build/tools/bin/helm             Helm v4 (helm.sh/helm/v4/cmd/helm), a Go module
#                                    built here: go install, only when missing or
#                                    another version (a few minutes the first time)
#   build/tools/bin/manifest-check   tests/helm: decodes rendered manifests into the
#                                    Kubernetes and prometheus-operator Go types
# Go's module and build caches stay in build/go. Quick no-op when both are there.
# Environment: GO (the go command; else go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
HELM_VERSION=v4.3.2
BIN=$ROOT/build/tools/bin

fail() {
  echo "helm.sh: $*" >&2
  exit 1
}

GO=${GO:-$(command -v go || true)}
[ -n "$GO" ] || GO=/usr/local/go/bin/go
[ -x "$GO" ] || fail "no Go toolchain at $GO (set GO, or put go on PATH): Helm and the manifest checker are built from Go modules"

# Everything Go writes stays under build/ (rm -rf build removes it: -modcacherw
# leaves the module cache writable). GOTOOLCHAIN=local: a module that needs a
# newer Go says so instead of fetching one.
export GOPATH=$ROOT/build/go
export GOMODCACHE=$GOPATH/pkg/mod
export GOCACHE=$GOPATH/cache
export GOBIN=$BIN
export GOFLAGS="-mod=mod -modcacherw -buildvcs=false"
export GOTOOLCHAIN=local
mkdir -p "$BIN"

installed=$("$BIN/helm" version --template '{{.Version}}' 2>/dev/null || true)
if [ "$installed" != "$HELM_VERSION" ]; then
  echo "helm.sh: building helm $HELM_VERSION with $("$GO" version) (minutes the first time)" >&2
  # -X: the version `helm version` says, as Helm's own release build sets it.
  "$GO" install -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" ||
    fail "go install helm.sh/helm/v4/cmd/helm@$HELM_VERSION failed (above: the Go module proxy unreachable, or the module needs a newer Go than $("$GO" env GOVERSION)?)"
  installed=$("$BIN/helm" version --template '{{.Version}}' 2>/dev/null) ||
    fail "$BIN/helm was built but does not run"
  [ "$installed" = "$HELM_VERSION" ] || fail "$BIN/helm says it is $installed, not $HELM_VERSION"
fi

# go build relinks only when a source or dependency changed.
(cd tests/helm && "$GO" build -o "$BIN/manifest-check" .) ||
  fail "building tests/helm (the manifest checker) failed (above)"
