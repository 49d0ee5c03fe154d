// Validates an OpenAPI document (a JSON file) against the OpenAPI 3.x schema with
// @seriousme/openapi-schema-validator; prints the errors and exits 1 when it is not valid.
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";

const path = process.argv[2];
const doc = JSON.parse(readFileSync(path, "utf8"));
const v = new Validator();
const res = await v.validate(doc);
if (!res.valid) {
  console.log(JSON.stringify(res.errors, null, 2));
  process.exit(1);
}
console.log(`${path}: valid OpenAPI ${v.version}`);
