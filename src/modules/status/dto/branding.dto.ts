import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength, ValidateBy, type ValidationOptions } from 'class-validator';
import {
  imageUrlProblem,
  MAX_IMAGE_URL_LENGTH,
  MAX_INLINE_IMAGE_BYTES,
  MAX_URL_LENGTH,
  supportUrlProblem,
} from '../branding-assets.js';

const HEX_COLOUR = /^#[0-9A-Fa-f]{6}$/;

function checkedBy(name: string, problem: (value: unknown) => string | null, options?: ValidationOptions) {
  return ValidateBy(
    {
      name,
      validator: {
        validate: (value) => problem(value) === null,
        defaultMessage: (args) => `${args?.property} ${problem(args?.value) ?? 'is invalid'}`,
      },
    },
    options,
  );
}

const IMAGE_URL_DOC =
  `An https URL, or an inline data URL \`data:image/(png|jpeg|svg+xml);base64,…\` of at most ${MAX_INLINE_IMAGE_BYTES / 1024} KiB decoded ` +
  '(the bytes must be that image type; SVG without script or event handlers).';

/** The look of the service's UI: product name, colours and images. */
export class BrandingResponse {
  /** Shown in the UI header and page titles. */
  @ApiProperty({ example: 'Evaluation Workspace' })
  product_name: string;
  /** One line under the product name; null when not set. */
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Prove your LLM application is good enough, release after release.',
  })
  tagline: string | null;
  /** Main colour, `#RRGGBB` (upper-case). */
  @ApiProperty({ example: '#1E3A8A', pattern: HEX_COLOUR.source })
  primary_color: string;
  /** Highlight colour, `#RRGGBB` (upper-case). */
  @ApiProperty({ example: '#F59E0B', pattern: HEX_COLOUR.source })
  accent_color: string;
  @ApiProperty({ description: IMAGE_URL_DOC, maxLength: MAX_IMAGE_URL_LENGTH, example: 'https://example.com/logo.svg' })
  logo_url: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: `${IMAGE_URL_DOC} Null when not set.`,
    example: 'https://example.com/favicon.png',
  })
  favicon_url: string | null;
  /** Where users get help: an https URL or `mailto:` address; null when not set. */
  @ApiProperty({ type: String, nullable: true, example: 'mailto:support@example.com' })
  support_url: string | null;
  /** When an admin last saved the branding; null while the built-in defaults apply. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  updated_at: string | null;
  /** 0 for the built-in defaults, then 1, 2, … on each PUT. The ETag header changes with it. */
  @ApiProperty({ example: 0 })
  version: number;
}

/** The whole branding; PUT replaces every field (omitted optional fields become null). */
export class UpdateBrandingRequest {
  /** 1-80 characters. */
  @ApiProperty({ example: 'Acme Eval' })
  @IsString()
  @MaxLength(80)
  @Matches(/\S/, { message: 'product_name must not be empty' })
  product_name: string;

  /** Up to 200 characters. */
  @ApiPropertyOptional({ example: 'Every release measured before it ships.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  tagline?: string | null;

  /** `#RRGGBB`. */
  @ApiProperty({ example: '#0F766E', pattern: HEX_COLOUR.source })
  @MaxLength(7)
  @Matches(HEX_COLOUR, { message: 'primary_color must be a #RRGGBB colour' })
  primary_color: string;

  /** `#RRGGBB`. */
  @ApiProperty({ example: '#F97316', pattern: HEX_COLOUR.source })
  @MaxLength(7)
  @Matches(HEX_COLOUR, { message: 'accent_color must be a #RRGGBB colour' })
  accent_color: string;

  @ApiProperty({ description: IMAGE_URL_DOC, maxLength: MAX_IMAGE_URL_LENGTH, example: 'https://example.com/logo.svg' })
  @checkedBy('isImageUrl', imageUrlProblem)
  logo_url: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: IMAGE_URL_DOC,
    maxLength: MAX_IMAGE_URL_LENGTH,
    example: 'https://example.com/favicon.png',
  })
  @IsOptional()
  @checkedBy('isImageUrl', imageUrlProblem)
  favicon_url?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'An https URL or `mailto:` address.',
    maxLength: MAX_URL_LENGTH,
    example: 'https://help.example.com',
  })
  @IsOptional()
  @checkedBy('isSupportUrl', supportUrlProblem)
  support_url?: string | null;
}
