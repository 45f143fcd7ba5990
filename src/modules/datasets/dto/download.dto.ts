import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { DOWNLOAD_FORMATS, type DownloadFormat } from '../datasets.mapper.js';
import { EXAMPLE_AT, EXAMPLE_CONTENT_SHA256, EXAMPLE_ID } from '#libs/common/openapi-examples.js';

export class VersionDownloadQuery {
  @ApiPropertyOptional({ enum: DOWNLOAD_FORMATS, default: 'csv' })
  @IsOptional()
  @IsIn(DOWNLOAD_FORMATS)
  format?: DownloadFormat;

  /** Lifetime of the URL in seconds, 10..604800 (default SIGNED_URL_TTL_SECONDS, 3600) */
  @ApiPropertyOptional({ minimum: 10, maximum: 604800 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(604800)
  expires_in?: number;
}

export class DatasetDownloadQuery extends VersionDownloadQuery {
  /** The version to download; default: the current version, else the newest */
  @IsOptional()
  @IsUUID()
  version_id?: string;
}

export class PresignedUrlResponse {
  /** GET this URL without a bearer token until `expires_at` */
  @ApiProperty({
    example:
      'https://eval.example.com/datasets/files/6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c/89fa3cc1-e563-4ad1-af4c-d5becdca17df?format=csv&expires=1747733400&signature=3b1f…',
  })
  url: string;
  @ApiProperty({ enum: ['GET'], example: 'GET' })
  method: 'GET';
  @ApiProperty({ example: EXAMPLE_AT.expires })
  expires_at: Date;
  @ApiProperty({ enum: DOWNLOAD_FORMATS, example: 'csv' })
  format: DownloadFormat;
  @ApiProperty({ example: 'faq-golden-set-v3.csv' })
  filename: string;
  @ApiProperty({ example: EXAMPLE_ID.version })
  version_id: string;
  /** Hash of the version's content (the same for every format) */
  @ApiProperty({ example: EXAMPLE_CONTENT_SHA256 })
  content_sha256: string;
}

export class SignedFileQuery {
  @ApiProperty({ enum: DOWNLOAD_FORMATS })
  @IsIn(DOWNLOAD_FORMATS)
  format: DownloadFormat;

  /** Unix time after which the URL is refused */
  @ApiProperty()
  @IsString()
  @MaxLength(12)
  @Matches(/^\d{1,12}$/)
  expires: string;

  /** HMAC-SHA256 of the path, format and expiry */
  @ApiProperty()
  @IsString()
  @MaxLength(100)
  signature: string;
}
