#!/usr/bin/env bash
# install-deps.sh - installs what building and testing need: Debian packages
# (as root, only those missing) and the npm peers used by tests (Prism,
# Redocly, hdr-histogram-js, tap-parser, junit2json, ajv, and the express and
# fastify rate-limit plugins of tests/frameworks) into
# tools/npm/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libcurl4-openssl-dev libyajl-dev libevent-dev
          libhttp-parser-dev zlib1g-dev clang libclang-rt-14-dev wrk nginx-light chromium
          curl ca-certificates python3
          perl libxml2-utils   # prove (TAP) and xmllint (JUnit XSD): readers of our reports in the peer tests
          clang-format         # scripts/check-format.sh: test.sh fails on a layout deviation
          strace               # runner_hostile_verbose_writes counts the runner's write(2) calls
          python3-yaml         # deploy_kubernetes parses the Kubernetes manifests
          python3-h2           # runner_h2_hostile_*: hostile HTTP/2 servers against the limit burst
          python3-flask python3-flask-limiter  # tests/frameworks: a Flask + Flask-Limiter service the runner judges
          help2man man-db dpkg-dev file   # man pages, man -l in tests/install, cpack -G DEB (dpkg-shlibdeps)
          libssl-dev           # the load generator's TLS epoll engine and the burst's TLS transport
          libnghttp2-dev       # the runner's HTTP/2 single-packet burst (runner/suites/burst_h2.c)
          faketime redis-server python3-redis haproxy stunnel4 iproute2  # the field: other clocks, a shared limiter store, balancers, TLS, namespaces
          prometheus cmark-gfm)  # real consumers of the metrics endpoint and the markdown summaries
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

npm_wanted=0
if [ "${PETSTORE_SKIP_NPM:-0}" != 1 ]; then
  if [ ! -f tools/npm/node_modules/.installed ] ||
     [ tools/npm/package.json -nt tools/npm/node_modules/.installed ]; then
    npm_wanted=1
  fi
fi
if [ "$npm_wanted" = 1 ]; then
  echo "install-deps: installing npm peers into tools/npm"
  # bounded: npm offline retries for minutes; the cache is used first when it has the packages
  if (cd tools/npm && timeout 300 npm install --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null); then
    touch tools/npm/node_modules/.installed
  else
    echo "install-deps: npm install failed; peer tests (Prism, Redocly, hdr-histogram-js) will fail" >&2
  fi
fi
