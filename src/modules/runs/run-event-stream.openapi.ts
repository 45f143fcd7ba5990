import { applyDecorators } from '@nestjs/common';
import {
  ApiHeader,
  ApiOkResponse,
  ApiProduces,
  ApiServiceUnavailableResponse,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { ProblemResponse } from '#libs/common/problem.dto.js';

const EXAMPLE_STREAM = [
  'id: 1042\nevent: state_changed\ndata: {"seq":1042,"type":"state_changed","at":"2026-11-20T10:02:00.000Z","data":{"from":"queued","to":"running","reason":null}}\n',
  'id: 1043\nevent: progress\ndata: {"seq":1043,"type":"progress","at":"2026-11-20T10:02:01.000Z","data":{"done":120,"total":600,"completed":118,"errored":2,"rate_per_s":4.2,"eta_s":114}}\n',
  ': heartbeat\n',
  'id: 1051\nevent: state_changed\ndata: {"seq":1051,"type":"state_changed","at":"2026-11-20T10:04:03.000Z","data":{"from":"running","to":"succeeded","reason":null,"passed":true,"pass_rate":0.93}}\n\n',
].join('\n');

/** The OpenAPI description of GET /runs/{run_id}/events/stream: a text/event-stream answer, its resume header and its limits. */
export function ApiRunEventStream(): MethodDecorator {
  return applyDecorators(
    ApiProduces('text/event-stream'),
    ApiHeader({
      name: 'Last-Event-ID',
      required: false,
      description:
        'Resume after this event: the `id` of the last message received (an EventSource sends it when it reconnects). Wins over `after`.',
      schema: { type: 'string', pattern: '^\\d{1,16}$', maxLength: 16, example: '1043' },
    }),
    ApiOkResponse({
      description:
        'Server-Sent Events: one message per run event, `id: <seq>` (the stream position to resume from), `event: <type>`, `data: <the event as GET /runs/{run_id}/events lists it>`; a `: heartbeat` comment when idle. The stream ends after the event of the terminal state (succeeded, failed, cancelled), at once after the backlog when the run has ended.',
      headers: {
        'Cache-Control': {
          description: 'no-cache, no-transform',
          schema: { type: 'string', example: 'no-cache, no-transform' },
        },
        'X-Accel-Buffering': {
          description: 'no: proxies must not buffer the stream',
          schema: { type: 'string', example: 'no' },
        },
      },
      content: {
        'text/event-stream': {
          schema: {
            type: 'string',
            description: 'WHATWG Server-Sent Events; each `data:` line is a RunEventResponse as JSON',
          },
          example: EXAMPLE_STREAM,
        },
      },
    }),
    ApiTooManyRequestsResponse({
      type: ProblemResponse,
      description:
        'too_many_event_streams: you hold RUN_EVENT_STREAMS_PER_USER streams on this process already; see Retry-After',
    }),
    ApiServiceUnavailableResponse({
      type: ProblemResponse,
      description:
        'event_streams_exhausted: the process serves RUN_EVENT_STREAMS_MAX streams already; service_unavailable: the database does not answer. See Retry-After',
    }),
  );
}
