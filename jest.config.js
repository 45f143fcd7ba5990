/** Unit specs live beside the code (*.spec.ts); end-to-end specs under test/ (*.e2e-spec.ts). */
const tsJest = [
  'ts-jest',
  {
    useESM: true,
    tsconfig: '<rootDir>/tsconfig.test.json',
    diagnostics: { warnOnly: false },
    astTransformers: { before: ['<rootDir>/test/utils/swagger-transformer.cjs'] },
  },
];

export default {
  rootDir: '.',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': tsJest },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testTimeout: 60000,
  maxWorkers: 2,
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};
