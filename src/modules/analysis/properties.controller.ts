import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AnalysisPropertyDto } from './dto/analysis.dto.js';
import { Authenticated } from '#libs/auth/access.decorators.js';
import {
  ANNOTATION_PROPERTIES,
  TEXT_PROPERTIES,
  VISUAL_PROPERTIES,
  type AnalysisProperty,
} from '#libs/dataset-analysis/properties.js';

/** The properties each analysis computes: row-level ones can be filtered with the analysis query paths. */
@ApiTags('analysis')
@Controller('analysis/properties')
export class AnalysisPropertiesController {
  /** Properties of the annotation analysis (any signed-in user). */
  @Get('annotation')
  @ApiOperation({ operationId: 'getAnnotationAnalysisProperties' })
  @Authenticated()
  @ApiOkResponse({ type: [AnalysisPropertyDto] })
  annotation(): readonly AnalysisProperty[] {
    return ANNOTATION_PROPERTIES;
  }

  /** Properties of the text analysis (any signed-in user). */
  @Get('text')
  @ApiOperation({ operationId: 'getTextAnalysisProperties' })
  @Authenticated()
  @ApiOkResponse({ type: [AnalysisPropertyDto] })
  text(): readonly AnalysisProperty[] {
    return TEXT_PROPERTIES;
  }

  /** Properties of the visual analysis (any signed-in user). */
  @Get('visual')
  @ApiOperation({ operationId: 'getVisualAnalysisProperties' })
  @Authenticated()
  @ApiOkResponse({ type: [AnalysisPropertyDto] })
  visual(): readonly AnalysisProperty[] {
    return VISUAL_PROPERTIES;
  }
}
