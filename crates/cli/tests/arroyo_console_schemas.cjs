// Compiles every connector's served schemas as Arroyo's web console does (Ajv's draft
// 2019-09 build, its `sensitive` keyword and `var-str`/`autocomplete` formats, ajv-formats),
// then validates an empty form and the examples the schemas give, so a schema Arroyo's
// console cannot compile fails here. Run by `arroyo_console.rs` with NODE_PATH set to where
// .ci/run installed ajv and ajv-formats; prints one JSON line: {compiled, problems}.
"use strict";
const fs = require("fs");
const Ajv2019 = require("ajv/dist/2019").default;
const addFormats = require("ajv-formats").default;

function consoleAjv() {
  const ajv = new Ajv2019();
  ajv.addKeyword("sensitive");
  ajv.addFormat("var-str", { validate: () => true });
  ajv.addFormat("autocomplete", { validate: () => true });
  addFormats(ajv);
  return ajv;
}

const connectors = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).data;
const problems = [];
let compiled = 0;
for (const c of connectors) {
  for (const [which, text] of [["table", c.table_config], ["profile", c.connection_config]]) {
    if (text == null) continue;
    let schema;
    try {
      schema = JSON.parse(text);
    } catch (e) {
      problems.push(`${c.id} ${which}: not JSON: ${e.message}`);
      continue;
    }
    let validate;
    try {
      // A fresh instance per schema, as the console makes one per form.
      validate = consoleAjv().compile(schema);
      compiled += 1;
    } catch (e) {
      problems.push(`${c.id} ${which}: ${e.message}`);
      continue;
    }
    // Validating runs every keyword's code; an empty form is what the console checks first.
    validate({});
  }
}
console.log(JSON.stringify({ compiled, problems }));
