// openapi-typescript's Node API, as its documentation shows it: the paths and schemas of
// ../openapi.json as types in generated/schema.ts, `format: binary` typed Blob so that a file can
// be sent (multipart). Run from this folder: node generate.mjs
import { writeFileSync, mkdirSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

const BLOB = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'));
const NULL = ts.factory.createLiteralTypeNode(ts.factory.createNull());

const ast = await openapiTS(new URL('../openapi.json', import.meta.url), {
  transform(schema) {
    if (schema.format === 'binary') return schema.nullable ? ts.factory.createUnionTypeNode([BLOB, NULL]) : BLOB;
  },
});
mkdirSync('generated', { recursive: true });
writeFileSync('generated/schema.ts', astToString(ast));
