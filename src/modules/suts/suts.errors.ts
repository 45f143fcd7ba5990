import { defineErrorCodes } from '#libs/common/error-codes.js';

export const SutErrors = defineErrorCodes('suts', {
  sut_name_taken: {
    status: 409,
    title: 'SUT name taken',
    description: 'The workspace already has a system under test with this name (compared case-insensitively).',
  },
  connection_name_taken: {
    status: 409,
    title: 'Connection name taken',
    description: 'The system already has a connection with this name (compared case-insensitively).',
  },
  connection_transport_invalid: {
    status: 400,
    title: 'Connection transport does not fit its kind',
    description:
      'A connection of kind http needs `http`, openai_chat needs `openai_chat`, offline takes neither (nor `auth`); the other transport is refused.',
  },
  auth_incomplete: {
    status: 400,
    title: 'Connection auth incomplete',
    description: 'Scheme `header` needs `header`; scheme `query` needs `param`.',
  },
  adapter_invalid: {
    status: 400,
    title: 'Adapter invalid',
    description:
      'A template or path of the adapter does not parse; `issues` lists each with a JSON Pointer into the adapter.',
  },
  connection_not_callable: {
    status: 400,
    title: 'Connection cannot be called',
    description:
      'Offline connections have no endpoint: their outputs are uploaded to the run. Only the response mapping of their adapter can be validated.',
  },
});
