import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { MAX_INT32 } from '#libs/common/json-limits.js';
import { PageQueryDto } from '#libs/common/pagination.js';
import { catalogueEntryRequest } from '../../catalogues/dto/catalogue-entry.dto.js';
import { NestedObject } from '#libs/common/record-validators.js';
import { DimensionDefinition } from './template.dto.js';
import { ApiSchemaExample, EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';
import { Trim, ValidateIfPresent } from '#libs/common/dto-decorators.js';

// Values the examples below share.
const EXAMPLE_DESCRIPTION = 'Release gate of the support assistant';

export const MAX_PROJECT_DIMENSIONS = 20;
export const MAX_PROJECT_LINKS = 100;

export class ListProjectsQuery extends PageQueryDto {
  @IsUUID()
  workspace_id: string;

  /** Projects whose name contains this text (case-insensitive) */
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
  q?: string;

  /** `name`, `created_at` or `updated_at`, `-` for descending (default `name`) */
  @ApiPropertyOptional({ enum: ['name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at'] })
  @ValidateIfPresent()
  @IsIn(['name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at'])
  sort?: string;
}

@ApiSchemaExample({
  workspace_id: EXAMPLE_ID.workspace,
  name: EXAMPLE_NAME.project,
  description: EXAMPLE_DESCRIPTION,
  template: 'customer-support-assistant',
  dimensions: [
    {
      name: 'topic',
      description: 'What the customer is contacting support about.',
      values: [
        { value: 'billing', description: 'Invoices, charges, failed payments, payment methods and taxes.' },
        {
          value: 'account_access',
          description: 'Login problems, password resets, two-factor authentication and locked accounts.',
        },
      ],
    },
  ],
  sut_ids: [EXAMPLE_ID.sut],
  dataset_ids: [EXAMPLE_ID.dataset],
})
export class CreateProjectRequest extends catalogueEntryRequest({
  creator: 'member',
  name: EXAMPLE_NAME.project,
  description: EXAMPLE_DESCRIPTION,
}) {
  /** A built-in template name (GET /templates); when `dimensions` is left out the template's list is used */
  @ApiPropertyOptional({ example: 'customer-support-assistant' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(100)
  template?: string;

  /** The coverage dimensions: GET /templates/{name} `dimensions` as it is, or edited (at most 20) */
  @ApiPropertyOptional({ type: [DimensionDefinition], maxItems: MAX_PROJECT_DIMENSIONS })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_PROJECT_DIMENSIONS)
  @NestedObject(() => DimensionDefinition, { each: true })
  dimensions?: DimensionDefinition[];

  /** SUTs of the workspace evaluated by this project */
  @ApiPropertyOptional({ maxItems: MAX_PROJECT_LINKS, example: [EXAMPLE_ID.sut] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_PROJECT_LINKS)
  @IsUUID('all', { each: true })
  sut_ids?: string[];

  /** Datasets of the workspace whose rows the project's coverage counts */
  @ApiPropertyOptional({ maxItems: MAX_PROJECT_LINKS, example: [EXAMPLE_ID.dataset] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_PROJECT_LINKS)
  @IsUUID('all', { each: true })
  dataset_ids?: string[];
}

export class UpdateProjectRequest {
  @ApiPropertyOptional({ example: EXAMPLE_NAME.project })
  @ValidateIfPresent()
  @Trim()
  @IsString()
  @MaxLength(100)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/, {
    message: 'name must be 1..100 letters, digits, spaces or . _ : - and start with a letter or digit',
  })
  name?: string;

  @ApiPropertyOptional({ example: 'Release gate of the support assistant, with order lookups' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  description?: string;

  /** Replaces the whole dimension list */
  @ApiPropertyOptional({ type: [DimensionDefinition], maxItems: MAX_PROJECT_DIMENSIONS })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_PROJECT_DIMENSIONS)
  @NestedObject(() => DimensionDefinition, { each: true })
  dimensions?: DimensionDefinition[];

  /** Replaces the linked SUTs */
  @ApiPropertyOptional({ maxItems: MAX_PROJECT_LINKS, example: [EXAMPLE_ID.sut] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_PROJECT_LINKS)
  @IsUUID('all', { each: true })
  sut_ids?: string[];

  /** Replaces the linked datasets */
  @ApiPropertyOptional({ maxItems: MAX_PROJECT_LINKS, example: [EXAMPLE_ID.dataset, EXAMPLE_ID.traceDataset] })
  @ValidateIfPresent()
  @IsArray()
  @ArrayMaxSize(MAX_PROJECT_LINKS)
  @IsUUID('all', { each: true })
  dataset_ids?: string[];
}

export class MoveProjectRequest {
  /** The workspace that receives the project (you must be an admin there and in the current one) */
  @ApiProperty({ example: EXAMPLE_ID.otherWorkspace })
  @IsUUID()
  workspace_id: string;
}

export class AttachTestPlanRequest {
  /** The test plan's id or name */
  @ApiProperty({ example: EXAMPLE_NAME.testPlan })
  @Trim()
  @IsString()
  @MaxLength(100)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/, { message: 'test_plan must be a test plan id or name' })
  test_plan: string;

  /** The plan version to carry (default: its latest) */
  @ApiPropertyOptional({ example: 3 })
  @ValidateIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_INT32)
  version?: number;
}

/** The test plan version a project carries. */
export class ProjectTestPlanRef {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.testPlan })
  id: string;
  @ApiProperty({ example: EXAMPLE_NAME.testPlan })
  name: string;
  /** The version number the project carries */
  @ApiProperty({ example: 3 })
  version: number;
  /** The plan's newest version (newer than `version` means an update is available) */
  @ApiProperty({ example: 3 })
  latest_version: number;
}

export class ProjectResponse {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.project })
  id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.project })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  /** The template the project was created from, if any */
  @ApiProperty({ type: 'string', nullable: true, example: 'customer-support-assistant' })
  template: string | null;
  /** The coverage dimensions with their values */
  @ApiProperty({ type: [DimensionDefinition] })
  dimensions: DimensionDefinition[];
  @ApiProperty({ type: 'array', items: { type: 'string', format: 'uuid' }, example: [EXAMPLE_ID.sut] })
  sut_ids: string[];
  @ApiProperty({ type: 'array', items: { type: 'string', format: 'uuid' }, example: [EXAMPLE_ID.dataset] })
  dataset_ids: string[];
  @ApiProperty({ type: ProjectTestPlanRef, nullable: true })
  test_plan: ProjectTestPlanRef | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, example: EXAMPLE_ID.user })
  created_by: string | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}

/** The new project; `dimension_source` says where its dimensions came from. */
export class ProjectCreateResponse extends ProjectResponse {
  /** `template` (a template's list as it is), `template_edited`, `custom` (no template) or `none` */
  @ApiProperty({ enum: ['template', 'template_edited', 'custom', 'none'], example: 'template_edited' })
  dimension_source: 'template' | 'template_edited' | 'custom' | 'none';
}

/** The project after a change; `changed` names the fields that changed. */
export class ProjectPatchResponse extends ProjectResponse {
  @ApiProperty({ type: 'array', items: { type: 'string' }, example: ['description', 'dataset_ids'] })
  changed: string[];
}

export class ProjectListItem {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.project })
  id: string;
  @ApiProperty({ format: 'uuid', example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.project })
  name: string;
  @ApiProperty({ example: EXAMPLE_DESCRIPTION })
  description: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'customer-support-assistant' })
  template: string | null;
  @ApiProperty({ example: 2 })
  dimension_count: number;
  @ApiProperty({ example: 1 })
  sut_count: number;
  @ApiProperty({ example: 1 })
  dataset_count: number;
  @ApiProperty({ type: ProjectTestPlanRef, nullable: true })
  test_plan: ProjectTestPlanRef | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
  @ApiProperty({ example: EXAMPLE_AT.updated })
  updated_at: Date;
}
