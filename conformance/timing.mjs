// The oracles' timing mode (`{"op": "time"}`, conformance/timing.py): OpenClaw's per-request
// policy evaluation timed inside Node, the process started and the config loaded beforehand.
// Per context: one untimed run (JIT warm-up and OpenClaw's own per-config caches, as a serving
// gateway has them), then `iterations` back-to-back runs timed with process.hrtime.bigint();
// the answer is each context's mean ns per run.
export function timed(contexts, iterations, evaluate) {
  const n = Math.max(1, iterations | 0);
  const ns = [];
  let sink = 0;  // keeps the results alive, so no run is optimized away
  for (const ctx of contexts) {
    sink += JSON.stringify(evaluate(ctx)).length;
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const result = evaluate(ctx);
      sink += result.tools ? result.tools.length : 1;
    }
    ns.push(Number(process.hrtime.bigint() - start) / n);
  }
  return { ns, iterations: n, checksum: sink };
}
