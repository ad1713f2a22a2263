#!/usr/bin/env bash
# Builds the official Kubernetes control plane (kube-apiserver, kube-controller-manager, kube-scheduler) and etcd
# from their Go modules, once, into a cache outside the tree keyed by version. Prints the bin directory on stdout;
# progress goes to stderr and the compiler's output to <cache>/build.log.
#
# Why a build: no package mirror reachable here ships these binaries, but the Go module proxy holds the sources.
# k8s.io/kubernetes's own go.mod points the k8s.io staging modules at ./staging, which a dependent module cannot
# use, so the generated go.mod pins each of them by `replace` to the matching v0.Y.Z release.
#
# With --check it builds nothing: prints the bin directory when the build is complete, else says so and exits 3.
# With --print-go it prints the Go it would build with (fetching one if needed) and exits.
#
# Environment: NODESMITH_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodesmith), NS_K8S_VERSION,
# NS_ETCD_VERSION (defaults below; etcd is the version k8s.io/kubernetes itself requires), NS_GO (a go binary to
# use, or "fetch" to ignore the installed ones and fetch the pinned toolchain).
set -euo pipefail

k8s_version=${NS_K8S_VERSION:-v1.34.4}
etcd_version=${NS_ETCD_VERSION:-v3.6.4}
go_min_minor=24                      # k8s.io/kubernetes v1.34 declares `go 1.24.0`
go_fallback=go1.25.14                # fetched as the golang.org/toolchain module when no recent Go is present
cache=${NODESMITH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodesmith}
out=$cache/k8s-$k8s_version
bin=$out/bin
stamp=$out/.complete
want="kubernetes=$k8s_version etcd=$etcd_version"

say() { echo "build-control-plane: $*" >&2; }

if [ "${1:-}" != --print-go ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then echo "$bin"; exit 0; fi
if [ "${1:-}" = --check ]; then
  say "the control plane ($want) is not built in $out; run test/kube/build-control-plane.sh (scripts/test.sh does)"
  exit 3
fi


go_minor() { "$1" env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p'; }

# A Go toolchain as a module zip from the proxy, checked against the checksum database like `go mod download` does.
fetch_toolchain() {
  local proxy mod zip dir sum
  proxy=${GOPROXY:-https://proxy.golang.org}; proxy=${proxy%%,*}; proxy=${proxy%%|*}
  [ "$proxy" = direct ] || [ "$proxy" = off ] && proxy=https://proxy.golang.org
  mod=v0.0.1-$go_fallback.linux-$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/')
  dir=$cache/toolchain/$mod
  mkdir -p "$cache/toolchain"
  exec 8>"$cache/toolchain/$mod.lock"
  flock 8
  if [ -x "$dir/bin/go" ]; then echo "$dir/bin/go"; return; fi
  zip=$cache/toolchain/$mod.zip
  rm -rf "$dir.tmp"
  say "no Go >= 1.$go_min_minor found; fetching golang.org/toolchain@$mod from $proxy"
  curl -fsSL --retry 3 -o "$zip" "$proxy/golang.org/toolchain/@v/$mod.zip" ||
    { say "downloading $proxy/golang.org/toolchain/@v/$mod.zip failed"; return 1; }
  # The checksum database through the proxy, as the go command asks it (GOSUMDB sum.golang.org).
  sum=$(curl -fsSL --retry 3 "$proxy/sumdb/sum.golang.org/lookup/golang.org/toolchain@$mod" |
        awk -v m="golang.org/toolchain $mod" '$1" "$2==m {print $3}')
  [ -n "$sum" ] || { say "sum.golang.org has no checksum for golang.org/toolchain@$mod"; return 1; }
  python3 - "$zip" "$dir" "$sum" "golang.org/toolchain@$mod/" >&2 <<'PY' || return 1
import base64, hashlib, os, stat, sys, zipfile
zpath, dest, want, prefix = sys.argv[1:]
with zipfile.ZipFile(zpath) as z:
    names = sorted(n for n in z.namelist() if not n.endswith("/"))
    # dirhash "h1:": sha256 of the sorted "sha256  name\n" lines, as golang.org/x/mod/sumdb/dirhash.Hash1.
    summary = "".join("%s  %s\n" % (hashlib.sha256(z.read(n)).hexdigest(), n) for n in names)
    got = "h1:" + base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode()
    if got != want:
        sys.exit("toolchain checksum mismatch: got %s, sum.golang.org says %s" % (got, want))
    tmp = dest + ".tmp"
    for n in names:
        if not n.startswith(prefix):
            continue
        path = os.path.join(tmp, n[len(prefix):])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(z.read(n))
        rel = n[len(prefix):]
        if rel.startswith("bin/") or rel.startswith("pkg/tool/"):
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.rename(tmp, dest)
PY
  rm -f "$zip"
  echo "$dir/bin/go"
}

gobin=""
candidates=("$(command -v go || true)" /usr/local/go/bin/go /usr/lib/go/bin/go)
case "${NS_GO:-}" in
  "") ;;
  fetch) candidates=() ;;
  *) candidates=("$NS_GO") ;;
esac
for c in "${candidates[@]}"; do
  [ -n "$c" ] && [ -x "$c" ] || continue
  m=$(go_minor "$c"); [ -n "$m" ] && [ "$m" -ge "$go_min_minor" ] && { gobin=$c; break; }
done
[ -n "$gobin" ] || gobin=$(fetch_toolchain)
if [ "${1:-}" = --print-go ]; then echo "$gobin"; exit 0; fi

mkdir -p "$out"
# Two test runs starting at once must not build twice into the same directory.
exec 9>"$cache/k8s-$k8s_version.lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then echo "$bin"; exit 0; fi
log=$out/build.log
: >"$log"
say "using $("$gobin" env GOVERSION) ($gobin); log in $log"

export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOMAXPROCS=2 CGO_ENABLED=0 GOWORK=off
start=$(date +%s)

# --- kube-apiserver, kube-controller-manager, kube-scheduler
src=$out/src/kubernetes
mkdir -p "$src"
modfile=$("$gobin" mod download -json "k8s.io/kubernetes@$k8s_version" 2>>"$log" |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
staging_version=v0.${k8s_version#v1.}
{
  echo "// Generated by test/kube/build-control-plane.sh: builds the control plane, not part of nodesmith."
  echo "module nodesmith.test/controlplane"
  echo
  echo "go 1.$go_min_minor.0"
  echo
  echo "require k8s.io/kubernetes $k8s_version"
  echo
  echo "replace ("
  sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\t\1 => \1 '"$staging_version"'#p' "$modfile"
  echo ")"
} >"$src/go.mod"
grep -q 'k8s.io/apimachinery => k8s.io/apimachinery' "$src/go.mod" ||
  { say "no staging replace lines found in $modfile"; exit 1; }
minor=${k8s_version#v1.}; minor=${minor%%.*}
vpkg="-X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1"
vpkg="$vpkg -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
vpkg="$vpkg -X k8s.io/component-base/version.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
vpkg="$vpkg -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version -X k8s.io/client-go/pkg/version.gitMajor=1"
vpkg="$vpkg -X k8s.io/client-go/pkg/version.gitMinor=$minor"
mkdir -p "$bin"
say "building kube-apiserver, kube-controller-manager, kube-scheduler $k8s_version (long: ~30-60 min on 2 cores)"
if ! (cd "$src" && "$gobin" build -p 2 -trimpath -ldflags "-s -w $vpkg" -o "$bin/" \
        k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
        k8s.io/kubernetes/cmd/kube-scheduler) >>"$log" 2>&1; then
  say "building Kubernetes $k8s_version failed; last lines of $log:"; tail -n 30 "$log" >&2; exit 1
fi

# --- etcd (the version k8s.io/kubernetes requires; its server module's root is the etcd main package)
src=$out/src/etcd
mkdir -p "$src"
printf '// Generated by test/kube/build-control-plane.sh: builds etcd, not part of nodesmith.\nmodule nodesmith.test/etcd\n\ngo 1.%s.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' \
  "$go_min_minor" "$etcd_version" >"$src/go.mod"
say "building etcd $etcd_version"
if ! (cd "$src" && "$gobin" build -p 2 -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3) >>"$log" 2>&1; then
  say "building etcd $etcd_version failed; last lines of $log:"; tail -n 30 "$log" >&2; exit 1
fi

"$bin/kube-apiserver" --version >>"$log" 2>&1
"$bin/etcd" --version >>"$log" 2>&1
echo "$want" >"$stamp"
say "built in $(( $(date +%s) - start )) s: $(ls "$bin" | tr '\n' ' ')"
echo "$bin"
