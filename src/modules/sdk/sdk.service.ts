import { Injectable } from '@nestjs/common';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '#libs/common/domain-error.js';
import type { BundleResponse, SdkVersionsResponse } from './dto/sdk.dto.js';
import { findRoot, readTree } from './sdk-files.js';
import { SdkErrors } from './sdk.errors.js';

/** What building and installing the package leave in its folder: not its sources. */
const NOT_SOURCES = (name: string) => name === 'node_modules' || name === 'dist' || name.endsWith('.tgz');

interface SdkManifest {
  version: string;
  generator: string;
  operations: number;
}

const SDK_INSTRUCTIONS =
  'The sources of the @ews/sdk package: write each file at its path in a folder, run `npm install && npm run build` there (or `npm pack` for a tarball) and add the folder to your project (`npm install ./ews-sdk`); GET /sdk/versions/{version}/package.tgz answers the package built. ' +
  'Then: import { createClient } from "@ews/sdk"; const client = createClient({ baseUrl, apiKey }). ESM and CommonJS; Node 20.16+; type-checks with @types/node or the DOM lib. See docs/sdk.md.';
const EXAMPLE_INSTRUCTIONS =
  'Write each file at its path, then run `EWS_URL=http://localhost:3000 EWS_EMAIL=… EWS_PASSWORD=… node scripts/run-evaluation.mjs`: it uploads datasets/support-questions.csv, creates the eval config in eval-configs/, runs it through an offline SUT and prints the results. See README.md.';

/**
 * The client SDK, the @ews/sdk package in sdk/typescript (its client generated from this
 * service's OpenAPI document by `npm run sdk`), as sources and as the tarball `npm run build`
 * packs into dist/sdk (sdk/pack.mjs); and the example bundle (examples/). All read from the
 * repository root.
 */
@Injectable()
export class SdkService {
  private readonly root = findRoot();

  private manifest(): SdkManifest {
    if (!this.root)
      throw new DomainError(
        SdkErrors.sdk_bundle_missing,
        'The SDK folder (sdk/typescript) is not deployed with the service',
      );
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
          sdk_files: this.sdkFiles().length,
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
    throw new DomainError(
      SdkErrors.sdk_version_not_found,
      `No bundle has version '${version.slice(0, 50)}'; available versions: ${m.version} (or latest)`,
      { available: [m.version, 'latest'] },
    );
  }

  sdk(version: string): BundleResponse {
    const v = this.resolve(version);
    return { kind: 'sdk', version: v, language: 'typescript', instructions: SDK_INSTRUCTIONS, files: this.sdkFiles() };
  }

  private sdkFiles(): BundleResponse['files'] {
    return readTree(join(this.root!, 'sdk', 'typescript'), NOT_SOURCES);
  }

  /** The packed package of this version, as `npm pack` names it, where sdk/pack.mjs leaves it. */
  sdkPackage(version: string): { path: string; filename: string } {
    const v = this.resolve(version);
    const { name } = JSON.parse(readFileSync(join(this.root!, 'sdk', 'typescript', 'package.json'), 'utf8')) as {
      name: string;
    };
    const filename = `${name.replace(/^@/, '').replace('/', '-')}-${v}.tgz`;
    const path = join(this.root!, 'dist', 'sdk', filename);
    if (!existsSync(path))
      throw new DomainError(
        SdkErrors.sdk_package_missing,
        `The SDK package ${filename} was not built with the service (npm run build packs it into dist/sdk)`,
      );
    return { path, filename };
  }

  examples(version: string): BundleResponse {
    const v = this.resolve(version);
    const files = readTree(join(this.root!, 'examples'));
    if (!files.length)
      throw new DomainError(SdkErrors.sdk_bundle_missing, 'The examples folder is not deployed with the service');
    return { kind: 'examples', version: v, language: 'typescript', instructions: EXAMPLE_INSTRUCTIONS, files };
  }
}
