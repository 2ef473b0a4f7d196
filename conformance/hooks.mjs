// Module-loader hook: as Node loads the chosen OpenClaw chunks, append one line that exports
// the (module-internal) tool-policy functions under `__toolc_<name>`. Nothing else changes:
// the functions run with their real imports and module state.
let targets = {};

export async function initialize(data) {
  targets = data.targets; // { fileUrl: [name, ...] }
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  const names = targets[url];
  if (!names || names.length === 0) return result;
  const source = typeof result.source === "string" ? result.source
    : Buffer.from(result.source).toString("utf8");
  const exports = names.map((n) => `${n} as __toolc_${n}`).join(", ");
  return { ...result, source: `${source}\nexport { ${exports} };\n` };
}
