// ts-jest AST transformer: runs the @nestjs/swagger CLI plugin under jest so DTO metadata
// matches what `nest build` produces.
const plugin = require('@nestjs/swagger/plugin');

module.exports = {
  name: 'nestjs-swagger-transformer',
  version: 1,
  factory(cs) {
    return plugin.before(
      { classValidatorShim: true, introspectComments: true, dtoFileNameSuffix: ['.dto.ts', '.entity.ts'] },
      cs.program,
    );
  },
};
