import { Controller, Get } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '#libs/auth/access.decorators.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { TemplateDetail, TemplateSummary } from './dto/template.dto.js';
import { TemplatesService } from './templates.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

@ApiTags('templates')
@Controller('templates')
export class TemplatesController {
  constructor(private readonly templates: TemplatesService) {}

  /** The built-in project templates (customer support, RAG, summarisation, code, agents, …). */
  @Get()
  @ApiOperation({ operationId: 'listTemplates' })
  @Authenticated()
  @ApiOkResponse({ type: [TemplateSummary], description: 'Every built-in template' })
  list(): TemplateSummary[] {
    return this.templates.list();
  }

  /**
   * One template with its full dimension list; pass `dimensions` (as it is, or edited) to
   * project creation.
   */
  @Get(':name')
  @ApiOperation({ operationId: 'getTemplate' })
  @Authenticated()
  @ApiParam({ name: 'name', description: 'A name listed by GET /templates', example: 'rag-question-answering' })
  @ApiOkResponse({ type: TemplateDetail, description: 'The template with its dimensions and suggested metrics' })
  @ApiNotFoundResponse({
    type: ProblemResponse,
    description: 'No such template; `detail` and `available` list the names that exist (error_code template_not_found)',
  })
  get(@TextParam('name', PATH_TEXT.name) name: string): TemplateDetail {
    return this.templates.get(name);
  }
}
