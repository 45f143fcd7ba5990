import { Injectable } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '../../../libs/common/domain-error.js';
import type { BundleResponse, SdkVersionsResponse } from './dto/sdk.dto.js';
import { findRoot, readTree } from './sdk-files.js';
import { SdkErrors } from './sdk.errors.js';

interface SdkManifest {
  version: string;
  generator: string;
  operations: number;
}

const SDK_INSTRUCTIONS = 'Write each file at its path in a folder (e.g. src/ews/), then: import { EvaluationWorkspaceClient } from "./ews"; const api = new EvaluationWorkspaceClient({ baseUrl, securityWorker: () => ({ headers: { Authorization: `Bearer ${token}` } }) }). Needs TypeScript 5+ and a global fetch (Node 18+ or a browser).';
const EXAMPLE_INSTRUCTIONS = 'Write each file at its path, then run `EWS_URL=http://localhost:3000 EWS_EMAIL=… EWS_PASSWORD=… node scripts/run-evaluation.mjs`: it uploads datasets/support-questions.csv, creates the eval config in eval-configs/, runs it through an offline SUT and prints the results. See README.md.';

/**
 * The client SDK (generated from this service's OpenAPI document into sdk/typescript by
 * `npm run sdk`) and the example bundle (examples/), read from the repository root.
 */
@Injectable()
export class SdkService {
  private readonly root = findRoot();

  private manifest(): SdkManifest {
    if (!this.root) throw new DomainError(SdkErrors.sdk_bundle_missing, 'The SDK folder (sdk/typescript) is not deployed with the service');
    return JSON.parse(readFileSync(join(this.root, 'sdk', 'typescript', 'sdk.json'), 'utf8')) as SdkManifest;
  }

  versions(): SdkVersionsResponse {
    const m = this.manifest();
    return {
      latest: m.version,
      versions: [
        {
          version: m.version,
          language: 'typescript',
          generator: m.generator,
          operations: m.operations,
          sdk_files: readTree(join(this.root!, 'sdk', 'typescript')).length,
          example_files: readTree(join(this.root!, 'examples')).length,
          sdk_download: `/sdk/versions/${m.version}/download`,
          examples_download: `/examples/versions/${m.version}/download`,
        },
      ],
    };
  }

  private resolve(version: string): string {
    const m = this.manifest();
    if (version === 'latest' || version === m.version) return m.version;
    throw new DomainError(SdkErrors.sdk_version_not_found, `No bundle has version '${version.slice(0, 50)}'; available versions: ${m.version} (or latest)`, { available: [m.version, 'latest'] });
  }

  sdk(version: string): BundleResponse {
    const v = this.resolve(version);
    return { kind: 'sdk', version: v, language: 'typescript', instructions: SDK_INSTRUCTIONS, files: readTree(join(this.root!, 'sdk', 'typescript')) };
  }

  examples(version: string): BundleResponse {
    const v = this.resolve(version);
    const files = readTree(join(this.root!, 'examples'));
    if (!files.length) throw new DomainError(SdkErrors.sdk_bundle_missing, 'The examples folder is not deployed with the service');
    return { kind: 'examples', version: v, language: 'typescript', instructions: EXAMPLE_INSTRUCTIONS, files };
  }
}
