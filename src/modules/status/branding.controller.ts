import { Body, Controller, Get, Put, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ENTITY_TAGS_MAX, IfMatch, IfNoneMatch } from '#libs/common/etag.decorators.js';
import type { IfMatchPrecondition, IfNoneMatchCondition } from '#libs/common/etag.js';
import { CurrentUser, Public, SystemAdmin } from '#libs/auth/access.decorators.js';
import type { Principal } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { BrandingService } from './branding.service.js';
import { BrandingResponse, UpdateBrandingRequest } from './dto/branding.dto.js';

@ApiTags('branding')
@Controller('branding')
export class BrandingController {
  constructor(private readonly branding: BrandingService) {}

  /**
   * The product name, colours and logo the UI shows. Carries a strong ETag; send it back as
   * If-None-Match to get 304 with an empty body while nothing changed.
   */
  @Get()
  @ApiOperation({ operationId: 'getBranding' })
  @Public()
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: 'The ETag of a copy you hold; 304 when it is still current',
    schema: { type: 'string', maxLength: ENTITY_TAGS_MAX },
  })
  @ApiOkResponse({
    type: BrandingResponse,
    description: 'The current branding',
    headers: { ETag: { description: 'Strong entity tag of this representation', schema: { type: 'string' } } },
  })
  @ApiResponse({ status: 304, description: 'Not modified: your copy (If-None-Match) is current; empty body' })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'validation_failed: If-None-Match is longer than 1024 characters',
  })
  async read(
    @IfNoneMatch() ifNoneMatch: IfNoneMatchCondition,
    @Res({ passthrough: true }) res: Response,
  ): Promise<BrandingResponse | undefined> {
    const { body, etag, notModified } = await this.branding.read(ifNoneMatch);
    res.setHeader('ETag', etag).setHeader('Cache-Control', 'no-cache');
    if (notModified) {
      res.status(304);
      return undefined;
    }
    return body;
  }

  /**
   * Replace the branding (system admins). Send the ETag you read as If-Match to avoid
   * overwriting someone else's change (412 when it is stale).
   */
  @Put()
  @ApiOperation({ operationId: 'replaceBranding' })
  @SystemAdmin()
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description: 'The ETag you read; 412 when the branding changed since',
    schema: { type: 'string', maxLength: ENTITY_TAGS_MAX },
  })
  @ApiOkResponse({
    type: BrandingResponse,
    description: 'The saved branding',
    headers: { ETag: { description: 'Strong entity tag of the saved branding', schema: { type: 'string' } } },
  })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'A field is missing or invalid; `errors` lists each one',
  })
  @ApiPreconditionFailedResponse({ type: ProblemResponse, description: 'If-Match does not name the current branding' })
  async replace(
    @Body() body: UpdateBrandingRequest,
    @CurrentUser() principal: Principal,
    @IfMatch() ifMatch: IfMatchPrecondition,
    @Res({ passthrough: true }) res: Response,
  ): Promise<BrandingResponse> {
    const saved = await this.branding.replace(body, principal, ifMatch);
    res.setHeader('ETag', saved.etag);
    return saved.body;
  }
}
