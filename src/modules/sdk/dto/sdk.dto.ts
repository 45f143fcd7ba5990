import { ApiProperty } from '@nestjs/swagger';

export class SdkVersionInfo {
  /** The version to pass to the download operations */
  @ApiProperty({ example: '0.1.0' })
  version: string;
  /** The client's language */
  @ApiProperty({ example: 'typescript' })
  language: string;
  /** What generated the client from the OpenAPI document */
  @ApiProperty({ example: 'swagger-typescript-api' })
  generator: string;
  /** Operations the client covers */
  @ApiProperty({ example: 251 })
  operations: number;
  /** Files in the SDK bundle */
  @ApiProperty({ example: 3 })
  sdk_files: number;
  /** Files in the examples bundle */
  @ApiProperty({ example: 6 })
  example_files: number;
  /** GET this for the SDK bundle */
  @ApiProperty({ example: '/sdk/versions/0.1.0/download' })
  sdk_download: string;
  /** GET this for the examples bundle */
  @ApiProperty({ example: '/examples/versions/0.1.0/download' })
  examples_download: string;
}

/** The SDK versions the service hands out, newest first. */
export class SdkVersionsResponse {
  /** The newest version (`latest` is accepted for it in the download paths) */
  @ApiProperty({ example: '0.1.0' })
  latest: string;
  @ApiProperty({ type: [SdkVersionInfo] })
  versions: SdkVersionInfo[];
}

export class BundleFile {
  /** Path inside the bundle, `/`-separated */
  @ApiProperty({ example: 'src/client.ts' })
  path: string;
  /** The file's UTF-8 text */
  @ApiProperty({ example: "export * from './api';\n" })
  content: string;
}

/** A downloadable bundle: write each file at its path. */
export class BundleResponse {
  @ApiProperty({ enum: ['sdk', 'examples'], example: 'sdk' })
  kind: 'sdk' | 'examples';
  @ApiProperty({ example: '0.1.0' })
  version: string;
  @ApiProperty({ example: 'typescript' })
  language: string;
  /** How to use the bundle */
  @ApiProperty({
    example:
      'Write each file at its path in a folder (e.g. src/ews/), then: import { EvaluationWorkspaceClient } from "./ews".',
  })
  instructions: string;
  @ApiProperty({ type: [BundleFile] })
  files: BundleFile[];
}
