// summarize.mjs OUT_DIR EXPECTED_DIR — the summary of a conformance/run.sh
// run (run with the Node.js the suite runs on).
//
// OUT_DIR/runs.tsv has one line per suite process run.sh started:
// REVISION, SCENARIO ("-" for a whole --suite run), LOG, EXIT CODE, SECONDS.
// OUT_DIR/skipped.tsv has one line per revision of mcpx's tables run.sh did
// not run: REVISION, WHY; they are listed first.
// Each log names the scenarios it ran ("=== Running scenario: S ===" in
// suite mode) and where each one's checks.json went ("Results saved to
// DIR"). EXPECTED_DIR holds expected-failures-REVISION.yml.
//
// Classifies every FAILURE and WARNING check against the expected-failures
// file the way the suite does (a bare "scenario" entry excuses all of that
// scenario's failing checks, "scenario:check-id" only that check; a listed
// check that succeeds is stale), and in addition reports as stale an entry
// that matched no check at all (a scenario not run at that revision, or a
// check id the scenario did not emit): it is a typo or a leftover.
//
// Prints a compact summary per revision, every unexpected failure with its
// description and error message, every stale entry, and last a line
// counting scenario runs: passed, failed unexpectedly, and failed only in
// listed checks (a run fails when it has a FAILURE check, the suite's own
// rule, or when it did not finish).
// Exits 1 when anything is unexpected, stale or unfinished, or when a suite
// process exited non-zero; 0 otherwise.

import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const [outDir, expectedDir] = process.argv.slice(2);
if (!outDir || !expectedDir) {
  console.error("usage: node summarize.mjs OUT_DIR EXPECTED_DIR");
  process.exit(2);
}

const stripAnsi = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");
const failing = (c) => c.status === "FAILURE" || c.status === "WARNING";

// parseExpected reads an expected-failures file written as
//   server:
//     - scenario            # comment
//     - scenario:check-id   # comment
// and returns its entries; anything else in the file is an error.
function parseExpected(path) {
  const entries = [];
  if (!existsSync(path)) return entries;
  let inServer = false;
  readFileSync(path, "utf8").split("\n").forEach((raw, i) => {
    const line = raw.replace(/(^|\s)#.*$/, "").trimEnd();
    if (line.trim() === "") return;
    if (/^server:\s*(\[\s*\])?$/.test(line)) { inServer = true; return; }
    const m = /^\s+-\s+([^\s:]+)(?::(\S+))?$/.exec(line);
    if (!inServer || !m) throw new Error(`${path}:${i + 1}: cannot read ${JSON.stringify(raw)} (want "server:" then "  - scenario" or "  - scenario:check-id")`);
    entries.push({ scenario: m[1], check: m[2] ?? null, text: m[2] ? `${m[1]}:${m[2]}` : m[1], used: false });
  });
  return entries;
}

// dedupe keeps, per check id, the worst status (FAILURE > WARNING >
// SUCCESS > other), as the suite does before comparing with a baseline.
function dedupe(checks) {
  const rank = (s) => (s === "FAILURE" ? 3 : s === "WARNING" ? 2 : s === "SUCCESS" ? 1 : 0);
  const byId = new Map();
  for (const c of checks) {
    if (c.status === "INFO") continue;
    const had = byId.get(c.id);
    if (!had || rank(c.status) >= rank(had.status)) byId.set(c.id, c);
  }
  return [...byId.values()];
}

const runsFile = join(outDir, "runs.tsv");
const runs = existsSync(runsFile)
  ? readFileSync(runsFile, "utf8").split("\n").filter(Boolean).map((l) => {
      const [rev, scenario, log, rc, secs] = l.split("\t");
      return { rev, scenario, log, rc: Number(rc), secs: Number(secs) };
    })
  : [];

const skippedFile = join(outDir, "skipped.tsv");
const skipped = existsSync(skippedFile)
  ? readFileSync(skippedFile, "utf8").split("\n").filter(Boolean).map((l) => l.split("\t"))
  : [];
for (const [rev, why] of skipped) console.log(`${rev}: not run: ${why}`);

const revisions = [...new Set(runs.map((r) => r.rev))];
let passed = 0, failed = 0, bad = false;
const unexpected = [], stale = [], problems = [];
let allOnlyExpected = 0;

for (const rev of revisions) {
  const efPath = join(expectedDir, `expected-failures-${rev}.yml`);
  let entries;
  try {
    entries = parseExpected(efPath);
  } catch (e) {
    problems.push(e.message);
    entries = [];
  }
  const whole = new Map(entries.filter((e) => !e.check).map((e) => [e.scenario, e]));
  const perCheck = entries.filter((e) => e.check);

  const results = []; // {scenario, checks|null, note}
  let secs = 0;
  for (const run of runs.filter((r) => r.rev === rev)) {
    secs += run.secs;
    const log = existsSync(run.log) ? stripAnsi(readFileSync(run.log, "utf8")) : "";
    const order = [];
    const saved = new Map();
    let current = run.scenario === "-" ? null : run.scenario;
    if (current) order.push(current);
    for (const line of log.split("\n")) {
      let m;
      if ((m = /^=== Running scenario: (\S+) ===$/.exec(line))) { current = m[1]; order.push(current); }
      else if ((m = /^Results saved to (.+)$/.exec(line)) && current) saved.set(current, m[1].trim());
    }
    for (const scenario of order) {
      const dir = saved.get(scenario);
      const file = dir && join(dir, "checks.json");
      if (file && existsSync(file)) {
        results.push({ scenario, checks: JSON.parse(readFileSync(file, "utf8")) });
        continue;
      }
      const why = run.rc === 124 || run.rc === 137 ? "killed: the run's time budget ran out"
        : (/^(Failed to run scenario .*|Server test error.*)$/m.exec(log)?.[0] ?? "no checks.json written");
      results.push({ scenario, checks: null, note: why.slice(0, 200) });
    }
    if (run.rc !== 0) {
      const scope = run.scenario === "-" ? "the --suite run" : run.scenario;
      if (!/Baseline check passed/.test(log) && !/Unexpected failures|Baseline is stale/.test(log)) {
        problems.push(`${rev} ${scope}: suite exited ${run.rc} without a baseline verdict (log: ${run.log})`);
      }
      bad = true;
    }
    if (run.scenario === "-" && order.length === 0) problems.push(`${rev}: the --suite run ran no scenario (log: ${run.log})`);
  }

  const lines = [];
  let revPassed = 0, revFailed = 0, onlyExpected = 0, revUnexpected = 0;
  for (const r of results) {
    if (!r.checks) {
      revFailed++;
      revUnexpected++;
      unexpected.push({ rev, id: r.scenario, status: "ERROR", description: "scenario did not finish", error: r.note });
      lines.push(`  ✗ ${r.scenario.padEnd(46)} ERROR: ${r.note}`);
      continue;
    }
    const checks = dedupe(r.checks);
    const fails = checks.filter(failing);
    const hasFailure = fails.some((c) => c.status === "FAILURE");
    const exp = [], unexp = [];
    const w = whole.get(r.scenario);
    if (w) {
      w.used = true;
      if (fails.length === 0) stale.push({ rev, entry: w.text, why: "the scenario passes" });
      exp.push(...fails);
    } else {
      for (const c of fails) {
        const e = perCheck.find((e) => e.scenario === r.scenario && e.check === c.id);
        if (e) exp.push(c); else unexp.push(c);
      }
    }
    for (const e of perCheck.filter((e) => e.scenario === r.scenario)) {
      e.used = true;
      const c = checks.find((c) => c.id === e.check);
      if (!c) stale.push({ rev, entry: e.text, why: "the scenario emitted no such check" });
      else if (c.status === "SUCCESS") stale.push({ rev, entry: e.text, why: "the check passes" });
      else if (!failing(c)) stale.push({ rev, entry: e.text, why: `the check is ${c.status}` });
    }
    for (const c of unexp) unexpected.push({ rev, id: `${r.scenario}:${c.id}`, status: c.status, description: c.description, error: c.errorMessage });
    if (hasFailure) {
      revFailed++;
      if (unexp.length === 0) onlyExpected++;
    } else revPassed++;
    if (unexp.length) revUnexpected++;
    if (fails.length) {
      const fmt = (cs) => cs.map((c) => c.id + (c.status === "WARNING" ? " (warning)" : "")).join(", ");
      const parts = [];
      if (unexp.length) parts.push(`UNEXPECTED: ${fmt(unexp)}`);
      if (exp.length) parts.push(`expected: ${fmt(exp)}`);
      lines.push(`  ${hasFailure ? "✗" : "~"} ${r.scenario.padEnd(46)} ${parts.join("; ")}`);
    }
  }
  for (const e of entries) {
    if (!e.used) stale.push({ rev, entry: e.text, why: `no scenario ${e.scenario} ran at ${rev}` });
  }
  passed += revPassed;
  failed += revFailed;
  allOnlyExpected += onlyExpected;
  console.log(`${rev}: ${results.length} scenario runs, ${revPassed} passed, ${revFailed} failed ` +
    `(${onlyExpected} only in expected checks), ${revUnexpected} with unexpected failures, ${secs}s` +
    (existsSync(efPath) ? "" : ` (no expected-failures-${rev}.yml: none expected)`));
  for (const l of lines) console.log(l);
}

if (unexpected.length) {
  console.log("\nUnexpected failures (not in conformance/expected-failures-<rev>.yml):");
  for (const u of unexpected) {
    console.log(`  ${u.rev} ${u.id} ${u.status}`);
    if (u.description) console.log(`      check: ${u.description}`);
    if (u.error) console.log(`      error: ${u.error}`);
  }
}
if (stale.length) {
  console.log("\nStale expected failures (remove them from conformance/expected-failures-<rev>.yml):");
  for (const s of stale) console.log(`  ${s.rev} ${s.entry}: ${s.why}`);
}
if (problems.length) {
  console.log("\nProblems:");
  for (const p of problems) console.log(`  ${p}`);
}
if (revisions.length === 0) {
  console.log("no suite runs recorded");
  bad = true;
}
// Not the bare "N passed, M failed" form: CI reads that as a test runner's
// verdict, and the scenario runs that fail here are the expected ones,
// judged by the exit code.
console.log(`conformance scenario runs: ${passed} passed, ${failed - allOnlyExpected} failed unexpectedly, ${allOnlyExpected} failed only in checks listed in conformance/expected-failures-*.yml`);
process.exit(bad || unexpected.length || stale.length || problems.length ? 1 : 0);
