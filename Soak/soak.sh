#!/usr/bin/env bash
# Kite's soak run (issue 32): one process runs a mixed workload for MINUTES minutes against real servers on
# loopback (nginx over http and https, python httpbin under gunicorn, the fault server, tinyproxy) and records
# resident memory, open descriptors, threads and requests every minute. Not part of CI.
#
#   Soak/soak.sh [MINUTES] [WARMUP] [-- extra KiteSoak options]     (defaults: 60 and 10)
#
# Writes Soak/Results/soak-<MINUTES>min.csv (one line a minute), outcomes-<MINUTES>min.csv (per operation and
# outcome), soak-<MINUTES>min.log (the run's output) and soak-<MINUTES>min.png (the curve). Exits with the
# harness's status: 0 when, after the warm-up, memory grew less than 8 MiB and descriptors did not grow, and
# every operation ended with a response or a KiteError. SOAK_NAME=LABEL names the files soak-LABEL.* instead.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
minutes=60
warmup=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then minutes=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then warmup=$1; shift; fi
if [ "${1:-}" = "--" ]; then shift; fi
if [ -z "$warmup" ]; then if [ "$minutes" -gt 10 ]; then warmup=10; else warmup=1; fi; fi
results="$root/Soak/Results"
label=${SOAK_NAME:-${minutes}min}
name="soak-$label"
mkdir -p "$results"

log() { printf '==> %s\n' "$*" >&2; }

# The peers run from a temporary folder that the nginx workers (user nobody) can read.
tmp=$(mktemp -d /tmp/kite-soak.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_for() {  # wait_for NAME PID PYTHON-CHECK
    for _ in $(seq 1 150); do
        if python3 -c "$3" 2>/dev/null; then return 0; fi
        if ! kill -0 "$2" 2>/dev/null; then log "$1 exited"; return 1; fi
        sleep 0.2
    done
    log "$1 did not answer"
    return 1
}

# 1. The harness, in release, against Kite as committed: a snapshot of HEAD (with this Soak folder) in
#    Soak/.build/snapshot, so the run measures a known commit and not a work tree that may be half-edited.
#    SOAK_LIBRARY=worktree builds against the work tree instead. Only files whose content changed are
#    rewritten, so the build stays incremental.
revision=$(git -C "$root" rev-parse HEAD)
if [ "${SOAK_LIBRARY:-head}" = worktree ]; then
    package="$root/Soak"
    revision="$revision + work tree"
else
    snapshot="$root/Soak/.build/snapshot/$(basename "$root")"
    mkdir -p "$tmp/export/Soak" "$snapshot"
    git -C "$root" archive HEAD | tar -x -C "$tmp/export"
    rm -rf "$tmp/export/Soak"
    mkdir -p "$tmp/export/Soak"
    cp -r "$root/Soak/Package.swift" "$root/Soak/Sources" "$tmp/export/Soak/"
    if [ -f "$root/Soak/Package.resolved" ]; then cp "$root/Soak/Package.resolved" "$tmp/export/Soak/"; fi
    python3 - "$tmp/export" "$snapshot" <<'SYNC'
import filecmp, os, shutil, sys
source, target = sys.argv[1], sys.argv[2]
for folder, _, files in os.walk(source):
    into = os.path.join(target, os.path.relpath(folder, source))
    os.makedirs(into, exist_ok=True)
    for name in files:
        a, b = os.path.join(folder, name), os.path.join(into, name)
        if not os.path.isfile(b) or not filecmp.cmp(a, b, shallow=False):
            shutil.copyfile(a, b)
for folder, folders, files in os.walk(target, topdown=False):
    for name in files + folders:
        path = os.path.join(folder, name)
        if not os.path.lexists(os.path.join(source, os.path.relpath(path, target))):
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
SYNC
    package="$snapshot/Soak"
fi
log "building Soak (release) against Kite $revision"
swift build -c release --package-path "$package" --scratch-path "$root/Soak/.build" 2>&1 | tail -n 3
soak="$root/Soak/.build/release/KiteSoak"
[ -x "$soak" ] || { log "the build failed"; exit 1; }

# 2. python httpbin in .venv, installed as CI installs it; matplotlib for the plot when pip can get it.
if [ ! -x "$root/.venv/bin/gunicorn" ]; then
    log "installing httpbin into .venv"
    python3 -m venv "$root/.venv"
    "$root/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/.ci/requirements.txt"
fi
if ! "$root/.venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    "$root/.venv/bin/pip" install --quiet --disable-pip-version-check matplotlib 2>/dev/null \
        || log "matplotlib is not available: the plot will be an SVG"
fi

# 3. Certificates: a CA, nginx's certificate signed by it (for 127.0.0.1 and localhost), and a stranger's
#    self-signed certificate whose key the wrong-pin session pins.
log "making certificates"
cd "$tmp"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 3 \
    -subj "/CN=Kite Soak CA" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
    -subj "/CN=127.0.0.1" 2>/dev/null
printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
    -extfile server.ext 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout stranger.key -out stranger.pem \
    -days 3 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
cd "$root"

# 4. nginx: a minimal configuration of its own (prefix, pid, logs in the temporary folder), a 4 MiB file and a
#    small one over http, and over https (HTTP/2 and HTTP/1.1 through ALPN) with the certificate above.
mkdir -p "$tmp/nginx/www" "$tmp/nginx/logs"
head -c $((4 * 1024 * 1024)) /dev/urandom >"$tmp/nginx/www/blob.bin"
printf 'kite soak: a small file served by nginx\n' >"$tmp/nginx/www/small.txt"
chmod -R a+rX "$tmp/nginx" "$tmp/server.pem"
nginx_port=$(free_port)
nginx_tls_port=$(free_port)
cat >"$tmp/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/logs/error.log;
events { worker_connections 1024; }
http {
    types { text/plain txt; application/octet-stream bin; }
    default_type application/octet-stream;
    access_log $tmp/nginx/logs/access.log;
    sendfile on;
    server {
        listen 127.0.0.1:$nginx_port;
        root $tmp/nginx/www;
    }
    server {
        listen 127.0.0.1:$nginx_tls_port ssl http2;
        ssl_certificate $tmp/server.pem;
        ssl_certificate_key $tmp/server.key;
        root $tmp/nginx/www;
    }
}
CONF
log "starting nginx on 127.0.0.1:$nginx_port and https://127.0.0.1:$nginx_tls_port"
/usr/sbin/nginx -p "$tmp/nginx" -e "$tmp/nginx/logs/error.log" -c "$tmp/nginx/nginx.conf" &
pids+=($!)
wait_for nginx "${pids[-1]}" "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$nginx_port/small.txt', timeout=1)"

# 5. httpbin under gunicorn, as the README and CI run it.
httpbin_port=$(free_port)
log "starting httpbin on 127.0.0.1:$httpbin_port"
"$root/.venv/bin/gunicorn" --bind "127.0.0.1:$httpbin_port" --worker-class gthread --threads 32 --workers 2 \
    --keep-alive 60 --log-level warning httpbin:app >"$tmp/httpbin.log" 2>&1 &
pids+=($!)
wait_for httpbin "${pids[-1]}" "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$httpbin_port/get', timeout=1)"

# 6. The fault server (it prints PORT n).
log "starting the fault server"
python3 -u "$root/Tests/FaultServer/fault_server.py" --no-stdin-watch >"$tmp/fault.out" 2>"$tmp/fault.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q '^PORT ' "$tmp/fault.out" 2>/dev/null && break; sleep 0.1; done
fault_port=$(awk '/^PORT /{print $2}' "$tmp/fault.out")
[ -n "$fault_port" ] || { log "the fault server did not start"; cat "$tmp/fault.err" >&2; exit 1; }

# 7. tinyproxy with Debian's defaults (Timeout 600, MaxClients 100, CONNECT to 443 and 563 only), on a free port,
#    allowing 127.0.0.1.
proxy_port=$(free_port)
cat >"$tmp/tinyproxy.conf" <<CONF
Port $proxy_port
Listen 127.0.0.1
Timeout 600
MaxClients 100
Allow 127.0.0.1
ViaProxyName "tinyproxy"
ConnectPort 443
ConnectPort 563
LogLevel Info
PidFile "$tmp/tinyproxy.pid"
CONF
log "starting tinyproxy on 127.0.0.1:$proxy_port"
/usr/bin/tinyproxy -d -c "$tmp/tinyproxy.conf" >"$tmp/tinyproxy.log" 2>&1 &
pids+=($!)
wait_for tinyproxy "${pids[-1]}" "import urllib.request as u; u.build_opener(u.ProxyHandler({'http': 'http://127.0.0.1:$proxy_port'})).open('http://127.0.0.1:$httpbin_port/get', timeout=1)"

# 8. The run.
mkdir -p "$tmp/work"
export SOAK_HTTPBIN="http://127.0.0.1:$httpbin_port"
export SOAK_NGINX="http://127.0.0.1:$nginx_port"
export SOAK_NGINX_TLS="https://127.0.0.1:$nginx_tls_port"
export SOAK_FAULT="http://127.0.0.1:$fault_port"
export SOAK_PROXY="127.0.0.1:$proxy_port"
export SOAK_CA="$tmp/ca.pem"
export SOAK_SERVER_CERTIFICATE="$tmp/server.pem"
export SOAK_STRANGER_CERTIFICATE="$tmp/stranger.pem"
export SOAK_BLOB_SIZE=$((4 * 1024 * 1024))
SOAK_BLOB_SHA256=$(sha256sum "$tmp/nginx/www/blob.bin" | cut -d' ' -f1)
export SOAK_BLOB_SHA256
export SOAK_WORK_DIRECTORY="$tmp/work"
export SOAK_KITE_REVISION="$revision"
# SOAK_WRAPPER runs the harness under a tool, for example SOAK_WRAPPER="heaptrack -o /tmp/soak" (word-split).
# shellcheck disable=SC2206
wrapper=(${SOAK_WRAPPER:-})
command=("${wrapper[@]}" "$soak" --minutes "$minutes" --warmup "$warmup" --csv "$results/$name.csv" \
    --outcomes "$results/outcomes-$label.csv" "$@")
log "running: ${command[*]}"
set +e
"${command[@]}" 2>&1 | tee "$results/$name.log"
status=${PIPESTATUS[0]}
set -e

# 9. The curve.
"$root/.venv/bin/python" "$root/Soak/plot.py" "$results/$name.csv" "$warmup" "$results/$name" || true
log "results in $results ($name.csv, $name.log, outcomes-$label.csv, the plot); exit status $status"
exit "$status"
