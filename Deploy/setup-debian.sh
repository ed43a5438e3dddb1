#!/usr/bin/env bash
# Prepare a Debian 12 machine to build and test LiveActivityServer.
#
#  - installs the system packages (C libraries for the Swift build, Chromium + ChromeDriver, WebKitGTK's
#    WebDriver + Xvfb and Firefox ESR for the browser tests, python3 + venv),
#  - checks that the Swift toolchain is reachable,
#  - creates the Python virtualenv `.venv` at the repository root with Tests/integration/requirements.txt.
#
# Idempotent and fast when everything is already there: apt is only touched when a package is missing
# (set SETUP_FORCE_APT=1 to always run `apt-get update` + install), and pip only runs when the
# requirements file changed since the last successful install.
# Works from any working directory; uses sudo when not run as root. Safe without a TTY (CI).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# --- privileges --------------------------------------------------------------------------------------
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "not root and sudo is not installed; run this script as root"
    SUDO=(sudo)
    # Never prompt in CI / without a terminal: fail instead.
    if [ ! -t 0 ] || [ "${CI:-}" = "true" ]; then SUDO=(sudo -n); fi
fi

# --- system packages ---------------------------------------------------------------------------------
# Build: pkg-config + the -dev packages Package.swift links through pkg-config.
BUILD_PKGS=(pkg-config libwebsockets-dev zlib1g-dev libsqlite3-dev libssl-dev libnghttp2-dev libcurl4-openssl-dev libvips-dev)
# Tests: headless Chromium + matching ChromeDriver (same Debian source, so versions always match),
# WebKit (webkit2gtk-driver: WebKitWebDriver + MiniBrowser, run on an Xvfb display) and Firefox (firefox-esr,
# driven over its own WebDriver BiDi) for Tests/integration/test_engines.py, fonts so screenshots render text (and emoji),
# and Python with venv; Node.js runs the page's ES modules outside a browser (test_kinds.py: the render
# context built by Public/js against the cases the Swift builder is unit-tested with).
TEST_PKGS=(chromium chromium-driver webkit2gtk-driver xvfb firefox-esr fonts-liberation fonts-dejavu-core fonts-noto-color-emoji python3 python3-venv redis-server nginx systemd openssl curl sqlite3 binutils nodejs)
# Plus every `.apt([...])` provider that Package.swift's system-library targets declare, so a C library the
# package starts to use is installed without editing this script.
PROVIDER_PKGS=()
if [ -f Package.swift ]; then
    while IFS= read -r p; do
        [ -n "$p" ] && PROVIDER_PKGS+=("$p")
    done < <(grep -o '\.apt(\[[^]]*\])' Package.swift | grep -o '"[^"]*"' | tr -d '"' | sort -u)
fi
# Benchmarks (Tests/bench/*.sh): the shared load generator wsfan and flood (Go, gorilla/websocket from Debian, built
# offline), the C lws peer (libwebsockets-dev, above) and the uWebSockets peer (g++ 12, zlib1g-dev).
BENCH_PKGS=(golang-go golang-github-gorilla-websocket-dev g++)
ALL_PKGS=()
for p in "${BUILD_PKGS[@]}" "${PROVIDER_PKGS[@]}" "${TEST_PKGS[@]}" "${BENCH_PKGS[@]}"; do
    case " ${ALL_PKGS[*]} " in *" $p "*) ;; *) ALL_PKGS+=("$p") ;; esac
done

is_installed() {
    dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | grep -qx installed
}

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script supports Debian/Ubuntu only"

missing=()
for p in "${ALL_PKGS[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ] || [ "${SETUP_FORCE_APT:-0}" = "1" ]; then
    to_install=("${missing[@]}")
    [ "${#to_install[@]}" -gt 0 ] || to_install=("${ALL_PKGS[@]}")
    log "apt-get update"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    log "apt-get install ${to_install[*]}"
    # --no-install-recommends is safe for all of these: Chromium's recommends are the setuid sandbox
    # (unused: tests run with --no-sandbox) and desktop integration; the fonts are listed explicitly.
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${to_install[@]}" </dev/null
else
    log "system packages already installed (${#ALL_PKGS[@]} checked)"
fi

# Every pkg-config module Package.swift names must resolve, or `swift build` fails with a vague error.
if [ -f Package.swift ]; then
    for mod in $(grep -o 'pkgConfig: *"[^"]*"' Package.swift | grep -o '"[^"]*"' | tr -d '"' | sort -u); do
        pkg-config --exists "$mod" || die "pkg-config cannot find '$mod' (used by Package.swift) after install"
        log "pkg-config $mod $(pkg-config --modversion "$mod")"
    done
fi

# --- Swift toolchain ---------------------------------------------------------------------------------
if ! command -v swift >/dev/null 2>&1; then
    if [ -x /opt/swift/usr/bin/swift ]; then
        log "swift is not on PATH but /opt/swift/usr/bin/swift exists."
        log "  Add it for your shell:   export PATH=/opt/swift/usr/bin:\$PATH"
        export PATH="/opt/swift/usr/bin:$PATH"
    else
        die "the Swift toolchain (6.x) was not found on PATH nor in /opt/swift/usr/bin.
  Install it from https://www.swift.org/install/linux/ (Debian 12 tarball), unpack it to /opt/swift,
  then: export PATH=/opt/swift/usr/bin:\$PATH   and re-run this script."
    fi
fi
log "$(swift --version 2>/dev/null | head -n1)"

# --- Python virtualenv -------------------------------------------------------------------------------
REQ="Tests/integration/requirements.txt"
VENV="$ROOT/.venv"
[ -f "$REQ" ] || die "$REQ not found"
command -v python3 >/dev/null 2>&1 || die "python3 not found on PATH"

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    log "creating virtualenv .venv with $(command -v python3) ($(python3 --version 2>&1))"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
fi

STAMP="$VENV/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"
if [ "$want" != "$have" ]; then
    log "pip install -r $REQ"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install -q -r "$REQ"
    echo "$want" > "$STAMP"
else
    log ".venv is up to date with $REQ"
fi
"$VENV/bin/python" -c 'import websockets, pytest, selenium; print("[setup] python deps: websockets", websockets.__version__, "| pytest", pytest.__version__, "| selenium", selenium.__version__)'

log "done"
